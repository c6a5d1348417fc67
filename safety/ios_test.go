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

// On an iPhone's screens (XCUIElementType classes, WDA's name as id, a label
// without text as the description) Buy now, Pay, Send, Delete and 删除 wait
// for a person as on Android, and Cancel beside them does not.
func TestIOSIrreversibleButtons(t *testing.T) {
	for _, tc := range []struct {
		pkg  string
		el   n
		want safety.Category
	}{
		{"com.taobao.taobao4iphone", n{class: "XCUIElementTypeButton", text: "Buy now", id: "buy_now", click: true}, safety.Payment},
		{"com.taobao.taobao4iphone", n{class: "XCUIElementTypeButton", text: "Pay", click: true}, safety.Payment},
		{"com.apple.MobileSMS", n{class: "XCUIElementTypeButton", desc: "Send", id: "sendButton", click: true}, safety.Send},
		{"com.apple.MobileAddressBook", n{class: "XCUIElementTypeButton", text: "Delete", click: true}, safety.Delete},
		{"com.apple.MobileAddressBook", n{class: "XCUIElementTypeButton", text: "删除", click: true}, safety.Delete},
		{"com.apple.MobileAddressBook", n{class: "XCUIElementTypeButton", text: "Cancel", click: true}, ""},
	} {
		tc.el.b = box(6)
		sc := build(tc.pkg, n{class: "XCUIElementTypeApplication", kids: []n{
			{class: "XCUIElementTypeNavigationBar", text: "Details", b: box(1)},
			tc.el,
		}})
		label := tc.el.text + tc.el.desc
		el := find(sc, label)
		d := check(t, safety.Input{Scene: sc, Call: tapOn(el), Element: el})
		switch {
		case tc.want == "" && d.Verdict != safety.Allow:
			t.Errorf("%s in %s: %s %s (%s), want allowed", label, tc.pkg, d.Verdict, d.Category, d.Reason)
		case tc.want != "" && (d.Verdict != safety.Confirm || d.Category != tc.want):
			t.Errorf("%s in %s: %s %s (%s), want confirm %s", label, tc.pkg, d.Verdict, d.Category, d.Reason, tc.want)
		}
	}
}
