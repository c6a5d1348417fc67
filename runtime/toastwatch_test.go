package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// On the helper's path, where the phone hears each toast as it shows
// (device.ToastWatcher), a second Add to cart right after the first does
// not wait for the first one's "Added to cart" to go: the toast announced
// after it is its answer, heard at once. And a second press dropped under
// the first toast is not taken for done (no toast announced after it; the
// old toast going is not its effect), and is made again once: the cart
// ends with two, never one or three (issue 12).
func TestSecondAddToCartHeardWithoutWaitingForTheFirstToast(t *testing.T) {
	secondAddToCart(t, false)
}

// Where the app's second toast waits behind the first (Android's toast
// queue: an app that does not cancel its previous toast), the second press
// is heard when the first toast goes and its own shows: not pressed again
// (a cart of three), and a dropped one still pressed again (not one).
func TestSecondAddToCartHeardWhenItsQueuedToastShows(t *testing.T) {
	secondAddToCart(t, true)
}

func secondAddToCart(t *testing.T, queue bool) {
	for seed := int64(1); seed <= 6; seed++ {
		for _, drop := range []int{0, 1} {
			p, d, clk := onProductPageWith(t, sim.Config{Seed: seed, Observer: sim.ObserverHelper, ToastQueue: queue})
			if _, qty := addToCart(t, p, clk, d); len(qty) != 1 || qty[0] != 1 {
				t.Fatalf("seed %d: cart %v after the first Add to cart", seed, qty)
			}
			sc, err := d.Scene(t.Context())
			if err != nil || !sc.ShowsToast() {
				t.Fatalf("seed %d: the first toast does not show at the second press (%v)", seed, err)
			}
			start := clk.Now()
			res, qty := addToCart(t, p, clk, &dropTaps{Device: d, drop: drop})
			took := clk.Now().Sub(start)
			if len(qty) != 1 || qty[0] != 2 || len(res.Steps) == 0 || res.Steps[0].Status != lifecycle.StepSucceeded {
				t.Errorf("seed %d, %d taps lost: cart %v after a second Add to cart (%s: %s); want the product twice", seed, drop, qty, res.Status, res.Reason)
				continue
			}
			at := res.Steps[0].Attempts
			last := at[len(at)-1]
			switch {
			case drop == 0 && !queue && (len(at) != 1 || took > 500*time.Millisecond):
				t.Errorf("seed %d: the second Add to cart took %s and %d attempts; want one, without waiting for the first toast", seed, took, len(at))
			case len(at) != 1+drop:
				t.Errorf("seed %d, %d taps lost: %d attempts; want %d", seed, drop, len(at), 1+drop)
			case !strings.Contains(last.Result, AnsweredByToast):
				t.Errorf("seed %d, %d taps lost: the press that landed says %q; want it answered by the toast", seed, drop, last.Result)
			}
		}
	}
}

// Where the phone cannot hear toasts now (the watcher answers
// ErrUnsupported: uiautomator, a protocol-2 helper), the second press
// still waits for the first toast to go, as before.
func TestPressWaitsForTheOldToastWhereToastsAreNotHeard(t *testing.T) {
	p, d, clk := onProductPageVia(t, 1, sim.ObserverHelper)
	addToCart(t, p, clk, d)
	start := clk.Now()
	res, qty := addToCart(t, p, clk, deafWatcher{&dropTaps{Device: d}})
	if len(qty) != 1 || qty[0] != 2 {
		t.Fatalf("cart %v (%s: %s); want two", qty, res.Status, res.Reason)
	}
	if took := clk.Now().Sub(start); took < time.Second {
		t.Errorf("the second Add to cart took %s; want it to wait for the first toast to go", took)
	}
}

// deafWatcher is the simulated phone (its change counter too) whose
// watcher cannot hear toasts now.
type deafWatcher struct{ *dropTaps }

func (deafWatcher) ToastsSince(ctx context.Context, m device.ToastMark) (device.ToastMark, []device.Toast, error) {
	return m, nil, device.ErrUnsupported
}

// tapLabel taps the element labelled label, expecting a change, then finishes.
type tapLabel struct{ label string }

func (p tapLabel) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if len(in.History) > 0 {
		return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "tapped"}}, nil
	}
	sel := scene.Selector{Value: p.label}
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap " + p.label, Call: tools.NewCall(tools.Tap, map[string]any{}),
		Target: &sel, Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
}

// Opening the second result right after the first was added to the cart
// (taobao.cart.add_two), while "Added to cart" still shows, does not wait
// for the toast to go where the phone hears toasts; and a tap on it that
// was dropped is not taken for done when the old toast goes meanwhile (no
// toast was announced after it, and the app's own screen is the same): it
// is made again and the second product opens.
func TestOpenNextResultUnderTheOldToast(t *testing.T) {
	for _, tc := range []struct {
		later time.Duration // from the first add to the tap
		drop  int
	}{{0, 0}, {0, 1}, {500 * time.Millisecond, 1}} {
		took, res, opened := openSecondResult(t, tc.later, tc.drop, false)
		switch {
		case len(res.Steps) == 0 || res.Steps[0].Status != lifecycle.StepSucceeded || !opened:
			t.Errorf("%+v: %s (%s); the product page opened: %t", tc, res.Status, res.Reason, opened)
		case len(res.Steps[0].Attempts) != 1+tc.drop:
			t.Errorf("%+v: %d attempts; want %d", tc, len(res.Steps[0].Attempts), 1+tc.drop)
		case tc.drop == 0:
			// The same phone that cannot hear toasts waits for it first.
			deaf, _, _ := openSecondResult(t, tc.later, tc.drop, true)
			if took > deaf-500*time.Millisecond {
				t.Errorf("%+v: the tap took %s, %s where toasts are not heard; want it made without waiting for the toast", tc, took, deaf)
			}
		}
	}
}

