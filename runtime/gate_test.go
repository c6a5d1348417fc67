package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"phonepilot/device/fake"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/rule"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

const (
	buyGoal  = "open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay"
	sendGoal = "open Messages, tap Mom, type hi, tap Send"
)

// scriptedPerson plays the person: it answers each approval with the next
// of its decisions, checking what the phone looked like when it was asked.
type scriptedPerson struct {
	t        *testing.T
	mu       sync.Mutex
	approve  []bool
	err      error // returned instead of a decision when set
	asked    []Approval
	atAsk    func() simState // the phone's state when asked
	states   []simState
	answers  []string
	question []Question
	onAsk    func() // called when asked for an approval (a cancel)
}

func (p *scriptedPerson) Approve(_ context.Context, a Approval) (ApprovalDecision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, a)
	if p.atAsk != nil {
		p.states = append(p.states, p.atAsk())
	}
	if p.onAsk != nil {
		p.onAsk()
	}
	if p.err != nil {
		return ApprovalDecision{}, p.err
	}
	if len(p.approve) == 0 {
		p.t.Errorf("asked for approval %d (%s) with no decision left", len(p.asked), a.Call)
		return ApprovalDecision{By: "test"}, nil
	}
	yes := p.approve[0]
	p.approve = p.approve[1:]
	return ApprovalDecision{Approved: yes, By: "test", Note: "scripted"}, nil
}

