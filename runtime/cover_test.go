package runtime

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// An approved tap does not run when something came over its element while
// the person decided (issue 12, hostile: an ad layer over Taobao's cashier
// took the approved Pay now tap, the task completed and no order existed);
// a toast that came up beside it does not stop it.
func TestApprovedTapNotRunUnderWhatCameOverIt(t *testing.T) {
	pay := scene.Element{Index: 1, Parent: 0, Class: "android.widget.Button", Text: "Pay now", ResourceID: "com.taobao.taobao:id/pay", Clickable: true,
		Bounds: scene.Bounds{Left: 40, Top: 2100, Right: 1040, Bottom: 2220}}
	root := scene.Element{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	was := &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao", Elements: []scene.Element{root, pay}}
	ad := scene.Element{Index: 2, Parent: 0, Class: "android.widget.FrameLayout", ResourceID: "com.taobao.taobao:id/poplayer_ad", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	covered := &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao", Elements: []scene.Element{root, pay, ad}}
	if why := sameTarget(&pay, was, covered); !strings.Contains(why, "covered by FrameLayout poplayer_ad") {
		t.Errorf("an ad layer over Pay now: %q, want the tap not run", why)
	}
	toast := scene.Element{Index: 2, Parent: 0, Class: "android.widget.TextView", ResourceID: "android:id/message", Text: "Added to cart",
		Bounds: scene.Bounds{Left: 357, Top: 2008, Right: 723, Bottom: 2118}}
	if why := sameTarget(&pay, was, &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao", Elements: []scene.Element{root, pay, toast}}); why != "" {
		t.Errorf("a toast near Pay now: %q, want the tap to run", why)
	}
	if why := sameTarget(&pay, was, was); why != "" {
		t.Errorf("the same screen: %q", why)
	}
}

// The guard re-checks an approved tap against the screen the person was
// shown, not the fresh screen against itself: while they decided, another
// app came to the front with a look-alike button at the same index, or an
// ad layer came over the button (same element, same app). Neither tap
// runs; a toast beside the button does not stop it.
func TestGuardRechecksTheApprovedScreenAfterTheWait(t *testing.T) {
	pay := scene.Element{Index: 1, Parent: 0, Class: "android.widget.Button", Text: "Pay", Clickable: true, Enabled: true,
		Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}}
	root := scene.Element{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	shop := func(pkg string, more ...scene.Element) *scene.Scene {
		return &scene.Scene{Width: 1080, Height: 2400, Package: pkg, Elements: append([]scene.Element{root, pay}, more...)}
	}
	paid := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{root,
		{Index: 1, Parent: 0, Class: "android.widget.TextView", Text: "Paid", Bounds: scene.Bounds{Left: 100, Top: 1000, Right: 980, Bottom: 1100}}}}
	ad := scene.Element{Index: 2, Parent: 0, Class: "android.widget.FrameLayout", ResourceID: "com.example.shop:id/ad_layer", Clickable: true,
		Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	movedPay := pay
	movedPay.Bounds.Top, movedPay.Bounds.Bottom = 1200, 1320
	toast := scene.Element{Index: 2, Parent: 0, Class: "android.widget.TextView", ResourceID: "android:id/message", Text: "Coupon applied",
		Bounds: scene.Bounds{Left: 357, Top: 1800, Right: 723, Bottom: 1900}}
	for _, c := range []struct {
		name   string
		during *scene.Scene // the screen once the person was asked
		ran    bool
		reason string
	}{
		{"another app in front, same-looking button", shop("com.example.phishing"), false, "the app in front changed from com.example.shop to com.example.phishing"},
		{"an ad layer over the button", shop("com.example.shop", ad), false, "is covered by FrameLayout ad_layer"},
		{"the button moved", &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{root, movedPay}}, false, "and is now"},
		{"a toast beside the button", shop("com.example.shop", toast), true, ""},
		{"nothing changed", shop("com.example.shop"), true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked atomic.Bool
			var d *fake.Device
			d = fake.NewFunc(func(h []fake.Call) (*scene.Scene, error) {
				for _, call := range h {
					if call.Method == fake.MethodTap {
						return paid, nil
					}
				}
				if asked.Load() {
					return c.during, nil
				}
				return shop("com.example.shop"), nil
			})
			p := &scriptedPerson{t: t, approve: []bool{true}, onAsk: func() { asked.Store(true) }}
			planner := planFunc(func(_ context.Context, in plan.Input) (plan.Decision, error) {
				if in.Scene.Elements[1].Text == "Paid" {
					return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "paid"}}, nil
				}
				if in.Replan || len(in.History) > 0 {
					return plan.Decision{Finish: &plan.Finish{Reason: "cannot pay: " + in.Reason}}, nil
				}
				return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Pay", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 1}),
					Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
			})
			r, err := New(Defaults(), d, planner, Options{Clock: clock.NewFake(time.Unix(0, 0)), Logger: testlog.New(t), Person: p, Gate: confirmAll{}})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), "pay")
			taps := 0
			for _, call := range d.Calls() {
				if call.Method == fake.MethodTap {
					taps++
				}
			}
			switch {
			case c.ran && (taps != 1 || res.Status != lifecycle.Completed):
				t.Errorf("%d taps, %s (%s); want the approved tap run once", taps, res.Status, res.Reason)
			case !c.ran && (taps != 0 || res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseApprovalDenied || !strings.Contains(res.Reason, c.reason)):
				t.Errorf("%d taps, %s (%s: %s); want no tap, failed approval_denied saying %q", taps, res.Status, res.Cause, res.Reason, c.reason)
			}
		})
	}
}

