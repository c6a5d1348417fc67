package runtime

import (
	"fmt"

	"phonepilot/plan"
	"phonepilot/scene"
)

// Memory is what one task has seen and tried: recent Scenes (fingerprint and
// compact listing, bounded), every step with its calls, attempts, outcome and
// timing, and a loop detector over them. The Planner reads it when it plans.
type Memory struct {
	maxScenes   int
	repeatLimit int
	stuckSteps  int

	scenes []plan.SceneRecord
	steps  []plan.StepRecord
	// firstSeen maps a screen fingerprint to the number of steps executed
	// when it was first observed.
	firstSeen map[string]int
	// from is the first step the loop detector looks at; it moves past the
	// steps of a loop once that loop has been reported.
	from int
}

// NewMemory makes an empty Memory keeping at most maxScenes Scenes, and
// reporting a loop after the same action on the same screen repeatLimit
// times or no new screen for stuckSteps steps.
func NewMemory(maxScenes, repeatLimit, stuckSteps int) *Memory {
	return &Memory{maxScenes: maxScenes, repeatLimit: repeatLimit, stuckSteps: stuckSteps, firstSeen: map[string]int{}}
}

// AddScene records an observed Scene. A Scene equal to the last one kept is
// not kept twice.
func (m *Memory) AddScene(sc *scene.Scene) {
	fp := sc.Fingerprint()
	if _, ok := m.firstSeen[fp]; !ok {
		m.firstSeen[fp] = len(m.steps)
	}
	if n := len(m.scenes); n > 0 && m.scenes[n-1].Fingerprint == fp {
		return
	}
	m.scenes = append(m.scenes, plan.SceneRecord{Fingerprint: fp, Package: sc.Package, Listing: sc.Listing()})
	if len(m.scenes) > m.maxScenes {
		m.scenes = append(m.scenes[:0:0], m.scenes[len(m.scenes)-m.maxScenes:]...)
	}
}

// AddStep records an executed step.
func (m *Memory) AddStep(rec plan.StepRecord) {
	m.steps = append(m.steps, rec)
	if rec.After != "" {
		if _, ok := m.firstSeen[rec.After]; !ok {
			m.firstSeen[rec.After] = len(m.steps)
		}
	}
}

// Steps returns the steps so far, oldest first (a copy).
func (m *Memory) Steps() []plan.StepRecord { return append([]plan.StepRecord(nil), m.steps...) }

// Scenes returns the recent Scenes, oldest first (a copy).
func (m *Memory) Scenes() []plan.SceneRecord { return append([]plan.SceneRecord(nil), m.scenes...) }

// MarkStuckReported tells the detector the current loop has been reported,
// so it looks only at steps after this one from now on.
func (m *Memory) MarkStuckReported() { m.from = len(m.steps) }

// Stuck describes the loop the task is in, or returns "" when there is none:
// the same action on the same screen RepeatLimit times, or no new screen for
// StuckSteps steps. A step interrupted by something that came up over the
// screen is not a repeat: the action did not meet the screen it was planned
// on, and doing it again once that is cleared is the way on (a loop of
// interruptions still shows as no new screen).
func (m *Memory) Stuck() string {
	steps := m.steps[m.from:]
	counts := map[string]int{}
	for _, s := range steps {
		if s.Effect == plan.EffectInterrupted {
			continue
		}
		key := s.Before + "\x00" + s.Call.String()
		counts[key]++
		if counts[key] >= m.repeatLimit {
			return fmt.Sprintf("the same action (%s) on the same screen %d times", s.Call.String(), counts[key])
		}
	}
	if len(steps) >= m.stuckSteps {
		start := len(m.steps) - m.stuckSteps
		for _, fpStep := range m.firstSeen {
			if fpStep > start {
				return ""
			}
		}
		return fmt.Sprintf("no new screen in the last %d steps", m.stuckSteps)
	}
	return ""
}
