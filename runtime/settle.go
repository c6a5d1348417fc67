package runtime

import (
	"context"
	"errors"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/perception"
	"phonepilot/scene"
)

// settle waits for the screen to show the outcome of an action, or sleeps
// FixedDelay when that is configured. It reads the screen right after the
// action returns and then back to back (see settleInterval), and ends at the
// first of:
//
//   - outcome: a read that differs from pre (the screen the action acted
//     on), meets the step's expectation (shows reports it) and shows no
//     loading indicator. It is taken at once, without a second, confirming
//     read: a uiautomator dump that succeeds on a phone has already waited
//     for the UI to be idle (about 1 s without accessibility events), so a
//     second read mostly pays another dump (0.2–3 s) to learn nothing; and
//     the next step guards against a screen that is still drawing, since it
//     waits for its own target and checks its own expectation.
//   - stable: two consecutive reads with the same fingerprint and no loading
//     indicator (a spinner, "Loading…", an app window with nothing to use).
//     This is what ends the wait when the action changed nothing (a dropped
//     tap) or changed something other than what was expected.
//
// A screen still drawing (an app list with no rows yet: drawing) is neither
// an outcome nor stable until it has stayed so for the effect window: a
// launch that ended on Settings before its rows were drawn had the planner
// scroll past rows it never saw (issue 12), while a list that really is
// empty costs only that window.
//   - the SettleTimeout cap: the last Scene read is returned.
//
// A read that fails the way an animating screen does (perception.Retryable)
// breaks the chain of equal reads. A cancelled ctx or a disconnected device
// ends settle with that error; another failure falls back to observe.
//
// already says the action's effect was on the screen before it acted (home
// on the home screen): then the first read that shows it is the outcome,
// unchanged as it is, with no second read to wait for a change that will
// not come (issue 25).
//
// landed is when the action's call returned: on a phone with dear reads,
// what has passed since (the toast queue's read) is part of the wait for
// the transition to begin.
func (e *executor) settle(ctx context.Context, pre *scene.Scene, shows func(*scene.Scene) bool, already bool, landed time.Time) (*scene.Scene, error) {
	e.firstSeen = time.Time{}
	if e.cfg.FixedDelay > 0 {
		if err := e.clock.Sleep(ctx, e.cfg.FixedDelay); err != nil {
			return nil, err
		}
		return e.seen(e.observe(ctx))
	}
	if cc := e.counter(); cc != nil {
		sc, err := e.settleOnCounter(ctx, cc, pre, shows)
		if !errors.Is(err, errNoCounter) {
			return sc, err
		}
	}
	if e.dearReads() {
		// A one-shot dump started in the transition's first half fails
		// and costs another: let the transition begin.
		lead := transitionLead - e.clock.Now().Sub(landed)
		if err := e.clock.Sleep(ctx, max(lead, 0)); err != nil {
			return nil, err
		}
	}
	deadline := e.clock.Now().Add(e.cfg.SettleTimeout)
	preFP := ""
	if pre != nil {
		preFP = e.fp(pre)
	}
	var (
		last   *scene.Scene
		lastFP string    // of the previous read; "" after a failed read
		since  time.Time // when the screen first read as lastFP
		out    *scene.Scene
	)
	done, err := e.poll(ctx, poll{
		try: func(int) (bool, error) {
			sc, err := e.timed().Scene(ctx)
			switch {
			case err == nil:
				e.seen(sc, nil)
				e.last = sc
				fp := e.fp(sc)
				now := e.clock.Now()
				if fp != lastFP {
					since = now
				}
				busy := loading(sc)
				if drawing(sc) && now.Sub(since) < e.effectWindow() {
					busy = true
				}
				if (fp != preFP || already) && !busy && shows != nil && shows(sc) {
					out = sc
					return true, nil
				}
				if last != nil && fp == lastFP && !busy {
					out = sc
					return true, nil
				}
				last, lastFP = sc, fp
			case ctx.Err() != nil || errors.Is(err, device.ErrDisconnected):
				return false, err
			case perception.Retryable(err):
				lastFP = ""
			default:
				e.log.Debug("settle: observation failed", "err", err)
				sc, err := e.seen(e.observe(ctx))
				out = sc
				return true, err
			}
			return false, nil
		},
		over:  func(int) bool { return !e.clock.Now().Before(deadline) },
		pause: func() time.Duration { return min(e.settleInterval(), deadline.Sub(e.clock.Now())) },
	})
	switch {
	case err != nil:
		return nil, err
	case done:
		return out, nil
	case last == nil:
		return e.seen(e.observe(ctx))
	}
	e.log.Debug("screen did not settle within the cap", "cap", e.cfg.SettleTimeout)
	return last, nil
}

