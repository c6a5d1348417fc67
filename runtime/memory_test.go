package runtime

import (
	"strings"
	"testing"

	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

func screen(label string) *scene.Scene {
	return &scene.Scene{Width: 1080, Height: 2400, Package: "com.example", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}},
		{Index: 1, Parent: 0, Class: "android.widget.TextView", Text: label, Clickable: true, Bounds: scene.Bounds{Left: 10, Top: 10, Right: 500, Bottom: 100}},
	}}
}

func TestMemoryNoNewScreenIsStuck(t *testing.T) {
	m := NewMemory(3, 100, 4)
	a, b := screen("A"), screen("B")
	m.AddScene(a)
	m.AddScene(b)
	// Alternating between two known screens: nothing new for 4 steps.
	for i, sc := range []*scene.Scene{a, b, a, b} {
		if s := m.Stuck(); s != "" {
			t.Fatalf("stuck after %d steps: %s", i, s)
		}
		m.AddStep(plan.StepRecord{Number: i + 1, Call: tools.NewCall(tools.Tap, map[string]int{"element": i}), Before: "x", After: sc.Fingerprint()})
		m.AddScene(sc)
	}
	if s := m.Stuck(); !strings.Contains(s, "no new screen in the last 4 steps") {
		t.Errorf("Stuck() = %q", s)
	}
	// After the report, only later steps count.
	m.MarkStuckReported()
	if s := m.Stuck(); s != "" {
		t.Errorf("still stuck right after the report: %q", s)
	}
}

func TestMemoryKeepsRecentScenesBounded(t *testing.T) {
	m := NewMemory(3, 3, 8)
	for _, l := range []string{"A", "B", "B", "C", "D", "E"} {
		m.AddScene(screen(l))
	}
	sc := m.Scenes()
	if len(sc) != 3 || !strings.Contains(sc[2].Listing, `"E"`) || !strings.Contains(sc[0].Listing, `"C"`) {
		t.Errorf("scenes %+v, want the last three distinct: C, D, E", sc)
	}
}

// An action interrupted by a popup, cleared and tried again on the same
// screen, is not a loop; the same action failing on its own is.
func TestMemoryInterruptedStepsAreNotRepeats(t *testing.T) {
	tap := tools.NewCall(tools.Tap, map[string]int{"element": 1})
	for _, tc := range []struct {
		effect plan.Effect
		stuck  bool
	}{{plan.EffectInterrupted, false}, {plan.EffectSeen, true}} {
		m := NewMemory(3, 3, 100)
		for i := range 3 {
			// Before each try a new screen (the popup) came and went.
			m.AddStep(plan.StepRecord{Number: i + 1, Call: tap, Before: "list", After: "popup", Effect: tc.effect})
		}
		if got := m.Stuck() != ""; got != tc.stuck {
			t.Errorf("effect %q: Stuck() = %q, want stuck %v", tc.effect, m.Stuck(), tc.stuck)
		}
	}
}
