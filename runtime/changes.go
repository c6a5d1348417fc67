package runtime

import (
	"context"
	"errors"
	"time"

	"phonepilot/device"
)

// Reading the screen costs what the phone's path charges: 5–40 ms through
// an on-device helper, 0.9–3.2 s through a one-shot `uiautomator dump`.
// Where the device counts its screen's changes (device.ChangeCounter, the
// helper's accessibility events), the runtime reads the tree only when that
// counter has moved and takes the first read that shows the action's
// outcome (settleOnCounter); where
// it does not and reads are dear, it lets the expected transition begin
// before the first read (a dump started in a transition's first half
// fails and costs another).

// counterPoll is the pause between two reads of the change counter.
const counterPoll = 20 * time.Millisecond

// changeRead is the least time between two reads of the tree while the
// counter shows the screen changing (a transition drawing changes it on
// every look): often enough to catch the new screen as it appears, seldom
// enough not to read every frame.
const changeRead = 60 * time.Millisecond

// quietWindow is how long the counter must stay still after a change for
// the screen to count as settled (a transition's frames change it
// continuously).
const quietWindow = 100 * time.Millisecond

// toastShort is how long Android shows a short toast (Toast.LENGTH_SHORT):
// a read that saw the screen later than this after a press cannot tell a
// press whose only answer was a toast from one that did nothing.
const toastShort = 2 * time.Second

// MayHaveTakenEffect follows the result of a press that is not repeated for
// want of evidence either way (a planner reads it as: do not press again
// blindly).
const MayHaveTakenEffect = "not pressed again: it may have taken effect"

// AnsweredByToast follows the result of a press the app answered with a
// toast, heard in the system's queue though the screen read after it shows
// none (a planner reads it as: the press landed; do not press again).
const AnsweredByToast = "the app answered with a toast"

// counter returns the device's change counter while it offers one.
func (e *executor) counter() device.ChangeCounter {
	if e.noCounter {
		return nil
	}
	cc, ok := e.dev.(device.ChangeCounter)
	if !ok {
		e.noCounter = true
		return nil
	}
	return cc
}

// counts reports whether the device's change counter answers now (the
// one read of it that tells a path without one, such as uiautomator under
// the helper's driver, from the helper's).
func (e *executor) counts(ctx context.Context) bool {
	cc := e.counter()
	if cc == nil || e.counted {
		return cc != nil
	}
	if _, err := cc.ScreenChanges(ctx); err != nil {
		e.log.Debug("change counter unavailable; reading instead", "err", err)
		e.noCounter = true
		return false
	}
	e.counted = true
	return true
}

// dearReads reports a device whose reads cost more than a transition's
// first half usually lasts, and that has no change counter.
func (e *executor) dearReads() bool {
	return e.counter() == nil && e.dumpLatency >= dearRead
}

// dearRead is the read latency from which the first read after an action
// waits for the transition to begin.
const dearRead = 500 * time.Millisecond

// transitionLead is how long the first read after an action waits on a
// device with dear reads: the first half of a usual transition (0.4–1.4 s
// on the simulator's profiles), inside which a one-shot dump fails.
const transitionLead = 350 * time.Millisecond

// awaitChange waits on the change counter until the screen has changed
// after `after` and then stayed still for quietWindow, or until deadline.
// It reports whether a change came. errNoCounter: the device stopped
// offering the counter (the caller reads instead).
func (e *executor) awaitChange(ctx context.Context, cc device.ChangeCounter, after, deadline time.Time) (bool, error) {
	changed := false
	for {
		c, err := cc.ScreenChanges(ctx)
		switch {
		case err == nil:
			e.counted = true
		case ctx.Err() != nil || errors.Is(err, device.ErrDisconnected):
			return false, err
		default:
			e.log.Debug("change counter unavailable; reading instead", "err", err)
			e.noCounter = true
			return false, errNoCounter
		}
		now := e.clock.Now()
		if c.Since < now.Sub(after) {
			changed = true
			if c.Since >= quietWindow {
				return true, nil
			}
		}
		if !now.Before(deadline) {
			return changed, nil
		}
		if err := e.clock.Sleep(ctx, min(counterPoll, deadline.Sub(now))); err != nil {
			return changed, err
		}
	}
}

// errNoCounter: the change counter went away mid-wait.
var errNoCounter = errors.New("no change counter")
