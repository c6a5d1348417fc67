// Package rule is the default Planner: it reads goals written as simple
// instructions in English or Chinese ("open Taobao and search Mac mini",
// "打开淘宝搜索Mac mini"), and plans steps from the Scene of the moment and
// the task's history. It needs no model and no network.
//
// It is stateless: progress is read from the steps already executed (each
// action has a closing step intent), so the same Planner serves any number
// of tasks. From the current Scene it dismisses popups, scrolls a bounded
// number of times for a target that is off screen, goes back from a wrong
// screen, and never repeats a step that already failed on the same screen.
package rule

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/task/lifecycle"
	"phonepilot/tools"
)

// Limits on the recovery moves of one action.
const (
	maxScrolls = 3 // scrolls looking for an off-screen target
	maxBacks   = 2 // backs from a wrong screen
)

// Planner is the rule Planner. Its only state is the last goal it read,
// kept so that a task's goal is parsed once, not on every step.
type Planner struct {
	mu   sync.Mutex
	goal string
	last *parsed
}

type parsed struct {
	acts []action
	err  error
}

var _ plan.Planner = (*Planner)(nil)

// New returns a rule Planner.
func New() *Planner { return &Planner{} }

// Plan decides the next steps for in.Goal from in.Scene and in.History.
func (p *Planner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if err := ctx.Err(); err != nil {
		return plan.Decision{}, err
	}
	acts, err := p.parse(in.Goal)
	if err != nil {
		return plan.Decision{Finish: &plan.Finish{Reason: err.Error(), Cause: lifecycle.CauseGoalNotUnderstood}}, nil
	}
	if in.Scene == nil {
		return plan.Decision{}, errors.New("rule planner: no scene")
	}
	if in.Stuck != "" {
		reason := "stuck: " + in.Stuck
		if f := lastFailure(in.History); f != "" {
			reason += "; " + f
		}
		return finish(false, reason), nil
	}
	st := progress(acts, in.Scene, in.History)
	// A page that failed to load is not the goal reached, whatever the
	// steps so far say: close what covers it, then Retry.
	w0 := &work{goal: in.Goal, sc: in.Scene, fp: in.Scene.Fingerprint(), all: in.History, acts: acts}
	if step, fin, ok := w0.retryPage(); ok {
		if fin != nil {
			return plan.Decision{Finish: fin}, nil
		}
		if popup, ok := w0.dismissPopup(); ok {
			step = popup
		}
		return plan.Decision{Steps: append([]plan.PlannedStep{step}, w0.sketchFrom(min(st.current, len(acts)))...)}, nil
	}
	w := &work{goal: in.Goal, sc: in.Scene, fp: in.Scene.Fingerprint(), hist: in.History[st.from:], all: in.History, scenes: in.Scenes, acts: acts, cur: st.current}
	if step, ok := w.dismissPopup(); ok {
		// Also when every action looks done: the popup may be all the
		// last one did (onlyAPopup), which shows once it is closed.
		return plan.Decision{Steps: append([]plan.PlannedStep{step}, w.sketchFrom(st.current)...)}, nil
	}
	if st.current == len(acts) {
		return finish(true, summary(acts)), nil
	}
	if steps, fin, ok := w.askPerson(in); ok {
		if fin != nil {
			return plan.Decision{Finish: fin}, nil
		}
		return plan.Decision{Steps: append(steps, w.sketchFrom(st.current)...)}, nil
	}
	a := acts[st.current]
	var steps []plan.PlannedStep
	var fin *plan.Finish
	switch a.kind {
	case actLaunch:
		steps, fin = w.launch(a)
	case actSearch:
		steps, fin = w.search(a, st.submitted)
	case actTap:
		steps, fin = w.tap(a)
	case actType:
		steps, fin = w.typeText(a)
	case actScroll:
		steps = []plan.PlannedStep{scrollStep(a.dir, "scroll "+a.dir, plan.ExpectNothing)}
	case actBack:
		steps = []plan.PlannedStep{backStep(w.sc, "go back")}
	case actHome:
		steps = []plan.PlannedStep{keyStep("home", "go home")}
	}
	if fin != nil {
		return plan.Decision{Finish: fin}, nil
	}
	return plan.Decision{Steps: append(steps, w.sketchFrom(st.current+1)...)}, nil
}

