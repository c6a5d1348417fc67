package phonebench

import (
	"context"
	"fmt"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The floor of a run is the simulated time of an oracle: the same scripted
// decisions on the same phone (task, locale, profile, seed), but after each
// action it waits exactly until the phone says its screen is final
// (sim.Phone.ReadyAt: no transition, loading, splash or popup still to
// come) and reads the screen once. It sits through the transitions, the
// loading and one screen read per step, nothing else — no agent can be
// faster on that phone, so a policy's time is reported as a ratio to it.
// The oracle knows what no agent can (ReadyAt); it asks nobody for
// approval (a person's time is not the phone's).
//
// A read shows the screen as it is when the read ends, so the fastest
// agent starts it before the screen is final, to end just when it is —
// but not in the first half of the wait, where a read of a screen still
// changing can fail (uiautomator's idle-state and null-root errors come
// only in a transition's first half). The oracle reads at ReadyAt and
// takes the difference off afterwards: per step, min(read latency, half
// the wait). Every later delay is relative to an input, so the rest of the
// run only shifts.

// maxFloorReads bounds the reads of one screen that fail (a read can fail
// only while the phone is not ready, which the oracle waits out).
const maxFloorReads = 5

// floor measures u's floor.
func floor(ctx context.Context, u unit, params map[string]string) (time.Duration, error) {
	clk := clock.NewFake(epoch)
	phone, err := newPhone(u, params, clk)
	if err != nil {
		return 0, err
	}
	dev := phone.Device()
	d := newDecider(script(u.t, u.locale, params))
	maxSteps := u.t.MaxSteps
	if maxSteps <= 0 {
		maxSteps = runtime.Defaults().MaxSteps
	}
	start := clk.Now()
	var early time.Duration // what reading ahead of ReadyAt saves
	read := func() (*scene.Scene, error) {
		var last error
		for i := 0; i < maxFloorReads; i++ {
			acted := clk.Now()
			if err := waitReady(ctx, phone, clk); err != nil {
				return nil, err
			}
			ready := clk.Now()
			sc, err := dev.Scene(ctx)
			if err == nil {
				early += readAhead(acted, ready, clk.Now())
				return sc, nil
			}
			last = err
		}
		return nil, fmt.Errorf("the oracle could not read the screen: %w", last)
	}
	sc, err := read()
	if err != nil {
		return 0, err
	}
	var prev *outcome
	for steps := 0; steps < maxSteps; steps++ {
		m := d.next(sc.Listing(), prev)
		if m.Finish {
			break
		}
		res, err := tools.Run(ctx, dev, sc, m.Call, tools.RunOptions{Clock: clk})
		prev = &outcome{OK: err == nil, Text: res.Text}
		if err != nil {
			prev.Text = err.Error()
		}
		if sc, err = read(); err != nil {
			return 0, err
		}
	}
	return clk.Now().Sub(start) - early, ctx.Err()
}

// readAhead is what the fastest agent saves on one read by starting it
// before the screen is final (acted: the action; ready: the screen final;
// read: the read ended, started at ready): the read's latency, but never
// more than half the wait, whose first half no read can use.
func readAhead(acted, ready, read time.Time) time.Duration {
	return min(read.Sub(ready), ready.Sub(acted)/2)
}

// waitReady sleeps until the phone's screen is final.
func waitReady(ctx context.Context, phone *sim.Phone, clk clock.Clock) error {
	if d := phone.ReadyAt().Sub(clk.Now()); d > 0 {
		return clk.Sleep(ctx, d)
	}
	return ctx.Err()
}
