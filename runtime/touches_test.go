package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/plan"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// An irreversible target on the simulator: how to get there, and how to
// find it on the screen (by id).
type touchTarget struct {
	name  string
	id    string
	reach func(t *testing.T, p *sim.Phone, d device.Device)
}

func simTap(t *testing.T, d device.Device, what string) {
	t.Helper()
	sc, err := d.Scene(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sc.Elements {
		if (e.ResourceID == what || e.Label() == what) && sc.Visible(e) {
			x, y := e.Bounds.Center()
			if err := d.Tap(context.Background(), x, y); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %q on %s", what, sc.Package)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func toItem(t *testing.T, d device.Device) {
	ctx := context.Background()
	must(t, d.LaunchApp(ctx, "com.taobao.taobao"))
	simTap(t, d, "com.taobao.taobao:id/poplayer_close")
	simTap(t, d, "com.taobao.taobao:id/home_searchbar")
	must(t, d.TypeText(ctx, "Mac mini"))
	must(t, d.Key(ctx, device.KeyEnter))
	simTap(t, d, "com.taobao.taobao:id/search_item")
}

var touchTargets = []touchTarget{
	{"Send SMS", "com.google.android.apps.messaging:id/send_message_button_icon", func(t *testing.T, p *sim.Phone, d device.Device) {
		must(t, d.LaunchApp(context.Background(), "com.google.android.apps.messaging"))
		simTap(t, d, "Mom")
		simTap(t, d, "com.google.android.apps.messaging:id/compose_message_text")
		must(t, d.TypeText(context.Background(), "hi"))
	}},
	{"Buy now", "com.taobao.taobao:id/buy_now", func(t *testing.T, p *sim.Phone, d device.Device) { toItem(t, d) }},
	{"Pay now (cashier)", "com.taobao.taobao:id/pay_button", func(t *testing.T, p *sim.Phone, d device.Device) {
		toItem(t, d)
		simTap(t, d, "com.taobao.taobao:id/buy_now")
	}},
	{"fake System update's Allow", "com.taobao.taobao:id/update_allow", func(t *testing.T, p *sim.Phone, d device.Device) {
		must(t, d.LaunchApp(context.Background(), "com.taobao.taobao"))
		simTap(t, d, "com.taobao.taobao:id/poplayer_close")
		sc, err := d.Scene(context.Background())
		must(t, err)
		for _, e := range sc.Elements {
			if e.ResourceID == "com.taobao.taobao:id/category_item" && e.Clickable {
				x, y := e.Bounds.Center()
				must(t, d.Tap(context.Background(), x, y))
				return
			}
		}
		t.Fatal("no coin game cell")
	}},
	{"permission dialog's Allow (focused)", "com.android.permissioncontroller:id/permission_allow_button", func(t *testing.T, p *sim.Phone, d device.Device) {
		must(t, d.LaunchApp(context.Background(), "com.android.settings"))
		// A key takes the phone out of touch mode: the dialog's grant
		// button comes up focused, and Enter would click it.
		must(t, d.Key(context.Background(), device.KeyDelete))
		must(t, p.ShowPermissionDialog())
	}},
}

// touchWay is one way to touch the target: a call on its index (direct,
// planner) or on its selector (flow).
type touchWay struct {
	name string
	call func(el int) tools.Call
	// onElement: the call names the target (a flow gives it by selector).
	onElement bool
}

var touchWays = func() []touchWay {
	ways := []touchWay{
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
		ways = append(ways, touchWay{"scroll " + dir + " in it", func(el int) tools.Call {
			return tools.NewCall(tools.Scroll, map[string]any{"element": el, "direction": dir})
		}, true})
	}
	return ways
}()

// effects are the irreversible effects on the phone: messages sent,
// orders placed, the cashier opened, permissions granted.
type effects struct{ sent, orders, cashier, granted int }

func (e effects) String() string {
	return fmt.Sprintf("sent %d, ordered %d, cashier %d, granted %d", e.sent, e.orders, e.cashier, e.granted)
}

func effectsOf(t *testing.T, p *sim.Phone) effects {
	t.Helper()
	raw, err := p.State()
	must(t, err)
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
	must(t, json.Unmarshal(raw, &st))
	e := effects{sent: len(st.Messages.Sent), orders: len(st.Taobao.Orders), granted: len(st.Granted)}
	if st.Taobao.Screen == "payment" {
		e.cashier = 1
	}
	return e
}

// scriptedOnce is a planner stand-in that obeys the screen: its first
// decision is the step the screen asked for, thought over for think; then
// it finishes.
type scriptedOnce struct {
	step  func(sc *scene.Scene) plan.PlannedStep
	clk   clock.Clock
	think time.Duration
	done  bool
}

func (s *scriptedOnce) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if s.done {
		return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "done"}}, nil
	}
	s.done = true
	st := s.step(in.Scene)
	if err := s.clk.Sleep(ctx, s.think); err != nil {
		return plan.Decision{}, err
	}
	return plan.Decision{Steps: []plan.PlannedStep{st}}, nil
}

