package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/scene"
)

func TestSpecsFollowTheContract(t *testing.T) {
	want := registered()
	specs := Specs()
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d (one per registered tool)", len(specs), len(want))
	}
	for i, s := range specs {
		if s.Name != want[i] {
			t.Errorf("spec %d is %q, want %q (the registry's order)", i, s.Name, want[i])
		}
		if len(s.Description) < 30 {
			t.Errorf("%s: description too short for a model: %q", s.Name, s.Description)
		}
		var sch map[string]any
		if err := json.Unmarshal(s.Schema, &sch); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", s.Name, err)
		}
		if sch["type"] != "object" || sch["additionalProperties"] != false {
			t.Errorf("%s: schema must be a closed object: %s", s.Name, s.Schema)
		}
		props, _ := sch["properties"].(map[string]any)
		for name, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s: argument %q has no description", s.Name, name)
			}
		}
		got, ok := SpecFor(s.Name)
		if !ok || got.Name != s.Name || string(got.Schema) != string(s.Schema) {
			t.Errorf("SpecFor(%q) = %v, %v", s.Name, got.Name, ok)
		}
	}
	if _, ok := SpecFor("click"); ok {
		t.Error("SpecFor found a tool that is not in the contract")
	}
	// The arguments of TOOLS.md, exactly, and launch_app's optional stop
	// (a flow starts its app from its first screen, as Maestro's launchApp
	// with stopApp; docs/flows.md).
	args := map[string][]string{
		"tap": {"element"}, "long_press": {"element"}, "type_text": {"text", "element", "submit"},
		"scroll": {"direction", "element"}, "press_key": {"key"}, "launch_app": {"app", "stop"},
		"wait": {"seconds"}, "finish_task": {"success", "reason"},
	}
	for name, want := range args {
		if got := byName[name].schema.propOrder; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s arguments = %v, want %v", name, got, want)
		}
	}
	// Descriptions a model relies on.
	for name, phrase := range map[string]string{
		"tap": "CURRENT", "scroll": "`down` shows what is below", "wait": "0.1 and 10", "finish_task": "only way",
	} {
		if s, _ := SpecFor(name); !strings.Contains(s.Description, phrase) {
			t.Errorf("%s description lacks %q: %s", name, phrase, s.Description)
		}
	}
}

