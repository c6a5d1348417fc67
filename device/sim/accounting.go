package sim

import (
	"sort"
	"time"
)

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

// ChangesAhead lists the moments after now, up to ReadyAt, at which what a
// read shows changes by itself, in order: a running transition's old frame
// giving way to the half-drawn new screen and its end, Taobao's splash and
// results spinner ending. Toasts and popups that are due are not in it (as
// for ReadyAt). A benchmark's floor looks at the screen at each to find the
// earliest moment its next target shows.
func (p *Phone) ChangesAhead() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.settle(now)
	var out []time.Time
	add := func(t time.Time) {
		if t.After(now) {
			out = append(out, t)
		}
	}
	if p.anim != nil {
		add(p.anim.start.Add(time.Duration(float64(p.anim.dur) * p.prof.oldFrac)))
		add(p.anim.end())
	}
	if tb, ok := p.fgApp().(*taobaoApp); ok {
		add(tb.splashUntil)
		if top := tb.top(); top.name == "results" {
			add(top.loadedAt)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
