package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/safety/touchtest"
	"phonepilot/scene"
	"phonepilot/tools"
)

// A small clickable that came up on top of a row, right under the point
// a tap planned on the row would touch (a Delete icon in the row's
// middle), takes the touch on a phone: the re-check before acting finds
// that the tap would land on it and does not run the tap, though the row
// itself is unchanged and nothing covers it whole.
func TestRecheckSeesWhatCameUpUnderTheFinger(t *testing.T) {
	root := scene.Element{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	row := scene.Element{Index: 1, Parent: 0, Depth: 1, Class: "android.widget.LinearLayout", Text: "Ana", Clickable: true,
		Bounds: scene.Bounds{Top: 900, Right: 1080, Bottom: 1100}}
	del := scene.Element{Index: 2, Parent: 1, Depth: 2, Class: "android.widget.ImageView", Desc: "Delete", Clickable: true,
		Bounds: scene.Bounds{Left: 440, Top: 900, Right: 640, Bottom: 1100}}
	was := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.chat", Elements: []scene.Element{root, row}}
	now := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.chat", Elements: []scene.Element{root, row, del}}
	tap := tools.NewCall(tools.Tap, tools.TapArgs{Element: tools.Index(1)})
	if why := sameTarget(&row, was, now); why != "" {
		t.Fatalf("the fixture: the row itself counts as changed (%s); the test needs it unchanged", why)
	}
	if why := moved(tap, was, now); !strings.Contains(why, "Delete") {
		t.Errorf("a Delete icon came up under the tap's point: moved = %q, want the tap not run, naming what it would land on", why)
	}
	if why := moved(tap, was, was); why != "" {
		t.Errorf("the same screen: moved = %q", why)
	}
}

// type_text on a button would press it with its focusing tap: the call is
// refused as one tools.Run would refuse before the gate or a person is
// asked, so nobody is asked to approve a call that could not run.
func TestTypeTextOnAButtonIsRefusedBeforeAnyoneIsAsked(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Device()
	ctx := context.Background()
	send := touchtest.Targets[0] // Send SMS
	if err := send.Reach(ctx, p, d); err != nil {
		t.Fatal(err)
	}
	person := &askingPerson{}
	st, err := NewStepper(Defaults(), d, Options{Clock: clk, Logger: testlog.New(t), Person: person})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := st.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	el, err := send.Index(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Do(ctx, tools.NewCall(tools.TypeText, map[string]any{"element": el, "text": "ok"}), sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(person.asked) != 0 {
		t.Errorf("a person was asked %v about type_text on a button", person.asked)
	}
	if !strings.Contains(out.Record.Reason, "is a button; tap it or pick the text field") {
		t.Errorf("the step: %s %q; want it refused as type_text on a button", out.Record.Status, out.Record.Reason)
	}
	if e, err := touchtest.EffectsOf(p); err != nil || e.Sent != 0 {
		t.Errorf("sent %d (%v)", e.Sent, err)
	}
}
