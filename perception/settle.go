package perception

import (
	"context"
	"errors"
	"fmt"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/scene"
)

// Observer reports the current Scene. device.Device satisfies it.
type Observer interface {
	Scene(ctx context.Context) (*scene.Scene, error)
}

// SettleOptions configure Settle. The zero value is usable: defaults fill in.
type SettleOptions struct {
	// Interval is the pause between two observations (default 150 ms).
	Interval time.Duration
	// Timeout caps the whole wait (default 3 s); on reaching it Settle
	// returns the last Scene it saw and settled=false.
	Timeout time.Duration
	// Clock measures and waits (default clock.Real).
	Clock clock.Clock
}

// Default settle timings: short enough for a snappy loop, long enough for
// the usual Android transition (about 300 ms) to finish.
const (
	DefaultSettleInterval = 150 * time.Millisecond
	DefaultSettleTimeout  = 3 * time.Second
)

// withDefaults fills zero fields.
func (o SettleOptions) withDefaults() SettleOptions {
	if o.Interval == 0 {
		o.Interval = DefaultSettleInterval
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultSettleTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return o
}

// Validate reports options that cannot work.
func (o SettleOptions) Validate() error {
	if o.Interval < 0 {
		return fmt.Errorf("settle: negative interval %v", o.Interval)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("settle: negative timeout %v", o.Timeout)
	}
	return nil
}

// Settle observes the screen until two consecutive Scenes have the same
// Fingerprint (the screen stopped changing) or opt.Timeout has passed. It
// returns the last Scene seen and whether the screen settled. A retryable
// dump failure (ErrIdleState: still animating; ErrNullRoot) counts as "not
// settled yet"; any other error from the observer, or ctx ending, is
// returned. If the timeout passes without any Scene, the last retryable
// error is returned.
func Settle(ctx context.Context, obs Observer, opt SettleOptions) (*scene.Scene, bool, error) {
	if err := opt.Validate(); err != nil {
		return nil, false, err
	}
	opt = opt.withDefaults()
	deadline := opt.Clock.Now().Add(opt.Timeout)
	var last *scene.Scene
	lastFP := ""
	var lastErr error
	for {
		sc, err := obs.Scene(ctx)
		switch {
		case err == nil:
			fp := sc.Fingerprint()
			if last != nil && fp == lastFP {
				return sc, true, nil
			}
			last, lastFP = sc, fp
		case Retryable(err):
			// Animating or no window yet: the screen is not settled.
			// A failed dump in between breaks the "two equal in a row"
			// chain; the last good Scene is kept to return on timeout.
			lastErr = err
			lastFP = ""
		default:
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				return last, false, ctxErr
			}
			return last, false, fmt.Errorf("settle: observe: %w", err)
		}
		if !opt.Clock.Now().Before(deadline) {
			if last == nil {
				return nil, false, fmt.Errorf("settle: no scene within %v: %w", opt.Timeout, lastErr)
			}
			return last, false, nil
		}
		wait := min(opt.Interval, deadline.Sub(opt.Clock.Now()))
		if err := opt.Clock.Sleep(ctx, wait); err != nil {
			return last, false, err
		}
	}
}
