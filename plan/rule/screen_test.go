package rule

import (
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// consentWords are buttons that agree to something: terms, a permission,
// a purchase. A popup rule that presses them does what nobody asked for.
var consentWords = map[string]bool{"同意": true, "agree": true, "ok": true, "allow": true, "允许": true, "确定": true,
	"accept": true, "同意并继续": true, "i agree": true}

// consentDialog is a Taobao home page under a dialog whose buttons are the
// given labels.
func consentDialog(buttons ...string) *scene.Scene {
	nodes := []node{
		{class: "android.widget.LinearLayout", id: tb + ":id/home_searchbar", click: true, l: 40, t: 150, r: 1040, b: 270},
		{class: "android.widget.FrameLayout", id: tb + ":id/privacy_dialog", l: 100, t: 800, r: 980, b: 1700},
		{parent: 2, class: "android.widget.TextView", text: "Please read and agree to the privacy policy", l: 140, t: 840, r: 940, b: 1000},
	}
	for i, b := range buttons {
		top := 1100 + i*150
		nodes = append(nodes, node{parent: 2, class: "android.widget.Button", text: b, click: true, l: 160, t: top, r: 920, b: top + 120})
	}
	return mkScene(tb, nodes...)
}

// The popup rule never presses a consent button the goal did not ask for:
// not when it is the dialog's only way out, and not next to a way out that
// declines (which it takes instead).
func TestPopupRuleNeverConsents(t *testing.T) {
	goals := []string{"open Taobao and search Mac mini", "打开淘宝搜索Mac mini"}
	for _, buttons := range [][]string{{"同意"}, {"Agree"}, {"OK"}, {"Allow"}, {"允许"}, {"Accept"}, {"同意并继续", "不同意"}, {"Agree", "Cancel"}, {"确定", "取消"}, {"I agree", "Not now"}} {
		sc := consentDialog(buttons...)
		for _, goal := range goals {
			d := planOf(t, goal, sc, launched("Taobao"))
			for _, s := range d.Steps {
				if s.Target == nil {
					continue
				}
				el, ok := sc.Resolve(*s.Target)
				if ok && consentWords[strings.ToLower(el.Label())] {
					t.Errorf("dialog %q, goal %q: step %q presses %q", buttons, goal, s.Intent, el.Label())
				}
			}
			if len(buttons) > 1 && buttons[1] != "不同意" {
				// With a way out that declines, the popup is dismissed by it.
				if len(d.Steps) == 0 || d.Steps[0].Target == nil {
					t.Errorf("dialog %q: first step %+v; want the popup dismissed with %q", buttons, d.Steps, buttons[1])
					continue
				}
				if el, _ := sc.Resolve(*d.Steps[0].Target); el.Label() != buttons[1] {
					t.Errorf("dialog %q: first step %q targets %q; want %q", buttons, d.Steps[0].Intent, el.Label(), buttons[1])
				}
			}
		}
	}
	// Asked for by the goal, the same button is pressed: the rule is about
	// consent nobody asked for, not about the word.
	sc := consentDialog("Agree")
	d := planOf(t, "open Taobao and tap Agree", sc, launched("Taobao"))
	if len(d.Steps) == 0 || d.Steps[0].Target == nil {
		t.Fatalf("goal asks to tap Agree: steps %+v", d.Steps)
	}
	if el, _ := sc.Resolve(*d.Steps[0].Target); el.Label() != "Agree" {
		t.Errorf("goal asks to tap Agree: step %q targets %q", d.Steps[0].Intent, el.Label())
	}
}

// A label as written wins over a look-alike: "Location" is not
// "Notifications" (a fuzzy match) while scrolling may still bring the
// Location row; a typo ("Acessibility") is matched once scrolling is spent.
func TestTapPrefersTheLabelAsWrittenOverALookAlike(t *testing.T) {
	settings := mkScene("com.android.settings",
		node{class: "android.widget.LinearLayout", click: true, l: 0, t: 300, r: 1080, b: 500},
		node{parent: 1, class: "android.widget.TextView", text: "Notifications", l: 40, t: 320, r: 1000, b: 400},
		node{class: "android.widget.LinearLayout", click: true, l: 0, t: 500, r: 1080, b: 700},
		node{parent: 3, class: "android.widget.TextView", text: "Accessibility", l: 40, t: 520, r: 1000, b: 600})
	settings.Elements[0].Scrollable = true // the list
	d := planOf(t, "open Settings and tap Location", settings, launched("Settings"))
	if len(d.Steps) == 0 || d.Steps[0].Call.Name != "scroll" {
		t.Fatalf("tap Location on a screen showing Notifications: steps %q; want a scroll to look for it", stepIntents(d))
	}
	hist := []plan.StepRecord{launched("Settings")}
	for i := 0; i < maxScrolls; i++ {
		hist = append(hist, plan.StepRecord{Number: i + 2, Intent: `scroll down to look for "Acessibility"`, Tag: plan.Tag{Kind: tagLook, Action: 1, Arg: `"Acessibility"`}, Status: lifecycle.StepSucceeded, Changed: true,
			Call: tools.NewCall(tools.Scroll, map[string]string{"direction": "down"})})
	}
	d = planOf(t, "open Settings and tap Acessibility", settings, hist...)
	if len(d.Steps) == 0 || d.Steps[0].Target == nil {
		t.Fatalf("typo after the scrolls: %+v; want the look-alike tapped", d)
	}
	if el, _ := settings.Resolve(*d.Steps[0].Target); el.Index != 3 {
		t.Errorf("typo after the scrolls: taps %d; want the Accessibility row (3)", el.Index)
	}
}

// A look-alike never changes a number: "Alarm 10:20 AM" on a Clock that
// lists only "Alarm 8:30 AM" is not found (it was tapped, and the 8:30
// alarm switched on, with the task completed).
func TestLookAlikeKeepsTheNumbers(t *testing.T) {
	clock := mkScene("com.google.android.deskclock",
		node{class: "android.widget.Switch", desc: "Alarm 8:30 AM", click: true, l: 800, t: 400, r: 1000, b: 500})
	d := planOf(t, "open Clock, tap Alarm 10:20 AM", clock, launched("Clock"))
	if d.Finish == nil || d.Finish.Success {
		t.Fatalf("steps %q, finish %+v; want a failure: there is no 10:20 alarm", stepIntents(d), d.Finish)
	}
}

// A tap on the search bar that an ad interrupted (it came up over the bar
// as it was pressed) is tried again once the ad is closed; only a tap the
// bar itself refused on this screen rules the bar out (phonebench
// cross.bluetooth.search, realistic seed 2: the box was excluded, the
// planner scrolled a page that cannot scroll, went back and gave up).
func TestSearchBarTriedAgainAfterAnInterruptedTap(t *testing.T) {
	home := taobaoHome()
	tapBar := func(interrupted bool) plan.StepRecord {
		return plan.StepRecord{Number: 2, Intent: "tap the search box", Tag: plan.Tag{Kind: tagSearchBox, Action: 1},
			Call: tools.NewCall(tools.Tap, map[string]int{"element": 1}), Status: lifecycle.StepFailed,
			Before: home.Fingerprint(), After: "ad over the bar", Effect: map[bool]plan.Effect{true: plan.EffectInterrupted}[interrupted],
			Reason: "FrameLayout poplayer_ad came up over the pressed element and nothing else changed"}
	}
	closed := plan.StepRecord{Number: 3, Intent: "dismiss the popup (Close)", Tag: plan.Tag{Kind: tagDismiss, Action: 1},
		Call: tools.NewCall(tools.Tap, map[string]int{"element": 9}), Status: lifecycle.StepSucceeded,
		Before: "ad over the bar", After: home.Fingerprint(), Changed: true}
	d := planOf(t, "open Taobao and search Kindle", home, launched("Taobao"), tapBar(true), closed)
	if len(d.Steps) == 0 || d.Steps[0].Intent != "tap the search box" {
		t.Fatalf("after an interrupted tap on the bar and the ad closed: steps %q; want the bar tapped again", stepIntents(d))
	}
	if el, _ := home.Resolve(*d.Steps[0].Target); el.Index != 1 {
		t.Errorf("taps element %d; want the search bar (1)", el.Index)
	}
	// The bar itself refused the tap on this very screen: not tapped again.
	d = planOf(t, "open Taobao and search Kindle", home, launched("Taobao"), tapBar(false))
	if len(d.Steps) > 0 && d.Steps[0].Intent == "tap the search box" && d.Steps[0].Target != nil {
		if el, _ := home.Resolve(*d.Steps[0].Target); el.Index == 1 {
			t.Errorf("after the bar refused the tap on this screen: taps it again (%q)", stepIntents(d))
		}
	}
}

// A press the runtime could not see the effect of (EffectUnseen: read too
// late for its toast) or saw answered by a toast (EffectToast), with a
// popup come over the screen after it, is done once the popup is closed:
// pressing Add to cart again put a second and third one in the cart
// (phonebench taobao.cart.add, hostile seed 1: a cart of five). A press
// the runtime saw nothing of but the popup (EffectSeen) is made again
// (issue 12: a lost tap on Cart under an ad).
func TestPressAnsweredUnseenIsNotMadeAgainAfterAPopup(t *testing.T) {
	detail, cart := cartPressThenPopup("AirPods Flagship With Warranty", "Don’t allow")
	hist := func(e plan.Effect) []plan.StepRecord {
		h := cart(lifecycle.StepSucceeded, e)
		h[1].Changed = true
		return h
	}
	for _, e := range []plan.Effect{plan.EffectUnseen, plan.EffectToast} {
		d := planOf(t, "open Taobao and tap Add to cart", detail, hist(e)...)
		if d.Finish == nil || !d.Finish.Success {
			t.Errorf("effect %q: steps %q, finish %+v; want done, Add to cart not pressed again", e, stepIntents(d), d.Finish)
		}
	}
	d := planOf(t, "open Taobao and tap Add to cart", detail, hist(plan.EffectSeen)...)
	if d.Finish != nil || len(d.Steps) == 0 || d.Steps[0].Intent != `tap "Add to cart"` {
		t.Errorf("a press whose only effect was the popup: steps %q, finish %+v; want it made again", stepIntents(d), d.Finish)
	}
}

// A press whose effect went unseen is made again when the next action
// finds nothing to act on and the screen is still the one it was made on:
// "Add alarm" that had landed would show the Hour field (phonebench
// cross.dark.alarm, flaky seed 2: the tap was dropped as a dialog came).
func TestUnseenPressMadeAgainWhenTheNextActionFindsNothing(t *testing.T) {
	alarms := mkScene("com.google.android.deskclock",
		node{class: "android.widget.TextView", text: "8:30 AM", l: 40, t: 400, r: 600, b: 500},
		node{class: "android.widget.ImageButton", desc: "Add alarm", click: true, l: 440, t: 2100, r: 640, b: 2300})
	hist := []plan.StepRecord{launched("Clock"),
		{Number: 2, Intent: `tap "Add alarm"`, Tag: plan.Tag{Kind: tagTap, Action: 1}, Call: tools.NewCall(tools.Tap, map[string]int{"element": 2}),
			Status: lifecycle.StepSucceeded, Before: alarms.Fingerprint(), After: "a dialog over it", Changed: true, Effect: plan.EffectUnseen},
		{Number: 3, Intent: "dismiss the popup (Don’t allow)", Tag: plan.Tag{Kind: tagDismiss, Action: 1, Arg: "Don’t allow"}, Call: tools.NewCall(tools.Tap, map[string]int{"element": 9}),
			Status: lifecycle.StepSucceeded, Before: "a dialog over it", After: alarms.Fingerprint(), Changed: true}}
	d := planOf(t, "open Clock, tap Add alarm, type 7 into Hour", alarms, hist...)
	if d.Finish != nil || len(d.Steps) == 0 || d.Steps[0].Intent != `tap "Add alarm"` {
		t.Errorf("steps %q, finish %+v; want Add alarm pressed again", stepIntents(d), d.Finish)
	}
}

// A tap the runtime found interrupted by an app's own ad layer
// (EffectInterrupted: the ad came over the pressed element and nothing
// else changed) is made again once the ad is closed, on the same screen:
// the rule planner gave up there as if the button had refused it
// (phonebench taobao.cart.add_two, flaky seed 2, once the runtime read the
// toast queue and so no longer took the press for done). A tap that failed
// on this screen without an interruption is not made again.
func TestTapInterruptedByAnAppsAdIsMadeAgain(t *testing.T) {
	detail, cart := cartPressThenPopup("Kindle Flagship With Warranty", "Close")
	hist := func(e plan.Effect) []plan.StepRecord {
		h := cart(lifecycle.StepFailed, e)
		h[1].Reason = "FrameLayout poplayer_ad came up over the pressed element and nothing else changed"
		return h
	}
	d := planOf(t, "open Taobao and tap Add to cart", detail, hist(plan.EffectInterrupted)...)
	if d.Finish != nil || len(d.Steps) == 0 || d.Steps[0].Intent != `tap "Add to cart"` {
		t.Errorf("after the ad interrupted the tap and was closed: steps %q, finish %+v; want Add to cart tapped again", stepIntents(d), d.Finish)
	}
	d = planOf(t, "open Taobao and tap Add to cart", detail, hist(plan.EffectSeen)...)
	if d.Finish == nil || d.Finish.Success {
		t.Errorf("after the tap failed on this screen, not interrupted: steps %q, finish %+v; want a failure, not the same tap again", stepIntents(d), d.Finish)
	}
}

// cartPressThenPopup is a product page with Add to cart, and the history
// of a press on it (ending with status and effect) that a popup came over,
// closed with its button close.
func cartPressThenPopup(title, close string) (*scene.Scene, func(lifecycle.StepStatus, plan.Effect) []plan.StepRecord) {
	detail := mkScene(tb,
		node{class: "android.widget.TextView", text: title, l: 40, t: 900, r: 1040, b: 1000},
		node{class: "android.widget.Button", text: "Add to cart", click: true, l: 380, t: 2200, r: 700, b: 2350})
	return detail, func(st lifecycle.StepStatus, e plan.Effect) []plan.StepRecord {
		return []plan.StepRecord{launched("Taobao"),
			{Number: 2, Intent: `tap "Add to cart"`, Tag: plan.Tag{Kind: tagTap, Action: 1}, Call: tools.NewCall(tools.Tap, map[string]int{"element": 2}),
				Status: st, Before: detail.Fingerprint(), After: "a popup over it", Effect: e},
			{Number: 3, Intent: "dismiss the popup (" + close + ")", Tag: plan.Tag{Kind: tagDismiss, Action: 1, Arg: close}, Call: tools.NewCall(tools.Tap, map[string]int{"element": 9}),
				Status: lifecycle.StepSucceeded, Before: "a popup over it", After: detail.Fingerprint(), Changed: true}}
	}
}
