package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/perception"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// read is one scripted observation: a Scene or an error, and how long the
// dump takes on the clock.
type read struct {
	sc      *scene.Scene
	err     error
	latency time.Duration
}

// scriptedPhone answers Scene with its script, one read per call (the last
// one repeats), and records every input. It is a phone whose screen after an
// action is known exactly, so a test can count the reads settling costs.
type scriptedPhone struct {
	mu     sync.Mutex
	clock  clock.Clock
	script []read
	reads  int
	taps   int
}

var _ device.Device = (*scriptedPhone)(nil)

func (p *scriptedPhone) Scene(ctx context.Context) (*scene.Scene, error) {
	p.mu.Lock()
	r := p.script[min(p.reads, len(p.script)-1)]
	p.reads++
	p.mu.Unlock()
	if err := p.clock.Sleep(ctx, r.latency); err != nil {
		return nil, err
	}
	return r.sc, r.err
}

func (p *scriptedPhone) Tap(ctx context.Context, x, y int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.taps++
	return ctx.Err()
}
func (p *scriptedPhone) LongPress(ctx context.Context, x, y int, d time.Duration) error {
	return ctx.Err()
}
func (p *scriptedPhone) Swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error {
	return ctx.Err()
}
func (p *scriptedPhone) TypeText(ctx context.Context, s string) error  { return ctx.Err() }
func (p *scriptedPhone) Key(ctx context.Context, k device.Key) error   { return ctx.Err() }
func (p *scriptedPhone) LaunchApp(ctx context.Context, a string) error { return ctx.Err() }

func (p *scriptedPhone) readCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reads
}

// appScreen builds a Scene of the shopping app with one clickable button per
// label; spinner adds a progress bar (a screen still loading).
func appScreen(spinner bool, labels ...string) *scene.Scene {
	sc := &scene.Scene{Width: 1080, Height: 2400, Package: toyPkg}
	sc.Elements = append(sc.Elements, scene.Element{Index: 0, Parent: -1, Class: "android.widget.FrameLayout",
		Bounds: scene.Bounds{Right: 1080, Bottom: 2400}, Enabled: true, Package: toyPkg})
	for i, l := range labels {
		e := el(0, 0, "android.widget.Button", l, fmt.Sprintf("%s:id/b%d", toyPkg, i),
			scene.Bounds{Left: 40, Top: 300 + 200*i, Right: 1040, Bottom: 460 + 200*i})
		e.Index, e.Clickable = len(sc.Elements), true
		sc.Elements = append(sc.Elements, e)
	}
	if spinner {
		sc.Elements = append(sc.Elements, scene.Element{Index: len(sc.Elements), Parent: 0, Class: "android.widget.ProgressBar",
			Desc: "Loading", Bounds: scene.Bounds{Left: 480, Top: 1100, Right: 600, Bottom: 1220}, Enabled: true, Package: toyPkg})
	}
	return sc
}

const dump = 250 * time.Millisecond // every scripted read takes this long

func newScripted(reads ...read) (*scriptedPhone, *clock.Fake) {
	clk := clock.NewFake(epoch)
	for i := range reads {
		if reads[i].latency == 0 {
			reads[i].latency = dump
		}
	}
	return &scriptedPhone{clock: clk, script: reads}, clk
}

// shows is the expectation "the button labelled label is on the screen".
func shows(label string) func(*scene.Scene) bool {
	return func(sc *scene.Scene) bool {
		_, ok := sc.Resolve(scene.Selector{Field: scene.FieldLabel, Value: label})
		return ok
	}
}

