package safety_test

import (
	"testing"

	"phonepilot/safety"
)

// An iPhone's permission request is a system alert, which device/wda shows
// as a window of SpringBoard's above the app: its Allow grants a
// permission like the Android permission controller's; its refusal and
// an app's own "Allow" row elsewhere are nothing.
func TestIOSPermissionAlert(t *testing.T) {
	const springboard = "com.apple.springboard"
	sc := build("com.taobao.taobao4iphone",
		n{class: "XCUIElementTypeApplication", kids: []n{
			{class: "XCUIElementTypeCell", text: "Allow notifications", click: true, b: box(3)},
		}},
		n{class: "XCUIElementTypeAlert", pkg: springboard, kids: []n{
			{class: "XCUIElementTypeStaticText", text: "“Taobao” Would Like to Send You Notifications", pkg: springboard, b: box(8)},
			{class: "XCUIElementTypeButton", text: "Don’t Allow", pkg: springboard, click: true, b: box(10)},
			{class: "XCUIElementTypeButton", text: "Allow", pkg: springboard, click: true, b: box(11)},
		}},
	)
	allow, dont, row := find(sc, "Allow"), find(sc, "Don’t Allow"), find(sc, "Allow notifications")
	if d := check(t, safety.Input{Scene: sc, Call: tapOn(allow), Element: allow}); d.Verdict != safety.Confirm || d.Category != safety.Permission {
		t.Errorf("Allow in the iPhone's alert: %s %s (%s), want confirm permission", d.Verdict, d.Category, d.Reason)
	}
	if d := check(t, safety.Input{Scene: sc, Call: tapOn(dont), Element: dont}); d.Verdict != safety.Allow {
		t.Errorf("Don’t Allow: %s %s (%s), want allowed", d.Verdict, d.Category, d.Reason)
	}
	if d := check(t, safety.Input{Scene: sc, Call: tapOn(row), Element: row}); d.Category == safety.Permission {
		t.Errorf("the app's own settings row: %s %s (%s), not a permission grant", d.Verdict, d.Category, d.Reason)
	}
}
