// Package touchtest is the table of issue 27's probe, for every front end's
// tests: the simulator's irreversible targets (a message's Send, Buy now,
// the cashier's Pay now, a fake dialog's Allow, the permission dialog's
// focused Allow), how to reach each, every way a call can touch one (tap,
// long press, type_text with and without text and with submit, Enter,
// scroll in each direction inside it), and the irreversible effects a try
// had on the phone. Each front end (the runtime's Stepper and loop, a
// flow, the MCP server's tools) drives the same table, so none can be
// left out of the gate.
package touchtest

import (
	"context"
	"encoding/json"
	"fmt"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/safety"
	"phonepilot/tools"
)

// A Target is an irreversible target on the simulator: its name, the id
// that finds it on the screen, and how to bring the phone to it.
type Target struct {
	Name  string
	ID    string
	Reach func(ctx context.Context, p *sim.Phone, d device.Device) error
}

// A Way is one way to touch a target: the call on its index. OnElement:
// the call names the target (a flow names it by selector instead); Enter
// names none and lands on the focused element.
type Way struct {
	Name      string
	Call      func(el int) tools.Call
	OnElement bool
}

// Effects are the irreversible effects on the phone: messages sent,
// orders placed, the cashier opened, permissions granted.
type Effects struct{ Sent, Orders, Cashier, Granted int }

func (e Effects) String() string {
	return fmt.Sprintf("sent %d, ordered %d, cashier %d, granted %d", e.Sent, e.Orders, e.Cashier, e.Granted)
}

// Minus is what e has beyond before.
func (e Effects) Minus(before Effects) Effects {
	return Effects{e.Sent - before.Sent, e.Orders - before.Orders, e.Cashier - before.Cashier, e.Granted - before.Granted}
}

