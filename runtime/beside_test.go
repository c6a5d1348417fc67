package runtime

import (
	"context"
	"sync"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/rule"
	"phonepilot/scene"
)

// besidePlanner is the rule planner with a BesideRead that notes which
// reads it was started beside.
type besidePlanner struct {
	plan.Planner
	mu      sync.Mutex
	started int                   // BesideRead calls
	read    map[*scene.Scene]bool // Scenes handed back by their read
	unseen  int                   // decisions on a Scene no BesideRead was tied to
}

func (b *besidePlanner) BesideRead(context.Context) func(*scene.Scene) {
	b.mu.Lock()
	b.started++
	b.mu.Unlock()
	return func(sc *scene.Scene) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if sc != nil {
			b.read[sc] = true
		}
	}
}

func (b *besidePlanner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	b.mu.Lock()
	if !b.read[in.Scene] {
		b.unseen++
	}
	b.mu.Unlock()
	return b.Planner.Plan(ctx, in)
}

// A planner that takes something beside the screen reads (the AI planner's
// screenshot) is started with every read, and every Scene it decides on
// is one such read returned: its frame was taken while the dump ran, not
// after it (issue 25).
func TestPlannerTakesItsFrameBesideEveryRead(t *testing.T) {
	h := newHarness(t, Defaults(), nil, nil)
	bp := searchBeside(t, h.phone, h.clock)
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.started == 0 || len(bp.read) == 0 {
		t.Fatalf("BesideRead started %d times, %d reads handed back: the runtime never asked for a frame beside a read", bp.started, len(bp.read))
	}
	if bp.unseen != 0 {
		t.Errorf("%d decisions were on a Scene read without a frame beside it", bp.unseen)
	}
	if bp.started < len(bp.read) {
		t.Errorf("%d reads handed back, %d started", len(bp.read), bp.started)
	}
}

// On a phone that counts its changes (the helper), a read costs 5–40 ms and
// a screenshot 50–150 ms: a frame beside every settling read would hold up
// the next read and be thrown away. The planner is not started beside
// reads there; it captures once, for the Scene it plans on (the AI
// planner's shotFor).
func TestNoFrameBesideReadsOnAPhoneThatCountsChanges(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Seed: 1, Profile: "realistic", Observer: sim.ObserverHelper, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	bp := searchBeside(t, p.Device(), clk)
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.started != 0 {
		t.Errorf("BesideRead started %d times on the helper's path; want none (one capture per decision)", bp.started)
	}
}

// searchBeside runs the Taobao search on dev with a besidePlanner and
// returns it once the task has completed.
func searchBeside(t *testing.T, dev device.Device, clk clock.Clock) *besidePlanner {
	t.Helper()
	bp := &besidePlanner{Planner: rule.New(), read: map[*scene.Scene]bool{}}
	r, err := New(Defaults(), dev, bp, Options{Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "open Taobao and search Mac mini")
	if res.Status != lifecycle.Completed {
		t.Fatalf("status %s (%s)", res.Status, res.Reason)
	}
	return bp
}