func (p *scriptedPerson) Ask(_ context.Context, q Question) (Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.question = append(p.question, q)
	if len(p.answers) == 0 {
		return Answer{}, errors.New("no answer scripted")
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return Answer{By: "test", Text: a}, nil
}

type simState struct {
	Taobao struct {
		Orders []json.RawMessage `json:"orders"`
	} `json:"taobao"`
	Messages struct {
		Sent []json.RawMessage `json:"sent"`
	} `json:"messages"`
}

// gatedRun runs goal with the rule planner on a simulated phone with the
// default gate and person p (nil: nobody to ask).
func gatedRun(t *testing.T, goal string, p *scriptedPerson, gate Gate) (Result, simState) {
	t.Helper()
	return gatedRunCtx(context.Background(), t, goal, p, gate)
}

func gatedRunCtx(ctx context.Context, t *testing.T, goal string, p *scriptedPerson, gate Gate) (Result, simState) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	ph, err := sim.New(sim.Config{Locale: "en", Seed: 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	state := func() simState {
		raw, err := ph.State()
		if err != nil {
			t.Fatal(err)
		}
		var st simState
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("sim state: %v", err)
		}
		return st
	}
	opt := Options{Clock: clk, Logger: testlog.New(t), Gate: gate}
	if p != nil {
		p.atAsk = state
		opt.Person = p
	}
	r, err := New(Defaults(), ph.Device(), rule.New(), opt)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(ctx, goal)
	return res, state()
}

func TestGateStopsPaymentAndSendUntilApproved(t *testing.T) {
	for _, tc := range []struct {
		goal, category string
		labels         []string // the elements a person is asked about, in order
		count          func(simState) int
	}{
		// "Buy now" and "Pay" are both purchase words: each is asked.
		{buyGoal, "payment", []string{"Buy now", "Pay now"}, func(s simState) int { return len(s.Taobao.Orders) }},
		{sendGoal, "send", []string{"Send SMS"}, func(s simState) int { return len(s.Messages.Sent) }},
	} {
		t.Run(tc.category, func(t *testing.T) {
			p := &scriptedPerson{t: t, approve: []bool{true, true}[:len(tc.labels)]}
			res, st := gatedRun(t, tc.goal, p, nil)
			if res.Status != lifecycle.Completed {
				t.Fatalf("%s (%s: %s); steps %v", res.Status, res.Cause, res.Reason, intents(res))
			}
			if len(p.asked) != len(tc.labels) {
				t.Fatalf("asked %d times; want %d (%q)", len(p.asked), len(tc.labels), tc.labels)
			}
			for i, a := range p.asked {
				if string(a.Decision.Category) != tc.category || a.Element == nil || a.Element.Label() != tc.labels[i] {
					t.Errorf("ask %d about %s on %v (category %q); want the %q element, %s", i+1, a.Call, a.Element, a.Decision.Category, tc.labels[i], tc.category)
				}
				if n := tc.count(p.states[i]); n != 0 {
					t.Errorf("ask %d: %d already done when the person was asked; want 0", i+1, n)
				}
			}
			if n := tc.count(st); n != 1 {
				t.Errorf("%d done after approval; want exactly 1", n)
			}
		})
	}
}

func TestGateDeniedDoesNothingAndFailsApprovalDenied(t *testing.T) {
	for _, goal := range []string{buyGoal, sendGoal} {
		p := &scriptedPerson{t: t, approve: []bool{false}}
		res, st := gatedRun(t, goal, p, nil)
		if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseApprovalDenied {
			t.Errorf("%q: %s (%s: %s); want failed approval_denied", goal, res.Status, res.Cause, res.Reason)
		}
		if len(p.asked) != 1 {
			t.Errorf("%q: asked %d times; a denied action is never asked for again", goal, len(p.asked))
		}
		if len(st.Taobao.Orders) != 0 || len(st.Messages.Sent) != 0 {
			t.Errorf("%q: %d orders, %d messages after a deny; want none", goal, len(st.Taobao.Orders), len(st.Messages.Sent))
		}
	}
}

func TestGateWithoutPersonRefuses(t *testing.T) {
	res, st := gatedRun(t, buyGoal, nil, nil)
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseApprovalDenied || len(st.Taobao.Orders) != 0 {
		t.Errorf("%s (%s: %s), %d orders; want failed approval_denied and no order", res.Status, res.Cause, res.Reason, len(st.Taobao.Orders))
	}
}

func TestGatePolicyDenyFailsPolicyDenied(t *testing.T) {
	g, err := safety.New(safety.Policy{Rules: safety.Rules{Payment: safety.Deny}})
	if err != nil {
		t.Fatal(err)
	}
	p := &scriptedPerson{t: t}
	res, st := gatedRun(t, buyGoal, p, g)
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CausePolicyDenied || len(st.Taobao.Orders) != 0 {
		t.Errorf("%s (%s: %s), %d orders; want failed policy_denied, no order", res.Status, res.Cause, res.Reason, len(st.Taobao.Orders))
	}
	if len(p.asked) != 0 {
		t.Errorf("a person was asked %d times about an action the policy forbids", len(p.asked))
	}
}

func TestGateTimeoutFailsApprovalTimeout(t *testing.T) {
	p := &scriptedPerson{t: t, err: fmt.Errorf("%w (waited 10m0s)", ErrApprovalTimeout)}
	res, st := gatedRun(t, buyGoal, p, nil)
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseApprovalTimeout || len(st.Taobao.Orders) != 0 {
		t.Errorf("%s (%s: %s), %d orders; want failed approval_timeout, no order", res.Status, res.Cause, res.Reason, len(st.Taobao.Orders))
	}
}

func TestGateCancelWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &scriptedPerson{t: t, err: context.Canceled, onAsk: cancel}
	res, st := gatedRunCtx(ctx, t, buyGoal, p, nil)
	if res.Status != lifecycle.Cancelled || len(st.Taobao.Orders) != 0 {
		t.Errorf("%s (%s: %s), %d orders; want cancelled and no order", res.Status, res.Cause, res.Reason, len(st.Taobao.Orders))
	}
}

// Benign goals never reach a person.
func TestGateLetsBenignTasksThrough(t *testing.T) {
	for _, goal := range []string{
		"open Taobao and search Mac mini",
		"open Settings",
		"open Settings, tap Network & internet, tap Airplane mode",
		"open Settings, tap Display, tap Dark theme",
		"open Messages, tap Mom",
	} {
		p := &scriptedPerson{t: t}
		res, _ := gatedRun(t, goal, p, nil)
		if res.Status != lifecycle.Completed {
			t.Errorf("%q: %s (%s: %s); steps %v", goal, res.Status, res.Cause, res.Reason, intents(res))
		}
		if len(p.asked) != 0 {
			t.Errorf("%q: the gate stopped %v; a benign task is never gated", goal, p.asked[0].Call)
		}
	}
}

// scriptPlanner plans its calls one per decision, then finishes; it
// notes the answer each decision saw.
type scriptPlanner struct {
	steps         []tools.Call
	answers       []string
	observedAfter int // decisions made on a screen read after a question
	asked         bool
}

