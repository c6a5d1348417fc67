package sim

import (
	"context"
	"testing"
	"time"

	"phonepilot/internal/clock"
)

// Every input through WDA costs a real iPhone's time under a timed profile
// (1.3–2.5 s a call, plus a gesture's own length: iosInputLatency), and
// nothing on the fault-free phone, as every input.
func TestWDAInputsCostARealIPhonesTime(t *testing.T) {
	ctx := context.Background()
	for _, prof := range []string{"realistic", ""} {
		fc := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		p := newTestPhone(t, Config{Profile: prof, Seed: 5, Clock: fc})
		lo, hi := 1300*time.Millisecond, 2500*time.Millisecond
		if prof == "" {
			lo, hi = 0, 0
		}
		for _, in := range []struct {
			name    string
			gesture time.Duration
			do      func() error
		}{
			{"launch", 0, func() error { return p.IOSLaunch(ctx, iosBundleOf(settingsPkg)) }},
			{"tap", 0, func() error { return p.IOSTap(ctx, 180, 400) }},
			{"drag", 300 * time.Millisecond, func() error { return p.IOSDrag(ctx, 180, 600, 180, 300, 300*time.Millisecond) }},
			{"home", 0, func() error { return p.IOSHome(ctx) }},
		} {
			start := fc.Now()
			if err := in.do(); err != nil {
				t.Fatalf("%q %s: %v", prof, in.name, err)
			}
			took := fc.Now().Sub(start)
			if prof != "" && (took < lo+in.gesture || took > hi+in.gesture) {
				t.Errorf("%s on %s: %v, want %v–%v", in.name, prof, took, lo+in.gesture, hi+in.gesture)
			}
			if prof == "" && took != 0 {
				t.Errorf("%s on the fault-free phone: %v, want nothing", in.name, took)
			}
		}
	}
}
