package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"phonepilot/tools"
)

// maxFileBytes bounds a flow file: flows are a few dozen steps.
const maxFileBytes = 1 << 20

// Parse reads and validates a flow file. Errors wrap ErrInvalid and name
// the line: bad YAML, an unknown field, a tool that does not exist, an
// argument the tool rejects, a parameter that is not declared.
func Parse(data []byte) (*Flow, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%w: the file is larger than %d bytes", ErrInvalid, maxFileBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrInvalid)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f Flow
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, yamlMessage(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: line %d: one flow per file (a second YAML document starts here)", ErrInvalid, extra.Line)
	}
	// A second pass over the node tree only to learn each step's line.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil && len(root.Content) == 1 {
		doc := root.Content[0]
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "steps" && doc.Content[i+1].Kind == yaml.SequenceNode {
				for j, n := range doc.Content[i+1].Content {
					if j < len(f.Steps) {
						f.Steps[j].line = n.Line
					}
				}
			}
		}
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// yamlMessage makes the decoder's error read as one line per problem,
// without the package prefix.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// Marshal writes f as a flow file.
func Marshal(f *Flow) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# phonepilot flow (docs/flows.md). Run it with: phonepilot flow run FILE [--set name=value]\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("flow: write: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("flow: write: %w", err)
	}
	return b.Bytes(), nil
}

var (
	paramRef  = regexp.MustCompile(`\$\{([^}]*)\}`)
	paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Validate checks a flow: the format version, a goal, known tools with the
// arguments they accept, selectors that name something, at most one
// expectation per step, and parameters that are declared. Errors wrap
// ErrInvalid and name the step and its line.
func (f *Flow) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	switch {
	case f.Version != Version:
		return bad("version must be %d, got %d", Version, f.Version)
	case strings.TrimSpace(f.Goal) == "":
		return bad("goal is required: say what the flow does")
	case len(f.Steps) == 0:
		return bad("steps: a flow needs at least one step")
	}
	for name := range f.Params {
		if !paramName.MatchString(name) {
			return bad("params: %q is not a parameter name (letters, digits and _, not starting with a digit)", name)
		}
	}
	if err := f.checkRefs("goal", f.Goal); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i, s := range f.Steps {
		if err := f.validateStep(i, s); err != nil {
			return err
		}
	}
	return nil
}

// where names step i for an error.
func (f *Flow) where(i int) string {
	if l := f.Steps[i].line; l > 0 {
		return fmt.Sprintf("line %d: step %d", l, i+1)
	}
	return fmt.Sprintf("step %d", i+1)
}

func (f *Flow) validateStep(i int, s Step) error {
	at := f.where(i)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalid, at, fmt.Sprintf(format, a...))
	}
	t, ok := tools.Lookup(s.Tool)
	switch {
	case s.Tool == "":
		return bad("tool is required (one of %s)", toolNames())
	case !ok:
		return bad("unknown tool %q (one of %s)", s.Tool, toolNames())
	case t.Ends():
		return bad("%s is not a step: a flow completes after its last step", s.Tool)
	}
	if _, has := s.Args["element"]; has {
		return bad("args.element: name the element with target (id, text, desc, class), not an index")
	}
	takes, needs := elementArg(t)
	switch {
	case s.Target != nil && !takes:
		return bad("%s acts on no element; remove target", s.Tool)
	case s.Target == nil && needs:
		return bad("%s needs a target: the element to act on", s.Tool)
	case s.Optional && s.Target == nil:
		return bad("optional: only a step with a target can be skipped when the target is absent")
	}
	if s.Target != nil {
		if err := s.Target.validate(); err != nil {
			return bad("target: %v", err)
		}
	}
	if err := s.Expect.validate(); err != nil {
		return bad("expect: %v", err)
	}
	// The arguments as the tool will see them, parameters at their
	// defaults (or a placeholder), the element filled in.
	call, err := s.call(f.defaults(true))
	if err != nil {
		return bad("args: %v", err)
	}
	if s.Target != nil {
		call = tools.WithElement(call, 0)
	}
	if err := tools.Validate(call); err != nil {
		return bad("args: %v", err)
	}
	for field, v := range s.strings() {
		if err := f.checkRefs(field, v); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// checkRefs reports a ${name} in v that is not a declared parameter.
func (f *Flow) checkRefs(field, v string) error {
	for _, m := range paramRef.FindAllStringSubmatch(v, -1) {
		if _, ok := f.Params[m[1]]; !ok {
			return fmt.Errorf("%s: ${%s} is not a declared parameter (declare it under params:)", field, m[1])
		}
	}
	return nil
}

func (s *Selector) validate() error {
	if strings.TrimSpace(s.ID+s.Text+s.Desc+s.Class) == "" {
		return errors.New("name the element by id, text or desc, or at least class (container and nth only narrow)")
	}
	if s.Nth < 0 {
		return fmt.Errorf("nth must be 0 or more, got %d", s.Nth)
	}
	return nil
}

func (x *Expect) validate() error {
	if x == nil {
		return nil
	}
	n := 0
	for _, set := range []bool{x.Changed, x.App != "", x.FieldText != "", x.Present != nil, x.Gone != nil, x.None} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("set exactly one of changed, app, field_text, present, gone, none (got %d)", n)
	}
	for _, sel := range []*Selector{x.Present, x.Gone} {
		if sel != nil {
			if err := sel.validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

// strings are the step's texts that may name parameters, by field.
func (s Step) strings() map[string]string {
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			out[path] = x
		case map[string]any:
			for k, val := range x {
				walk(path+"."+k, val)
			}
		case []any:
			for i, val := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), val)
			}
		}
	}
	walk("args", s.Args)
	out["intent"] = s.Intent
	for name, sel := range map[string]*Selector{"target": s.Target} {
		if sel != nil {
			out[name+".id"], out[name+".text"], out[name+".desc"] = sel.ID, sel.Text, sel.Desc
		}
	}
	if s.Expect != nil {
		out["expect.app"], out["expect.field_text"] = s.Expect.App, s.Expect.FieldText
	}
	return out
}

// call is the step's tool call with params substituted.
func (s Step) call(values map[string]string) (tools.Call, error) {
	args := substituteAny(s.Args, values)
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return tools.Call{}, err
	}
	return tools.Call{Name: s.Tool, Args: raw}, nil
}

// elementArg says whether a tool takes an "element" argument and whether
// it requires one, from its JSON Schema.
func elementArg(t *tools.Tool) (takes, required bool) {
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(t.Spec().Schema, &sch)
	_, takes = sch.Properties["element"]
	for _, r := range sch.Required {
		if r == "element" {
			required = true
		}
	}
	return takes, required
}

func toolNames() string {
	var names []string
	for _, t := range tools.All() {
		if !t.Ends() {
			names = append(names, t.Name())
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
