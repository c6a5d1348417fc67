package sim

import (
	"context"
	"testing"

	"phonepilot/device"
)

// A sideways swipe that stays on a clickable row of a vertical list clicks
// the row, as on Android (the list does not intercept a horizontal move,
// and the row clicks on release because the finger never left it); an
// upward swipe there scrolls the list and clicks nothing. Issue 27: the
// gate must see such a swipe as a tap, and the simulator must do it.
func TestSwipeThatStaysOnAClickableClicksIt(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		opens bool
	}{
		{name: "sideways", opens: true},
		{name: "up"},
	} {
		v := newDrive(t, Config{})
		v.launch("com.google.android.apps.messaging")
		sc := v.scene()
		row := findID(sc, "com.google.android.apps.messaging:id/swipeableContainer")
		if row == nil {
			t.Fatalf("no conversation row: %s", v.labels())
		}
		b := row.Bounds
		cy := (b.Top + b.Bottom) / 2
		x1, y1, x2, y2 := b.Left+b.Width()/4, cy, b.Right-b.Width()/4, cy
		if tc.name == "up" {
			x1, y1, x2, y2 = (b.Left+b.Right)/2, b.Bottom-5, (b.Left+b.Right)/2, b.Bottom-5-b.Height()*3
		}
		if err := v.d.Swipe(ctx, x1, y1, x2, y2, 300_000_000); err != nil {
			t.Fatal(err)
		}
		opened := findID(v.scene(), "com.google.android.apps.messaging:id/compose_message_text") != nil
		if opened != tc.opens {
			t.Errorf("%s swipe on a conversation row: opened %v, want %v: %s", tc.name, opened, tc.opens, v.labels())
		}
	}
}

// Out of touch mode (after a key) a permission dialog gives its grant
// button focus, and Enter clicks it; shown after a touch it has no focus
// and Enter grants nothing.
func TestEnterClicksAFocusedButton(t *testing.T) {
	ctx := context.Background()
	for _, afterKey := range []bool{true, false} {
		p := newTestPhone(t, Config{})
		v := &drive{t: t, d: p.Device()}
		v.launch("Settings")
		if afterKey {
			if err := v.d.Key(ctx, device.KeyDelete); err != nil {
				t.Fatal(err)
			}
		} else {
			v.tapLabel("Network & internet")
		}
		if err := p.ShowPermissionDialog(); err != nil {
			t.Fatal(err)
		}
		focused := false
		for _, e := range v.scene().Elements {
			focused = focused || e.Focused && e.Clickable && !e.Editable
		}
		if err := v.d.Key(ctx, device.KeyEnter); err != nil {
			t.Fatal(err)
		}
		granted := len(v.state()["granted"].([]any)) > 0
		if focused != afterKey || granted != afterKey {
			t.Errorf("dialog shown after a key %v: a focused button %v, Enter granted %v; want both %v", afterKey, focused, granted, afterKey)
		}
	}
}