// A system dialog that came up over the app after a tap (App isn't
// responding, a permission request) ends the step: the retry would tap
// the dialog's button where the app's was. The planner sees the dialog.
func TestDialogAfterATapIsNotTappedByTheRetry(t *testing.T) {
	add := scene.Element{Index: 0, Parent: -1, Package: "com.example.shop", Class: "android.widget.Button", Text: "Add to cart", Clickable: true, Enabled: true,
		Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}}
	shop := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{add}}
	dialog := &scene.Scene{Width: 1080, Height: 2400, Package: "android", Elements: []scene.Element{add,
		{Index: 1, Parent: -1, Package: "android", Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Left: 60, Top: 900, Right: 1020, Bottom: 2300}},
		{Index: 2, Parent: 1, Package: "android", Class: "android.widget.TextView", Text: "Shop isn't responding", Bounds: scene.Bounds{Left: 100, Top: 950, Right: 980, Bottom: 1050}},
		{Index: 3, Parent: 1, Package: "android", Class: "android.widget.Button", Text: "Close app", Clickable: true, Enabled: true, Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}},
	}}
	var d *fake.Device
	d = fake.NewFunc(func(h []fake.Call) (*scene.Scene, error) {
		for _, c := range h {
			if c.Method == fake.MethodTap {
				return dialog, nil
			}
		}
		return shop, nil
	})
	planner := planFunc(func(_ context.Context, in plan.Input) (plan.Decision, error) {
		if len(in.History) > 0 {
			return plan.Decision{Finish: &plan.Finish{Reason: "a dialog: " + in.Scene.Package}}, nil
		}
		return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Add to cart", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 0}),
			Expect: plan.Expectation{Kind: plan.ExpectPresent, Target: scene.Selector{Field: scene.FieldText, Value: "Added to cart", Mode: scene.ModeExact}}}}}, nil
	})
	r, err := New(Defaults(), d, planner, Options{Clock: clock.NewFake(time.Unix(0, 0)), Logger: testlog.New(t), Gate: recordingGateAllow{}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "add to cart")
	taps := 0
	for _, c := range d.Calls() {
		if c.Method == fake.MethodTap {
			taps++
		}
	}
	if taps != 1 || len(res.Steps) != 1 || len(res.Steps[0].Attempts) != 1 {
		t.Fatalf("%d taps, steps %v; want one tap, then the planner facing the dialog", taps, intents(res))
	}
	// The record says the step was interrupted, not refused by the
	// button: the planner may try it again once the dialog is gone.
	if s := res.Steps[0]; s.Status != lifecycle.StepFailed || s.Effect != plan.EffectInterrupted {
		t.Errorf("step %s, effect %q; want failed and marked interrupted", s.Status, s.Effect)
	}
}

