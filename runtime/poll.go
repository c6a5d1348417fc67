package runtime

import (
	"context"
	"time"

	"phonepilot/scene"
)

// poll is the one loop behind every wait of the Executor (observing through
// transient errors, waiting for an element, settling, watching for a late
// effect): it runs try at once, and again after each pause, until try says
// done, over says no more rounds are due, or ctx ends (its error is
// returned). Every sleep is on the injected clock.
type poll struct {
	// try runs round n (from 1). done ends the poll; an error ends it too.
	try func(n int) (done bool, err error)
	// over reports, after round n was not done, that the poll gives up.
	over func(n int) bool
	// pause is the sleep before the next round; nil means PollInterval.
	pause func() time.Duration
}

// run polls p. done is false when over ended it.
func (e *executor) poll(ctx context.Context, p poll) (done bool, err error) {
	for n := 1; ; n++ {
		ok, err := p.try(n)
		if err != nil || ok {
			return ok, err
		}
		if p.over(n) {
			return false, nil
		}
		d := e.cfg.PollInterval
		if p.pause != nil {
			d = p.pause()
		}
		if err := e.clock.Sleep(ctx, d); err != nil {
			return false, err
		}
	}
}

// watchScreen polls the screen: until on sc, the Scene in hand, then on a
// fresh read after each pause, until it holds or over says no more rounds
// are due. It returns the latest Scene read and whether until held.
func (e *executor) watchScreen(ctx context.Context, sc *scene.Scene, until func(*scene.Scene) bool, over func() bool) (*scene.Scene, bool, error) {
	ok, err := e.poll(ctx, poll{
		try: func(n int) (bool, error) {
			if n > 1 {
				next, err := e.observe(ctx)
				if err != nil {
					return false, err
				}
				sc = next
			}
			return until(sc), nil
		},
		over: func(int) bool { return over() },
	})
	return sc, ok, err
}
