package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/safety"
	"phonepilot/tools"
)

// wantsAPerson is a gate that wants a person for every action (its own,
// not the gate tests' helper, so those stay free to change).
type wantsAPerson struct{}

func (wantsAPerson) Check(safety.Input) safety.Decision {
	return safety.Decision{Verdict: safety.Confirm, Category: safety.Payment, Reason: "every action, for the test"}
}

func newTestStepper(t *testing.T, gate Gate) (*Stepper, *sim.Phone) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStepper(Defaults(), p.Device(), Options{Clock: clk, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// One step through the Executor: the outcome's After is the settled screen
// after the action, the record says whether it changed.
func TestStepperDoSettlesAndReportsTheScreenAfter(t *testing.T) {
	s, _ := newTestStepper(t, nil)
	ctx := context.Background()
	before, err := s.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Do(ctx, tools.NewCall(tools.LaunchApp, map[string]string{"app": "Settings"}), before)
	if err != nil {
		t.Fatal(err)
	}
	if out.Record.Status != lifecycle.StepSucceeded || !out.Record.Changed || !strings.Contains(out.After.Package, "settings") || out.Refused != nil {
		t.Errorf("launch Settings: %+v, after %s", out.Record, out.After.Package)
	}
	// A tap on text that does nothing: not confirmed, unchanged.
	var idx = -1
	for _, e := range out.After.Listed() {
		if !e.Clickable && e.Text != "" {
			idx = e.Index
			break
		}
	}
	if idx < 0 {
		t.Fatal("no plain text on the Settings screen")
	}
	out, err = s.Do(ctx, tools.NewCall(tools.Tap, map[string]int{"element": idx}), out.After)
	if err != nil {
		t.Fatal(err)
	}
	if out.Record.Status != lifecycle.StepFailed || out.Record.Changed {
		t.Errorf("tap on plain text: %+v", out.Record)
	}
}

// A gated action with nobody to ask is refused and does not touch the
// phone; asked again, it is refused again without a second ask.
func TestStepperRefusesAGatedActionWithoutAPerson(t *testing.T) {
	s, p := newTestStepper(t, wantsAPerson{})
	ctx := context.Background()
	sc, err := s.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call := tools.NewCall(tools.LaunchApp, map[string]string{"app": "Settings"})
	for i := range 2 {
		out, err := s.Do(ctx, call, sc)
		if err != nil {
			t.Fatal(err)
		}
		if out.Refused == nil || out.Refused.Cause != lifecycle.CauseApprovalDenied {
			t.Fatalf("try %d: not refused: %+v", i+1, out)
		}
		now, _ := p.Device().Scene(ctx)
		if now.Package != sc.Package {
			t.Errorf("try %d: the refused launch ran: %s in front", i+1, now.Package)
		}
	}
}
