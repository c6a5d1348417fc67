package rule

import (
	"strings"
	"testing"

	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// On an iPhone "go back" taps the navigation bar's back button, which
// UIKit labels with the previous screen's title (so WDA gives it no name
// of its own): the bar's leading button, found by its place, in any
// language; a trailing button of the bar ("Edit") is not it. Without a
// bar it is BACK, which an iPhone refuses with its message.
func TestGoBackTapsTheNavigationBarsLeadingButton(t *testing.T) {
	sc := &scene.Scene{Width: 1080, Height: 2400, Package: "com.apple.Preferences", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "XCUIElementTypeApplication", Text: "Settings", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}, Enabled: true},
		{Index: 1, Parent: 0, Depth: 1, Class: "XCUIElementTypeNavigationBar", ResourceID: "Wi-Fi", Bounds: scene.Bounds{Top: 140, Right: 1080, Bottom: 280}, Enabled: true},
		{Index: 2, Parent: 1, Depth: 2, Class: "XCUIElementTypeButton", Text: "Edit", Bounds: scene.Bounds{Left: 900, Top: 160, Right: 1040, Bottom: 260}, Clickable: true, Enabled: true},
		{Index: 3, Parent: 1, Depth: 2, Class: "XCUIElementTypeButton", Text: "设置", Bounds: scene.Bounds{Left: 20, Top: 160, Right: 300, Bottom: 260}, Clickable: true, Enabled: true},
	}}
	st := backStep(sc, "go back", plan.Tag{})
	if st.Call.Name != tools.Tap || st.Target == nil {
		t.Fatalf("go back with a navigation bar: %s %s; want a tap on its back button", st.Call.Name, st.Call.Args)
	}
	if el, ok := sc.Resolve(*st.Target); !ok || el.Index != 3 {
		t.Fatalf("go back taps %+v (found %v); want the bar's leading button [3] \"设置\"", el, ok)
	}
	sc.Elements = sc.Elements[:1]
	if st := backStep(sc, "go back", plan.Tag{}); st.Call.Name != tools.PressKey || !strings.Contains(string(st.Call.Args), "back") {
		t.Fatalf("go back without a bar: %s %s; want press_key back", st.Call.Name, st.Call.Args)
	}
}
