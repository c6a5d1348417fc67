package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/perception"
)

// Every read, input and screenshot costs what its path charges, within the
// path's range, on the clock; the fault-free phone charges nothing.
func TestPathsChargeTheirCosts(t *testing.T) {
	ctx := context.Background()
	for _, o := range []Observer{ObserverUIAutomator, ObserverHelper, ObserverPortal} {
		c := CostsOf(o)
		clk := clock.NewFake(t0)
		p := newTestPhone(t, Config{Profile: "slow", Clock: clk, Observer: o, Seed: 3})
		dev := p.Device()
		took := func(what string, lo, hi time.Duration, f func() error) {
			t.Helper()
			before := clk.Now()
			if err := f(); err != nil && !errors.Is(err, perception.ErrIdleState) {
				t.Fatalf("%s %s: %v", o, what, err)
			}
			if d := clk.Now().Sub(before); d < lo || d > hi {
				t.Errorf("%s: %s took %v, want %v–%v", o, what, d, lo, hi)
			}
		}
		for i := 0; i < 20; i++ {
			took("a read", c.Tree.Min, c.Tree.Max, func() error { _, err := dev.Scene(ctx); return err })
			took("a tap", c.Input.Min, c.Input.Max, func() error { return dev.Tap(ctx, 5, 5) })
			took("a key", c.Input.Min, c.Input.Max, func() error { return dev.Key(ctx, device.KeyHome) })
			took("a swipe of 300 ms", c.Input.Min+300*time.Millisecond, c.Input.Max+300*time.Millisecond,
				func() error { return dev.Swipe(ctx, 500, 1500, 500, 500, 300*time.Millisecond) })
			took("a screenshot", c.Frame.Min, c.Frame.Max, func() error { _, err := dev.Capture(ctx); return err })
			took("a PNG screenshot", c.PNG.Min, c.PNG.Max, func() error { return dev.ChargePNG(ctx) })
		}
		if p.Dumps() != 20 || p.Frames() != 40 {
			t.Errorf("%s: %d dumps and %d frames counted, want 20 and 40", o, p.Dumps(), p.Frames())
		}
	}
	// Plain adb: phonepilot's driver reads raw frames (device/adb
	// Capture), a peer's `screencap -p` pays the PNG encoding on top.
	if c := CostsOf(ObserverUIAutomator); c.Frame.Min != 450*time.Millisecond || c.Frame.Max != 750*time.Millisecond ||
		c.PNG.Min != 1750*time.Millisecond || c.PNG.Max != 2250*time.Millisecond {
		t.Errorf("uiautomator: a raw frame costs %v–%v and a PNG %v–%v; want 0.45–0.75 s and 1.75–2.25 s (docs/sim.md)", c.Frame.Min, c.Frame.Max, c.PNG.Min, c.PNG.Max)
	}
	want := map[Observer][2]time.Duration{
		ObserverUIAutomator: {900 * time.Millisecond, 3200 * time.Millisecond},
		ObserverHelper:      {5 * time.Millisecond, 40 * time.Millisecond},
		ObserverPortal:      {300 * time.Millisecond, 600 * time.Millisecond},
	}
	for o, w := range want {
		if c := CostsOf(o); c.Tree.Min != w[0] || c.Tree.Max != w[1] {
			t.Errorf("%s: a read costs %v–%v, want %v–%v (docs/sim.md)", o, c.Tree.Min, c.Tree.Max, w[0], w[1])
		}
	}
	clk := clock.NewFake(t0)
	dev := newTestPhone(t, Config{Clock: clk}).Device()
	dev.Scene(ctx)
	dev.Tap(ctx, 5, 5)
	dev.Capture(ctx)
	if clk.Slept() != 0 {
		t.Errorf("the fault-free phone charged %v", clk.Slept())
	}
}

