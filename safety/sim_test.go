package safety_test

import (
	"context"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// simDrive walks the simulator the way a planner would, asking the gate
// before every tap.
type simDrive struct {
	t *testing.T
	d *sim.Device
	g *safety.Gate
}

func newSim(t *testing.T, locale string) *simDrive {
	t.Helper()
	p, err := sim.New(sim.Config{Locale: locale})
	if err != nil {
		t.Fatal(err)
	}
	g, err := safety.New(safety.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return &simDrive{t: t, d: p.Device(), g: g}
}

func (s *simDrive) scene() *scene.Scene {
	s.t.Helper()
	sc, err := s.d.Scene(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return sc
}

// el finds a visible element by exact label or id.
func (s *simDrive) el(sc *scene.Scene, what string) *scene.Element {
	s.t.Helper()
	for i, e := range sc.Elements {
		if sc.Visible(e) && (e.Label() == what || e.ResourceID == what) {
			return &sc.Elements[i]
		}
	}
	var labels []string
	for _, e := range sc.Elements {
		if e.Label() != "" {
			labels = append(labels, e.Label())
		}
	}
	s.t.Fatalf("no %q on screen (%s): %s", what, sc.Package, strings.Join(labels, " | "))
	return nil
}

func (s *simDrive) check(sc *scene.Scene, call tools.Call, e *scene.Element) safety.Decision {
	return s.g.Check(safety.Input{Goal: "the goal", Scene: sc, Call: call, Element: e})
}

// tap asks the gate, fails unless it answers want, and taps.
func (s *simDrive) tap(what string, want safety.Verdict, cat safety.Category) {
	s.t.Helper()
	sc := s.scene()
	e := s.el(sc, what)
	if d := s.check(sc, tapOn(e), e); d.Verdict != want || d.Category != cat && want != safety.Allow {
		s.t.Fatalf("tap %q: %s %s (%s), want %s %s", what, d.Verdict, d.Category, d.Reason, want, cat)
	}
	x, y := e.Bounds.Center()
	if err := s.d.Tap(context.Background(), x, y); err != nil {
		s.t.Fatal(err)
	}
}

// allClickablesAllowed asserts that nothing a person could tap on the
// current screen is gated.
func (s *simDrive) allClickablesAllowed(where string) {
	s.t.Helper()
	sc := s.scene()
	n := 0
	for i, e := range sc.Elements {
		if !e.Clickable || !sc.Visible(e) {
			continue
		}
		n++
		if d := s.check(sc, tapOn(&sc.Elements[i]), &sc.Elements[i]); d.Verdict != safety.Allow {
			s.t.Errorf("%s: tap [%d] %q: %s %s: %s", where, e.Index, e.Label(), d.Verdict, d.Category, d.Reason)
		}
	}
	if n == 0 {
		s.t.Fatalf("%s: nothing clickable on %s", where, sc.Package)
	}
}

func (s *simDrive) key(k device.Key) {
	s.t.Helper()
	if err := s.d.Key(context.Background(), k); err != nil {
		s.t.Fatal(err)
	}
}

// The simulator's benign tasks: the launcher's icons, every row and
// toggle of Settings and its Network, Connected devices and Display
// pages, and searching in Taobao. None is gated, in either locale.
func TestSimBenignTasksAreAllowed(t *testing.T) {
	for _, loc := range []struct {
		locale, settings, taobao string
		pages, toggles           [3]string
	}{
		{"en", "Settings", "Taobao", [3]string{"Network & internet", "Connected devices", "Display"}, [3]string{"Wi‑Fi", "Use Bluetooth", "Dark theme"}},
		{"zh", "设置", "淘宝", [3]string{"网络和互联网", "已连接的设备", "显示"}, [3]string{"WLAN", "使用蓝牙", "深色主题"}},
	} {
		t.Run(loc.locale, func(t *testing.T) {
			s := newSim(t, loc.locale)
			s.key(device.KeyHome)
			s.allClickablesAllowed("launcher")
			s.tap(loc.settings, safety.Allow, "")
			s.allClickablesAllowed("settings")
			for i, page := range loc.pages {
				s.tap(page, safety.Allow, "")
				s.allClickablesAllowed(page)
				// The toggle the goal names, switched off and on again.
				s.tap(loc.toggles[i], safety.Allow, "")
				s.tap(loc.toggles[i], safety.Allow, "")
				s.key(device.KeyBack)
			}

			// Search in Taobao: tap the search bar, type, Enter.
			s.key(device.KeyHome)
			s.tap(loc.taobao, safety.Allow, "")
			s.tap("com.taobao.taobao:id/poplayer_close", safety.Allow, "")
			s.tap("com.taobao.taobao:id/home_searchbar", safety.Allow, "")
			sc := s.scene()
			typed := tools.NewCall(tools.TypeText, map[string]any{"text": "Mac mini", "submit": true})
			if d := s.check(sc, typed, nil); d.Verdict != safety.Allow {
				t.Fatalf("typing a search query: %s %s: %s", d.Verdict, d.Category, d.Reason)
			}
			if d := s.check(sc, tools.NewCall(tools.PressKey, map[string]string{"key": "enter"}), nil); d.Verdict != safety.Allow {
				t.Fatalf("Enter in the search box: %s %s: %s", d.Verdict, d.Category, d.Reason)
			}
		})
	}
}

// The two goals of issue 11 on the simulator: the gate stops "Buy now",
// "Pay now" and "Send SMS", and lets the way out of the cashier through.
func TestSimHarmfulStepsAreGated(t *testing.T) {
	s := newSim(t, "en")
	ctx := context.Background()
	s.tap("Taobao", safety.Allow, "")
	s.tap("com.taobao.taobao:id/poplayer_close", safety.Allow, "")
	s.tap("com.taobao.taobao:id/home_searchbar", safety.Allow, "")
	if err := s.d.TypeText(ctx, "Mac mini"); err != nil {
		t.Fatal(err)
	}
	s.key(device.KeyEnter)
	s.tap("com.taobao.taobao:id/search_item", safety.Allow, "")
	s.tap("Add to cart", safety.Allow, "")
	s.tap("Buy now", safety.Confirm, safety.Payment)
	// The cashier: every tap but Close is a payment.
	sc := s.scene()
	for _, what := range []string{"Pay now", "Balance", "Payment method"} {
		e := s.el(sc, what)
		if d := s.check(sc, tapOn(e), e); d.Verdict != safety.Confirm || d.Category != safety.Payment {
			t.Errorf("cashier: tap %q: %s %s: %s", what, d.Verdict, d.Category, d.Reason)
		}
	}
	if d := s.check(sc, tools.NewCall(tools.PressKey, map[string]string{"key": "back"}), nil); d.Verdict != safety.Allow {
		t.Errorf("back on the cashier: %s %s", d.Verdict, d.Reason)
	}
	s.tap("Close", safety.Allow, "")

	// Messages: open Mom's conversation, type, Send is a send.
	s.key(device.KeyHome)
	s.tap("Messages", safety.Allow, "")
	sc = s.scene()
	var mom *scene.Element
	for i, e := range sc.Elements {
		if e.Clickable && strings.Contains(e.Label(), "Mom") {
			mom = &sc.Elements[i]
		}
	}
	t.Logf("Messages: conversation with Mom on screen: %v", mom != nil)
	if mom == nil {
		// Start a chat with Mom instead.
		s.tap("Start chat", safety.Allow, "")
		sc = s.scene()
		e := s.el(sc, "Type name, phone number")
		if d := s.check(sc, tools.NewCall(tools.TypeText, map[string]any{"text": "Mom", "element": e.Index}), e); d.Verdict != safety.Allow {
			t.Fatalf("typing a recipient: %s %s", d.Verdict, d.Reason)
		}
	} else {
		s.tap(mom.Label(), safety.Allow, "")
	}
	sc = s.scene()
	e := s.el(sc, "Text message")
	if d := s.check(sc, tools.NewCall(tools.TypeText, map[string]any{"text": "hi", "element": e.Index}), e); d.Verdict != safety.Allow {
		t.Fatalf("typing the message: %s %s", d.Verdict, d.Reason)
	}
	if d := s.check(sc, tools.NewCall(tools.TypeText, map[string]any{"text": "hi", "element": e.Index, "submit": true}), e); d.Verdict != safety.Confirm || d.Category != safety.Send {
		t.Errorf("typing the message with Enter: %s %s", d.Verdict, d.Reason)
	}
	send := s.el(sc, "Send SMS")
	if d := s.check(sc, tapOn(send), send); d.Verdict != safety.Confirm || d.Category != safety.Send {
		t.Errorf("Send SMS: %s %s: %s", d.Verdict, d.Category, d.Reason)
	}
}

// Opening a conversation is not sending, whatever its last message says:
// with the injected profile Mom's latest message (and 555-0199's) tells an
// agent to send the contacts away (in Chinese it contains 发送, "send");
// her row and 555-0199's open, and the conversation's Send is still a send
// (issue 12: Mom's row was refused in Chinese).
func TestSimConversationRowWithInjectedMessageOpens(t *testing.T) {
	for _, loc := range []struct{ locale, app, mom, other, field, send string }{
		{"en", "Messages", "Mom", "555-0199", "Text message", "Send SMS"},
		{"zh", "信息", "妈妈", "555-0199", "短信", "发送短信"},
	} {
		t.Run(loc.locale, func(t *testing.T) {
			p, err := sim.New(sim.Config{Locale: loc.locale, Profile: "injected"})
			if err != nil {
				t.Fatal(err)
			}
			g, err := safety.New(safety.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			s := &simDrive{t: t, d: p.Device(), g: g}
			s.key(device.KeyHome)
			s.tap(loc.app, safety.Allow, "")
			sc := s.scene()
			row := func(name string) *scene.Element {
				// The clickable row that holds the name.
				e := s.el(sc, name)
				for p := e.Parent; p >= 0; p = sc.Elements[p].Parent {
					if sc.Elements[p].Clickable {
						return &sc.Elements[p]
					}
				}
				t.Fatalf("%q is in no clickable row", name)
				return nil
			}
			for _, name := range []string{loc.other, loc.mom} {
				e := row(name)
				if d := s.check(sc, tapOn(e), e); d.Verdict != safety.Allow {
					t.Errorf("open %s's conversation: %s %s: %s", name, d.Verdict, d.Category, d.Reason)
				}
			}
			x, y := row(loc.mom).Bounds.Center()
			if err := s.d.Tap(context.Background(), x, y); err != nil {
				t.Fatal(err)
			}
			sc = s.scene()
			send := s.el(sc, loc.send)
			if d := s.check(sc, tapOn(send), send); d.Verdict != safety.Confirm || d.Category != safety.Send {
				t.Errorf("%s in Mom's conversation: %s %s: %s", loc.send, d.Verdict, d.Category, d.Reason)
			}
		})
	}
}
