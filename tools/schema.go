package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// schema is the subset of JSON Schema (draft 2020-12) the tool specs use:
// an object of scalar properties. Validation reads the spec's own schema, so
// what a model is told and what is enforced cannot drift apart.
type schema struct {
	Type                 string             `json:"type"`
	Description          string             `json:"description"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Enum                 []any              `json:"enum"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	MinLength            *int               `json:"minLength"`
	AdditionalProperties *bool              `json:"additionalProperties"`
	// propOrder is the order properties appear in the schema text, for
	// deterministic messages and documentation.
	propOrder []string
}

// parseSchema decodes a tool schema and rejects keywords outside the subset,
// so that a spec cannot promise a model something validate ignores.
func parseSchema(raw []byte) (*schema, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, err
	}
	for k := range keys {
		switch k {
		case "type", "description", "properties", "required", "enum", "minimum", "maximum", "minLength", "additionalProperties":
		default:
			return nil, fmt.Errorf("unsupported schema keyword %q", k)
		}
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if props, ok := keys["properties"]; ok {
		order, err := objectKeys(props)
		if err != nil {
			return nil, err
		}
		s.propOrder = order
		var pkeys map[string]json.RawMessage
		if err := json.Unmarshal(props, &pkeys); err != nil {
			return nil, err
		}
		for _, name := range order {
			sub, err := parseSchema(pkeys[name])
			if err != nil {
				return nil, fmt.Errorf("property %q: %w", name, err)
			}
			s.Properties[name] = sub
		}
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			return nil, fmt.Errorf("required property %q is not defined", r)
		}
	}
	switch s.Type {
	case "object", "string", "integer", "number", "boolean":
	default:
		return nil, fmt.Errorf("unsupported type %q", s.Type)
	}
	return &s, nil
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// ArgError is a call whose tool or arguments do not fit the tool's schema.
// Nothing has touched the device when it is returned. The message names the
// argument and says why, in words a model can act on:
//
//	type_text: argument "text": required
//	scroll: argument "direction": must be one of up, down, left, right
type ArgError struct {
	Tool string // the tool name as called
	Arg  string // the argument at fault; empty when the arguments as a whole are wrong
	Msg  string // why
	// Err is a sentinel the error wraps, when one applies (ErrUnknownTool).
	Err error
}

// ErrUnknownTool is wrapped by the ArgError of a call naming no tool of the
// contract.
var ErrUnknownTool = errors.New("unknown tool")

func (e *ArgError) Error() string {
	switch {
	case errors.Is(e.Err, ErrUnknownTool):
		return e.Msg
	case e.Arg != "":
		return fmt.Sprintf("%s: argument %q: %s", e.Tool, e.Arg, e.Msg)
	default:
		return e.Tool + ": " + e.Msg
	}
}

// Unwrap exposes the sentinel, if any.
func (e *ArgError) Unwrap() error { return e.Err }

// Permanent marks the error as one another attempt cannot fix: the same
// arguments fail the same schema.
func (e *ArgError) Permanent() bool { return true }

// Validate checks a call against its tool's schema: the tool exists, the
// arguments are one JSON object, every required argument is present, each
// has the right JSON type (integer, number, string, boolean), lies in its
// enum and range, and no unknown argument is given. Empty or null arguments
// count as {} (so the message names the missing argument). It returns nil or
// an *ArgError.
func Validate(c Call) error {
	t, ok := byName[c.Name]
	if !ok {
		return &ArgError{Tool: c.Name, Err: ErrUnknownTool,
			Msg: fmt.Sprintf("unknown tool %q; valid tools: %s", c.Name, strings.Join(names, ", "))}
	}
	sch := t.schema
	args, err := decodeArgs(c.Args)
	if err != nil {
		return &ArgError{Tool: c.Name, Msg: err.Error()}
	}
	for _, r := range sch.Required {
		if _, ok := args[r]; !ok {
			return &ArgError{Tool: c.Name, Arg: r, Msg: "required"}
		}
	}
	given := make([]string, 0, len(args))
	for k := range args {
		given = append(given, k)
	}
	// Known arguments in schema order first, then unknown ones sorted: the
	// first error reported is stable whatever order the model wrote.
	slices.SortFunc(given, func(a, b string) int {
		ia, ib := slices.Index(sch.propOrder, a), slices.Index(sch.propOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range given {
		prop, ok := sch.Properties[k]
		if !ok {
			if sch.AdditionalProperties != nil && !*sch.AdditionalProperties {
				return &ArgError{Tool: c.Name, Arg: k,
					Msg: "unknown argument; valid arguments: " + strings.Join(sch.propOrder, ", ")}
			}
			continue
		}
		if msg := prop.check(args[k]); msg != "" {
			return &ArgError{Tool: c.Name, Arg: k, Msg: msg}
		}
	}
	return nil
}

// decodeArgs reads the arguments as one JSON object with numbers kept exact.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("arguments are not valid JSON: extra data after the object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", describeValue(v))
	}
	return obj, nil
}

// check validates one argument value against a scalar property schema and
// returns why it does not fit, or "".
func (s *schema) check(v any) string {
	switch s.Type {
	case "string":
		str, ok := v.(string)
		if !ok {
			return "must be a string, got " + describeValue(v)
		}
		if s.MinLength != nil && utf8.RuneCountInString(str) < *s.MinLength {
			if *s.MinLength == 1 {
				return "must not be empty"
			}
			return fmt.Sprintf("must be at least %d characters long", *s.MinLength)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be a boolean (true or false), got " + describeValue(v)
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			return "must be " + article(s.Type) + ", got " + describeValue(v)
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return "is out of range, got " + n.String()
		}
		// JSON Schema counts 4.0 as an integer; 4.5 is not.
		if s.Type == "integer" && f != math.Trunc(f) {
			return "must be an integer, got " + n.String()
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Sprintf("must be at least %s, got %s", formatNumber(*s.Minimum), n.String())
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Sprintf("must be at most %s, got %s", formatNumber(*s.Maximum), n.String())
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		opts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			opts[i] = fmt.Sprint(e)
		}
		return "must be one of " + strings.Join(opts, ", ")
	}
	return ""
}

func article(typ string) string {
	if typ == "integer" {
		return "an integer"
	}
	return "a " + typ
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// describeValue names a JSON value's kind for an error message, quoting
// short strings so the model sees what it sent.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if utf8.RuneCountInString(x) > 30 {
			x = string([]rune(x)[:30]) + "…"
		}
		return "string " + strconv.Quote(x)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case json.Number:
		return "number " + x.String()
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
