package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// lagPayPhone is a shop whose "Pay" takes lag to show "Paid" after the tap
// that pays (a payment being processed, a long transition: the screen
// stays as it was meanwhile). With dropFirst the first tap is lost.
func lagPayPhone(clk clock.Clock, lag time.Duration, dropFirst bool) (*fake.Device, func() int) {
	pay := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.Button", Text: "Pay", Clickable: true, Enabled: true, Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}},
	}}
	paid := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.TextView", Text: "Paid", Bounds: scene.Bounds{Left: 100, Top: 1000, Right: 980, Bottom: 1100}},
	}}
	var (
		mu     sync.Mutex
		paidAt time.Time // when the paying tap was first seen
		d      *fake.Device
	)
	taps := func(h []fake.Call) int {
		n := 0
		for _, c := range h {
			if c.Method == fake.MethodTap {
				n++
			}
		}
		return n
	}
	need := 1
	if dropFirst {
		need = 2
	}
	d = fake.NewFunc(func(h []fake.Call) (*scene.Scene, error) {
		mu.Lock()
		defer mu.Unlock()
		if taps(h) < need {
			return pay, nil
		}
		if paidAt.IsZero() {
			paidAt = clk.Now()
		}
		if clk.Now().Sub(paidAt) < lag {
			return pay, nil
		}
		return paid, nil
	})
	return d, func() int { return taps(d.Calls()) }
}

// payAgain taps Pay while it is listed, also after a step that failed (a
// tap that left the screen as it was is tapped again), as the reference
// decision-maker does; it finishes once "Paid" shows. Each decision takes
// think on clk (a model's reply).
type payAgain struct {
	clk   clock.Clock
	think time.Duration
}

func (p payAgain) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if p.clk != nil {
		if err := p.clk.Sleep(ctx, p.think); err != nil {
			return plan.Decision{}, err
		}
	}
	if in.Scene.Elements[0].Text == "Paid" {
		return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "paid"}}, nil
	}
	if len(in.History) >= 4 {
		return plan.Decision{Finish: &plan.Finish{Reason: "gave up: " + in.Reason}}, nil
	}
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Pay", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 0}),
		Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
}

// An approved action is judged on its effect, waited for as long as a
// target is: a payment whose screen changes 1.5 s after the tap (hostile's
// long transitions) is not "the screen did not change", and is not put to
// the person a second time (issue 12: taobao.buy hostile seed 9 asked a
// third approval with the order placed).
func TestApprovedPaymentIsJudgedOnItsLateEffect(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	dev, taps := lagPayPhone(clk, 1500*time.Millisecond, false)
	p := &scriptedPerson{t: t, approve: []bool{true}}
	r, err := New(Defaults(), dev, payAgain{}, Options{Clock: clk, Logger: testlog.New(t), Person: p})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "pay")
	if res.Status != lifecycle.Completed || taps() != 1 || len(p.asked) != 1 {
		t.Errorf("%s (%s): %d taps, %d approvals asked; want completed, one tap, one approval", res.Status, res.Reason, taps(), len(p.asked))
	}
	if len(res.Steps) != 1 || res.Steps[0].Status != lifecycle.StepSucceeded {
		t.Errorf("steps %v; want the one approved tap, succeeded", intents(res))
	}
}

// An approved action the planner asks for again (it saw no effect) is not
// approved as if it had not happened: when its effect has come since, it is
// not asked for at all; when the screen is still as it was (the tap was
// lost), the person is told it ran once already.
func TestApprovedActionAskedForAgain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lag       time.Duration
		dropFirst bool
		approvals []bool
		taps      int
	}{
		// The effect comes after the step's wait (10 s), while the planner
		// thinks (2 s) on the old screen: the second request finds the
		// screen changed and is not put to the person.
		{name: "effect after the wait", lag: 11 * time.Second, approvals: []bool{true}, taps: 1},
		// The first tap was lost: the person is asked again, told so.
		{name: "lost tap", dropFirst: true, approvals: []bool{true, true}, taps: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			dev, taps := lagPayPhone(clk, tc.lag, tc.dropFirst)
			p := &scriptedPerson{t: t, approve: tc.approvals}
			r, err := New(Defaults(), dev, payAgain{clk, 2 * time.Second}, Options{Clock: clk, Logger: testlog.New(t), Person: p})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), "pay")
			if res.Status != lifecycle.Completed || taps() != tc.taps || len(p.asked) != len(tc.approvals) {
				t.Errorf("%s (%s): %d taps, %d approvals asked; want completed, %d taps, %d approvals (steps %v)",
					res.Status, res.Reason, taps(), len(p.asked), tc.taps, len(tc.approvals), intents(res))
			}
			if len(p.asked) == 2 && !strings.Contains(p.asked[1].Decision.Reason, "approved and run once already (step 1)") {
				t.Errorf("the second approval says %q; want it to say the action ran once already", p.asked[1].Decision.Reason)
			}
		})
	}
}

// allowFlagged allows every action but names its category, as a policy
// that allows payments does (payment = "allow"): the action is still an
// irreversible one.
type allowFlagged struct{}

func (allowFlagged) Check(safety.Input) safety.Decision {
	return safety.Decision{Verdict: safety.Allow, Category: safety.Payment, Reason: "the policy allows payments"}
}

// A payment the policy allows runs without a person, but it is still
// irreversible: when its effect does not show within the wait it is not
// tapped again (the money may be gone), the step fails saying so. A tap
// the gate does not flag is retried (the opposite).
func TestAllowedPaymentWithoutVisibleEffectIsNotRetried(t *testing.T) {
	for _, c := range []struct {
		name string
		gate Gate
		taps int
	}{
		{"allowed payment", allowFlagged{}, 1},
		{"unflagged tap", recordingGateAllow{}, Defaults().StepRetries},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			dev, taps := lagPayPhone(clk, time.Hour, false) // the effect never shows in time
			planner := planFunc(func(_ context.Context, in plan.Input) (plan.Decision, error) {
				if len(in.History) > 0 {
					return plan.Decision{Finish: &plan.Finish{Reason: "gave up: " + in.Reason}}, nil
				}
				return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Pay", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 0}),
					Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
			})
			r, err := New(Defaults(), dev, planner, Options{Clock: clk, Logger: testlog.New(t), Gate: c.gate})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), "pay")
			if taps() != c.taps || len(res.Steps) != 1 || res.Steps[0].Status != lifecycle.StepFailed {
				t.Fatalf("%d taps, steps %v; want %d taps in one failed step", taps(), intents(res), c.taps)
			}
			if c.taps == 1 && !strings.Contains(res.Steps[0].Reason, "not repeated") {
				t.Errorf("the step's reason %q does not say the payment was not repeated", res.Steps[0].Reason)
			}
		})
	}
}

type recordingGateAllow struct{}

func (recordingGateAllow) Check(safety.Input) safety.Decision {
	return safety.Decision{Verdict: safety.Allow}
}
