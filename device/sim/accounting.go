package sim

import "time"

// Accounting for benchmarks (phonebench): what the phone served and when
// its screen is final.

// Dumps is how many reads of the UI tree the phone has served since New or
// Reset (Device.Scene on any path and `uiautomator dump` alike, failed ones
// included).
func (p *Phone) Dumps() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.charged[chargeTree]
}

// Frames is how many screenshots the phone has served since New or Reset.
func (p *Phone) Frames() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.charged[chargeFrame]
}

// ReadyAt is the moment the current screen is final: no transition,
// loading spinner or splash still to come from the inputs already made
// (now when idle). A toast fading out does not count: it changes nothing an
// agent acts on. Nor does a popup scheduled to come later: the fastest agent
// does not wait for it, it goes on and closes it when it shows (waiting
// would raise the floor and flatter every ratio to it). The floor's oracle
// loop waits exactly until ReadyAt, so every delay a profile adds to the
// screen must be a term here.
func (p *Phone) ReadyAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.settle(now)
	ready := now
	later := func(t time.Time) {
		if t.After(ready) {
			ready = t
		}
	}
	if p.anim != nil {
		later(p.anim.end()) // hostile varies each transition's length
	}
	if tb, ok := p.fgApp().(*taobaoApp); ok {
		later(tb.splashUntil)
		if top := tb.top(); top.name == "results" {
			later(top.loadedAt)
		}
	}
	return ready
}
