package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	_ "phonepilot/plan/ai/anthropic" // registers the provider
	"phonepilot/plan/rule"
	"phonepilot/scene"
	"phonepilot/tools"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// recorder wraps a Planner and keeps every Input it was given.
type recorder struct {
	mu     sync.Mutex
	inner  plan.Planner
	inputs []plan.Input
}

func (r *recorder) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	r.mu.Lock()
	r.inputs = append(r.inputs, in)
	r.mu.Unlock()
	return r.inner.Plan(ctx, in)
}

func (r *recorder) all() []plan.Input {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]plan.Input(nil), r.inputs...)
}

// planFunc adapts a function to plan.Planner.
type planFunc func(ctx context.Context, in plan.Input) (plan.Decision, error)

func (f planFunc) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) { return f(ctx, in) }

type harness struct {
	phone  *toyPhone
	clock  *clock.Fake
	rec    *recorder
	runner *Runner
	events []Event
}

func newHarness(t *testing.T, cfg Config, p plan.Planner, setup func(*toyPhone)) *harness {
	t.Helper()
	h := &harness{clock: clock.NewFake(epoch)}
	h.phone = newToyPhone(h.clock)
	if setup != nil {
		setup(h.phone)
	}
	if p == nil {
		p = rule.New()
	}
	h.rec = &recorder{inner: p}
	r, err := New(cfg, h.phone, h.rec, Options{Clock: h.clock, Logger: testlog.New(t),
		OnEvent: func(e Event) { h.events = append(h.events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	h.runner = r
	return h
}

func intents(res Result) []string {
	var out []string
	for _, s := range res.Steps {
		out = append(out, s.Intent+" → "+string(s.Status))
	}
	return out
}

func TestLoopContinuesUntilGoalIsMet(t *testing.T) {
	for _, goal := range []string{"open Taobao and search Mac mini", "打开淘宝搜索Mac mini"} {
		t.Run(goal, func(t *testing.T) {
			h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.spinner = 800 * time.Millisecond })
			res := h.runner.Run(context.Background(), goal)
			if res.Status != lifecycle.Completed {
				t.Fatalf("status %s (%s); steps %v", res.Status, res.Reason, intents(res))
			}
			last, typed, launches := h.phone.state()
			if last != "Mac mini" {
				t.Errorf("last search %q, want Mac mini", last)
			}
			if len(typed) != 1 || launches != 1 {
				t.Errorf("typed %q and launched %d times; want one of each", typed, launches)
			}
			// observe → plan → act repeated: one plan per step plus the final one.
			if got := len(h.rec.all()); got != len(res.Steps)+1 {
				t.Errorf("planner asked %d times for %d steps", got, len(res.Steps))
			}
		})
	}
}

func TestLoopStopsAfterMaxSteps(t *testing.T) {
	cfg := Defaults()
	cfg.MaxSteps = 5
	cfg.RepeatLimit, cfg.StuckSteps = 100, 100 // let the step ceiling, not the loop detector, end it
	never := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		return plan.Decision{Steps: []plan.PlannedStep{{Intent: "wait a little",
			Call: tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.1})}}}, nil
	})
	h := newHarness(t, cfg, never, nil)
	res := h.runner.Run(context.Background(), "wait forever")
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseMaxSteps || !strings.Contains(res.Reason, "maximum of 5 steps") {
		t.Fatalf("got %s (%s), want failed at max steps", res.Status, res.Reason)
	}
	if len(res.Steps) != 5 {
		t.Errorf("executed %d steps, want 5", len(res.Steps))
	}
	if last := h.events[len(h.events)-1]; last.Type != lifecycle.EventStatus || last.Status != lifecycle.Failed {
		t.Errorf("last event %+v, want the failed status", last)
	}
}