// A system dialog that came up over an app whose screen did not change,
// first read after a press longer after it than a toast lives: the press
// may have landed (its "Added to cart" came and went unseen) and is not
// made again; the step succeeds marked unseen, so the planner does not
// press again once the dialog is closed (phonebench taobao.cart.add,
// hostile seed 1: the retried presses left a cart of five). Read at once
// with a toast showing under the dialog, the press took effect (toast).
func TestPressUnderALateDialogIsNotMadeAgain(t *testing.T) {
	add := scene.Element{Index: 0, Parent: -1, Package: "com.example.shop", Class: "android.widget.Button", Text: "Add to cart", Clickable: true, Enabled: true,
		Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}}
	shop := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{add}}
	dialog := func(toast bool) *scene.Scene {
		els := []scene.Element{add,
			{Index: 1, Parent: -1, Window: 1, Package: "com.google.android.permissioncontroller", Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Left: 60, Top: 900, Right: 1020, Bottom: 1800}},
			{Index: 2, Parent: 1, Window: 1, Package: "com.google.android.permissioncontroller", Class: "android.widget.TextView", Text: "Allow Shop to send you notifications?", Bounds: scene.Bounds{Left: 100, Top: 950, Right: 980, Bottom: 1050}},
			{Index: 3, Parent: 1, Window: 1, Package: "com.google.android.permissioncontroller", Class: "android.widget.Button", Text: "Don’t allow", Clickable: true, Enabled: true, Bounds: scene.Bounds{Left: 100, Top: 1600, Right: 980, Bottom: 1750}},
		}
		if toast {
			els = append(els, scene.Element{Index: 4, Parent: -1, Window: 2, Package: "com.example.shop", Class: "android.widget.TextView", ResourceID: "android:id/message", Text: "Added to cart",
				Bounds: scene.Bounds{Left: 357, Top: 2250, Right: 723, Bottom: 2330}})
		}
		return &scene.Scene{Width: 1080, Height: 2400, Package: "com.google.android.permissioncontroller", Elements: els}
	}
	for _, c := range []struct {
		name  string
		late  bool
		toast bool
		want  plan.Effect
	}{
		{"read after the toast would be gone", true, false, plan.EffectUnseen},
		{"read at once, a toast under the dialog", false, true, plan.EffectToast},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			d := fake.NewFunc(func(h []fake.Call) (*scene.Scene, error) {
				for _, call := range h {
					if call.Method == fake.MethodTap {
						if c.late {
							clk.Advance(3 * time.Second) // a slow dump
						}
						return dialog(c.toast), nil
					}
				}
				return shop, nil
			})
			planner := planFunc(func(_ context.Context, in plan.Input) (plan.Decision, error) {
				if len(in.History) > 0 {
					return plan.Decision{Finish: &plan.Finish{Reason: "the planner sees the dialog"}}, nil
				}
				return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Add to cart", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 0}),
					Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
			})
			r, err := New(Defaults(), d, planner, Options{Clock: clk, Logger: testlog.New(t), Gate: recordingGateAllow{}})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), "add to cart")
			taps := 0
			for _, call := range d.Calls() {
				if call.Method == fake.MethodTap {
					taps++
				}
			}
			if taps != 1 || len(res.Steps) != 1 {
				t.Fatalf("%d taps, steps %v; want one press", taps, intents(res))
			}
			if s := res.Steps[0]; s.Status != lifecycle.StepSucceeded || s.Effect != c.want {
				t.Errorf("step %s (%s), effect %q; want succeeded, effect %q", s.Status, s.Reason, s.Effect, c.want)
			}
		})
	}
}