// A one-shot uiautomator dump waits for idle and fails while the screen
// animates; the helper's read does not wait and shows the screen as it is.
func TestOnlyUIAutomatorFailsWhileAnimating(t *testing.T) {
	ctx := context.Background()
	fails := map[Observer]int{}
	for seed := int64(0); seed < 40; seed++ {
		for _, o := range []Observer{ObserverUIAutomator, ObserverHelper} {
			clk := clock.NewFake(t0)
			p := newTestPhone(t, Config{Profile: "slow", Clock: clk, Observer: o, Seed: seed})
			dev := p.Device()
			if err := dev.LaunchApp(ctx, "Settings"); err != nil {
				t.Fatal(err)
			}
			// Start the read at once: the transition has just begun.
			p.mu.Lock()
			err := p.dumpFailure(p.now(), costs[o].idleWait)
			p.mu.Unlock()
			if errors.Is(err, errIdleState) {
				fails[o]++
			}
		}
	}
	if fails[ObserverUIAutomator] == 0 {
		t.Error("no uiautomator read failed with could not get idle state in 40 transitions of the slow profile")
	}
	if fails[ObserverHelper] != 0 {
		t.Errorf("%d helper reads failed with could not get idle state: the helper does not wait for idle", fails[ObserverHelper])
	}
}

// The helper's counter grows while a transition draws and when what a read
// shows changes (a toast coming and going), and stays still on a still
// screen; the uiautomator path has none.
func TestChangeCounter(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(t0)
	p := newTestPhone(t, Config{Profile: "realistic", Clock: clk, Observer: ObserverHelper, Seed: 1})
	var cc device.ChangeCounter = p.Device()
	read := func() device.ScreenChanges {
		t.Helper()
		c, err := cc.ScreenChanges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	still := read()
	clk.Advance(time.Second)
	if c := read(); c.Count != still.Count || c.Since < time.Second {
		t.Errorf("a still screen: %+v after %+v, want the same count and a second since", c, still)
	}
	if err := p.Device().LaunchApp(ctx, "Settings"); err != nil {
		t.Fatal(err)
	}
	during := read()
	if during.Count == still.Count || during.Since > 10*time.Millisecond {
		t.Errorf("during a launch's transition: %+v, want a new count just now (was %+v)", during, still)
	}
	clk.Advance(2 * time.Second)
	after := read()
	clk.Advance(500 * time.Millisecond)
	if c := read(); c.Count != after.Count || c.Since < 500*time.Millisecond {
		t.Errorf("settled: %+v then %+v, want no change", after, c)
	}
	p.mu.Lock()
	p.showToast("Added to cart")
	p.mu.Unlock()
	toast := read()
	if toast.Count == after.Count {
		t.Error("a toast showing did not count")
	}
	clk.Advance(3 * time.Second)
	if c := read(); c.Count == toast.Count {
		t.Error("a toast going did not count")
	}
	_, err := newTestPhone(t, Config{Profile: "realistic", Clock: clk}).Device().ScreenChanges(ctx)
	if !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("the uiautomator path's counter: %v, want ErrUnsupported", err)
	}
}

// A launch costs what device/adb's launch costs on the path: `monkey` (a
// Java process, the uiautomator path's input) on uiautomator's and the
// portal's; the helper's own start through the activity manager on the
// helper's, tens of times cheaper than monkey, and dearer than its 6 ms
// injected tap.
func TestLaunchCostsWhatThePathLaunchesWith(t *testing.T) {
	ctx := context.Background()
	java := CostsOf(ObserverUIAutomator).Input
	inProcess := struct{ Min, Max time.Duration }{12 * time.Millisecond, 17 * time.Millisecond}
	for _, o := range []Observer{ObserverUIAutomator, ObserverHelper, ObserverPortal} {
		want := java
		if o == ObserverHelper {
			want = inProcess
		}
		if got := CostsOf(o).Launch; got != want {
			t.Errorf("%s: CostsOf(..).Launch = %v; want %v", o, got, want)
		}
		for seed := int64(1); seed <= 5; seed++ {
			clk := clock.NewFake(t0)
			dev := newTestPhone(t, Config{Profile: "realistic", Clock: clk, Observer: o, Seed: seed}).Device()
			if err := dev.LaunchApp(ctx, "Settings"); err != nil {
				t.Fatal(err)
			}
			if took := clk.Slept(); took < want.Min || took > want.Max {
				t.Errorf("%s seed %d: a launch charged %v; want %v–%v", o, seed, took, want.Min, want.Max)
			}
			clk.Advance(3 * time.Second)
			before := clk.Slept()
			if err := dev.Tap(ctx, 540, 1200); err != nil {
				t.Fatal(err)
			}
			if took, in := clk.Slept()-before, CostsOf(o).Input; took < in.Min || took > in.Max {
				t.Errorf("%s seed %d: a tap charged %v; want the path's own input, %v–%v", o, seed, took, in.Min, in.Max)
			}
		}
	}
}