func (p *scriptPlanner) Plan(_ context.Context, in plan.Input) (plan.Decision, error) {
	a := ""
	if in.Answer != nil {
		a = in.Answer.Text
	}
	p.answers = append(p.answers, a)
	if p.asked && in.Scene != nil {
		p.observedAfter++
	}
	if len(p.steps) == 0 {
		return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "told " + a}}, nil
	}
	c := p.steps[0]
	p.steps = p.steps[1:]
	p.asked = c.Name == tools.AskUser
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "ask", Call: c}}}, nil
}

// personFunc answers every approval and question with err.
type personFunc func() error

func (f personFunc) Approve(context.Context, Approval) (ApprovalDecision, error) {
	return ApprovalDecision{}, f()
}
func (f personFunc) Ask(context.Context, Question) (Answer, error) { return Answer{}, f() }

func TestAskUserWaitsAndGivesTheAnswer(t *testing.T) {
	p := &scriptedPerson{t: t, answers: []string{"482913"}}
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	ph, err := sim.New(sim.Config{Locale: "en", Seed: 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	pl := &scriptPlanner{steps: []tools.Call{tools.NewCall(tools.AskUser, tools.AskUserArgs{Question: "What is the code?"})}}
	r, err := New(Defaults(), ph.Device(), pl, Options{Clock: clk, Logger: testlog.New(t), Person: p})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "log in")
	if res.Status != lifecycle.Completed {
		t.Fatalf("%s (%s)", res.Status, res.Reason)
	}
	if len(p.question) != 1 || p.question[0].Text != "What is the code?" || p.question[0].Scene == nil {
		t.Fatalf("questions asked: %+v; want the one, with its screen", p.question)
	}
	if !slices.Equal(pl.answers, []string{"", "482913"}) {
		t.Errorf("answers the planner saw per decision: %q; want the answer on the decision after the question only", pl.answers)
	}
	if pl.observedAfter == 0 {
		t.Errorf("the planner got no fresh screen after the answer")
	}
}

func TestAskUserTimeoutFailsUserTimeout(t *testing.T) {
	ph, err := sim.New(sim.Config{Locale: "en", Seed: 1, Clock: clock.NewFake(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	pl := &scriptPlanner{steps: []tools.Call{tools.NewCall(tools.AskUser, tools.AskUserArgs{Question: "Code?"})}}
	r, err := New(Defaults(), ph.Device(), pl, Options{Clock: clock.NewFake(time.Unix(0, 0)), Person: personFunc(func() error { return ErrAnswerTimeout })})
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Run(context.Background(), "log in"); res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseUserTimeout {
		t.Errorf("%s (%s: %s); want failed user_timeout", res.Status, res.Cause, res.Reason)
	}
}

// confirmAll is a gate that wants a person for every action.
type confirmAll struct{}

func (confirmAll) Check(safety.Input) safety.Decision {
	return safety.Decision{Verdict: safety.Confirm, Category: safety.Send, Reason: "every action, for the test"}
}

// A planner that asks again for the action a person denied does not get a
// second question: the task fails approval_denied and the action never runs.
func TestDeniedActionAskedAgainEndsTheTask(t *testing.T) {
	p := &scriptedPerson{t: t, approve: []bool{false}}
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	ph, err := sim.New(sim.Config{Locale: "en", Seed: 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	launch := tools.NewCall(tools.LaunchApp, map[string]string{"app": "Taobao"})
	pl := &scriptPlanner{steps: []tools.Call{launch, launch, launch}}
	r, err := New(Defaults(), ph.Device(), pl, Options{Clock: clk, Logger: testlog.New(t), Person: p, Gate: confirmAll{}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "open Taobao")
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseApprovalDenied {
		t.Errorf("%s (%s: %s); want failed approval_denied", res.Status, res.Cause, res.Reason)
	}
	if len(p.asked) != 1 {
		t.Errorf("asked %d times about the same denied action; want once", len(p.asked))
	}
	sc, err := ph.Device().Scene(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Package == "com.taobao.taobao" {
		t.Errorf("Taobao is in front: the denied launch ran")
	}
}

// payPhone is a fake shop: "Pay" pays (paid counts it); while the person
// decides, swap may put another screen up (an ad over the button).
func payPhone(swap *atomic.Bool) (*fake.Device, func() int) {
	pay := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.Button", Text: "Pay", Clickable: true, Enabled: true, Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}},
	}}
	ad := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.Button", Text: "Install our app", Clickable: true, Enabled: true, Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}},
	}}
	paid := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.TextView", Text: "Paid", Bounds: scene.Bounds{Left: 100, Top: 1000, Right: 980, Bottom: 1100}},
	}}
	var d *fake.Device
	taps := func(h []fake.Call) int {
		n := 0
		for _, c := range h {
			if c.Method == fake.MethodTap {
				n++
			}
		}
		return n
	}
	d = fake.NewFunc(func(h []fake.Call) (*scene.Scene, error) {
		switch {
		case taps(h) > 0:
			return paid, nil
		case swap != nil && swap.Load():
			return ad, nil
		}
		return pay, nil
	})
	return d, func() int { return taps(d.Calls()) }
}

// tapPay taps element 0 while the screen is not "Paid".
type tapPay struct{ decisions int }

func (p *tapPay) Plan(_ context.Context, in plan.Input) (plan.Decision, error) {
	p.decisions++
	if in.Scene.Elements[0].Text == "Paid" {
		return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "paid"}}, nil
	}
	if in.Replan {
		return plan.Decision{Finish: &plan.Finish{Reason: "cannot pay: " + in.Reason}}, nil
	}
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Pay", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 0}),
		Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
}