func TestPlannerReplansAfterUnexpectedScene(t *testing.T) {
	// The search bar does not react: the step's expectation (the screen
	// changes) is not met, so the Planner is asked again with the new Scene.
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.deadSearchBar = true })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	ins := h.rec.all()
	var replan *plan.Input
	for i := range ins {
		if ins[i].Replan {
			replan = &ins[i]
			break
		}
	}
	if replan == nil {
		t.Fatalf("the planner was never asked to re-plan; steps %v", intents(res))
	}
	if !strings.Contains(replan.Reason, "tap the search box") || !strings.Contains(replan.Reason, "did not change") {
		t.Errorf("re-plan reason %q does not say which step failed and why", replan.Reason)
	}
	if replan.Scene == nil || replan.Scene.Package != toyPkg {
		t.Errorf("re-plan got scene %+v, want the current Taobao screen", replan.Scene)
	}
}

func TestExecutorRetriesATransientFailure(t *testing.T) {
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) {})
	// Launch first, then drop the next tap (the search bar).
	h.phone.dropTaps = 0
	res := h.runner.Run(context.Background(), "open Taobao")
	if res.Status != lifecycle.Completed {
		t.Fatal(res.Reason)
	}
	h.phone.dropTaps = 1
	res = h.runner.Run(context.Background(), "search Mac mini in Taobao")
	if res.Status != lifecycle.Completed {
		t.Fatalf("status %s (%s); steps %v", res.Status, res.Reason, intents(res))
	}
	tap := res.Steps[1] // after launching Taobao, already in front
	if tap.Intent != "tap the search box" || tap.Status != lifecycle.StepSucceeded || len(tap.Attempts) != 2 {
		t.Fatalf("first step %q %s with %d attempts; want the search box tapped on the 2nd attempt", tap.Intent, tap.Status, len(tap.Attempts))
	}
	if tap.Attempts[0].Changed || !tap.Attempts[1].Changed {
		t.Errorf("attempts %+v: the first should show no change, the second a change", tap.Attempts)
	}
	// The wait between attempts came from the clock (backoff), within its cap.
	var backoffs int
	for _, d := range h.clock.Sleeps() {
		if d >= Defaults().BackoffBase/2 && d <= Defaults().BackoffMax {
			backoffs++
		}
	}
	if backoffs == 0 {
		t.Errorf("no backoff sleep seen in %v", h.clock.Sleeps())
	}
}

func TestExecutorGivesUpAfterRetryCeiling(t *testing.T) {
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.deadSearchBar = true })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	var failed *plan.StepRecord
	for i := range res.Steps {
		if res.Steps[i].Intent == "tap the search box" {
			failed = &res.Steps[i]
			break
		}
	}
	if failed == nil || failed.Status != lifecycle.StepFailed {
		t.Fatalf("no failed search-box step in %v", intents(res))
	}
	if len(failed.Attempts) != Defaults().StepRetries {
		t.Errorf("%d attempts, want the ceiling %d", len(failed.Attempts), Defaults().StepRetries)
	}
	if h.phone.taps != Defaults().StepRetries {
		t.Errorf("the dead bar was tapped %d times, want %d (never again after the ceiling)", h.phone.taps, Defaults().StepRetries)
	}
	// The task ends failed, and its reason names the step that failed.
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseStepFailed || !strings.Contains(res.Reason, "tap the search box") {
		t.Errorf("got %s (%s: %s), want failed (step_failed) naming the step", res.Status, res.Cause, res.Reason)
	}
	if len(res.Steps) > Defaults().MaxSteps {
		t.Errorf("%d steps, more than max", len(res.Steps))
	}
}

func TestReplanningUsesPriorStepHistory(t *testing.T) {
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.deadSearchBar = true })
	h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	for _, in := range h.rec.all() {
		if !in.Replan {
			continue
		}
		if len(in.History) < 2 {
			t.Fatalf("re-plan saw %d steps of history, want the launch and the failed tap", len(in.History))
		}
		if in.History[0].Intent != "launch Taobao" || in.History[0].Status != lifecycle.StepSucceeded {
			t.Errorf("history[0] = %q %s, want the successful launch", in.History[0].Intent, in.History[0].Status)
		}
		tap := in.History[len(in.History)-1]
		if tap.Status != lifecycle.StepFailed || len(tap.Attempts) != Defaults().StepRetries || tap.Reason == "" {
			t.Errorf("last history step %+v: want the failed tap with its %d attempts and a reason", tap, Defaults().StepRetries)
		}
		if _, ok := tools.ElementArg(tap.Call); !ok {
			t.Errorf("history call %s has no element: the planner cannot tell which element failed", tap.Call)
		}
		if len(in.Scenes) < 2 || in.Scenes[len(in.Scenes)-1].Listing == "" {
			t.Errorf("re-plan saw %d recent scenes, want the screens so far with listings", len(in.Scenes))
		}
		return
	}
	t.Fatal("no re-planning happened")
}

