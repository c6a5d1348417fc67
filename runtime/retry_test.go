package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// searchBarSel names the toy Taobao home page's search bar.
var searchBarSel = scene.Selector{Field: scene.FieldID, Value: "com.taobao.taobao:id/search_bar", Mode: scene.ModeExact, Clickable: true}

// tapBarPlanner taps the search bar expecting exp, then (asked again)
// finishes; it keeps every Input.
type tapBarPlanner struct {
	mu  sync.Mutex
	exp plan.Expectation
	ins []plan.Input
}

func (p *tapBarPlanner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ins = append(p.ins, in)
	if len(p.ins) > 1 {
		return plan.Decision{Finish: &plan.Finish{Success: false, Reason: "seen enough"}}, nil
	}
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap the search bar",
		Call: tools.NewCall(tools.Tap, map[string]any{}), Target: &searchBarSel, Expect: p.exp}}}, nil
}

// The retry ceiling is the configured one, not a constant: a tap that never
// has an effect is tried exactly StepRetries times (2 and 5 here, neither
// the default 3).
func TestRetryCeilingIsConfigured(t *testing.T) {
	for _, n := range []int{2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cfg := Defaults()
			cfg.StepRetries = n
			pl := &tapBarPlanner{exp: plan.Expectation{Kind: plan.ExpectChanged}}
			h := newHarness(t, cfg, pl, func(p *toyPhone) { p.screen, p.deadSearchBar = "home", true })
			res := h.runner.Run(context.Background(), "tap the dead bar")
			if len(res.Steps) != 1 {
				t.Fatalf("%d steps; want the one tap step", len(res.Steps))
			}
			if got := len(res.Steps[0].Attempts); got != n || h.phone.taps != n {
				t.Errorf("StepRetries %d: %d attempts, %d taps; want %d of each", n, got, h.phone.taps, n)
			}
		})
	}
}

// fixedBackoff is an injected policy: attempt n waits n seconds. It
// records the attempts it was asked about.
type fixedBackoff struct{ asked []int }

func (b *fixedBackoff) Delay(n int) time.Duration {
	b.asked = append(b.asked, n)
	return time.Duration(n) * time.Second
}

// tapTimes wraps a device and records when (on the injected clock) each tap
// reaches it.
type tapTimes struct {
	device.Device
	now  func() time.Time
	taps []time.Time
}

func (d *tapTimes) Tap(ctx context.Context, x, y int) error {
	d.taps = append(d.taps, d.now())
	return d.Device.Tap(ctx, x, y)
}