// An approval is for the element the person saw: when the screen changed
// while they decided, the approved tap does not land on what is there now.
func TestApprovedActionNotRunOnAChangedScreen(t *testing.T) {
	var swap atomic.Bool
	dev, taps := payPhone(&swap)
	p := &scriptedPerson{t: t, approve: []bool{true}, onAsk: func() { swap.Store(true) }}
	r, err := New(Defaults(), dev, &tapPay{}, Options{Clock: clock.NewFake(time.Unix(0, 0)), Logger: testlog.New(t), Person: p})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "pay")
	if n := taps(); n != 0 {
		t.Errorf("%d taps after the screen changed under the approval; want none", n)
	}
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseApprovalDenied {
		t.Errorf("%s (%s: %s); want failed approval_denied: the approved action could not run", res.Status, res.Cause, res.Reason)
	}
	// The same screen: the approved tap runs, once.
	dev, taps = payPhone(nil)
	p = &scriptedPerson{t: t, approve: []bool{true}}
	r, err = New(Defaults(), dev, &tapPay{}, Options{Clock: clock.NewFake(time.Unix(0, 0)), Logger: testlog.New(t), Person: p})
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Run(context.Background(), "pay"); res.Status != lifecycle.Completed || taps() != 1 {
		t.Errorf("%s (%s), %d taps; want completed with exactly one tap", res.Status, res.Reason, taps())
	}
}

// recordingGate allows everything and remembers what it was shown.
type recordingGate struct {
	mu     sync.Mutex
	inputs []safety.Input
}

func (g *recordingGate) Check(in safety.Input) safety.Decision {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inputs = append(g.inputs, in)
	return safety.Decision{Verdict: safety.Allow}
}

// The gate learns that a screen is secure (FLAG_SECURE, the driver's
// report in the Scene): the Pay tap on the simulator's cashier is checked
// with Secure set; the Buy now tap on the product page is not.
func TestGateIsToldTheScreenIsSecure(t *testing.T) {
	g := &recordingGate{}
	res, st := gatedRun(t, buyGoal, nil, g)
	if res.Status != lifecycle.Completed || len(st.Taobao.Orders) != 1 {
		t.Fatalf("with a gate that allows everything: %s (%s), %d orders", res.Status, res.Reason, len(st.Taobao.Orders))
	}
	secureBy := map[string]bool{}
	for _, in := range g.inputs {
		if in.Element != nil {
			secureBy[in.Element.Label()] = in.Secure
		}
	}
	if pay, ok := secureBy["Pay now"]; !ok || !pay {
		t.Errorf("the Pay now tap was checked with Secure=%v (checked: %v); want true", pay, secureBy)
	}
	if buy, ok := secureBy["Buy now"]; !ok || buy {
		t.Errorf("the Buy now tap was checked with Secure=%v (checked: %v); want false", buy, secureBy)
	}
}
