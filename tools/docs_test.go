package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/scene"
)

// docsPath is the tool reference generated from Specs. TestDocsAreCurrent
// fails when it differs; UPDATE_GOLDEN=1 rewrites it.
var docsPath = filepath.Join("..", "docs", "tools.md")

func TestDocsAreCurrent(t *testing.T) {
	want := renderDocs()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(docsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("%v (run UPDATE_GOLDEN=1 go test ./tools -run TestDocsAreCurrent)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with the tool specs; run UPDATE_GOLDEN=1 go test ./tools -run TestDocsAreCurrent", docsPath)
	}
}

func renderDocs() []byte {
	var b strings.Builder
	b.WriteString(`# Capability tools

<!-- Generated from tools.Specs() by TestDocsAreCurrent (tools/docs_test.go).
     Do not edit by hand: UPDATE_GOLDEN=1 go test ./tools -run TestDocsAreCurrent -->

Every action, whoever plans it (the rule Planner, the AIPlanner, an MCP
client), is one of these tool calls: a name and a JSON object of arguments.
The contract is the design's TOOLS.md; this page is what the code
implements (package ` + "`tools`" + `).

- ` + "`element`" + ` is the [N] index of an element in the Scene the call was
  planned on (the current listing). It is resolved in that Scene to the
  element's bounds; taps and presses aim at the centre of the part that is
  on screen. An index not in the Scene is an error
  (` + "`no element 57; valid 0..41`" + `), as is an element with no area on
  screen; in both cases nothing touches the device.
- Arguments are validated against the schema below before anything else
  (` + "`tools.Validate`" + `): unknown tool, arguments that are not one JSON
  object, a missing required argument, a wrong JSON type (integer, number,
  string, boolean; 4.0 counts as an integer), a value outside its enum or
  range, and an unknown argument are each an error naming the argument and
  why, e.g. ` + "`type_text: argument \"text\": required`" + `,
  ` + "`scroll: argument \"direction\": must be one of up, down, left, right`" + `.
  Empty or null arguments count as ` + "`{}`" + `.
- Gestures: long press holds 800 ms; scroll is a 300 ms swipe along the
  scroll axis, the finger moving against the direction so that ` + "`down`" + `
  reveals what is below: in an element from 90% to 10% of it (uiautomator's
  UiScrollable keeps the same 10% margin), so one scroll brings 80% of the
  list into view and keeps a fifth of what it showed; on the screen's
  middle (no element) from 75% to 25%, clear of the screen-edge gesture
  zones and short of a list that does not fill the screen.
  ` + "`type_text`" + ` with an element taps it first, then replaces the focused
  field's content, then presses Enter if ` + "`submit`" + `. ` + "`wait`" + ` sleeps on the
  injected clock and ends early when the task is cancelled.
- Results are one short line a model can read; device errors are wrapped
  with the tool and element (` + "`tap [4]: device disconnected`" + `) so
  ` + "`errors.Is`" + ` finds the driver's sentinels.

`)
	for _, t := range All() {
		s, sch := t.Spec(), t.schema
		fmt.Fprintf(&b, "## `%s`\n\n%s\n\n", s.Name, s.Description)
		b.WriteString("| argument | type | required | allowed | description |\n|---|---|---|---|---|\n")
		for _, name := range sch.propOrder {
			p := sch.Properties[name]
			req := "no"
			for _, r := range sch.Required {
				if r == name {
					req = "yes"
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", name, p.Type, req, allowed(p), p.Description)
		}
		ex := t.Example()
		fmt.Fprintf(&b, "\nExample: `%s %s` → `%s`\n\n", s.Name, ex.Args, ex.Result)
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, s.Schema, "", "  ")
		fmt.Fprintf(&b, "<details><summary>JSON Schema</summary>\n\n```json\n%s\n```\n\n</details>\n\n", pretty.String())
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

func allowed(p *schema) string {
	var parts []string
	if len(p.Enum) > 0 {
		opts := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			opts[i] = fmt.Sprintf("`%v`", e)
		}
		parts = append(parts, strings.Join(opts, ", "))
	}
	if p.Minimum != nil {
		parts = append(parts, "≥ "+formatNumber(*p.Minimum))
	}
	if p.Maximum != nil {
		parts = append(parts, "≤ "+formatNumber(*p.Maximum))
	}
	if p.MinLength != nil && *p.MinLength > 0 {
		parts = append(parts, "not empty")
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, "; ")
}

// The examples above must be what Run really answers.
func TestDocExamplesAreTrue(t *testing.T) {
	sc := &scene.Scene{Width: 1080, Height: 2400, Elements: make([]scene.Element, 13)}
	for i := range sc.Elements {
		sc.Elements[i] = scene.Element{Index: i, Class: "android.view.View", Bounds: scene.Bounds{Left: 0, Top: 100 * i, Right: 1080, Bottom: 100*i + 90}}
	}
	sc.Elements[3].Class, sc.Elements[3].Editable = "android.widget.EditText", true
	sc.Elements[4].Class, sc.Elements[4].Text = "android.widget.Button", "Search"
	sc.Elements[7].Class, sc.Elements[7].Text = "android.widget.TextView", "Mac mini M4 16GB"
	for _, tool := range All() {
		ex := tool.Example()
		if ex.Args == "" {
			t.Errorf("no doc example for %s", tool.Name())
			continue
		}
		res, err := Run(context.Background(), fake.New(), sc, Call{Name: tool.Name(), Args: json.RawMessage(ex.Args)}, RunOptions{Clock: clock.NewFake(time.Time{})})
		if err != nil {
			t.Errorf("doc example for %s fails: %v", tool.Name(), err)
		} else if res.Text != ex.Result {
			t.Errorf("doc example for %s says %q; Run says %q", tool.Name(), ex.Result, res.Text)
		}
	}
}
