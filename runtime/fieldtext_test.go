package runtime

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// A type_text step is met by the field it typed into, not by any field: a
// lost focus tap sends the text to the field focused before (the Hour
// field got the minutes), and that must neither pass nor stop a retry.
func TestFieldTextIsJudgedOnTheFieldTypedInto(t *testing.T) {
	fields := func(hour, minute string) *scene.Scene {
		return &scene.Scene{Width: 1080, Height: 2400, Package: "com.google.android.deskclock", Elements: []scene.Element{
			{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}},
			{Index: 1, Parent: 0, Class: "android.widget.EditText", ResourceID: "com.google.android.deskclock:id/hour", Text: hour, Editable: true, Bounds: scene.Bounds{Left: 100, Top: 800, Right: 500, Bottom: 950}},
			{Index: 2, Parent: 0, Class: "android.widget.EditText", ResourceID: "com.google.android.deskclock:id/minute", Text: minute, Editable: true, Bounds: scene.Bounds{Left: 580, Top: 800, Right: 980, Bottom: 950}},
		}}
	}
	e := newExecutor(Defaults(), nil, clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)), slog.New(slog.DiscardHandler), nil)
	call := tools.WithElement(tools.NewCall(tools.TypeText, map[string]any{"text": "50"}), 2)
	ps := plan.PlannedStep{Intent: `type "50"`, Call: call, Expect: plan.Expectation{Kind: plan.ExpectFieldText, Text: "50"}}
	tool, _ := tools.Lookup(tools.TypeText)
	base := fields("22", "Minute")
	wrong := fields("50", "Minute")
	if met, _ := e.check(ps, call, base, wrong); met {
		t.Error("the minutes typed into the Hour field passed as typed into Minute")
	}
	if e.tookEffect(context.Background(), ps, tool, call, base, wrong, nil) {
		t.Error("the text in another field counted as already typed: the retry would not type it into Minute")
	}
	if met, why := e.check(ps, call, base, fields("22", "50")); !met {
		t.Errorf("Minute holds 50 but: %s", why)
	}
}