// openSecondResult adds the first Kindle to the cart on a slow phone on
// the helper's path, goes back to the results and, later after the back
// transition, runs the task that opens the second result, its first drop
// taps lost (deaf: through a watcher that cannot hear toasts). It returns
// the task's time, its result and whether the product page opened.
func openSecondResult(t *testing.T, later time.Duration, drop int, deaf bool) (time.Duration, Result, bool) {
	t.Helper()
	tc := struct {
		later time.Duration
		drop  int
	}{later, drop}
	{
		p, d, clk := onProductPageVia(t, 1, sim.ObserverHelper)
		addToCart(t, p, clk, d)
		if err := d.Key(t.Context(), device.KeyBack); err != nil {
			t.Fatal(err)
		}
		clk.Advance(1200*time.Millisecond + tc.later) // the slow phone's transition back
		// The toast has 0.7 s (0.2 s when later) left.
		sc, err := d.Scene(t.Context())
		if err != nil || !sc.ShowsToast() {
			t.Fatalf("%+v: the toast does not show on the results (%v)", tc, err)
		}
		var second string
		n := 0
		for _, el := range sc.Elements {
			if el.ResourceID == "com.taobao.taobao:id/item_title" {
				if n++; n == 2 {
					second = el.Label()
				}
			}
		}
		if second == "" {
			var ids []string
			for _, el := range sc.Elements {
				ids = append(ids, el.ResourceID+"="+el.Label())
			}
			t.Fatalf("%+v: no second result on %s: %v", tc, sc.Package, ids)
		}
		start := clk.Now()
		var dev device.Device = &dropTaps{Device: d, drop: tc.drop}
		if deaf {
			dev = deafWatcher{&dropTaps{Device: d, drop: tc.drop}}
			if _, counts := dev.(device.ChangeCounter); !counts {
				t.Fatal("the deaf phone lost its change counter")
			}
		}
		r, err := New(Defaults(), dev, tapLabel{second}, Options{Clock: clk, Logger: testlog.New(t)})
		if err != nil {
			t.Fatal(err)
		}
		res := r.Run(t.Context(), "open the second result")
		took := clk.Now().Sub(start)
		after, _ := d.Scene(t.Context())
		opened := false
		for _, el := range after.Elements {
			if el.ResourceID == "com.taobao.taobao:id/add_cart" {
				opened = true
			}
		}
		return took, res, opened
	}
}

// approveAfter approves every action once do has run (what happens on the
// phone while a person decides), and answers no question.
type approveAfter func()

func (f approveAfter) Approve(context.Context, Approval) (ApprovalDecision, error) {
	f()
	return ApprovalDecision{Approved: true, By: "test"}, nil
}
func (f approveAfter) Ask(context.Context, Question) (Answer, error) {
	return Answer{}, errors.New("no questions in this test")
}

// A person's approval takes its time, and a toast the app shows meanwhile
// is no answer of the approved press: the mark is taken again once the
// press is approved. An approved "Buy now" whose tap was lost, while an
// "Added to cart" came up during the approval, is not taken for done
// (with the mark from before the approval it was: the toast was heard
// after it).
func TestToastDuringApprovalIsNotThePressAnswer(t *testing.T) {
	p, d, clk := onProductPageWith(t, sim.Config{Seed: 1, Observer: sim.ObserverHelper})
	person := approveAfter(func() { tapWhenShown(t, clk, d, "add_cart") })
	r, err := New(Defaults(), &dropTaps{Device: d, drop: 1}, tapOnce{"com.taobao.taobao:id/buy_now"}, Options{Clock: clk, Logger: testlog.New(t), Person: person})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "buy it")
	if len(res.Steps) == 0 {
		t.Fatalf("no step: %s (%s)", res.Status, res.Reason)
	}
	st := res.Steps[0]
	for _, a := range st.Attempts {
		if strings.Contains(a.Result, AnsweredByToast) {
			t.Errorf("attempt %d says %q: the toast shown during the approval was taken for the lost press's answer", a.Number, a.Result)
		}
	}
	if st.Status == lifecycle.StepSucceeded {
		t.Errorf("the approved Buy now, its tap lost, is recorded %s (%v)", st.Status, st.Attempts)
	}
	raw, _ := p.State()
	if strings.Contains(string(raw), `"screen":"payment"`) {
		t.Fatalf("the payment page opened: the tap was not lost (fixture)")
	}
}