// gaps runs the dead-bar tap with cfg and bo and returns, for each attempt
// after the first, the time from the previous attempt's end (its event) to
// the tap of this one: the wait between attempts, with no poll sleep in it
// (those are inside an attempt, before its event).
func gaps(t *testing.T, cfg Config, bo Backoff) []time.Duration {
	t.Helper()
	h := newHarness(t, cfg, &tapBarPlanner{exp: plan.Expectation{Kind: plan.ExpectChanged}},
		func(p *toyPhone) { p.screen, p.deadSearchBar = "home", true })
	dev := &tapTimes{Device: h.phone, now: h.clock.Now}
	var ends []time.Time
	r, err := New(cfg, dev, h.rec, Options{Clock: h.clock, Backoff: bo, OnEvent: func(e Event) {
		if e.Type == lifecycle.EventAttempt {
			ends = append(ends, e.Time)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background(), "tap the dead bar")
	if len(dev.taps) != cfg.StepRetries || len(ends) != cfg.StepRetries {
		t.Fatalf("%d taps, %d attempt events; want %d", len(dev.taps), len(ends), cfg.StepRetries)
	}
	var out []time.Duration
	for i := 1; i < len(dev.taps); i++ {
		out = append(out, dev.taps[i].Sub(ends[i-1]))
	}
	return out
}

// Attempts are separated by the backoff policy's wait, measured on the
// injected clock between one attempt's end and the next attempt's action.
func TestBackoffSeparatesAttempts(t *testing.T) {
	cfg := Defaults()
	cfg.StepRetries = 4
	t.Run("injected", func(t *testing.T) {
		bo := &fixedBackoff{}
		g := gaps(t, cfg, bo)
		if fmt.Sprint(bo.asked) != "[2 3 4]" {
			t.Errorf("the policy was asked for attempts %v; want [2 3 4]", bo.asked)
		}
		for i, d := range g {
			n := i + 2
			if want := time.Duration(n) * time.Second; d < want || d > want+time.Second {
				t.Errorf("attempt %d followed the previous one after %s; want the policy's %s (plus one observation)", n, d, want)
			}
		}
	})
	t.Run("default", func(t *testing.T) {
		cfg := cfg
		cfg.BackoffBase, cfg.BackoffMax = time.Second, 3*time.Second
		for i, d := range gaps(t, cfg, nil) {
			n := i + 2
			// base·2^(n-2), capped, of which the upper half is jitter.
			full := min(cfg.BackoffBase<<(n-2), cfg.BackoffMax)
			if d < full/2 || d > full+time.Second {
				t.Errorf("attempt %d followed the previous one after %s; want between %s and %s", n, d, full/2, full)
			}
		}
	})
}

// The default policy doubles, caps, and jitters only the upper half.
func TestDefaultBackoffShape(t *testing.T) {
	bo := NewBackoff(100*time.Millisecond, 500*time.Millisecond, 7)
	for n, full := range map[int]time.Duration{2: 100 * time.Millisecond, 3: 200 * time.Millisecond, 4: 400 * time.Millisecond, 5: 500 * time.Millisecond, 9: 500 * time.Millisecond} {
		for i := 0; i < 50; i++ {
			if d := bo.Delay(n); d < full/2 || d > full {
				t.Fatalf("Delay(%d) = %s; want within [%s, %s]", n, d, full/2, full)
			}
		}
	}
}

// A re-plan is handed the Scene of the moment: the tap changed the screen
// (home → search page) but not as the step expected, and the Planner asked
// again must see the search page, not the home page it planned on.
func TestReplanGetsTheNewScene(t *testing.T) {
	pl := &tapBarPlanner{exp: plan.Expectation{Kind: plan.ExpectPresent, Target: scene.Selector{Value: "Checkout"}}}
	h := newHarness(t, Defaults(), pl, func(p *toyPhone) { p.screen = "home" })
	res := h.runner.Run(context.Background(), "tap the bar and see Checkout")
	if len(pl.ins) != 2 || !pl.ins[1].Replan {
		t.Fatalf("planner inputs %d (replan %v); want a re-plan after the failed step; steps %v", len(pl.ins), len(pl.ins) > 1 && pl.ins[1].Replan, intents(res))
	}
	now, err := h.phone.Scene(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	old, got := pl.ins[0].Scene, pl.ins[1].Scene
	if old.Fingerprint() == now.Fingerprint() {
		t.Fatal("fixture: the screen did not change")
	}
	if got.Fingerprint() != now.Fingerprint() {
		t.Errorf("the re-plan saw %q; want the screen now, %q", got.Listing(), now.Listing())
	}
	if _, ok := got.Resolve(scene.Selector{Field: scene.FieldID, Value: "com.taobao.taobao:id/search_edit", Mode: scene.ModeExact}); !ok {
		t.Errorf("the re-plan's Scene has no search field: %s", got.Listing())
	}
}

// failingLauncher fails every launch with err.
type failingLauncher struct {
	*toyPhone
	err      error
	launches int
}

func (d *failingLauncher) LaunchApp(ctx context.Context, app string) error {
	d.launches++
	return d.err
}

// customPermanent is an error of some driver that says it is permanent.
type customPermanent struct{}

func (customPermanent) Error() string   { return "the phone refuses this for good" }
func (customPermanent) Permanent() bool { return true }

// An error that says it is permanent where it is produced is tried once,
// whatever the retry ceiling; an error that does not say so is retried.
func TestPermanentErrorsAreNotRetried(t *testing.T) {
	launch := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		if len(in.History) > 0 {
			return plan.Decision{Finish: &plan.Finish{Reason: "stop"}}, nil
		}
		return plan.Decision{Steps: []plan.PlannedStep{{Intent: "launch Nope", Call: tools.NewCall(tools.LaunchApp, map[string]string{"app": "Nope"}),
			Expect: plan.Expectation{Kind: plan.ExpectApp, App: "Nope"}}}}, nil
	})
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"app not found", fmt.Errorf("adb: no installed app matches %q: %w", "Nope", device.ErrAppNotFound), 1},
		{"unsupported", fmt.Errorf("sim: %w", device.ErrUnsupported), 1},
		{"a driver's own permanent error", fmt.Errorf("wrapped: %w", customPermanent{}), 1},
		{"a transient error", errors.New("adb: stream closed"), 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.StepRetries = 4
			h := newHarness(t, cfg, launch, nil)
			dev := &failingLauncher{toyPhone: h.phone, err: c.err}
			r, err := New(cfg, dev, launch, Options{Clock: h.clock})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), "launch Nope")
			if dev.launches != c.want || len(res.Steps) == 0 || len(res.Steps[0].Attempts) != c.want {
				t.Errorf("%d launches; want %d", dev.launches, c.want)
			}
		})
	}
	// A call the tool rejects (no such element) is permanent too.
	bad := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		if len(in.History) > 0 {
			return plan.Decision{Finish: &plan.Finish{Reason: "stop"}}, nil
		}
		return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap 99", Call: tools.NewCall(tools.Tap, map[string]int{"element": 99}),
			Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
	})
	h := newHarness(t, Defaults(), bad, nil)
	res := h.runner.Run(context.Background(), "tap 99")
	if len(res.Steps) == 0 || len(res.Steps[0].Attempts) != 1 || h.phone.taps != 0 {
		t.Errorf("tap of a missing element: %d attempts, %d taps; want 1 attempt, no tap", len(res.Steps[0].Attempts), h.phone.taps)
	}
}

// A Planner may end the task with a finish_task call among its steps
// instead of setting Finish: the tool's definition reads it, and a
// malformed one fails the task saying so, without touching the phone.
func TestFinishTaskStepEndsTheTask(t *testing.T) {
	for _, c := range []struct {
		args   string
		status lifecycle.Status
		reason string
	}{
		{`{"success":true,"reason":"the results show"}`, lifecycle.Completed, "the results show"},
		{`{"success":false,"reason":"no such app"}`, lifecycle.Failed, "no such app"},
		{`{"reason":"forgot success"}`, lifecycle.Failed, "malformed"},
	} {
		fin := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
			return plan.Decision{Steps: []plan.PlannedStep{{Intent: "finish", Call: tools.Call{Name: tools.FinishTask, Args: []byte(c.args)}}}}, nil
		})
		h := newHarness(t, Defaults(), fin, nil)
		res := h.runner.Run(context.Background(), "finish")
		if res.Status != c.status || !strings.Contains(res.Reason, c.reason) || len(res.Steps) != 0 {
			t.Errorf("finish_task %s: %s (%s) after %d steps; want %s with %q and no step", c.args, res.Status, res.Reason, len(res.Steps), c.status, c.reason)
		}
	}
}