// EffectsOf reads the effects so far from the simulator's state.
func EffectsOf(p *sim.Phone) (Effects, error) {
	raw, err := p.State()
	if err != nil {
		return Effects{}, err
	}
	var st struct {
		Granted  []any `json:"granted"`
		Messages struct {
			Sent []any `json:"sent"`
		} `json:"messages"`
		Taobao struct {
			Screen string `json:"screen"`
			Orders []any  `json:"orders"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return Effects{}, fmt.Errorf("touchtest: the simulator's state: %w", err)
	}
	e := Effects{Sent: len(st.Messages.Sent), Orders: len(st.Taobao.Orders), Granted: len(st.Granted)}
	if st.Taobao.Screen == "payment" {
		e.Cashier = 1
	}
	return e, nil
}

// Index is the index of the target on the screen d shows now.
func (tg Target) Index(ctx context.Context, d device.Device) (int, error) {
	sc, err := d.Scene(ctx)
	if err != nil {
		return -1, err
	}
	for _, e := range sc.Elements {
		if e.ResourceID == tg.ID && sc.Visible(e) {
			return e.Index, nil
		}
	}
	return -1, fmt.Errorf("touchtest: %s: no %s on %s", tg.Name, tg.ID, sc.Package)
}

// tap taps the first visible element whose id or label is what.
func tap(ctx context.Context, d device.Device, what string, clickable bool) error {
	sc, err := d.Scene(ctx)
	if err != nil {
		return err
	}
	for _, e := range sc.Elements {
		if (e.ResourceID == what || e.Label() == what) && sc.Visible(e) && (e.Clickable || !clickable) {
			x, y := e.Bounds.Center()
			return d.Tap(ctx, x, y)
		}
	}
	return fmt.Errorf("touchtest: no %q on %s", what, sc.Package)
}

// steps runs the steps in order, up to the first error.
func steps(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func toItem(ctx context.Context, d device.Device) error {
	return steps(
		func() error { return d.LaunchApp(ctx, "com.taobao.taobao") },
		func() error { return tap(ctx, d, "com.taobao.taobao:id/poplayer_close", false) },
		func() error { return tap(ctx, d, "com.taobao.taobao:id/home_searchbar", false) },
		func() error { return d.TypeText(ctx, "Mac mini") },
		func() error { return d.Key(ctx, device.KeyEnter) },
		func() error { return tap(ctx, d, "com.taobao.taobao:id/search_item", false) },
	)
}

// Targets are the five irreversible targets.
var Targets = []Target{
	{"Send SMS", "com.google.android.apps.messaging:id/send_message_button_icon", func(ctx context.Context, _ *sim.Phone, d device.Device) error {
		return steps(
			func() error { return d.LaunchApp(ctx, "com.google.android.apps.messaging") },
			func() error { return tap(ctx, d, "Mom", false) },
			func() error { return tap(ctx, d, "com.google.android.apps.messaging:id/compose_message_text", false) },
			func() error { return d.TypeText(ctx, "hi") },
		)
	}},
	{"Buy now", "com.taobao.taobao:id/buy_now", func(ctx context.Context, _ *sim.Phone, d device.Device) error {
		return toItem(ctx, d)
	}},
	{"Pay now (cashier)", "com.taobao.taobao:id/pay_button", func(ctx context.Context, _ *sim.Phone, d device.Device) error {
		return steps(
			func() error { return toItem(ctx, d) },
			func() error { return tap(ctx, d, "com.taobao.taobao:id/buy_now", false) },
		)
	}},
	{"fake System update's Allow", "com.taobao.taobao:id/update_allow", func(ctx context.Context, _ *sim.Phone, d device.Device) error {
		return steps(
			func() error { return d.LaunchApp(ctx, "com.taobao.taobao") },
			func() error { return tap(ctx, d, "com.taobao.taobao:id/poplayer_close", false) },
			// The coin game's cell brings the fake "System update" dialog.
			func() error { return tap(ctx, d, "com.taobao.taobao:id/category_item", true) },
		)
	}},
	{"permission dialog's Allow (focused)", sim.PermissionAllowID, func(ctx context.Context, p *sim.Phone, d device.Device) error {
		return steps(
			func() error { return d.LaunchApp(ctx, "com.android.settings") },
			// A key takes the phone out of touch mode: the dialog's grant
			// button comes up focused, and Enter would click it.
			func() error { return d.Key(ctx, device.KeyDelete) },
			p.ShowPermissionDialog,
		)
	}},
}

// Ways are the ten ways to touch a target.
var Ways = func() []Way {
	ways := []Way{
		{"tap", func(el int) tools.Call { return tools.NewCall(tools.Tap, tools.TapArgs{Element: tools.Index(el)}) }, true},
		{"long_press", func(el int) tools.Call {
			return tools.NewCall(tools.LongPress, tools.LongPressArgs{Element: tools.Index(el)})
		}, true},
		{"type_text without text", func(el int) tools.Call {
			return tools.NewCall(tools.TypeText, map[string]any{"element": el, "text": ""})
		}, true},
		{"type_text with text", func(el int) tools.Call {
			return tools.NewCall(tools.TypeText, map[string]any{"element": el, "text": "ok"})
		}, true},
		{"type_text and submit", func(el int) tools.Call {
			return tools.NewCall(tools.TypeText, map[string]any{"element": el, "text": "ok", "submit": true})
		}, true},
		{"press_key enter", func(int) tools.Call { return tools.NewCall(tools.PressKey, tools.PressKeyArgs{Key: "enter"}) }, false},
	}
	for _, dir := range []string{"left", "right", "up", "down"} {
		ways = append(ways, Way{"scroll " + dir + " in it", func(el int) tools.Call {
			return tools.NewCall(tools.Scroll, map[string]any{"element": el, "direction": dir})
		}, true})
	}
	return ways
}()

// Clicking are the ways that click the target on a phone when the gate
// lets them (the table's control: with everything allowed each reaches an
// effect, so the table tests what it says).
var Clicking = []string{"tap", "long_press", "scroll left in it", "scroll right in it", "press_key enter"}

// AllowAll is the control's policy: every category allowed, so the ways
// in Clicking reach the effects and the table is seen to test them.
func AllowAll() safety.Policy {
	var p safety.Policy
	for _, c := range safety.Categories() {
		p.Set(c, safety.Allow)
	}
	return p
}