// settleOnCounter is settle on a device that counts its screen's changes
// (reads cost 5–40 ms there). It polls the counter and reads the tree
// whenever the counter has moved since the last read (at most every
// changeRead while a transition draws), and ends at the first of:
//
//   - outcome: a read that differs from pre, meets the step's expectation
//     (shows) and is neither loading nor drawing: the screen the next
//     decision needs is there, even if a transition is still finishing
//     (its elements are where they will stay);
//   - settled: the counter still for quietWindow since the last read, that
//     read not loading (a list still empty that long is empty);
//   - nothing changed within the effect window (a dropped tap): one read;
//   - SettleTimeout: the latest read.
func (e *executor) settleOnCounter(ctx context.Context, cc device.ChangeCounter, pre *scene.Scene, shows func(*scene.Scene) bool) (*scene.Scene, error) {
	start := e.clock.Now()
	deadline := start.Add(e.cfg.SettleTimeout)
	limit := start.Add(e.effectWindow())
	if !e.acting.IsZero() && e.acting.Before(start) {
		// A change during the call is its effect. And the effect window
		// counts from the input's start: a drag moves a list while the
		// finger moves (the counter sees its scroll events during a
		// swipe's 300 ms), so a gesture that changed nothing while it
		// lasted changed nothing; after its last event the screen gets
		// quietWindow to answer.
		limit = e.acting.Add(e.effectWindow())
		if q := start.Add(quietWindow); limit.Before(q) {
			limit = q
		}
		start = e.acting
	}
	preFP := ""
	if pre != nil {
		preFP = e.fp(pre)
	}
	var (
		last    *scene.Scene
		lastAt  time.Time // when last was read
		lastCnt uint64    // the counter when last was read
	)
	read := func(cnt uint64) (*scene.Scene, error) {
		sc, err := e.seen(e.observe(ctx))
		if err != nil {
			return nil, err
		}
		last, lastAt, lastCnt = sc, e.clock.Now(), cnt
		return sc, nil
	}
	for {
		c, err := cc.ScreenChanges(ctx)
		switch {
		case err == nil:
			e.counted = true
		case ctx.Err() != nil || errors.Is(err, device.ErrDisconnected):
			return nil, err
		default:
			e.log.Debug("change counter unavailable; reading instead", "err", err)
			e.noCounter = true
			return nil, errNoCounter
		}
		now := e.clock.Now()
		// A change at the action's own moment is its doing: a phone that
		// charges nothing for input changes in the same instant.
		changed := c.Since <= now.Sub(start)
		moved := changed && (last == nil || c.Count != lastCnt)
		switch {
		case moved && (last == nil || now.Sub(lastAt) >= changeRead || c.Since >= quietWindow):
			sc, err := read(c.Count)
			if err != nil {
				return nil, err
			}
			if e.fp(sc) != preFP && !loading(sc) && !drawing(sc) && shows != nil && shows(sc) {
				return sc, nil
			}
		case changed && !moved && c.Since >= quietWindow && !loading(last):
			return last, nil
		case !changed && !now.Before(limit) && last == nil:
			// Nothing moved: a dropped tap, or an action whose effect
			// shows nowhere. One read; a spinner's end is its next change.
			sc, err := read(c.Count)
			if err != nil {
				return nil, err
			}
			if !loading(sc) {
				return sc, nil
			}
			start = e.clock.Now()
		}
		if !e.clock.Now().Before(deadline) {
			if last == nil {
				return e.seen(e.observe(ctx))
			}
			return last, nil
		}
		if err := e.clock.Sleep(ctx, min(counterPoll, deadline.Sub(e.clock.Now()))); err != nil {
			return nil, err
		}
	}
}

// seen notes when the first read after the latest action saw the screen.
func (e *executor) seen(sc *scene.Scene, err error) (*scene.Scene, error) {
	if err == nil && sc != nil && e.firstSeen.IsZero() {
		e.firstSeen = e.clock.Now()
	}
	return sc, err
}

// drawing reports an app screen caught while its lists are still being
// filled: a visible scrollable container of the app with nothing inside it.
// A real empty list looks the same, so this only delays (see settle).
func drawing(sc *scene.Scene) bool {
	for _, el := range sc.Elements {
		if !el.Scrollable || !sc.Visible(el) || (el.Package != "" && sc.Package != "" && el.Package != sc.Package) {
			continue
		}
		empty := true
		for _, k := range sc.Elements {
			if k.Parent == el.Index && sc.Visible(k) {
				empty = false
				break
			}
		}
		if empty {
			return true
		}
	}
	return false
}

// settleInterval is the pause between two observations while settling:
// PollInterval less the time a dump itself takes, since a slow dump already
// gives the screen that time to change (at least 1 ms).
func (e *executor) settleInterval() time.Duration {
	return max(e.cfg.PollInterval-e.dumpLatency, time.Millisecond)
}

// loading reports a screen that is still loading: a visible progress bar, a
// label that starts with "Loading" / "加载中", or an app window with nothing
// a finger can use yet (a splash screen, a blank page).
func loading(sc *scene.Scene) bool {
	usable := false
	for _, el := range sc.Elements {
		if el.Package != "" && sc.Package != "" && el.Package != sc.Package {
			continue // the status bar, the navigation bar, a keyboard
		}
		if sc.Visible(el) && (el.Clickable || el.Editable || el.Scrollable || el.LongClickable) {
			usable = true
			break
		}
	}
	if !usable {
		return true
	}
	for _, el := range sc.Elements {
		if !sc.Visible(el) {
			continue
		}
		if strings.Contains(scene.SimpleClass(el.Class), "ProgressBar") {
			return true
		}
		l := strings.ToLower(strings.TrimSpace(el.Label()))
		if strings.HasPrefix(l, "loading") || strings.HasPrefix(l, "加载中") || strings.HasPrefix(l, "正在加载") {
			return true
		}
	}
	return false
}
