package runtime

import (
	"context"
	"fmt"
	"strconv"

	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// strayField finds the field that took text meant for another one: a
// type_text whose focus tap was lost types into the field focused before
// (issue 12: the minutes replaced the hour, 22 → 50). It is an editable
// field other than the one the call names, that holds the typed text now
// and did not on base. It returns that field as it was on base and its
// index on after.
func strayField(call tools.Call, text string, base, after *scene.Scene) (scene.Element, int, bool) {
	target, ok := actedField(call, base, base)
	if !ok {
		return scene.Element{}, 0, false
	}
	for _, el := range after.Elements {
		if !el.Editable || (el.Bounds == target.Bounds && el.ResourceID == target.ResourceID) || !sameText(el.Text, text) {
			continue
		}
		for _, was := range base.Elements {
			if was.Editable && was.Bounds == el.Bounds && was.ResourceID == el.ResourceID && !sameText(was.Text, text) {
				return was, el.Index, true
			}
		}
	}
	return scene.Element{}, 0, false
}

// fieldContent is what a field holds as a person reads it: nothing when it
// shows its hint.
func fieldContent(el scene.Element) string {
	if el.Hint != "" && el.Text == el.Hint {
		return ""
	}
	return el.Text
}

// restoreStray puts back what a field held before text meant for another
// field replaced it, through the gate like any input, and checks it on a
// settled read. It returns the screen after, what it did in words for the
// step's record, and whether the field holds its old content again.
func (e *executor) restoreStray(ctx context.Context, was scene.Element, idx int, after *scene.Scene) (*scene.Scene, string, bool, error) {
	old := fieldContent(was)
	what := fmt.Sprintf("the text went into [%d] %q instead (its focus tap was lost)", idx, fieldLabel(was))
	cur := after
	for try := 1; try <= 2; try++ {
		call := tools.WithElement(tools.NewCall(tools.TypeText, tools.TypeTextArgs{Text: old}), idx)
		if d := e.judge(call, cur); d.Verdict != safety.Allow {
			// Putting text back is not worth a person's approval: nobody
			// is asked (asking and then not typing would waste their yes);
			// the step fails and says what happened.
			return cur, what + fmt.Sprintf("; not put back: the gate stops typing there (%s: %s)", d.Category, d.Reason), false, nil
		}
		if _, err := e.input(ctx, cur, call); err != nil {
			if ctx.Err() != nil {
				return cur, what, false, err
			}
			continue
		}
		holds := func(sc *scene.Scene) bool {
			el, ok := sc.Element(idx)
			return ok && el.Editable && el.Bounds == was.Bounds && el.ResourceID == was.ResourceID && sameText(fieldContent(el), old)
		}
		sc, err := e.settle(ctx, cur, holds, false, e.clock.Now())
		if err != nil {
			return cur, what, false, err
		}
		cur = sc
		if holds(sc) {
			return cur, what + "; put back " + strconv.Quote(old), true, nil
		}
	}
	return cur, what + "; could not put back " + strconv.Quote(old), false, nil
}

// fieldLabel names a field for a person: its hint, else its text.
func fieldLabel(el scene.Element) string {
	if el.Hint != "" {
		return el.Hint
	}
	if id := scene.IDName(el.ResourceID); id != "" {
		return id
	}
	return el.Text
}
