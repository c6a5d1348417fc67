package sim

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
	"phonepilot/internal/clock"
)

// On the helper's path the toast Add to cart shows is heard as it shows
// (device.ToastWatcher): after a mark taken before the press, one toast
// with Taobao's package and its text, read at once; nothing after the mark
// taken after it, even while the toast still shows; each read charged one
// helper request (5 ms, the counter read's). Another source's mark is
// before every toast; the uiautomator path hears none.
func TestToastsHeardOnTheHelperPath(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC))
	v := newDrive(t, Config{Clock: clk, Profile: "slow", Observer: ObserverHelper})
	ctx := context.Background()
	onProductPage(v, clk)
	before := clk.Now()
	mark, ts, err := v.d.ToastsSince(ctx, device.ToastMark{})
	if err != nil || len(ts) != 0 {
		t.Fatalf("toasts before Add to cart: %v, %v; want none", ts, err)
	}
	if took := clk.Now().Sub(before); took != 5*time.Millisecond {
		t.Errorf("a toasts read took %s; want the helper request's 5 ms", took)
	}
	v.tapLabel("Add to cart")
	want := []device.Toast{{Package: "com.taobao.taobao", Text: "Added to cart"}}
	now, ts, err := v.d.ToastsSince(ctx, mark)
	if err != nil || !reflect.DeepEqual(ts, want) || now.Seq != mark.Seq+1 {
		t.Fatalf("toasts after Add to cart: %v (mark %+v), %v; want %v", ts, now, err, want)
	}
	clk.Advance(time.Second)
	if !v.scene().ShowsToast() {
		t.Fatal("the toast no longer shows 1 s after Add to cart")
	}
	if _, ts, err := v.d.ToastsSince(ctx, now); err != nil || len(ts) != 0 {
		t.Errorf("toasts after the mark taken after Add to cart, the toast still showing: %v, %v; want none", ts, err)
	}
	if _, ts, _ := v.d.ToastsSince(ctx, device.ToastMark{Seq: now.Seq, Source: "4242"}); !reflect.DeepEqual(ts, want) {
		t.Errorf("toasts after another source's mark: %v; want all kept, %v", ts, want)
	}
	u := v.d.Phone().DeviceVia(ObserverUIAutomator)
	if _, _, err := u.ToastsSince(ctx, device.ToastMark{}); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("toasts on the uiautomator path: %v; want ErrUnsupported", err)
	}
}

// onProductPage brings a slow (timed) phone to a Kindle's product page,
// letting each transition end before the next tap.
func onProductPage(v *drive, clk *clock.Fake) {
	v.t.Helper()
	v.launch("Taobao")
	for _, id := range []string{"poplayer_close", "home_searchbar", "", "search_button", "search_item"} {
		clk.Advance(3 * time.Second)
		if id == "" {
			v.typeText("Kindle")
			continue
		}
		v.tapID("com.taobao.taobao:id/" + id)
	}
	clk.Advance(3 * time.Second)
}

// The log keeps the last helper.MaxToasts, as Toasts.java does, numbered
// without a gap; a helper process numbers from its own start.
func TestToastLogBounds(t *testing.T) {
	var l toastLog
	at := time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC)
	for i := 0; i < helper.MaxToasts+4; i++ {
		l.add("p", "t", at)
	}
	got := l.after(0)
	if len(got) != helper.MaxToasts || got[0].seq != 5 || got[len(got)-1].seq != l.seq || l.seq != helper.MaxToasts+4 {
		t.Fatalf("kept %d toasts, %d to %d of %d", len(got), got[0].seq, got[len(got)-1].seq, l.seq)
	}
	if got := l.after(l.seq - 1); len(got) != 1 || got[0].seq != l.seq {
		t.Fatalf("after the last but one: %+v", got)
	}
	p := newTestPhone(t, Config{})
	p.toasts = l
	h := &simHelper{toastBase: l.seq - 1}
	p.mu.Lock()
	p.toasts.add("com.taobao.taobao", "Added to cart", at)
	p.mu.Unlock()
	now, evs, err := (&helperBackend{p: p, h: h}).Toasts(0)
	if err != nil || now != 2 || len(evs) != 2 || evs[0].Seq != 1 || evs[1].Seq != 2 || evs[1].Text != "Added to cart" {
		t.Fatalf("a helper started at toast %d: now %d, %+v, %v; want its own two, numbered 1 and 2", h.toastBase, now, evs, err)
	}
}

// With Config.ToastQueue a second toast of the app waits behind the one
// showing, as NotificationManagerService queues it: the toast queue lists
// both, and the second is heard, and shows, only when the first goes.
func TestQueuedToastHeardWhenItShows(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC))
	v := newDrive(t, Config{Clock: clk, Profile: "slow", Observer: ObserverHelper, ToastQueue: true})
	ctx := context.Background()
	onProductPage(v, clk)
	v.tapLabel("Add to cart")
	mark, _, err := v.d.ToastsSince(ctx, device.ToastMark{})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond)
	v.tapLabel("Add to cart")
	added := device.Toast{Package: "com.taobao.taobao", Text: "Added to cart"}
	if ts, _ := v.d.Toasts(ctx); !reflect.DeepEqual(ts, []device.Toast{added, added}) {
		t.Errorf("the toast queue after two Add to cart: %v; want both", ts)
	}
	if _, ts, _ := v.d.ToastsSince(ctx, mark); len(ts) != 0 {
		t.Errorf("toasts heard while the first still shows: %v; want none yet", ts)
	}
	clk.Advance(1500 * time.Millisecond) // the first toast's 2 s are up
	if _, ts, _ := v.d.ToastsSince(ctx, mark); !reflect.DeepEqual(ts, []device.Toast{added}) || !v.scene().ShowsToast() {
		t.Errorf("toasts heard as the first goes: %v; want the second", ts)
	}
	clk.Advance(2 * time.Second)
	if v.scene().ShowsToast() {
		t.Error("a toast still shows 2 s after the second one showed")
	}
}
