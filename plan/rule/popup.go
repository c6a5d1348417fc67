package rule

import (
	"phonepilot/plan"
	"phonepilot/scene"
)

// DismissPopup is the rule planner's popup check on its own, for other
// planners that replay steps (flows): the step that closes a popup on sc
// (a promotion, an ad layer, a "not now" dialog; never "allow", "pay" or
// "delete"), if there is one. history is the task's steps so far: a popup
// whose closing failed twice on this very screen is left alone.
func DismissPopup(sc *scene.Scene, history []plan.StepRecord) (plan.PlannedStep, bool) {
	if sc == nil {
		return plan.PlannedStep{}, false
	}
	w := &work{sc: sc, fp: sc.Fingerprint(), hist: history, all: history}
	return w.dismissPopup()
}