func TestSettleTakesTheFirstReadThatShowsTheOutcome(t *testing.T) {
	pre := appScreen(false, "Search bar")
	next := appScreen(false, "Search", "History")
	// Dump 1 still shows the old screen (the transition has not drawn yet),
	// dump 2 shows the new one: settling ends there, without a third
	// dump to confirm it.
	p, clk := newScripted(read{sc: pre}, read{sc: next}, read{sc: next})
	e := newExecutor(Defaults(), p, clk, testlog.New(t), nil)
	start := clk.Now()
	got, err := e.settle(context.Background(), pre, shows("History"), false, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got != next {
		t.Errorf("settled on %v, want the new screen", got.Fingerprint())
	}
	if n := p.readCount(); n != 2 {
		t.Errorf("read the screen %d times, want 2 (old, then the outcome)", n)
	}
	if took := clk.Now().Sub(start); took > 2*dump+10*time.Millisecond {
		t.Errorf("settling took %s, want about two dumps (%s): reads follow each other without a pause", took, 2*dump)
	}
	if e.takeLast() != next {
		t.Error("the settled Scene is not kept for the runner's next observation")
	}
}

func TestSettleConfirmsWithASecondReadWhenTheOutcomeIsNotShown(t *testing.T) {
	pre := appScreen(false, "Search bar")
	other := appScreen(false, "Something else")
	cases := []struct {
		name  string
		reads []read
		want  int
	}{
		// The action changed nothing (a dropped tap): two equal reads end it.
		{"nothing changed", []read{{sc: pre}, {sc: pre}}, 2},
		// It changed, but not into what the step expected: confirm it.
		{"changed, not as expected", []read{{sc: other}, {sc: other}}, 2},
		// A failed dump (still animating) breaks a run of equal reads.
		{"idle-state error between", []read{{sc: other}, {err: perception.ErrIdleState}, {sc: other}, {sc: other}}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, clk := newScripted(c.reads...)
			e := newExecutor(Defaults(), p, clk, testlog.New(t), nil)
			got, err := e.settle(context.Background(), pre, shows("History"), false, e.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got.Fingerprint() != c.reads[len(c.reads)-1].sc.Fingerprint() {
				t.Errorf("settled on the wrong screen")
			}
			if n := p.readCount(); n != c.want {
				t.Errorf("read the screen %d times, want %d", n, c.want)
			}
		})
	}
}

func TestSettleDoesNotTakeALoadingScreen(t *testing.T) {
	pre := appScreen(false, "Search")
	loadingResults := appScreen(true, "Results")
	results := appScreen(false, "Results", "Mac mini, M4")
	// The expected element is there from the first read, but so is a
	// spinner: neither the first read nor two equal loading reads end it.
	p, clk := newScripted(read{sc: loadingResults}, read{sc: loadingResults}, read{sc: loadingResults}, read{sc: results})
	e := newExecutor(Defaults(), p, clk, testlog.New(t), nil)
	got, err := e.settle(context.Background(), pre, shows("Results"), false, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got != results {
		t.Errorf("settled on a screen that is still loading")
	}
	if n := p.readCount(); n != 4 {
		t.Errorf("read the screen %d times, want 4 (until the spinner is gone, no more)", n)
	}
}

func TestSettleIsCappedAndHonoursCancel(t *testing.T) {
	pre := appScreen(false, "Search")
	spinning := appScreen(true, "Results")
	p, clk := newScripted(read{sc: spinning})
	cfg := Defaults()
	e := newExecutor(cfg, p, clk, testlog.New(t), nil)
	start := clk.Now()
	got, err := e.settle(context.Background(), pre, shows("Results"), false, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got != spinning {
		t.Errorf("after the cap, want the last Scene read")
	}
	if took := clk.Now().Sub(start); took < cfg.SettleTimeout || took > cfg.SettleTimeout+dump {
		t.Errorf("a screen that never settles was watched for %s, want the cap %s (+ one dump)", took, cfg.SettleTimeout)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.settle(ctx, pre, shows("Results"), false, e.clock.Now()); err == nil {
		t.Error("settle with a cancelled ctx returned no error")
	}
}

// TestStepReadsTheScreenOnceWhenTheOutcomeIsImmediate runs a whole step: the
// target is resolved on the Scene the step was planned on (no read), the
// tap lands, the first read after it shows the expected element, and the
// step is done. Before the one-read rule it took a second, confirming read.
func TestStepReadsTheScreenOnceWhenTheOutcomeIsImmediate(t *testing.T) {
	home := appScreen(false, "Search bar")
	search := appScreen(false, "Search", "History")
	p, clk := newScripted(read{sc: search})
	e := newExecutor(Defaults(), p, clk, testlog.New(t), nil)
	// The step is planned at once on the latest read (a rule planner):
	// nothing to read again before acting.
	e.read, e.readAt = home, clk.Now()
	ps := plan.PlannedStep{
		Intent: "tap the search bar",
		Call:   tools.NewCall(tools.Tap, map[string]any{}),
		Target: &scene.Selector{Field: scene.FieldLabel, Value: "Search bar"},
		Expect: plan.Expectation{Kind: plan.ExpectPresent, Target: scene.Selector{Field: scene.FieldLabel, Value: "History"}},
	}
	rec, _, err := e.execute(context.Background(), 1, ps, home, func(plan.Attempt, tools.Call) {})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != lifecycle.StepSucceeded {
		t.Fatalf("step %s: %s", rec.Status, rec.Reason)
	}
	if p.taps != 1 || p.readCount() != 1 {
		t.Errorf("%d taps and %d reads, want 1 tap and 1 read", p.taps, p.readCount())
	}
	if rec.Duration != dump {
		t.Errorf("step took %s, want one dump (%s)", rec.Duration, dump)
	}
	if e.takeLast() != search {
		t.Error("the step's last read is not reused as the next observation")
	}
}