func (p *Planner) parse(goal string) ([]action, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil || p.goal != goal {
		acts, err := parseGoal(goal)
		p.goal, p.last = goal, &parsed{acts, err}
	}
	return p.last.acts, p.last.err
}

func finish(ok bool, reason string) plan.Decision {
	return plan.Decision{Finish: &plan.Finish{Success: ok, Reason: reason}}
}

// state is how far a task has come.
type state struct {
	current   int  // index of the first action not done (len(acts) when all are)
	from      int  // first History entry belonging to the current action
	submitted bool // the current (search) action's query was submitted
}

// progress walks the history: an action is done when its closing step
// succeeded after the previous action was done. A search that ends the goal
// is done only when its results are showing (no spinner).
func progress(acts []action, sc *scene.Scene, hist []plan.StepRecord) state {
	from := 0
	for i, a := range acts {
		idx := -1
		for j := from; j < len(hist); j++ {
			if hist[j].Status == lifecycle.StepSucceeded && closes(a, hist[j].Intent) && !onlyAPopup(hist, j) {
				idx = j
				break
			}
		}
		if idx < 0 {
			return state{current: i, from: from}
		}
		if a.kind == actSearch && i == len(acts)-1 && spinner(sc) {
			return state{current: i, from: from, submitted: true}
		}
		from = idx + 1
	}
	return state{current: len(acts), from: from}
}

// onlyAPopup reports a step whose one effect was a popup: the popup came
// as its tap was lost, and once closed the screen is the one the step
// started from (issue 12: "tap Cart" on flaky, an ad over Taobao's home
// taken for the cart, and the task completed on the home page). Such a
// step is not done.
func onlyAPopup(hist []plan.StepRecord, j int) bool {
	s := hist[j]
	if s.Before == "" || s.After == s.Before {
		return false
	}
	for k := j + 1; k < len(hist) && strings.HasPrefix(hist[k].Intent, dismissIntent); k++ {
		if hist[k].Status == lifecycle.StepSucceeded && hist[k].After == s.Before {
			return true
		}
	}
	return false
}

// Intents of the steps that close each action. Progress is read back from
// them, so they are built by these functions only.
func launchIntent(app string) string   { return "launch " + app }
func typeSubmitIntent(q string) string { return fmt.Sprintf("type %q and submit", q) }
func enterIntent(q string) string      { return fmt.Sprintf("submit the search for %q", q) }
func tapIntent(label string) string    { return fmt.Sprintf("tap %q", label) }
func typeIntent(t string) string       { return fmt.Sprintf("type %q", t) }

const (
	dismissIntent      = "dismiss the popup"
	intentTapSearchBox = "tap the search box"
	intentWaitResults  = "wait for the results"
)

func closes(a action, intent string) bool {
	switch a.kind {
	case actLaunch:
		return intent == launchIntent(a.app)
	case actSearch:
		return intent == typeSubmitIntent(a.query) || intent == enterIntent(a.query)
	case actTap:
		return intent == tapIntent(a.label)
	case actType:
		return intent == typeIntent(a.text)
	case actScroll:
		return intent == "scroll "+a.dir
	case actBack:
		return intent == "go back"
	case actHome:
		return intent == "go home"
	}
	return false
}

func summary(acts []action) string {
	var parts []string
	for _, a := range acts {
		switch a.kind {
		case actLaunch:
			parts = append(parts, "opened "+a.app)
		case actSearch:
			parts = append(parts, fmt.Sprintf("searched for %q; the results are showing", a.query))
		case actTap:
			parts = append(parts, fmt.Sprintf("tapped %q", a.label))
		case actType:
			parts = append(parts, fmt.Sprintf("typed %q", a.text))
		case actScroll:
			parts = append(parts, "scrolled "+a.dir)
		case actBack:
			parts = append(parts, "went back")
		case actHome:
			parts = append(parts, "went home")
		}
	}
	return "done: " + strings.Join(parts, ", ")
}

