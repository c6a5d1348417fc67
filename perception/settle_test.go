package perception

import (
	"context"
	"errors"
	"testing"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/scene"
)

// scriptedObserver returns its steps in order, then repeats the last one.
type scriptedObserver struct {
	steps []step
	calls int
}

type step struct {
	sc  *scene.Scene
	err error
}

func (o *scriptedObserver) Scene(ctx context.Context) (*scene.Scene, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := o.steps[min(o.calls, len(o.steps)-1)]
	o.calls++
	return s.sc, s.err
}

func screenWith(label string) *scene.Scene {
	return &scene.Scene{Width: 1080, Height: 2400, Package: "com.example", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Package: "com.example", Bounds: scene.Bounds{Left: 0, Top: 0, Right: 1080, Bottom: 2400}, Enabled: true},
		{Index: 1, Parent: 0, Depth: 1, Class: "android.widget.Button", Text: label, Package: "com.example", Bounds: scene.Bounds{Left: 100, Top: 100, Right: 500, Bottom: 200}, Clickable: true, Enabled: true},
	}}
}

func fakeClock() *clock.Fake { return clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }

func TestSettleReturnsOnceTwoScenesAgree(t *testing.T) {
	clk := fakeClock()
	obs := &scriptedObserver{steps: []step{
		{sc: screenWith("Loading")}, {sc: screenWith("Loading 50%")}, {sc: screenWith("Done")}, {sc: screenWith("Done")},
	}}
	sc, settled, err := Settle(context.Background(), obs, SettleOptions{Interval: 100 * time.Millisecond, Timeout: 5 * time.Second, Clock: clk})
	if err != nil || !settled {
		t.Fatalf("settled=%v err=%v, want settled", settled, err)
	}
	if got := sc.Elements[1].Text; got != "Done" {
		t.Errorf("returned scene shows %q, want the settled one (Done)", got)
	}
	if obs.calls != 4 {
		t.Errorf("observed %d times, want 4 (settles on the first repeat)", obs.calls)
	}
	if got := clk.Slept(); got != 300*time.Millisecond {
		t.Errorf("waited %v, want 3 intervals (300ms)", got)
	}
}

func TestSettleTimesOutOnAnEverChangingScreen(t *testing.T) {
	clk := fakeClock()
	n := 0
	obs := observerFunc(func(ctx context.Context) (*scene.Scene, error) {
		n++
		return screenWith(time.Duration(n).String()), nil
	})
	sc, settled, err := Settle(context.Background(), obs, SettleOptions{Interval: 150 * time.Millisecond, Timeout: time.Second, Clock: clk})
	if err != nil || settled {
		t.Fatalf("settled=%v err=%v, want not settled and no error", settled, err)
	}
	if sc == nil || sc.Elements[1].Text != time.Duration(n).String() {
		t.Errorf("want the last scene observed")
	}
	if clk.Slept() > time.Second {
		t.Errorf("slept %v past the 1s timeout", clk.Slept())
	}
}

type observerFunc func(ctx context.Context) (*scene.Scene, error)

func (f observerFunc) Scene(ctx context.Context) (*scene.Scene, error) { return f(ctx) }

func TestSettleKeepsPollingThroughIdleStateAndNullRoot(t *testing.T) {
	clk := fakeClock()
	obs := &scriptedObserver{steps: []step{
		{sc: screenWith("A")}, {err: ErrIdleState}, {sc: screenWith("A")}, {err: ErrNullRoot}, {sc: screenWith("A")}, {sc: screenWith("A")},
	}}
	_, settled, err := Settle(context.Background(), obs, SettleOptions{Clock: clk})
	if err != nil || !settled {
		t.Fatalf("settled=%v err=%v", settled, err)
	}
	// A failed dump breaks the chain: A, idle, A, null, A, A → settles at call 6.
	if obs.calls != 6 {
		t.Errorf("observed %d times, want 6", obs.calls)
	}
}

func TestSettleOnlyIdleUntilTimeoutReturnsTheRetryableError(t *testing.T) {
	clk := fakeClock()
	obs := &scriptedObserver{steps: []step{{err: ErrIdleState}}}
	sc, settled, err := Settle(context.Background(), obs, SettleOptions{Clock: clk})
	if sc != nil || settled || !errors.Is(err, ErrIdleState) {
		t.Fatalf("got scene=%v settled=%v err=%v, want ErrIdleState after the timeout", sc != nil, settled, err)
	}
	if clk.Slept() != DefaultSettleTimeout {
		t.Errorf("waited %v, want the default timeout %v", clk.Slept(), DefaultSettleTimeout)
	}
}

func TestSettleReturnsOtherErrorsAtOnce(t *testing.T) {
	boom := errors.New("device gone")
	obs := &scriptedObserver{steps: []step{{sc: screenWith("A")}, {err: boom}}}
	_, settled, err := Settle(context.Background(), obs, SettleOptions{Clock: fakeClock()})
	if settled || !errors.Is(err, boom) {
		t.Fatalf("settled=%v err=%v, want the observer's error", settled, err)
	}
	if obs.calls != 2 {
		t.Errorf("observed %d times after a hard error, want 2", obs.calls)
	}
}

func TestSettleHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs := &scriptedObserver{steps: []step{{sc: screenWith("A")}}}
	_, settled, err := Settle(ctx, obs, SettleOptions{Clock: fakeClock()})
	if settled || !errors.Is(err, context.Canceled) {
		t.Fatalf("settled=%v err=%v, want context.Canceled", settled, err)
	}
}

func TestSettleIgnoresStatusBarClockTicks(t *testing.T) {
	// Two real dumps of the same screen whose status bar clock differs
	// count as settled.
	a := readFixture(t, "facebook_feed_with_statusbar.xml")
	b := replaceOnce(t, a, `text="2:06"`, `text="2:07"`)
	first, err := Parse(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Parse(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	obs := &scriptedObserver{steps: []step{{sc: first}, {sc: second}}}
	_, settled, err := Settle(context.Background(), obs, SettleOptions{Clock: fakeClock()})
	if err != nil || !settled || obs.calls != 2 {
		t.Fatalf("settled=%v err=%v calls=%d, want settled after 2 observations", settled, err, obs.calls)
	}
}

func TestSettleOptionsValidate(t *testing.T) {
	if err := (SettleOptions{Interval: -1}).Validate(); err == nil {
		t.Error("negative interval accepted")
	}
	if err := (SettleOptions{Timeout: -1}).Validate(); err == nil {
		t.Error("negative timeout accepted")
	}
	if err := (SettleOptions{}).Validate(); err != nil {
		t.Errorf("zero options rejected: %v", err)
	}
}
