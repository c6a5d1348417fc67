package flow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"phonepilot/tools"
)

// schemaCheck validates v against the subset of JSON Schema that
// docs/flow.schema.json uses, naming the path of the first problem.
type schemaCheck struct{ defs map[string]any }

func (c schemaCheck) check(path string, s map[string]any, v any) error {
	if ref, ok := s["$ref"].(string); ok {
		def, ok := c.defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: unknown $ref %s", path, ref)
		}
		return c.check(path, def, v)
	}
	if typ, ok := s["type"].(string); ok && !isType(typ, v) {
		return fmt.Errorf("%s: want %s, got %T", path, typ, v)
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return fmt.Errorf("%s: %v is not one of %v", path, v, enum)
	}
	if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(fmt.Sprint(v)) {
		return fmt.Errorf("%s: %q does not match %s", path, v, p)
	}
	if n, ok := s["minLength"].(float64); ok && len([]rune(fmt.Sprint(v))) < int(n) {
		return fmt.Errorf("%s: shorter than %v", path, n)
	}
	if n, ok := s["minimum"].(float64); ok && toFloat(v) < n {
		return fmt.Errorf("%s: below %v", path, n)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range anyList(s["required"]) {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: %s is required", path, r)
			}
		}
		if n, ok := s["minProperties"].(float64); ok && len(x) < int(n) {
			return fmt.Errorf("%s: fewer than %v properties", path, n)
		}
		if n, ok := s["maxProperties"].(float64); ok && len(x) > int(n) {
			return fmt.Errorf("%s: more than %v properties", path, n)
		}
		props, _ := s["properties"].(map[string]any)
		for k, val := range x {
			if pn, ok := s["propertyNames"].(map[string]any); ok {
				if err := c.check(path+" (name)", pn, k); err != nil {
					return err
				}
			}
			if ps, ok := props[k].(map[string]any); ok {
				if err := c.check(path+"."+k, ps, val); err != nil {
					return err
				}
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: unknown property %q", path, k)
				}
			case map[string]any:
				if err := c.check(path+"."+k, ap, val); err != nil {
					return err
				}
			}
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && len(x) < int(n) {
			return fmt.Errorf("%s: fewer than %v items", path, n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, val := range x {
				if err := c.check(fmt.Sprintf("%s[%d]", path, i), items, val); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isType(typ string, v any) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		switch n := v.(type) {
		case int:
			return true
		case float64:
			return n == float64(int64(n))
		}
	}
	return false
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

func anyList(v any) []any { l, _ := v.([]any); return l }

// schemaPath is the flow file's JSON Schema.
const schemaPath = "../docs/flow.schema.json"

func loadSchema(t *testing.T) (map[string]any, schemaCheck) {
	t.Helper()
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	defs, _ := s["$defs"].(map[string]any)
	return s, schemaCheck{defs: defs}
}

// examples are every flow the project shows: testdata/*.yaml (the golden
// export among them) and the ```yaml blocks of docs/flows.md.
func examples(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	doc, err := os.ReadFile("../docs/flows.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1) {
		out[fmt.Sprintf("docs/flows.md block %d", i+1)] = m[1]
	}
	if len(out) < 3 {
		t.Fatalf("only %d example flows found", len(out))
	}
	return out
}

func TestEveryExampleFlowParsesAndFitsTheSchema(t *testing.T) {
	s, c := loadSchema(t)
	for name, data := range examples(t) {
		if _, err := Parse(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := c.check("flow", s, v); err != nil {
			t.Errorf("%s does not fit docs/flow.schema.json: %v", name, err)
		}
	}
}

// The schema describes the structs Parse reads: the same fields, and the
// tools a step may name.
func TestSchemaMatchesTheFormat(t *testing.T) {
	if os.Getenv("UPDATE_GOLDEN") != "" {
		writeSchemaTools(t)
	}
	s, c := loadSchema(t)
	props := func(m map[string]any) []string {
		p, _ := m["properties"].(map[string]any)
		var out []string
		for k := range p {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			if tag := strings.Split(rt.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" {
				out = append(out, tag)
			}
		}
		sort.Strings(out)
		return out
	}
	for def, v := range map[string]any{"": Flow{}, "recorded": Recorded{}, "param": Param{}, "step": Step{}, "selector": Selector{}, "expect": Expect{}} {
		m := s
		if def != "" {
			m = c.defs[def].(map[string]any)
		}
		if got, want := props(m), fields(v); !slices.Equal(got, want) {
			t.Errorf("schema %q has properties %v; the Go type has %v", def, got, want)
		}
	}
	step := c.defs["step"].(map[string]any)["properties"].(map[string]any)["tool"].(map[string]any)
	var enum []string
	for _, e := range anyList(step["enum"]) {
		enum = append(enum, e.(string))
	}
	if names := stepTools(); !slices.Equal(enum, names) {
		t.Errorf("schema tools %v, want the tools a step may use, in the registry's order %v (UPDATE_GOLDEN=1 go test ./flow -run TestSchemaMatchesTheFormat writes them)", enum, names)
	}
}

// stepTools is the registry's tools a step may name: all but the one that
// ends a task.
func stepTools() []string {
	var names []string
	for _, tl := range tools.All() {
		if !tl.Ends() {
			names = append(names, tl.Name())
		}
	}
	return names
}

// schemaToolEnum is the step's tool enum in docs/flow.schema.json.
var schemaToolEnum = regexp.MustCompile(`("tool": \{ "type": "string", "enum": )\[[^\]]*\]`)

// writeSchemaTools writes the registry's step tools into the schema's enum
// under UPDATE_GOLDEN=1, so that a new tool reaches the schema without an
// edit by hand.
func writeSchemaTools(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	if !schemaToolEnum.Match(raw) {
		t.Fatalf("%s: no step tool enum of the form %s", schemaPath, schemaToolEnum)
	}
	list, err := json.Marshal(stepTools())
	if err != nil {
		t.Fatal(err)
	}
	enum := strings.ReplaceAll(string(list), `","`, `", "`)
	out := schemaToolEnum.ReplaceAllFunc(raw, func(m []byte) []byte {
		return append(schemaToolEnum.FindSubmatch(m)[1], enum...)
	})
	if err := os.WriteFile(schemaPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A flow the schema refuses is refused by Parse too, with the line.
func TestBadFlowsAreRefusedWithTheirLine(t *testing.T) {
	s, c := loadSchema(t)
	const head = "version: 1\ngoal: open Taobao and search ${query}\nparams:\n  query: {default: Mac mini}\nsteps:\n"
	cases := []struct {
		name, body, want string
		schemaToo        bool
	}{
		{"unknown field", "  - tool: tap\n    target: {id: search}\n    colour: red\n", "line 8: field colour not found", true},
		{"unknown selector field", "  - tool: tap\n    target: {id: search, x: 10}\n", "line 7: field x not found", true},
		{"bad yaml", "  - tool: tap\n   target: {id: search\n", "line", false},
		{"unknown tool", "  - tool: swipe_left\n", "line 6: step 1: unknown tool \"swipe_left\"", true},
		{"finish_task", "  - tool: finish_task\n    args: {success: true, reason: done}\n", "line 6: step 1: finish_task is not a step", true},
		{"index", "  - tool: tap\n    args: {element: 4}\n", "line 6: step 1: args.element: name the element with target", false},
		{"no target", "  - tool: launch_app\n    args: {app: Taobao}\n  - tool: tap\n", "line 8: step 2: tap needs a target", false},
		{"position only", "  - tool: tap\n    target: {nth: 2}\n", "line 6: step 1: target: name the element by id, text or desc, or at least class", false},
		{"bad argument", "  - tool: scroll\n    args: {direction: sideways}\n", "line 6: step 1: args:", false},
		{"undeclared param", "  - tool: type_text\n    target: {id: search_edit}\n    args: {text: \"${qeury}\"}\n", "line 6: step 1: args.text: ${qeury} is not a declared parameter", false},
		{"two expectations", "  - tool: tap\n    target: {id: search}\n    expect: {changed: true, app: Taobao}\n", "line 6: step 1: expect: set exactly one", true},
		{"no steps", "  []\n", "steps: a flow needs at least one step", true},
	}
	for _, tc := range cases {
		data := []byte(head + tc.body)
		_, err := Parse(data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if tc.schemaToo {
			var v any
			if yaml.Unmarshal(data, &v) == nil && c.check("flow", s, v) == nil {
				t.Errorf("%s: the schema accepts what Parse refuses", tc.name)
			}
		}
	}
	if _, err := Parse([]byte("")); err == nil {
		t.Error("an empty file parsed")
	}
	if _, err := Parse([]byte(head + "  - tool: wait\n    args: {seconds: 1}\n---\nversion: 1\n")); err == nil || !strings.Contains(err.Error(), "one flow per file") {
		t.Errorf("two documents: %v", err)
	}
}

func TestParametersBind(t *testing.T) {
	f, err := Parse([]byte("version: 1\ngoal: search ${query} as ${who}\nparams:\n  query: {default: Mac mini}\n  who: {}\nsteps:\n  - tool: type_text\n    target: {id: search_edit}\n    args: {text: \"${query}\", submit: true}\n    expect: {field_text: \"${query}\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Bind(nil); err == nil || !strings.Contains(err.Error(), `"who" has no default`) {
		t.Errorf("missing value: %v", err)
	}
	if _, err := f.Bind(map[string]string{"who": "me", "qurey": "x"}); err == nil || !strings.Contains(err.Error(), `no parameter "qurey"`) {
		t.Errorf("unknown parameter: %v", err)
	}
	b, err := f.Bind(map[string]string{"who": "me"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Goal != "search Mac mini as me" || b.Steps[0].Args["text"] != "Mac mini" || b.Steps[0].Expect.FieldText != "Mac mini" {
		t.Errorf("bound: %q %v %+v", b.Goal, b.Steps[0].Args, b.Steps[0].Expect)
	}
	if f.Steps[0].Args["text"] != "${query}" {
		t.Error("Bind changed the flow it was called on")
	}
	if _, err := ParseSets([]string{"query"}); err == nil {
		t.Error("--set without = accepted")
	}
}
