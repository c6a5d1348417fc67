package safety_test

import (
	"testing"

	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Every way of touching an element is judged as a tap on it: the tap and
// long press, the focusing tap of type_text (with text, without, with
// submit), a sideways scroll whose swipe stays on one clickable card, and
// Enter on a focused button. For each irreversible button, each way asks a
// person for the button's category; the same ways on a harmless button are
// allowed (issue 27: type_text {"element": Send SMS, "text": ""} sent).
func TestEveryTouchIsJudgedAsATap(t *testing.T) {
	// A card across the middle of a list: a sideways swipe there stays on
	// it, an upward or downward one leaves it.
	card := scene.Bounds{Left: 0, Top: 1000, Right: 1080, Bottom: 1400}
	cases := []struct {
		label string
		pkg   string
		want  safety.Category
	}{
		{"Send SMS", "com.google.android.apps.messaging", safety.Send},
		{"Buy now", "com.taobao.taobao", safety.Payment},
		{"Checkout", "com.example.shop", safety.Payment},
		{"Delete", app, safety.Delete},
		{"Open", app, ""},
	}
	for _, tc := range cases {
		sc := build(tc.pkg, n{kids: []n{
			{class: "androidx.recyclerview.widget.RecyclerView", b: scene.Bounds{Left: 0, Top: 600, Right: 1080, Bottom: 1800}, kids: []n{
				{class: "android.widget.Button", text: tc.label, click: true, focused: true, b: card},
			}},
			{class: "android.widget.EditText", text: "Search", editable: true, click: true, b: box(20)},
		}})
		btn := find(sc, tc.label)
		list := btn.Parent
		ways := map[string]tools.Call{
			"tap":                         tapOn(btn),
			"long_press":                  tools.NewCall(tools.LongPress, map[string]int{"element": btn.Index}),
			"type_text without text":      tools.NewCall(tools.TypeText, map[string]any{"element": btn.Index, "text": ""}),
			"type_text with text":         tools.NewCall(tools.TypeText, map[string]any{"element": btn.Index, "text": "hi"}),
			"type_text and submit":        tools.NewCall(tools.TypeText, map[string]any{"element": btn.Index, "text": "hi", "submit": true}),
			"scroll left in the list":     tools.NewCall(tools.Scroll, map[string]any{"element": list, "direction": "left"}),
			"scroll right":                tools.NewCall(tools.Scroll, map[string]any{"element": list, "direction": "right"}),
			"Enter on the focused button": tools.NewCall(tools.PressKey, map[string]string{"key": "enter"}),
		}
		for way, call := range ways {
			var el *scene.Element
			if i, ok := tools.ElementArg(call); ok {
				e := sc.Elements[i]
				el = &e
			}
			d := check(t, safety.Input{Scene: sc, Call: call, Element: el})
			want := safety.Confirm
			if tc.want == "" {
				want = safety.Allow
			}
			if d.Verdict != want || d.Category != tc.want {
				t.Errorf("%s on %q: %s %s (%s), want %s %s", way, tc.label, d.Verdict, d.Category, d.Reason, want, tc.want)
			}
		}
		// Scrolling the list up or down leaves the card: nothing clicks.
		for _, dir := range []string{"up", "down"} {
			call := tools.NewCall(tools.Scroll, map[string]any{"element": list, "direction": dir})
			if d := check(t, safety.Input{Scene: sc, Call: call}); d.Verdict != safety.Allow {
				t.Errorf("scroll %s past %q: %s %s", dir, tc.label, d.Verdict, d.Reason)
			}
		}
	}
}

// The permission grant of a fake "System update" dialog is a permission
// however it is touched; Enter in a search box and the delete key are
// nothing to gate.
func TestGrantByAnyTouchAndHarmlessKeys(t *testing.T) {
	sc := build("com.google.android.permissioncontroller", n{kids: []n{
		{class: "android.widget.TextView", text: "Allow System update to install apps?", b: box(8)},
		{class: "android.widget.Button", text: "Allow", id: "com.android.permissioncontroller:id/permission_allow_button", click: true, focused: true, b: box(10)},
		{class: "android.widget.Button", text: "Don't allow", click: true, b: box(11)},
	}})
	allow := find(sc, "Allow")
	for _, call := range []tools.Call{
		tapOn(allow),
		tools.NewCall(tools.TypeText, map[string]any{"element": allow.Index, "text": ""}),
		tools.NewCall(tools.PressKey, map[string]string{"key": "enter"}),
	} {
		if d := check(t, safety.Input{Scene: sc, Call: call, Element: allow}); d.Verdict != safety.Confirm || d.Category != safety.Permission {
			t.Errorf("%s: %s %s (%s), want confirm permission", call, d.Verdict, d.Category, d.Reason)
		}
	}
	search := build(app, n{kids: []n{{class: "android.widget.EditText", text: "Search", editable: true, focused: true, click: true, b: box(2)}}})
	for _, key := range []string{"enter", "delete", "back"} {
		call := tools.NewCall(tools.PressKey, map[string]string{"key": key})
		if d := check(t, safety.Input{Scene: search, Call: call}); d.Verdict != safety.Allow {
			t.Errorf("%s in a search box: %s %s", key, d.Verdict, d.Reason)
		}
	}
}

// A tap goes to the clickable element on top at its point: a row named by
// the call whose middle holds a Delete icon deletes. A grant button of the
// permission controller's dialog grants over any app, whichever package
// the Scene names (the dialog is a window over the app in front).
func TestWhatTheFingerLandsOn(t *testing.T) {
	sc := build(app, n{kids: []n{
		{class: "android.widget.LinearLayout", text: "Ana", click: true, b: scene.Bounds{Left: 0, Top: 900, Right: 1080, Bottom: 1100}, kids: []n{
			{class: "android.widget.ImageView", desc: "Delete", click: true, b: scene.Bounds{Left: 440, Top: 900, Right: 640, Bottom: 1100}},
		}},
	}})
	row := find(sc, "Ana")
	if d := check(t, safety.Input{Scene: sc, Call: tapOn(row), Element: row}); d.Verdict != safety.Confirm || d.Category != safety.Delete {
		t.Errorf("tap on a row with Delete under the finger: %s %s (%s), want confirm delete", d.Verdict, d.Category, d.Reason)
	}
	dialog := build("com.taobao.taobao", n{kids: []n{
		{class: "android.widget.Button", text: "While using the app", pkg: "com.google.android.permissioncontroller", click: true, b: box(12)},
	}})
	grant := find(dialog, "While using the app")
	if d := check(t, safety.Input{Scene: dialog, Call: tapOn(grant), Element: grant}); d.Verdict != safety.Confirm || d.Category != safety.Permission {
		t.Errorf("a grant button over another app: %s %s (%s), want confirm permission", d.Verdict, d.Category, d.Reason)
	}
}
