// Package clock lets code that waits or reads the time be tested without
// real sleeps: production uses Real, tests use a Fake they advance.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and sleeps, honouring cancellation.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, whichever is first, and returns
	// ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fake is a manual clock. Sleep advances it by d immediately (auto-advance),
// so code under test runs at full speed while seeing consistent time; Advance
// moves it forward by hand. It is safe for concurrent use.
type Fake struct {
	mu  sync.Mutex
	now time.Time
	// sleeps records every Sleep duration, for tests that assert on waits.
	sleeps []time.Duration
}

// NewFake returns a Fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Sleep advances the fake time by d without blocking.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > 0 {
		f.now = f.now.Add(d)
	}
	f.sleeps = append(f.sleeps, d)
	return nil
}

// Advance moves the fake time forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// Sleeps returns the durations passed to Sleep so far, in call order.
func (f *Fake) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// Slept is the total of all Sleep calls so far.
func (f *Fake) Slept() time.Duration {
	var total time.Duration
	for _, d := range f.Sleeps() {
		total += d
	}
	return total
}
