package runtime

import (
	"context"
	"errors"

	"phonepilot/device"
	"phonepilot/scene"
)

// observeRetries is the least number of tries a failed observation gets;
// retrying goes on until WaitTimeout has passed. The Executor is the one
// owner of dump retries (docs/ARCHITECTURE.md, "Retries: one owner per kind
// of failure"): a driver reports one dump's failure (the accessibility
// service not idle during an animation, a null root while a window is
// created) and does not retry it itself.
const observeRetries = 5

// observe reads the current Scene, retrying failed reads for up to
// WaitTimeout. A cancelled ctx, a disconnected device or an error that says
// it is permanent end it at once.
func (e *executor) observe(ctx context.Context) (*scene.Scene, error) {
	deadline := e.clock.Now().Add(e.cfg.WaitTimeout)
	// The common case, a read that works, does not set up the poll.
	sc, lastErr := e.timed().Scene(ctx)
	if lastErr == nil {
		e.last = sc
		return sc, nil
	}
	if e.giveUpObserving(ctx, lastErr) {
		return nil, lastErr
	}
	e.log.Debug("observe failed; retrying", "err", lastErr)
	done, err := e.poll(ctx, poll{
		try: func(n int) (bool, error) {
			if n == 1 {
				return false, nil // the read above
			}
			s, err := e.timed().Scene(ctx)
			if err == nil {
				sc, e.last = s, s
				return true, nil
			}
			if e.giveUpObserving(ctx, err) {
				return false, err
			}
			lastErr = err
			e.log.Debug("observe failed; retrying", "err", err)
			return false, nil
		},
		over: func(n int) bool { return n >= observeRetries && !e.clock.Now().Before(deadline) },
	})
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, lastErr
	}
	return sc, nil
}

// giveUpObserving reports a failed read that another read cannot fix: the
// task is cancelled, the device is gone, or the error says it is permanent.
func (e *executor) giveUpObserving(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, device.ErrDisconnected) || permanent(err)
}

// takeLast returns the latest post-action observation once.
func (e *executor) takeLast() *scene.Scene {
	sc := e.last
	e.last = nil
	return sc
}

// BesideReads is a Planner that takes something of its own beside every
// screen read: the AI planner a screenshot, started as the dump starts so
// that the frame costs no time after it (a dump takes 0.9–3 s on a phone, a
// screenshot 0.3–2 s). Not on a device with a change counter (the helper),
// whose reads are cheaper than a frame: see timedObserver.Scene. BesideRead is called as a read starts; what it
// returns (when not nil) is called with the Scene the read returned, nil
// when it failed. The runtime never sees what is taken.
type BesideReads interface {
	BesideRead(ctx context.Context) func(*scene.Scene)
}

// timed is the device's Scene reader, keeping a running average of how
// long one observation takes (dumpLatency).
func (e *executor) timed() timedObserver { return timedObserver{e} }

type timedObserver struct{ e *executor }

func (t timedObserver) Scene(ctx context.Context) (*scene.Scene, error) {
	start := t.e.clock.Now()
	var beside func(*scene.Scene)
	if t.e.beside != nil && !t.e.counts(ctx) {
		// Beside a dump (0.9–3 s) a screenshot costs nothing more. On a
		// device that counts its changes, reads cost 5–40 ms and a frame
		// 50–150 ms: one beside every settling read would hold up the next
		// read (one channel to the phone) and be thrown away. There the
		// planner captures once, for the Scene it plans on.
		beside = t.e.beside(ctx)
	}
	sc, err := t.e.dev.Scene(ctx)
	if beside != nil {
		if err != nil {
			beside(nil)
		} else {
			beside(sc)
		}
	}
	if err == nil {
		t.e.read, t.e.readAt = sc, t.e.clock.Now()
		d := t.e.clock.Now().Sub(start)
		if t.e.dumpLatency == 0 {
			t.e.dumpLatency = d
		} else {
			t.e.dumpLatency = (3*t.e.dumpLatency + d) / 4
		}
	}
	return sc, err
}

type fpEntry struct {
	sc *scene.Scene
	fp string
}

// fp is sc.Fingerprint(), remembered for the last few Scenes (a
// fingerprint hashes every listed element).
func (e *executor) fp(sc *scene.Scene) string {
	for _, c := range e.fps {
		if c.sc == sc {
			return c.fp
		}
	}
	f := sc.Fingerprint()
	if len(e.fps) >= 8 {
		e.fps = e.fps[1:]
	}
	e.fps = append(e.fps, fpEntry{sc, f})
	return f
}