func TestTargetThatNeverAppearsEndsFailed(t *testing.T) {
	cfg := Defaults()
	h := newHarness(t, cfg, nil, nil)
	res := h.runner.Run(context.Background(), "open Taobao and tap Checkout")
	if res.Status != lifecycle.Failed || !strings.Contains(res.Reason, "Checkout") {
		t.Fatalf("got %s (%s), want failed naming the missing target", res.Status, res.Reason)
	}
	if len(res.Steps) > cfg.MaxSteps {
		t.Errorf("%d steps, more than max %d", len(res.Steps), cfg.MaxSteps)
	}
}

func TestTargetThatNeverRespondsFailsAfterCeilingAndReplans(t *testing.T) {
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.deadSearchBar = true })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	ins := h.rec.all()
	replans := 0
	for _, in := range ins {
		if in.Replan {
			replans++
		}
	}
	if replans == 0 {
		t.Errorf("the planner never re-planned")
	}
	if res.Status != lifecycle.Failed || !strings.Contains(res.Reason, "step 2 (tap the search box) failed") {
		t.Errorf("reason %q does not name the failed step", res.Reason)
	}
}

func TestWaitsForTargetWithoutFixedSleeps(t *testing.T) {
	// The results spinner shows for 2 s: the task waits for it by polling,
	// and no single sleep is a long fixed delay.
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.spinner = 2 * time.Second })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Completed {
		t.Fatalf("%s (%s) %v", res.Status, res.Reason, intents(res))
	}
	if !strings.Contains(res.Reason, `searched for "Mac mini"; the screen shows Taobao`) {
		t.Errorf("reason %q", res.Reason)
	}
	for _, d := range h.clock.Sleeps() {
		if d > Defaults().BackoffMax {
			t.Errorf("a %s sleep: waits must poll, not sleep long", d)
		}
	}
}

func TestPopupAfterLaunchIsDismissed(t *testing.T) {
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.popupAfterLaunch = true })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Completed {
		t.Fatalf("%s (%s) %v", res.Status, res.Reason, intents(res))
	}
	if res.Steps[1].Intent != "dismiss the popup (Close)" || res.Steps[1].Status != lifecycle.StepSucceeded {
		t.Errorf("step 2 = %q, want the popup dismissed right after launch; steps %v", res.Steps[1].Intent, intents(res))
	}
	if last, _, _ := h.phone.state(); last != "Mac mini" {
		t.Errorf("last search %q", last)
	}
}

func TestSubmitRetriedWithoutRetyping(t *testing.T) {
	// The enter key is lost once: the retry sees the query already in the
	// field and presses enter only.
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.dropEnter = 1 })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Completed {
		t.Fatalf("%s (%s) %v", res.Status, res.Reason, intents(res))
	}
	_, typed, _ := h.phone.state()
	if len(typed) != 1 {
		t.Errorf("typed %q: the query must be typed exactly once", typed)
	}
	var attempts []plan.Attempt
	for _, s := range res.Steps {
		if strings.HasPrefix(s.Intent, "type ") {
			attempts = s.Attempts
		}
	}
	if len(attempts) != 2 || !strings.Contains(attempts[1].Result, "already typed") {
		t.Errorf("type step attempts %+v, want a 2nd attempt that only submits", attempts)
	}
}