func TestSpecsAreCopies(t *testing.T) {
	s := Specs()
	s[0].Schema[0] = 'X'
	s[0].Name = "changed"
	if again := Specs(); again[0].Name != "tap" || again[0].Schema[0] != '{' {
		t.Fatal("modifying the result of Specs changed the package's specs")
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		tool, args string
		want       string // "" = valid; otherwise the exact error message
		arg        string // the argument the error names
	}{
		// Valid calls, one or more per tool.
		{"tap", `{"element":4}`, "", ""},
		{"tap", `{"element":4.0}`, "", ""}, // JSON Schema: 4.0 is an integer
		{"long_press", `{"element":0}`, "", ""},
		{"type_text", `{"text":"淘宝 Mac mini 🍎"}`, "", ""},
		{"type_text", `{"text":"","element":3,"submit":true}`, "", ""},
		{"scroll", `{"direction":"down"}`, "", ""},
		{"scroll", `{"direction":"left","element":12}`, "", ""},
		{"press_key", `{"key":"app_switch"}`, "", ""},
		{"launch_app", `{"app":"设置"}`, "", ""},
		{"wait", `{"seconds":0.1}`, "", ""},
		{"wait", `{"seconds":10}`, "", ""},
		{"finish_task", `{"success":false,"reason":"no network"}`, "", ""},
		{"tap", ` {"element": 4} `, "", ""},

		// Missing required.
		{"tap", `{}`, `tap: argument "element": required`, "element"},
		{"tap", ``, `tap: argument "element": required`, "element"},
		{"tap", `null`, `tap: argument "element": required`, "element"},
		{"long_press", `{}`, `long_press: argument "element": required`, "element"},
		{"type_text", `{"element":3}`, `type_text: argument "text": required`, "text"},
		{"scroll", `{"element":3}`, `scroll: argument "direction": required`, "direction"},
		{"press_key", `{}`, `press_key: argument "key": required`, "key"},
		{"launch_app", `{}`, `launch_app: argument "app": required`, "app"},
		{"wait", `{}`, `wait: argument "seconds": required`, "seconds"},
		{"finish_task", `{"reason":"done"}`, `finish_task: argument "success": required`, "success"},
		{"finish_task", `{"success":true}`, `finish_task: argument "reason": required`, "reason"},

		// Wrong type: integer vs number vs string vs boolean.
		{"tap", `{"element":"4"}`, `tap: argument "element": must be an integer, got string "4"`, "element"},
		{"tap", `{"element":4.5}`, `tap: argument "element": must be an integer, got 4.5`, "element"},
		{"tap", `{"element":true}`, `tap: argument "element": must be an integer, got boolean true`, "element"},
		{"tap", `{"element":null}`, `tap: argument "element": must be an integer, got null`, "element"},
		{"long_press", `{"element":[1]}`, `long_press: argument "element": must be an integer, got an array`, "element"},
		{"type_text", `{"text":42}`, `type_text: argument "text": must be a string, got number 42`, "text"},
		{"type_text", `{"text":"x","submit":"yes"}`, `type_text: argument "submit": must be a boolean (true or false), got string "yes"`, "submit"},
		{"type_text", `{"text":"x","element":{}}`, `type_text: argument "element": must be an integer, got an object`, "element"},
		{"scroll", `{"direction":1}`, `scroll: argument "direction": must be a string, got number 1`, "direction"},
		{"press_key", `{"key":false}`, `press_key: argument "key": must be a string, got boolean false`, "key"},
		{"launch_app", `{"app":["Taobao"]}`, `launch_app: argument "app": must be a string, got an array`, "app"},
		{"wait", `{"seconds":"2"}`, `wait: argument "seconds": must be a number, got string "2"`, "seconds"},
		{"finish_task", `{"success":"true","reason":"x"}`, `finish_task: argument "success": must be a boolean (true or false), got string "true"`, "success"},
		{"finish_task", `{"success":true,"reason":1}`, `finish_task: argument "reason": must be a string, got number 1`, "reason"},

		// Enum.
		{"scroll", `{"direction":"sideways"}`, `scroll: argument "direction": must be one of up, down, left, right`, "direction"},
		{"scroll", `{"direction":"DOWN"}`, `scroll: argument "direction": must be one of up, down, left, right`, "direction"},
		{"press_key", `{"key":"menu"}`, `press_key: argument "key": must be one of back, home, enter, app_switch, delete`, "key"},

		// Minimum, maximum, minLength.
		{"tap", `{"element":-1}`, `tap: argument "element": must be at least 0, got -1`, "element"},
		{"scroll", `{"direction":"up","element":-3}`, `scroll: argument "element": must be at least 0, got -3`, "element"},
		{"wait", `{"seconds":0.05}`, `wait: argument "seconds": must be at least 0.1, got 0.05`, "seconds"},
		{"wait", `{"seconds":0}`, `wait: argument "seconds": must be at least 0.1, got 0`, "seconds"},
		{"wait", `{"seconds":10.5}`, `wait: argument "seconds": must be at most 10, got 10.5`, "seconds"},
		{"wait", `{"seconds":1e400}`, `wait: argument "seconds": is out of range, got 1e400`, "seconds"},
		{"launch_app", `{"app":""}`, `launch_app: argument "app": must not be empty`, "app"},

		// Unknown property.
		{"tap", `{"element":1,"x":5}`, `tap: argument "x": unknown argument; valid arguments: element`, "x"},
		{"finish_task", `{"success":true,"reason":"ok","status":"done"}`, `finish_task: argument "status": unknown argument; valid arguments: success, reason`, "status"},
		{"wait", `{"seconds":1,"ms":1000}`, `wait: argument "ms": unknown argument; valid arguments: seconds`, "ms"},

		// Not an object, not JSON.
		{"tap", `[4]`, `tap: arguments must be a JSON object, got an array`, ""},
		{"tap", `4`, `tap: arguments must be a JSON object, got number 4`, ""},
		{"type_text", `"hello"`, `type_text: arguments must be a JSON object, got string "hello"`, ""},
		{"tap", `{"element":4`, `tap: arguments are not valid JSON: unexpected EOF`, ""},
		{"tap", `{"element":4}{"element":5}`, `tap: arguments are not valid JSON: extra data after the object`, ""},
		{"scroll", `direction=down`, `scroll: arguments are not valid JSON: invalid character 'd' looking for beginning of value`, ""},
	}
	for _, tc := range cases {
		err := Validate(Call{Name: tc.tool, Args: json.RawMessage(tc.args)})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %s: unexpected error %v", tc.tool, tc.args, err)
			}
			continue
		}
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s %s: got %v, want *ArgError %q", tc.tool, tc.args, err, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.tool, tc.args, err, tc.want)
		}
		if ae.Tool != tc.tool || ae.Arg != tc.arg {
			t.Errorf("%s %s: ArgError{Tool:%q Arg:%q}, want Tool %q Arg %q", tc.tool, tc.args, ae.Tool, ae.Arg, tc.tool, tc.arg)
		}
	}
}

