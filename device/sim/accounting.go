package sim

import "time"

// Accounting for benchmarks (phonebench): what the phone served and when
// its screen is final.

// Dumps is how many uiautomator dumps the phone has served since New or
// Reset (Device.Scene and `uiautomator dump` alike, failed ones included).
func (p *Phone) Dumps() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dumps
}

// ReadyAt is the moment the current screen is final: no transition,
// loading spinner or splash still to come from the inputs already made
// (now when idle). A toast fading out does not count: it changes nothing
// an agent acts on. Nor does a popup that is due but not shown yet: an
// agent that finishes before it comes never sees it, so waiting for it is
// not inherent (the floor would be slower than a fast agent). The floor's oracle loop waits exactly
// until it, so every delay a profile adds must be a term here.
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
		later(p.anim.end()) // hostile varies a transition's length
	}
	if tb, ok := p.fgApp().(*taobaoApp); ok {
		later(tb.splashUntil)
		if top := tb.top(); top.name == "results" {
			later(top.loadedAt)
		}
	}
	return ready
}
