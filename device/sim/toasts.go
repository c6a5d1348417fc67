package sim

import (
	"context"
	"fmt"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
)

// toastLog is what an on-device helper hears of toasts: Android announces
// each toast with an accessibility event when it shows it
// (TYPE_NOTIFICATION_STATE_CHANGED from android.widget.Toast, the app's
// package, the text), and the helper keeps the last helper.MaxToasts with a
// growing number (Toasts.java). The simulator records one when an app's
// toast shows, at that moment: when the app shows it (showToast), or,
// with Config.ToastQueue, when the toast before it goes (settle).
type toastLog struct {
	seq    uint64 // the last toast's number; never reset, so marks stay true
	events []toastEvent
}

type toastEvent struct {
	seq       uint64
	at        time.Time
	pkg, text string
}

func (l *toastLog) add(pkg, text string, at time.Time) {
	l.seq++
	l.events = append(l.events, toastEvent{seq: l.seq, at: at, pkg: pkg, text: text})
	if len(l.events) > helper.MaxToasts {
		l.events = l.events[len(l.events)-helper.MaxToasts:]
	}
}

// after lists the kept toasts numbered above n, oldest first.
func (l *toastLog) after(n uint64) []toastEvent {
	var out []toastEvent
	for _, e := range l.events {
		if e.seq > n {
			out = append(out, e)
		}
	}
	return out
}

// ToastsSince lists the toasts the helper heard after mark, at the cost of
// one helper request (the counter read's); device.ToastWatcher. On a path
// without a helper it is device.ErrUnsupported.
func (d *Device) ToastsSince(ctx context.Context, mark device.ToastMark) (device.ToastMark, []device.Toast, error) {
	if err := ctxErr(ctx, "toasts since"); err != nil {
		return device.ToastMark{}, nil, err
	}
	if d.obs != ObserverHelper {
		return device.ToastMark{}, nil, fmt.Errorf("sim toasts since: the %s path hears no toasts: %w", d.obs, device.ErrUnsupported)
	}
	if err := d.p.charge(ctx, d.obs, chargeToasts); err != nil {
		return device.ToastMark{}, nil, fmt.Errorf("sim toasts since: %w", err)
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.settle(d.p.now()) // a queued toast shows as the one before it goes
	const source = "sim"
	var out []device.Toast
	for _, e := range d.p.toasts.after(mark.In(source)) {
		out = append(out, device.Toast{Package: e.pkg, Text: e.text})
	}
	return device.ToastMark{Seq: d.p.toasts.seq, Source: source}, out, nil
}

// Toasts answers the helper's toasts request (helper.OpToasts): the
// toasts this helper process heard, numbered from its start as
// Toasts.java numbers them, charged as one helper request.
func (b *helperBackend) Toasts(after uint64) (uint64, []helper.ToastEvent, error) {
	if err := b.request(); err != nil {
		return 0, nil, err
	}
	p := b.p
	if err := p.charge(context.Background(), ObserverHelper, chargeToasts); err != nil {
		return 0, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settle(p.now())
	base := b.h.toastBase
	var out []helper.ToastEvent
	for _, e := range p.toasts.after(base + after) {
		out = append(out, helper.ToastEvent{Seq: e.seq - base, Ago: p.now().Sub(e.at), Package: e.pkg, Text: e.text})
	}
	return p.toasts.seq - base, out, nil
}
