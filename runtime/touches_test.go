package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/plan"
	"phonepilot/safety"
	"phonepilot/safety/touchtest"
	"phonepilot/scene"
	"phonepilot/tools"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// scriptedOnce is a planner stand-in that obeys the screen: its first
// decision is the step the screen asked for, thought over for think; then
// it finishes.
type scriptedOnce struct {
	step  func(sc *scene.Scene) plan.PlannedStep
	clk   clock.Clock
	think time.Duration
	done  bool
}

func (s *scriptedOnce) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if s.done {
		return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "done"}}, nil
	}
	s.done = true
	st := s.step(in.Scene)
	if err := s.clk.Sleep(ctx, s.think); err != nil {
		return plan.Decision{}, err
	}
	return plan.Decision{Steps: []plan.PlannedStep{st}}, nil
}

// try runs one way on one target through one front end and returns the
// effects it had beyond the target's own screen, and what happened.
func try(t *testing.T, tg touchtest.Target, w touchtest.Way, front string, gate Gate) (touchtest.Effects, string) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Clock: clk})
	must(t, err)
	d := p.Device()
	ctx := context.Background()
	must(t, tg.Reach(ctx, p, d))
	before, err := touchtest.EffectsOf(p)
	must(t, err)
	cfg := Defaults()
	opt := Options{Clock: clk, Logger: testlog.New(t), Gate: gate}
	indexOf := func(sc *scene.Scene) int {
		for _, e := range sc.Elements {
			if e.ResourceID == tg.ID && sc.Visible(e) {
				return e.Index
			}
		}
		t.Fatalf("%s: no %s on the screen", tg.Name, tg.ID)
		return -1
	}
	var what string
	switch front {
	case "direct (MCP's Stepper)":
		st, err := NewStepper(cfg, d, opt)
		must(t, err)
		sc, err := st.Observe(ctx)
		must(t, err)
		out, err := st.Do(ctx, w.Call(indexOf(sc)), sc)
		must(t, err)
		what = string(out.Record.Status) + ": " + out.Record.Reason
	case "AI planner stand-in (3 s)", "flow target":
		pl := &scriptedOnce{clk: clk}
		if front == "flow target" {
			pl.step = func(*scene.Scene) plan.PlannedStep {
				ps := plan.PlannedStep{Intent: w.Name, Call: w.Call(0)}
				if w.OnElement {
					ps.Call = tools.Call{Name: ps.Call.Name, Args: withoutElement(t, ps.Call.Args)}
					ps.Target = &scene.Selector{Field: scene.FieldID, Value: tg.ID}
				}
				ps.Expect = plan.ExpectationOf(ps.Call)
				return ps
			}
		} else {
			pl.think = 3 * time.Second
			pl.step = func(sc *scene.Scene) plan.PlannedStep {
				c := w.Call(indexOf(sc))
				return plan.PlannedStep{Intent: w.Name, Call: c, Expect: plan.ExpectationOf(c)}
			}
		}
		r, err := New(cfg, d, pl, opt)
		must(t, err)
		res := r.Run(ctx, "do what the screen says")
		what = fmt.Sprintf("%s (%s)", res.Status, res.Reason)
		if len(res.Steps) > 0 {
			what = string(res.Steps[0].Status) + ": " + res.Steps[0].Reason
		}
	}
	after, err := touchtest.EffectsOf(p)
	must(t, err)
	return after.Minus(before), what
}

// withoutElement drops a call's "element" argument (a flow step names its
// element by selector; the Executor fills the index in).
func withoutElement(t *testing.T, args json.RawMessage) json.RawMessage {
	var m map[string]any
	must(t, json.Unmarshal(args, &m))
	delete(m, "element")
	b, err := json.Marshal(m)
	must(t, err)
	return b
}

var touchFronts = []string{"direct (MCP's Stepper)", "AI planner stand-in (3 s)", "flow target"}

// TestEveryTouchWaitsForAPerson is issue 27's probe as a table: every way
// of touching each irreversible target on the simulator (tap, long press,
// type_text with and without text and with submit, Enter, scroll in each
// direction inside it), through each front end (direct calls as MCP's
// tools make them, an AI planner stand-in that obeys the screen and
// thinks 3 s, a flow step that names the target by selector), with the
// default policy and nobody to approve: nothing is sent, ordered or
// granted, and the cashier does not open. The control runs the same tries
// directly with a gate that allows everything: there the ways that click
// on a phone do reach the effects, so the table tests what it says.
func TestEveryTouchWaitsForAPerson(t *testing.T) {
	if testing.Short() {
		t.Skip("150 simulated tries")
	}
	tries := 0
	for _, tg := range touchtest.Targets {
		for _, w := range touchtest.Ways {
			for _, front := range touchFronts {
				tries++
				got, what := try(t, tg, w, front, nil)
				if got != (touchtest.Effects{}) {
					t.Errorf("%s / %s / %s: %s without approval (%s)", tg.Name, w.Name, front, got, what)
				}
			}
		}
	}
	g, err := safety.New(touchtest.AllowAll())
	must(t, err)
	reached := map[string][]string{}
	for _, tg := range touchtest.Targets {
		for _, w := range touchtest.Ways {
			if got, _ := try(t, tg, w, touchFronts[0], g); got != (touchtest.Effects{}) {
				reached[w.Name] = append(reached[w.Name], tg.Name)
			}
		}
	}
	var lines []string
	for _, w := range touchtest.Ways {
		lines = append(lines, fmt.Sprintf("%s → %v", w.Name, reached[w.Name]))
	}
	t.Logf("%d tries, 0 effects without approval; with everything allowed the effects came by:\n%s", tries, strings.Join(lines, "\n"))
	for _, way := range touchtest.Clicking {
		if len(reached[way]) == 0 {
			t.Errorf("control: %s reached no effect with everything allowed: the table does not test it", way)
		}
	}
}