func TestValidateUnknownTool(t *testing.T) {
	for _, name := range []string{"click", "", "Tap", "finish"} {
		err := Validate(Call{Name: name, Args: json.RawMessage(`{}`)})
		if !errors.Is(err, ErrUnknownTool) {
			t.Fatalf("%q: got %v, want ErrUnknownTool", name, err)
		}
		want := `unknown tool "` + name + `"; valid tools: ` + strings.Join(registered(), ", ")
		if err.Error() != want {
			t.Errorf("got  %s\nwant %s", err, want)
		}
	}
}

// The first error is the same whatever order the model wrote the keys in.
func TestValidateIsDeterministic(t *testing.T) {
	a := Validate(Call{Name: "scroll", Args: json.RawMessage(`{"zz":1,"element":-1,"direction":"x"}`)})
	b := Validate(Call{Name: "scroll", Args: json.RawMessage(`{"direction":"x","element":-1,"zz":1}`)})
	if a == nil || b == nil || a.Error() != b.Error() {
		t.Fatalf("order-dependent: %v / %v", a, b)
	}
	if !strings.Contains(a.Error(), `"direction"`) {
		t.Fatalf("want the first schema argument reported first, got %v", a)
	}
}

func TestSchemaSubsetIsEnforced(t *testing.T) {
	for _, bad := range []string{
		`{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}`,
		`{"type":"object","oneOf":[]}`,
		`{"type":"array"}`,
		`{"type":"object","properties":{},"required":["a"]}`,
	} {
		if _, err := parseSchema([]byte(bad)); err == nil {
			t.Errorf("parseSchema accepted %s", bad)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"element":4}`, `{"text":"x","submit":true}`, `[]`, `{"seconds":1e3}`, ``} {
		f.Add("tap", s)
		f.Add("type_text", s)
		f.Add("wait", s)
		f.Add("scroll", s)
		f.Add("finish_task", s)
	}
	f.Add("tap", `{"element":1}`)
	f.Add("scroll", `{"direction":"down","element":0}`)
	f.Fuzz(func(t *testing.T, name, args string) {
		c := Call{Name: name, Args: json.RawMessage(args)}
		err := Validate(c)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) || err.Error() == "" {
				t.Fatalf("not a descriptive ArgError: %#v", err)
			}
		}
		_, _ = ElementArg(c)
		_ = WithElement(c, 1)
		// Run must not panic either, and a call Validate rejects must not
		// reach the device.
		dev := fake.New()
		sc := &scene.Scene{Width: 100, Height: 100, Elements: []scene.Element{{Index: 0, Bounds: scene.Bounds{Right: 100, Bottom: 100}}, {Index: 1}}}
		_, runErr := Run(context.Background(), dev, sc, c, RunOptions{Clock: clock.NewFake(time.Time{})})
		if err != nil && (runErr == nil || len(dev.Calls()) > 0) {
			t.Fatalf("invalid call %s ran: %v, calls %v", c, runErr, dev.Calls())
		}
	})
}
