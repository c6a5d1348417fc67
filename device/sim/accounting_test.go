package sim

import (
	"context"
	"testing"
	"time"

	"phonepilot/internal/clock"
)

func TestDumpsCountsEveryDump(t *testing.T) {
	p := newTestPhone(t, Config{})
	if p.Dumps() != 0 {
		t.Fatalf("fresh phone: %d dumps", p.Dumps())
	}
	for i := 0; i < 3; i++ {
		if _, err := p.Device().Scene(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	sh(t, p, "uiautomator dump")
	if got := p.Dumps(); got != 4 {
		t.Errorf("after 3 scenes and a shell dump: %d, want 4", got)
	}
	p.Reset()
	if p.Dumps() != 0 {
		t.Errorf("after Reset: %d", p.Dumps())
	}
}

// ReadyAt is exactly when the screen is final: a millisecond before it the
// phone still shows the splash, the transition or the spinner; at it, the
// settled screen.
func TestReadyAtIsWhenTheScreenIsFinal(t *testing.T) {
	fc := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p := newTestPhone(t, Config{Profile: "realistic", Seed: 3, Clock: fc})
	if !p.ReadyAt().Equal(fc.Now()) {
		t.Fatalf("idle phone: ReadyAt %v, now %v", p.ReadyAt(), fc.Now())
	}
	screenAt := func(at time.Time) string {
		t.Helper()
		fc.Advance(at.Sub(fc.Now()))
		return stateOf(t, p)["screen"].(string)
	}
	dev := p.Device()
	if err := dev.LaunchApp(context.Background(), "Taobao"); err != nil {
		t.Fatal(err)
	}
	r := p.ReadyAt()
	if got := r.Sub(fc.Now()); got != 500*time.Millisecond {
		t.Fatalf("cold Taobao launch: ready in %v, want the 500 ms splash", got)
	}
	if s := screenAt(r.Add(-time.Millisecond)); s != "com.taobao.taobao/splash" {
		t.Errorf("just before ReadyAt: %s", s)
	}
	if s := screenAt(r); s != "com.taobao.taobao/home" {
		t.Errorf("at ReadyAt: %s", s)
	}
	if !p.ReadyAt().Equal(fc.Now()) {
		t.Errorf("settled: ReadyAt %v later than now", p.ReadyAt().Sub(fc.Now()))
	}
	// A search: the results' spinner (800 ms) outlasts the transition.
	v := &drive{t: t, d: dev}
	v.tapID(tbid("poplayer_close"))
	fc.Advance(p.ReadyAt().Sub(fc.Now()))
	v.tapID(tbid("home_searchbar"))
	fc.Advance(p.ReadyAt().Sub(fc.Now()))
	v.typeText("Kindle")
	v.tapID(tbid("search_button"))
	r = p.ReadyAt()
	if got := r.Sub(fc.Now()); got != 800*time.Millisecond {
		t.Fatalf("search: ready in %v, want the 800 ms results spinner", got)
	}
	// (Read without a dump: a dump's latency would move the fake clock.)
	fc.Advance(r.Add(-time.Millisecond).Sub(fc.Now()))
	if !shows(p, tbid("loading")) {
		t.Error("just before ReadyAt the spinner is gone")
	}
	fc.Advance(time.Millisecond)
	if shows(p, tbid("loading")) || !shows(p, tbid("item_title")) {
		t.Error("at ReadyAt the results are not shown")
	}
}

// A transition alone: Settings has no splash or spinner.
func TestReadyAtCoversTransitions(t *testing.T) {
	fc := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p := newTestPhone(t, Config{Profile: "slow", Seed: 1, Clock: fc})
	if err := p.Device().LaunchApp(context.Background(), "Settings"); err != nil {
		t.Fatal(err)
	}
	if got := p.ReadyAt().Sub(fc.Now()); got != 1200*time.Millisecond {
		t.Errorf("Settings launch on slow: ready in %v, want the 1.2 s transition", got)
	}
}

// shows reports whether a dump taken now would hold a node with id.
func shows(p *Phone, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var walk func(n *node) bool
	walk = func(n *node) bool {
		if n.id == id {
			return true
		}
		for _, k := range n.kids {
			if walk(k) {
				return true
			}
		}
		return false
	}
	for _, w := range p.windowsAt(p.now(), true) {
		if walk(w) {
			return true
		}
	}
	return false
}
