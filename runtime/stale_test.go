package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/rule"
)

// slowPlanner is a planner that thinks: it plans on the Scene it was given
// and answers think later on the task's clock, as a model does.
type slowPlanner struct {
	plan.Planner
	clk   clock.Clock
	think time.Duration
}

func (s slowPlanner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	dec, err := s.Planner.Plan(ctx, in)
	if err != nil {
		return dec, err
	}
	return dec, s.clk.Sleep(ctx, s.think)
}

// hostileSlow runs the search goal on the hostile simulator with a planner
// that thinks 3 s, and returns the permissions granted, the interruptions
// agreed to, and the steps recorded as re-planned.
func hostileSlow(t *testing.T, loc string, seed int64, cfg Config) (granted, agreed, replanned int, res Result) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Locale: loc, Profile: "hostile", Seed: seed, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = seed
	r, err := New(cfg, p.Device(), slowPlanner{rule.New(), clk, 3 * time.Second}, Options{Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	res = r.Run(context.Background(), simGoals[loc])
	var st struct {
		Interruptions []struct{ Kind, Outcome string } `json:"interruptions"`
		Granted       []any                            `json:"granted"`
	}
	raw, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	for _, in := range st.Interruptions {
		switch in.Outcome {
		case "allowed", "allowed_foreground", "allowed_once", "closed_app", "restarted":
			agreed++
		}
	}
	for _, s := range res.Steps {
		if s.Status == lifecycle.StepReplanned {
			replanned++
		}
	}
	return len(st.Granted), agreed, replanned, res
}

// Issue 27: with a planner that thinks 3 s, a dialog that comes while it
// thinks is not tapped through. 120 hostile runs (60 seeds per locale): no
// permission granted, no interruption agreed to, and the steps that met a
// changed screen are recorded as re-planned, not succeeded. The same seeds
// with the check switched off (StaleAfter beyond any plan) are the
// control: there a dialog that came while the planner thought takes the
// planned tap, and the test fails if the fixture stops producing that
// (30 seeds a locale did once; since hostile's network error became the
// seed's alone, seeds 36 and 48 are the ones whose dialog lands there).
func TestSimHostileSlowPlannerGrantsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("240 simulated runs")
	}
	off := Defaults()
	off.StaleAfter = time.Hour
	completed, replannedRuns, control := 0, 0, []string{}
	for _, loc := range []string{"en", "zh"} {
		for seed := int64(1); seed <= 60; seed++ {
			granted, agreed, replanned, res := hostileSlow(t, loc, seed, Defaults())
			if granted+agreed > 0 {
				t.Errorf("%s seed %d: %d granted, %d interruptions agreed to; steps %v", loc, seed, granted, agreed, intents(res))
			}
			if replanned > 0 {
				replannedRuns++
			}
			if res.Status == lifecycle.Completed {
				completed++
			}
			if g, a, _, _ := hostileSlow(t, loc, seed, off); g+a > 0 {
				control = append(control, fmt.Sprintf("%s/%d", loc, seed))
			}
		}
	}
	t.Logf("120 hostile runs with a 3 s planner: 0 granted, %d completed, %d met a changed screen and re-planned; without the check %d granted or agreed: %v",
		completed, replannedRuns, len(control), control)
	if replannedRuns == 0 || len(control) == 0 {
		t.Error("no run met a screen that changed while the planner thought: the fixture does not test the check")
	}
}