// Cancelled while the phone types (typing would take an hour), the run
// returns at once: the step in flight is cancelled, nothing half-typed.
// No wall-clock measure: a run that waited for the typing would hang the
// test (go test -timeout), not pass it.
func TestCancelMidStepIsPromptAndLeavesNoHalfTypedText(t *testing.T) {
	typing := make(chan struct{})
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.typeDelay, p.typing = time.Hour, typing })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-typing // the phone is typing now
		cancel()
	}()
	res := h.runner.Run(ctx, "open Taobao and search Mac mini")
	if res.Status != lifecycle.Cancelled || res.Cause != lifecycle.CauseCancelled {
		t.Fatalf("status %s (%s: %s), want cancelled", res.Status, res.Cause, res.Reason)
	}
	// The step in flight is recorded as cancelled, not as failed.
	last := res.Steps[len(res.Steps)-1]
	if last.Call.Name != tools.TypeText || last.Status != lifecycle.StepCancelled {
		t.Errorf("step in flight %s ended %s (%s), want cancelled", last.Call.Name, last.Status, last.Reason)
	}
	if _, typed, _ := h.phone.state(); len(typed) != 0 || h.phone.field != "" {
		t.Errorf("field %q, typed %q after cancel; want nothing typed", h.phone.field, typed)
	}
}

func TestDeviceDisconnectedFailsTheTask(t *testing.T) {
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.disconnectAfter = 6 })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseDeviceGone || !strings.HasPrefix(res.Reason, "device disconnected") {
		t.Fatalf("got %s (%s), want failed: device disconnected", res.Status, res.Reason)
	}
}

func TestStuckLoopIsReportedThenEndsTheTask(t *testing.T) {
	var stuckSeen []string
	same := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		if in.Stuck != "" {
			stuckSeen = append(stuckSeen, in.Stuck)
		}
		return plan.Decision{Steps: []plan.PlannedStep{{Intent: "scroll down",
			Call: tools.NewCall(tools.Scroll, map[string]string{"direction": "down"})}}}, nil
	})
	cfg := Defaults()
	h := newHarness(t, cfg, same, nil)
	res := h.runner.Run(context.Background(), "scroll forever")
	if len(stuckSeen) != 1 || !strings.Contains(stuckSeen[0], "same action") {
		t.Errorf("planner told of the loop %q, want once", stuckSeen)
	}
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseStuck || !strings.HasPrefix(res.Reason, "stuck:") {
		t.Fatalf("got %s (%s), want failed as stuck", res.Status, res.Reason)
	}
	if len(res.Steps) >= cfg.MaxSteps {
		t.Errorf("%d steps: the loop detector should end it before max steps", len(res.Steps))
	}
}

func TestUnreadableGoalFailsAtOnceAndPointsToAIPlanner(t *testing.T) {
	h := newHarness(t, Defaults(), nil, nil)
	res := h.runner.Run(context.Background(), "make me a sandwich")
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseGoalNotUnderstood || len(res.Steps) != 0 {
		t.Fatalf("got %s (%s) with %d steps, want failed (goal_not_understood) at once", res.Status, res.Cause, len(res.Steps))
	}
	if !strings.Contains(res.Reason, "cannot read") || !strings.Contains(res.Reason, "--planner ai") {
		t.Errorf("reason %q should say the goal is unreadable and point to --planner ai", res.Reason)
	}
}

func TestEventsInOrderWithStepScenes(t *testing.T) {
	h := newHarness(t, Defaults(), nil, nil)
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Completed {
		t.Fatal(res.Reason)
	}
	if h.events[0].Type != lifecycle.EventTaskStarted || h.events[len(h.events)-1].Type != lifecycle.EventStatus {
		t.Fatalf("events start with %s and end with %s", h.events[0].Type, h.events[len(h.events)-1].Type)
	}
	finished := 0
	for _, e := range h.events {
		if e.Type != lifecycle.EventStepFinished {
			continue
		}
		finished++
		if e.Record == nil || e.Scene == nil || e.Call == nil {
			t.Fatalf("step_finished without record, scene or call: %+v", e)
		}
		if i, ok := tools.ElementArg(*e.Call); ok {
			if _, found := e.Scene.Element(i); !found {
				t.Errorf("step %d highlights element %d not in its scene", e.Step, i)
			}
		}
	}
	// The final Scene is the screen after the last action: the last one
	// observed, not the one the last step acted on.
	var lastSeen *scene.Scene
	for _, e := range h.events {
		if e.Type == lifecycle.EventSceneObserved {
			lastSeen = e.Scene
		}
	}
	if res.FinalScene == nil || res.FinalScene != lastSeen {
		t.Errorf("final scene %p, want the last observed %p", res.FinalScene, lastSeen)
	}
	if last := res.Steps[len(res.Steps)-1]; res.FinalScene != nil && last.After != "" && last.Before == last.After {
		t.Errorf("last step did not change the screen; cannot tell the final scene from the acted-on one")
	}
	if finished != len(res.Steps) {
		t.Errorf("%d step_finished events for %d steps", finished, len(res.Steps))
	}
}