// lastFailure describes the most recent failed step, for reasons.
func lastFailure(hist []plan.StepRecord) string {
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Status == lifecycle.StepFailed {
			return failedStep(hist[i])
		}
	}
	return ""
}

// mainFailure describes the first failed step that was not a helper move
// (a scroll or back looking for something), else the last failure.
func mainFailure(hist []plan.StepRecord) string {
	for _, r := range hist {
		if r.Status == lifecycle.StepFailed && !strings.Contains(r.Intent, " to look for ") {
			return failedStep(r)
		}
	}
	return lastFailure(hist)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func failedStep(r plan.StepRecord) string {
	return fmt.Sprintf("step %d (%s) failed: %s", r.Number, r.Intent, r.Reason)
}

// work is one planning decision's view.
type work struct {
	goal string
	sc   *scene.Scene
	fp   string
	hist []plan.StepRecord // steps of the current action
	all  []plan.StepRecord
	// scenes are the recent screens (fingerprint → package).
	scenes []plan.SceneRecord
	acts   []action
	cur    int
}

// failedHere returns the step with this intent that already failed on this
// very screen: doing it again would fail again. A step a system dialog
// interrupted (it ended with the dialog in front) does not count: once the
// dialog is dismissed the same step can work.
func (w *work) failedHere(intent string) (plan.StepRecord, bool) {
	for i := len(w.all) - 1; i >= 0; i-- {
		r := w.all[i]
		if r.Status == lifecycle.StepFailed && r.Intent == intent && r.Before == w.fp && !w.interrupted(r) {
			return r, true
		}
	}
	return plan.StepRecord{}, false
}

// failedHereTimes counts the steps with this intent that failed on this
// very screen.
func (w *work) failedHereTimes(intent string) int {
	n := 0
	for _, r := range w.all {
		if r.Status == lifecycle.StepFailed && r.Intent == intent && r.Before == w.fp && !w.interrupted(r) {
			n++
		}
	}
	return n
}

// interrupted reports a step that ended with a system dialog in front (a
// permission prompt, App isn't responding, a system update) that it did
// not start on.
func (w *work) interrupted(r plan.StepRecord) bool {
	pkg := func(fp string) string {
		for _, sc := range w.scenes {
			if sc.Fingerprint == fp {
				return sc.Package
			}
		}
		return ""
	}
	return r.After != r.Before && systemDialogPackage(pkg(r.After)) && !systemDialogPackage(pkg(r.Before))
}

// count is how many steps of the current action had this intent.
func (w *work) count(intent string) int {
	n := 0
	for _, r := range w.hist {
		if r.Intent == intent {
			n++
		}
	}
	return n
}

// appContext is the app the current action works in: the one it names, or
// the one the goal launched last before it.
func (w *work) appContext() string {
	if a := w.acts[w.cur]; a.app != "" && a.kind != actLaunch {
		return a.app
	}
	for i := w.cur - 1; i >= 0; i-- {
		if w.acts[i].kind == actLaunch {
			return w.acts[i].app
		}
		if w.acts[i].kind == actHome {
			return ""
		}
	}
	return ""
}

// wrongApp plans the way back into the action's app when another app is in
// front: back (bounded), then launching it again once.
func (w *work) wrongApp() ([]plan.PlannedStep, *plan.Finish, bool) {
	app := w.appContext()
	if app == "" {
		return nil, nil, false
	}
	pkg := w.packageOf(app)
	if pkg == "" || inApp(w.sc.Package, pkg) {
		// Not known which package the app is (a name the package does not
		// spell, like 通讯录): no basis to call this screen wrong.
		return nil, nil, false
	}
	back := "go back to " + app
	onLauncher := strings.Contains(w.sc.Package, "launcher")
	if w.count(back) < maxBacks && !onLauncher {
		if _, failed := w.failedHere(back); !failed {
			return []plan.PlannedStep{backStep(w.sc, back)}, nil, true
		}
	}
	again := "open " + app + " again"
	if w.count(again) < 1 {
		return []plan.PlannedStep{launchStep(app, again)}, nil, true
	}
	return nil, &plan.Finish{Reason: fmt.Sprintf("%s is not in front (%s is) and going back did not return to it", app, w.sc.Package)}, true
}

// packageOf is the package of the app a goal named: from the table, else
// the foreground package seen right after it was launched in this task.
func (w *work) packageOf(app string) string {
	if p := appPackage(app); p != "" {
		return p
	}
	for i := len(w.all) - 1; i >= 0; i-- {
		r := w.all[i]
		if r.Status != lifecycle.StepSucceeded || (r.Intent != launchIntent(app) && r.Intent != "open "+app+" again") {
			continue
		}
		for _, sc := range w.scenes {
			if sc.Fingerprint == r.After && sc.Package != "" {
				return sc.Package
			}
		}
	}
	if inApp(w.sc.Package, app) {
		return w.sc.Package
	}
	return ""
}

func (w *work) launch(a action) ([]plan.PlannedStep, *plan.Finish) {
	intent := launchIntent(a.app)
	for _, r := range w.hist {
		if r.Intent == intent && r.Status == lifecycle.StepFailed {
			// Launching failed (not installed, or it never came to the
			// front after the retries): launching again will not help.
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
	}
	return []plan.PlannedStep{launchStep(a.app, intent)}, nil
}

func (w *work) search(a action, submitted bool) ([]plan.PlannedStep, *plan.Finish) {
	q := a.query
	if submitted {
		// The query went in; the results are still loading.
		if r, failed := w.failedHere(intentWaitResults); failed {
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		return []plan.PlannedStep{waitStep(intentWaitResults, spinnerSelector(w.sc))}, nil
	}
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	if step, ok := w.waitForApp(); ok {
		return []plan.PlannedStep{step}, nil
	}
	if field, ok := w.searchField(); ok {
		intent := typeSubmitIntent(q)
		if r, failed := w.failedHere(intent); failed {
			if fieldHas(field, q) {
				if _, enterFailed := w.failedHere(enterIntent(q)); !enterFailed {
					return []plan.PlannedStep{{
						Intent: enterIntent(q),
						Call:   tools.NewCall(tools.PressKey, map[string]string{"key": "enter"}),
						Expect: plan.Expectation{Kind: plan.ExpectChanged},
					}}, nil
				}
			}
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		return []plan.PlannedStep{typeSubmitStep(q, selectorFor(w.sc, field, false))}, nil
	}
	if entry, ok := w.searchEntry(); ok {
		return []plan.PlannedStep{
			{
				Intent: intentTapSearchBox,
				Call:   tools.NewCall(tools.Tap, map[string]any{}),
				Target: ptr(selectorFor(w.sc, entry, true)),
				Expect: plan.Expectation{Kind: plan.ExpectChanged},
			},
			typeSubmitStep(q, editableSelector()),
		}, nil
	}
	return w.lookFor("the search box", "up")
}

// waitForApp plans waiting while the app shows nothing to interact with
// (a splash screen, a blank page while loading), a bounded number of times.
func (w *work) waitForApp() (plan.PlannedStep, bool) {
	if interactive(w.sc) {
		return plan.PlannedStep{}, false
	}
	intent := "wait for the app to load"
	if w.count(intent) >= 2 {
		return plan.PlannedStep{}, false
	}
	if _, failed := w.failedHere(intent); failed {
		return plan.PlannedStep{}, false
	}
	return plan.PlannedStep{
		Intent: intent,
		Call:   tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.1}),
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}, true
}

// lookFor scrolls (bounded) toward a target that is not on the screen, then
// goes back from what may be a wrong screen, then gives up.
func (w *work) lookFor(what, dir string) ([]plan.PlannedStep, *plan.Finish) {
	scroll := fmt.Sprintf("scroll %s to look for %s", dir, what)
	if w.count(scroll) < maxScrolls {
		if _, failed := w.failedHere(scroll); !failed {
			return []plan.PlannedStep{scrollStep(dir, scroll, plan.ExpectChanged)}, nil
		}
	}
	back := "go back to look for " + what
	if w.count(back) < 1 && w.navigated() {
		if _, failed := w.failedHere(back); !failed {
			return []plan.PlannedStep{backStep(w.sc, back)}, nil
		}
	}
	n := w.count(scroll)
	reason := fmt.Sprintf("could not find %s on the screen (scrolled %s %d time%s)", what, dir, n, plural(n))
	if f := mainFailure(w.hist); f != "" {
		reason += "; " + f
	}
	reason += w.languageNote()
	return nil, &plan.Finish{Reason: reason}
}

// navigated reports whether a step of the current action changed screens
// (so going back may lead somewhere useful).
func (w *work) navigated() bool {
	for _, r := range w.hist {
		if r.Changed && !strings.HasPrefix(r.Intent, "scroll ") && !strings.HasPrefix(r.Intent, "dismiss ") {
			return true
		}
	}
	return false
}

func (w *work) tap(a action) ([]plan.PlannedStep, *plan.Finish) {
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	if step, ok := w.waitForApp(); ok {
		return []plan.PlannedStep{step}, nil
	}
	intent := tapIntent(a.label)
	if r, failed := w.failedHere(intent); failed {
		return nil, &plan.Finish{Reason: failedStep(r)}
	}
	// The label as written (exactly or contained) wins over a look-alike:
	// "Location" must not tap "Notifications", a fuzzy match, while the
	// Location row is one scroll away. A fuzzy match (a typo in the goal) is
	// taken only once scrolling found nothing better.
	sel, ok := w.labelled(a.label, scene.ModeContains)
	if !ok {
		steps, fin := w.lookFor(strconv.Quote(a.label), "down")
		if fin == nil {
			return steps, nil
		}
		if sel, ok = w.labelled(a.label, scene.ModeAny); !ok {
			return nil, fin
		}
	}
	return []plan.PlannedStep{{
		Intent: intent,
		Call:   tools.NewCall(tools.Tap, map[string]any{}),
		Target: &sel,
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}}, nil
}

// labelled is a selector for the element labelled label on the screen, by
// mode: a clickable one, else any.
func (w *work) labelled(label string, mode scene.Mode) (scene.Selector, bool) {
	sel := scene.Selector{Field: scene.FieldLabel, Value: label, Mode: mode, Clickable: true}
	if _, ok := w.sc.Resolve(sel); ok {
		return sel, true
	}
	sel.Clickable = false
	_, ok := w.sc.Resolve(sel)
	return sel, ok
}

func (w *work) typeText(a action) ([]plan.PlannedStep, *plan.Finish) {
	intent := typeIntent(a.text)
	if r, failed := w.failedHere(intent); failed {
		return nil, &plan.Finish{Reason: failedStep(r)}
	}
	var sel scene.Selector
	switch {
	case a.field != "":
		sel = scene.Selector{Field: scene.FieldLabel, Value: a.field, Editable: true}
		if _, ok := w.sc.Resolve(sel); !ok {
			if el, ok := w.fieldNamed(a.field); ok {
				sel = selectorFor(w.sc, el, false)
			} else {
				return w.lookFor(fmt.Sprintf("the field %q", a.field), "down")
			}
		}
	default:
		el, ok := w.sc.Focused()
		if !ok || !el.Editable {
			el, ok = w.firstEditable()
		}
		if !ok {
			return nil, &plan.Finish{Reason: fmt.Sprintf("no text field on the screen to type %q into", a.text)}
		}
		sel = selectorFor(w.sc, el, false)
	}
	return []plan.PlannedStep{{
		Intent: intent,
		Call:   tools.NewCall(tools.TypeText, map[string]any{"text": a.text}),
		Target: &sel,
		Expect: plan.Expectation{Kind: plan.ExpectFieldText, Text: a.text},
	}}, nil
}

// sketchFrom outlines the actions from index i on, as the plan of record:
// they are planned for real from the Scene of their moment.
func (w *work) sketchFrom(i int) []plan.PlannedStep {
	var out []plan.PlannedStep
	for ; i < len(w.acts); i++ {
		a := w.acts[i]
		switch a.kind {
		case actLaunch:
			out = append(out, launchStep(a.app, launchIntent(a.app)))
		case actSearch:
			out = append(out,
				plan.PlannedStep{
					Intent: intentTapSearchBox,
					Call:   tools.NewCall(tools.Tap, map[string]any{}),
					Target: &scene.Selector{Field: scene.FieldID, Value: "search", Mode: scene.ModeContains, Clickable: true},
					Expect: plan.Expectation{Kind: plan.ExpectChanged},
				},
				typeSubmitStep(a.query, editableSelector()))
		case actTap:
			out = append(out, plan.PlannedStep{
				Intent: tapIntent(a.label), Call: tools.NewCall(tools.Tap, map[string]any{}),
				Target: &scene.Selector{Value: a.label, Clickable: true},
				Expect: plan.Expectation{Kind: plan.ExpectChanged},
			})
		case actType:
			out = append(out, plan.PlannedStep{
				Intent: typeIntent(a.text), Call: tools.NewCall(tools.TypeText, map[string]any{"text": a.text}),
				Target: ptr(editableSelector()),
				Expect: plan.Expectation{Kind: plan.ExpectFieldText, Text: a.text},
			})
		case actScroll:
			out = append(out, scrollStep(a.dir, "scroll "+a.dir, plan.ExpectNothing))
		case actBack:
			out = append(out, keyStep("back", "go back"))
		case actHome:
			out = append(out, keyStep("home", "go home"))
		}
	}
	return out
}

func launchStep(app, intent string) plan.PlannedStep {
	want := appPackage(app)
	if want == "" {
		want = app
	}
	return plan.PlannedStep{
		Intent: intent,
		Call:   tools.NewCall(tools.LaunchApp, map[string]string{"app": app}),
		Expect: plan.Expectation{Kind: plan.ExpectApp, App: want},
	}
}

func typeSubmitStep(q string, field scene.Selector) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: typeSubmitIntent(q),
		Call:   tools.NewCall(tools.TypeText, map[string]any{"text": q, "submit": true}),
		Target: &field,
		// A submit leaves the search page: more changes than the field's text.
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}
}

