package main

import (
	"context"
	"testing"
	"time"
)

// README's speed claim (settling beats a fixed sleep after every action) is
// guarded here, in plain `go test`, on simulated time. The baseline must
// really sleep its FixedDelay after every action (a non-default one, so a
// hard-coded 1 s fails too): each of its runs takes at least steps ×
// FixedDelay. Settling must stay faster by a clear margin, per seed on the
// fault-free phone (where a dump costs no simulated time, so settling costs
// none) and by mean on the realistic profile.
func TestBenchBaselineSleepsAndSettleIsFaster(t *testing.T) {
	const delay = 1500 * time.Millisecond
	for _, profile := range []string{"", "realistic"} {
		rep, err := runBench(context.Background(), benchOptions{Seeds: 3, FirstSeed: 1, Profile: profile,
			Locales: []string{"en", "zh"}, FixedDelay: delay, Clock: "fake", MaxSteps: 30}, nil)
		if err != nil {
			t.Fatal(err)
		}
		settle := map[[2]any]benchRun{}
		for _, r := range rep.Runs {
			if !r.Success {
				t.Errorf("profile %q: %s seed %d %s failed: %s", profile, r.Locale, r.Seed, r.Mode, r.Reason)
			}
			if r.Mode == modeSettle {
				settle[[2]any{r.Locale, r.Seed}] = r
			}
		}
		for _, r := range rep.Runs {
			if r.Mode != modeFixed {
				continue
			}
			if min := time.Duration(r.Steps) * delay; r.Duration < min {
				t.Errorf("profile %q: %s seed %d: the fixed baseline took %s for %d steps; it must sleep %s after each action (≥ %s)",
					profile, r.Locale, r.Seed, r.Duration, r.Steps, delay, min)
			}
			s := settle[[2]any{r.Locale, r.Seed}]
			if profile == "" && 2*s.Duration > r.Duration {
				t.Errorf("%s seed %d, fault-free: settle %s vs fixed %s; want settle at least 2× faster", r.Locale, r.Seed, s.Duration, r.Duration)
			}
		}
		if profile == "realistic" && rep.MeanRatio < 1.5 {
			t.Errorf("profile %q: fixed/settle = %.2f by mean; want ≥ 1.5 (README claims about 2.3×)", profile, rep.MeanRatio)
		}
		t.Logf("profile %q: fixed/settle %.2fx by mean, %.2fx by median", profile, rep.MeanRatio, rep.MedianRatio)
	}
}
