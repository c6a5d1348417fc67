package runtime

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Backoff is the pause between two attempts of a step (the retry policy's
// wait; the retry ceiling is Config.StepRetries). Options.Backoff injects
// one; the default is NewBackoff over Config's BackoffBase, BackoffMax and
// Seed.
type Backoff interface {
	// Delay is the pause before attempt n (n >= 2).
	Delay(attempt int) time.Duration
}

// NewBackoff returns the default policy: capped, jittered exponential.
// Attempt n waits base·2^(n-2), capped at max, of which the upper half is
// jittered (so that retries of many tasks do not fall in step), drawn from
// a generator seeded with seed (reproducible runs).
func NewBackoff(base, max time.Duration, seed int64) Backoff {
	s := uint64(seed)
	return &expBackoff{base: base, max: max, rng: rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))}
}

type expBackoff struct {
	base, max time.Duration
	rng       *rand.Rand
}

func (b *expBackoff) Delay(n int) time.Duration {
	d := b.base
	for i := 2; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	half := d / 2
	return half + time.Duration(b.rng.Int64N(int64(half)+1))
}

// permanent reports an error that says, where it was produced, that another
// attempt cannot fix it: it (or an error it wraps) has a Permanent method
// that returns true. tools.ArgError and tools.ElementError do, and so do
// device.ErrAppNotFound and device.ErrUnsupported.
func permanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}