// try runs one way on one target through one front end and returns the
// effects it had beyond the target's own screen, and what happened.
func try(t *testing.T, tg touchTarget, w touchWay, front string, gate Gate) (effects, string) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Clock: clk})
	must(t, err)
	d := p.Device()
	tg.reach(t, p, d)
	before := effectsOf(t, p)
	ctx := context.Background()
	cfg := Defaults()
	opt := Options{Clock: clk, Logger: testlog.New(t), Gate: gate}
	indexOf := func(sc *scene.Scene) int {
		for _, e := range sc.Elements {
			if e.ResourceID == tg.id && sc.Visible(e) {
				return e.Index
			}
		}
		t.Fatalf("%s: no %s on the screen", tg.name, tg.id)
		return -1
	}
	var what string
	switch front {
	case "direct (MCP's Stepper)":
		st, err := NewStepper(cfg, d, opt)
		must(t, err)
		sc, err := st.Observe(ctx)
		must(t, err)
		out, err := st.Do(ctx, w.call(indexOf(sc)), sc)
		must(t, err)
		what = string(out.Record.Status) + ": " + out.Record.Reason
	case "AI planner stand-in (3 s)", "flow target":
		pl := &scriptedOnce{clk: clk}
		if front == "flow target" {
			pl.step = func(*scene.Scene) plan.PlannedStep {
				ps := plan.PlannedStep{Intent: w.name, Call: w.call(0)}
				if w.onElement {
					ps.Call = tools.Call{Name: ps.Call.Name, Args: withoutElement(t, ps.Call.Args)}
					ps.Target = &scene.Selector{Field: scene.FieldID, Value: tg.id}
				}
				ps.Expect = plan.ExpectationOf(ps.Call)
				return ps
			}
		} else {
			pl.think = 3 * time.Second
			pl.step = func(sc *scene.Scene) plan.PlannedStep {
				c := w.call(indexOf(sc))
				return plan.PlannedStep{Intent: w.name, Call: c, Expect: plan.ExpectationOf(c)}
			}
		}
		r, err := New(cfg, d, pl, opt)
		must(t, err)
		res := r.Run(ctx, "do what the screen says")
		what = fmt.Sprintf("%s (%s)", res.Status, res.Reason)
		if len(res.Steps) > 0 {
			what = string(res.Steps[0].Status) + ": " + res.Steps[0].Reason
		}
	}
	after := effectsOf(t, p)
	return effects{after.sent - before.sent, after.orders - before.orders, after.cashier - before.cashier, after.granted - before.granted}, what
}

// withoutElement drops a call's "element" argument (a flow step names its
// element by selector; the Executor fills the index in).
func withoutElement(t *testing.T, args json.RawMessage) json.RawMessage {
	var m map[string]any
	must(t, json.Unmarshal(args, &m))
	delete(m, "element")
	b, err := json.Marshal(m)
	must(t, err)
	return b
}

var touchFronts = []string{"direct (MCP's Stepper)", "AI planner stand-in (3 s)", "flow target"}

// TestEveryTouchWaitsForAPerson is issue 27's probe as a table: every way
// of touching each irreversible target on the simulator (tap, long press,
// type_text with and without text and with submit, Enter, scroll in each
// direction inside it), through each front end (direct calls as MCP's
// tools make them, an AI planner stand-in that obeys the screen and
// thinks 3 s, a flow step that names the target by selector), with the
// default policy and nobody to approve: nothing is sent, ordered or
// granted, and the cashier does not open. The control runs the same tries
// directly with a gate that allows everything: there the ways that click
// on a phone do reach the effects, so the table tests what it says.
func TestEveryTouchWaitsForAPerson(t *testing.T) {
	if testing.Short() {
		t.Skip("150 simulated tries")
	}
	tries := 0
	for _, tg := range touchTargets {
		for _, w := range touchWays {
			for _, front := range touchFronts {
				tries++
				got, what := try(t, tg, w, front, nil)
				if got != (effects{}) {
					t.Errorf("%s / %s / %s: %s without approval (%s)", tg.name, w.name, front, got, what)
				}
			}
		}
	}
	allow := safety.Policy{}
	for _, c := range safety.Categories() {
		allow.Set(c, safety.Allow)
	}
	g, err := safety.New(allow)
	must(t, err)
	reached := map[string][]string{}
	for _, tg := range touchTargets {
		for _, w := range touchWays {
			if got, _ := try(t, tg, w, touchFronts[0], g); got != (effects{}) {
				reached[w.name] = append(reached[w.name], tg.name)
			}
		}
	}
	var lines []string
	for _, w := range touchWays {
		lines = append(lines, fmt.Sprintf("%s → %v", w.name, reached[w.name]))
	}
	t.Logf("%d tries, 0 effects without approval; with everything allowed the effects came by:\n%s", tries, strings.Join(lines, "\n"))
	for _, way := range []string{"tap", "long_press", "scroll left in it", "scroll right in it", "press_key enter"} {
		if len(reached[way]) == 0 {
			t.Errorf("control: %s reached no effect with everything allowed: the table does not test it", way)
		}
	}
}
