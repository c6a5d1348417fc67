package runtime

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan/rule"
	"phonepilot/scene"
)

// timedDevice measures the real time spent inside the device, so that a
// benchmark can subtract it and keep what the runtime itself costs.
type timedDevice struct {
	d     device.Device
	spent time.Duration
}

func (t *timedDevice) track(start time.Time) { t.spent += time.Since(start) }

func (t *timedDevice) Scene(ctx context.Context) (*scene.Scene, error) {
	defer t.track(time.Now())
	return t.d.Scene(ctx)
}
func (t *timedDevice) Tap(ctx context.Context, x, y int) error {
	defer t.track(time.Now())
	return t.d.Tap(ctx, x, y)
}
func (t *timedDevice) LongPress(ctx context.Context, x, y int, d time.Duration) error {
	defer t.track(time.Now())
	return t.d.LongPress(ctx, x, y, d)
}
func (t *timedDevice) Swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error {
	defer t.track(time.Now())
	return t.d.Swipe(ctx, x1, y1, x2, y2, d)
}
func (t *timedDevice) TypeText(ctx context.Context, s string) error {
	defer t.track(time.Now())
	return t.d.TypeText(ctx, s)
}
func (t *timedDevice) Key(ctx context.Context, k device.Key) error {
	defer t.track(time.Now())
	return t.d.Key(ctx, k)
}
func (t *timedDevice) LaunchApp(ctx context.Context, app string) error {
	defer t.track(time.Now())
	return t.d.LaunchApp(ctx, app)
}

// BenchmarkStepOverhead is the runtime's own cost per step (loop, Planner,
// Executor, Memory, settle bookkeeping) on the zero-latency in-process
// simulator, with the time spent inside the device subtracted. Target: under
// 1 ms per step. Run: go test ./runtime -bench StepOverhead -run '^$'
func BenchmarkStepOverhead(b *testing.B) {
	for _, loc := range []string{"en", "zh"} {
		b.Run(loc, func(b *testing.B) {
			var overhead, total time.Duration
			steps := 0
			for i := 0; i < b.N; i++ {
				clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
				p, err := sim.New(sim.Config{Locale: loc, Seed: int64(i + 1), Clock: clk})
				if err != nil {
					b.Fatal(err)
				}
				td := &timedDevice{d: p.Device()}
				r, err := New(Defaults(), td, rule.New(), Options{Clock: clk, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				res := r.Run(context.Background(), simGoals[loc])
				elapsed := time.Since(start)
				if res.Status != lifecycle.Completed {
					b.Fatalf("%s: %s", res.Status, res.Reason)
				}
				total += elapsed
				overhead += elapsed - td.spent
				steps += len(res.Steps)
			}
			b.ReportMetric(float64(overhead.Nanoseconds())/float64(steps), "ns-overhead/step")
			b.ReportMetric(float64(total.Nanoseconds())/float64(steps), "ns-total/step")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/task")
		})
	}
}
