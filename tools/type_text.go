package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"phonepilot/device"
	"phonepilot/scene"
)

// TypeText is the name of the type_text tool.
const TypeText = "type_text"

// TypeTextArgs are type_text's arguments.
type TypeTextArgs struct {
	Text    string `json:"text"`
	Element *Index `json:"element,omitempty"`
	Submit  bool   `json:"submit,omitempty"`
}

var typeTextTool = register(&Tool{
	name:        TypeText,
	description: "Type text into a text field, replacing what the field holds. If `element` is given, that field is tapped first to focus it; otherwise the text goes to the field that has focus now. Any Unicode is fine (Chinese, emoji). Set `submit` to press Enter afterwards (for example to run a search).",
	schemaText: `{
  "type": "object",
  "properties": {
    "text": {"type": "string", "description": "The text the field should hold afterwards; it replaces the current content. An empty string clears the field."},
    "element": {"type": "integer", "minimum": 0, "description": "Optional: the [N] index of the text field in the CURRENT screen listing; it is tapped to focus it before typing."},
    "submit": {"type": "boolean", "description": "Optional: press Enter after typing (default false)."}
  },
  "required": ["text"],
  "additionalProperties": false
}`,
	example: Example{`{"text":"Mac mini","element":3,"submit":true}`, `typed 8 characters into [3] and pressed enter`},
	// The element is tapped to focus it: a tap the gate judges like any
	// other, and one that only a text field may get (check).
	inputs: func(c Call, env *runEnv) []Input {
		a := args[TypeTextArgs](c)
		var ins []Input
		into, on := "the focused field", focused(env.sc)
		if env.el != nil {
			ins = append(ins, touch(InputTap, env.sc, env.el, env.target, fmt.Sprintf("type_text: focus [%d]", env.el.Index)))
			into, on = "["+strconv.Itoa(env.el.Index)+"]", env.el.Index
		}
		ins = append(ins, Input{Kind: InputText, On: on, Hit: -1, Text: a.Text, what: "type_text into " + into})
		if a.Submit {
			ins = append(ins, Input{Kind: InputKey, On: on, Hit: -1, Key: device.KeyEnter, what: "type_text: submit (enter)"})
		}
		return ins
	},
	check: func(c Call, env *runEnv) error {
		if env.el != nil && !TextTarget(env.sc, *env.el) {
			return &NotTextError{Element: *env.el}
		}
		return nil
	},
	run: func(_ context.Context, env *runEnv, c Call) (Result, error) {
		a := args[TypeTextArgs](c)
		into := "the focused field"
		if env.el != nil {
			into = "[" + strconv.Itoa(env.el.Index) + "]"
		}
		res := Result{Element: env.el, Text: fmt.Sprintf("typed %d characters into %s", utf8.RuneCountInString(a.Text), into)}
		if a.Submit {
			res.Text += " and pressed enter"
		}
		return res, nil
	},
	act: func(c Call) Act {
		a := args[TypeTextArgs](c)
		return Act{Kind: ActType, Text: a.Text, Submit: a.Submit}
	},
	intent: func(c Call, target string) string {
		a := args[TypeTextArgs](c)
		s := "type " + strconv.Quote(oneLine(a.Text, 60))
		if target != "" {
			s += " into " + target
		}
		if a.Submit {
			s += " and submit"
		}
		return s
	},
	// Typing expects the text in a field; a submit navigates (a search
	// leaves the search page), so it expects more than the fields to change.
	effect: func(c Call) Effect {
		a := args[TypeTextArgs](c)
		if a.Submit {
			return Effect{Kind: EffectChange}
		}
		return Effect{Kind: EffectFieldText, Text: a.Text}
	},
	changed: func(c Call, o Outcome) (bool, string) {
		if !submits(c) {
			if o.Changed {
				return true, ""
			}
			return false, "the screen did not change"
		}
		if ChangedBeyondFields(o.Before, o.After) {
			return true, ""
		}
		return false, "the screen did not change after submitting"
	},
	// The text in a field is the effect: typing it again would type it
	// twice into fields that append.
	tookEffect: func(c Call, o Outcome) bool { return FieldHolds(o.After, args[struct{ Text string }](c).Text) },
	// The text is in the field but the submit did not land: press enter,
	// never type the query again.
	remainder: func(c Call, o Outcome) (Call, string, bool) {
		if !submits(c) || ChangedBeyondFields(o.Before, o.After) {
			return Call{}, "", false
		}
		return NewCall(PressKey, PressKeyArgs{Key: string(device.KeyEnter)}), "text already typed", true
	},
})

// submits reports a type_text call that presses Enter afterwards. It
// decodes that one argument only: settling asks on every read.
func submits(c Call) bool { return args[struct{ Submit bool }](c).Submit }

// FieldHolds reports whether an editable field on the screen holds text
// (compared without case and surrounding space).
func FieldHolds(sc *scene.Scene, text string) bool {
	if sc == nil {
		return false
	}
	want := normalize(text)
	for _, el := range sc.Elements {
		if el.Editable && normalize(el.Text) == want {
			return true
		}
	}
	return false
}

func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// ChangedBeyondFields reports whether the screen changed in more than the
// text of its editable fields (a submit navigates; typing only edits). The
// activity is not compared: the driver reads it apart from the dump, and
// right after a submit it names the new activity while the dump still shows
// the old page (issue 12: the search page taken for the results).
func ChangedBeyondFields(a, b *scene.Scene) bool {
	if a == nil || b == nil {
		return a != b
	}
	if a.Package != b.Package || len(a.Elements) != len(b.Elements) {
		return true
	}
	for i := range a.Elements {
		x, y := a.Elements[i], b.Elements[i]
		if x.Editable && y.Editable {
			continue
		}
		if x.Class != y.Class || x.Text != y.Text || x.Desc != y.Desc || x.ResourceID != y.ResourceID || x.Bounds != y.Bounds {
			return true
		}
	}
	return false
}