func scrollStep(dir, intent string, expect plan.ExpectKind) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: intent,
		Call:   tools.NewCall(tools.Scroll, map[string]string{"direction": dir}),
		Expect: plan.Expectation{Kind: expect},
	}
}

// keyStep presses a key. It expects nothing: pressing back twice because the
// first press showed no change would leave the screen the user wanted.
// backStep goes back: BACK, or, on a phone without a back key (an iPhone),
// the screen's navigation-bar Back button when it shows one.
func backStep(sc *scene.Scene, intent string) plan.PlannedStep {
	if b, ok := navBack(sc); ok {
		return plan.PlannedStep{
			Intent: intent,
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &scene.Selector{Field: scene.FieldID, Value: b.ResourceID, Clickable: true},
			Expect: plan.Expectation{Kind: plan.ExpectChanged},
		}
	}
	return keyStep("back", intent)
}

// navBack is an iPhone screen's navigation-bar Back button (WDA names it
// "Back"; device/wda keeps the name as the element's id).
func navBack(sc *scene.Scene) (scene.Element, bool) {
	if sc == nil {
		return scene.Element{}, false
	}
	for _, e := range sc.Elements {
		if e.Class == "XCUIElementTypeButton" && e.ResourceID == "Back" && e.Clickable && sc.Visible(e) {
			return e, true
		}
	}
	return scene.Element{}, false
}

func keyStep(key, intent string) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: intent,
		Call:   tools.NewCall(tools.PressKey, map[string]string{"key": key}),
	}
}

func waitStep(intent string, spin scene.Selector) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: intent,
		Call:   tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.5}),
		Expect: plan.Expectation{Kind: plan.ExpectGone, Target: spin},
	}
}

func editableSelector() scene.Selector {
	return scene.Selector{Field: scene.FieldClass, Value: "EditText", Mode: scene.ModeContains, Editable: true}
}

func ptr[T any](v T) *T { return &v }