// The planner is the caller's: New refuses to run without one (it never
// builds one of its own, the AI planner least of all).
func TestNewRequiresAPlanner(t *testing.T) {
	if _, err := New(Defaults(), newToyPhone(clock.NewFake(epoch)), nil, Options{}); err == nil || !strings.Contains(err.Error(), "planner") {
		t.Fatalf("New without a planner: %v", err)
	}
	explicit := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		return plan.Decision{Finish: &plan.Finish{Success: true}}, nil
	})
	r, err := New(Defaults(), newToyPhone(clock.NewFake(epoch)), explicit, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Run(context.Background(), "x"); res.Status != lifecycle.Completed {
		t.Errorf("the given planner not used: %s", res.Reason)
	}
}

func TestConfigValidateNamesTheSetting(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"max_steps":    func(c *Config) { c.MaxSteps = 0 },
		"step_retries": func(c *Config) { c.StepRetries = 0 },
		"wait_timeout": func(c *Config) { c.WaitTimeout = -1 },
	} {
		c := Defaults()
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

func TestPlannerErrorFailsTheTask(t *testing.T) {
	broken := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		return plan.Decision{}, errors.New("model unavailable")
	})
	h := newHarness(t, Defaults(), broken, nil)
	res := h.runner.Run(context.Background(), "x")
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseModelError || !strings.Contains(res.Reason, "model unavailable") {
		t.Errorf("got %s (%s: %s)", res.Status, res.Cause, res.Reason)
	}
}

func TestTransientObservationErrorsAreRetried(t *testing.T) {
	// The screen cannot be read for a while (uiautomator: could not get
	// idle state); the task waits it out instead of failing.
	h := newHarness(t, Defaults(), nil, func(p *toyPhone) { p.sceneErrors = 12 })
	res := h.runner.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Completed {
		t.Fatalf("%s (%s)", res.Status, res.Reason)
	}
}

func TestExecutorWaitsForTheTargetToAppear(t *testing.T) {
	// The planner names the search bar before it is drawn; the Executor
	// polls the Scene until it shows (2 s later) and taps it.
	var h *harness
	script := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		if len(in.History) > 0 {
			return plan.Decision{Finish: &plan.Finish{Success: true}}, nil
		}
		return plan.Decision{Steps: []plan.PlannedStep{{
			Intent: "tap the search bar",
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &scene.Selector{Field: scene.FieldID, Value: "search_bar", Clickable: true},
			Expect: plan.Expectation{Kind: plan.ExpectChanged},
		}}}, nil
	})
	h = newHarness(t, Defaults(), script, func(p *toyPhone) { p.screen = "home" })
	h.phone.barAfter = h.clock.Now().Add(2 * time.Second)
	res := h.runner.Run(context.Background(), "tap the search bar")
	if res.Status != lifecycle.Completed || h.phone.screen != "search" {
		t.Fatalf("%s (%s), screen %s", res.Status, res.Reason, h.phone.screen)
	}
	if d := res.Steps[0].Duration; d < 2*time.Second || d > 3*time.Second {
		t.Errorf("step took %s; want it to wait about 2 s for the bar", d)
	}
	for _, d := range h.clock.Sleeps() {
		if d > Defaults().PollInterval {
			t.Errorf("slept %s while waiting: want polling at %s", d, Defaults().PollInterval)
		}
	}
}
