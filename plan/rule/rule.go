// Package rule is the default Planner: it reads goals written as simple
// instructions in English or Chinese ("open Taobao and search Mac mini",
// "打开淘宝搜索Mac mini"), and plans steps from the Scene of the moment and
// the task's history. It needs no model and no network.
//
// It reads the whole goal before the first step: every word has a place
// (an action, a context like "in Settings", a count like "twice", an
// ordinal like "the first product"), or the goal is refused, naming the
// words it could not place. It ends a task completed only on evidence: the
// Scene shows the last clause's effect (the app in front, the results, the
// item opened, the switch set, the list moved), and the final message says
// what the screen shows.
//
// It is stateless: progress is read from the steps already executed by
// their tags (plan.Tag, set where each step is built), so the same Planner
// serves any number of tasks. From the current Scene it dismisses popups,
// scrolls a bounded number of times for a target that is off screen, goes
// back from a wrong screen, and never repeats a step that already failed on
// the same screen.
package rule

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"phonepilot/apps"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Limits on the recovery moves of one action.
const (
	maxScrolls     = 3  // scrolls looking for an off-screen target
	maxBacks       = 2  // backs from a wrong screen
	maxEdgeScrolls = 15 // scrolls toward the end of a list before giving up on reaching it
)

// The kinds of step the rule Planner builds. Progress is read back from
// them (plan.Tag), never from the intent sentence.
const (
	tagLaunch          plan.TagKind = "launch"       // closes a launch; Arg the app
	tagRelaunch        plan.TagKind = "relaunch"     // back into the action's app; Arg the app
	tagBackToApp       plan.TagKind = "back_to_app"  // back from another app
	tagSearchBox       plan.TagKind = "search_box"   // tap what reveals the search field
	tagSubmit          plan.TagKind = "submit"       // type the query and submit: closes a search
	tagEnter           plan.TagKind = "enter"        // submit what is typed: closes a search
	tagWaitResults     plan.TagKind = "wait_results" // the results are loading
	tagWaitApp         plan.TagKind = "wait_app"     // the app shows nothing to use yet
	tagTap             plan.TagKind = "tap"          // closes a tap
	tagType            plan.TagKind = "type"         // closes a typing
	tagScroll          plan.TagKind = "scroll"       // closes (once per count) a scroll
	tagBack            plan.TagKind = "back"         // closes (once per count) a back
	tagHome            plan.TagKind = "home"         // closes going home
	tagPick            plan.TagKind = "pick"         // closes an ordinal pick; Arg the item's title
	tagPickScroll      plan.TagKind = "pick_scroll"  // toward the end of the list, for "the last"
	tagSwitchPage      plan.TagKind = "switch_page"  // open the page of a switch
	tagSwitch          plan.TagKind = "switch"       // tap the switch: closes a switch
	tagSwitchSeen      plan.TagKind = "switch_seen"  // the switch is already as wanted: closes a switch
	tagLook            plan.TagKind = "look"         // scroll looking for a target; Arg what
	tagLookBack        plan.TagKind = "look_back"    // go back looking for a target; Arg what
	tagDismiss         plan.TagKind = "dismiss"      // close a popup; Arg its button
	tagRetry           plan.TagKind = "retry"        // tap Retry on a page that failed to load; Arg the button
	tagAsk             plan.TagKind = "ask"          // ask a person to pass a wall
	tagAnswer          plan.TagKind = "answer"       // type a person's answer
	noAction                        = -1             // a step that serves no one action (popups)
	intentTapSearchBox              = "tap the search box"
)

// closing are the kinds of step that close an action of each kind.
var closing = map[kind][]plan.TagKind{
	actLaunch: {tagLaunch}, actSearch: {tagSubmit, tagEnter}, actTap: {tagTap}, actType: {tagType},
	actScroll: {tagScroll}, actBack: {tagBack}, actHome: {tagHome}, actPick: {tagPick}, actSwitch: {tagSwitch, tagSwitchSeen},
}

// Planner is the rule Planner. Its only state is the last goal it read,
// kept so that a task's goal is parsed once, not on every step.
type Planner struct {
	mu   sync.Mutex
	key  string
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
	acts, err := p.parse(in.Goal, in.Apps)
	if err == nil {
		err = checkApps(acts, in.Apps)
	}
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
	st := progress(acts, in.Scene, in.History, -1)
	// A page that failed to load is not the goal reached, whatever the
	// steps so far say: close what covers it, then Retry.
	w0 := &work{goal: in.Goal, sc: in.Scene, fp: in.Scene.Fingerprint(), all: in.History, acts: acts, cur: min(st.current, len(acts)-1)}
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
	if st.broken != "" {
		return finish(false, st.broken), nil
	}
	if st.current == len(acts) {
		return w.done(), nil
	}
	if steps, fin, ok := w.askPerson(in); ok {
		if fin != nil {
			return plan.Decision{Finish: fin}, nil
		}
		return plan.Decision{Steps: append(steps, w.sketchFrom(st.current)...)}, nil
	}
	steps, fin := w.next(st)
	if j, ok := w.lostPress(st, steps, fin); ok {
		// The press before this action may have landed unseen, but the
		// screen is still the one it was made on and this action finds
		// nothing to act on here: it was lost. Press it again.
		st = progress(acts, in.Scene, in.History, j)
		w = &work{goal: in.Goal, sc: in.Scene, fp: w.fp, hist: in.History[st.from:], all: in.History, scenes: in.Scenes, acts: acts, cur: st.current}
		steps, fin = w.next(st)
	}
	if fin != nil {
		return plan.Decision{Finish: fin}, nil
	}
	return plan.Decision{Steps: append(steps, w.sketchFrom(st.current+1)...)}, nil
}

// next plans the steps of the current action.
func (w *work) next(st state) ([]plan.PlannedStep, *plan.Finish) {
	a := w.acts[st.current]
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
		steps, fin = w.scroll(a)
	case actBack:
		steps = []plan.PlannedStep{backStep(w.sc, "go back", w.tag(tagBack))}
	case actHome:
		steps = []plan.PlannedStep{keyStep("home", "go home", w.tag(tagHome))}
	case actPick:
		steps, fin = w.pick(a)
	case actSwitch:
		steps, fin = w.toggle(a)
	}
	return steps, fin
}

// lostPress finds the press that closed the action before the current one
// when the runtime could not see its effect (EffectUnseen: a toast may
// have come and gone), the screen is still the one it was made on (only
// popups closed since), and the current action finds nothing to act on
// (it gives up, or scrolls or goes back to look): a press that had landed
// would have led on. Its index in the history, or false. A press unseen
// whose next action can go on (Add to cart, then go back) is not pressed
// again: it may have taken effect.
func (w *work) lostPress(st state, steps []plan.PlannedStep, fin *plan.Finish) (int, bool) {
	looking := fin != nil || len(steps) > 0 && (steps[0].Tag.Kind == tagLook || steps[0].Tag.Kind == tagLookBack)
	if !looking || st.current == 0 {
		return 0, false
	}
	prev := st.current - 1
	for j := len(w.all) - 1; j >= 0; j-- {
		r := w.all[j]
		if r.Tag.Kind == tagDismiss || (r.Tag.Action == st.current && (r.Tag.Kind == tagLook || r.Tag.Kind == tagLookBack) && !r.Changed) {
			continue // a popup closed, or a look that did not move
		}
		ok := r.Status == lifecycle.StepSucceeded && r.Effect == plan.EffectUnseen && closes(w.acts[prev], prev, r.Tag) && r.Before == w.fp
		return j, ok
	}
	return 0, false
}

func (p *Planner) parse(goal string, installed []apps.Installed) ([]action, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := goal
	for _, a := range installed {
		key += "\x00" + a.Package
	}
	if p.last == nil || p.key != key {
		acts, err := parseGoal(goal, installed)
		p.key, p.last = key, &parsed{acts, err}
	}
	return p.last.acts, p.last.err
}

// checkApps checks the apps the goal names against the phone's, before the
// first action: a goal that would open an app the phone does not have is
// refused at once, with the closest installed apps; a search that names no
// app to search in is refused with the apps that can search.
func checkApps(acts []action, installed []apps.Installed) error {
	for i, a := range acts {
		if a.kind == actSearch {
			if _, ok := contextAt(acts, i); !ok {
				return fmt.Errorf("%w: %q does not say which app to search in; name one (\"search for %s in <app>\")%s",
					ErrUnreadable, a.clause, a.query, searchApps(installed))
			}
		}
		if a.kind != actLaunch || installed == nil || isInstalled(a.app, installed) {
			continue
		}
		return fmt.Errorf("%w: %q names %s, which is not an app on this phone (%s); it does not act on part of a goal",
			ErrUnreadable, a.clause, strconv.Quote(a.app), apps.ClosestText(a.app, installed))
	}
	return nil
}

// isInstalled reports whether name is one of the installed apps.
func isInstalled(name string, installed []apps.Installed) bool {
	known, hasKnown := apps.Lookup(name)
	k := apps.Key(name)
	for _, in := range installed {
		if strings.EqualFold(in.Package, name) {
			return true
		}
		if hasKnown {
			for _, p := range known.Packages {
				if strings.EqualFold(p, in.Package) {
					return true
				}
			}
		}
		for _, n := range in.Names {
			if apps.Key(n) == k {
				return true
			}
		}
	}
	return false
}

// searchApps names the installed apps with a search, for the refusal of a
// search without an app.
func searchApps(installed []apps.Installed) string {
	var names []string
	for _, in := range installed {
		if apps.CanSearch(in.Package) {
			names = append(names, in.String())
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; the apps on this phone that can search: " + strings.Join(names, ", ")
}

func finish(ok bool, reason string) plan.Decision {
	return plan.Decision{Finish: &plan.Finish{Success: ok, Reason: reason}}
}

// state is how far a task has come.
type state struct {
	current   int    // index of the first action not done (len(acts) when all are)
	from      int    // first History entry belonging to the current action
	submitted bool   // the current (search) action's query was submitted
	broken    string // an action whose closing steps show no effect: why the task fails
}

// progress walks the history: an action is done when its closing steps
// (as many as its count) succeeded after the previous action was done. A
// search that ends the goal is done only when its results are showing (no
// spinner). A scroll or back that did not move the screen is not done: the
// task fails saying so, rather than claim it. The step at index lost (a
// press found lost, lostPress; -1 for none) closes nothing.
func progress(acts []action, sc *scene.Scene, hist []plan.StepRecord, lost int) state {
	from := 0
	for i, a := range acts {
		n, idx, moved, need := 0, -1, 0, a.times()
		if a.edge {
			need = 1 // the one scroll that no longer moves the list
		}
		for j := from; j < len(hist) && n < need; j++ {
			r := hist[j]
			if r.Status != lifecycle.StepSucceeded || !closes(a, i, r.Tag) || onlyAPopup(hist, j) || j == lost {
				continue
			}
			idx = j
			if a.edge && r.Changed {
				continue // not at the end yet
			}
			n++
			if r.Changed {
				moved++
			}
		}
		if n < need {
			return state{current: i, from: from}
		}
		if (a.kind == actScroll && !a.edge || a.kind == actBack) && moved < a.times() {
			what := map[kind]string{actScroll: "scrolled " + a.dir, actBack: "went back"}[a.kind]
			return state{current: i, from: from, broken: fmt.Sprintf("%s %s, but the screen moved %s: %q is not done (the screen shows %s)",
				what, timesText(a.times()), timesText(moved), a.clause, describe(sc))}
		}
		if a.kind == actSearch && i == len(acts)-1 && spinner(sc) {
			return state{current: i, from: from, submitted: true}
		}
		from = idx + 1
	}
	return state{current: len(acts), from: from}
}

func timesText(n int) string {
	switch n {
	case 0:
		return "not once"
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// closes reports whether a step tagged t closes action a (the i-th).
func closes(a action, i int, t plan.Tag) bool {
	if t.Action != i {
		return false
	}
	for _, k := range closing[a.kind] {
		if t.Kind == k {
			return true
		}
	}
	return false
}

// onlyAPopup reports a step whose one effect was a popup: the popup came
// as its tap was lost, and once closed the screen is the one the step
// started from (issue 12: "tap Cart" on flaky, an ad over Taobao's home
// taken for the cart, and the task completed on the home page). Such a
// step is not done, unless the runtime saw the press answered by a toast
// (EffectToast) or says it may have landed unseen (EffectUnseen: read too
// late for the toast that is a button's only answer): pressing it again
// could do it twice (a cart of five AirPods, hostile seed 1).
func onlyAPopup(hist []plan.StepRecord, j int) bool {
	s := hist[j]
	if s.Before == "" || s.After == s.Before || s.Effect == plan.EffectUnseen || s.Effect == plan.EffectToast {
		return false
	}
	for k := j + 1; k < len(hist) && hist[k].Tag.Kind == tagDismiss; k++ {
		if hist[k].Status == lifecycle.StepSucceeded && hist[k].After == s.Before {
			return true
		}
	}
	return false
}

// Intents of the steps, for people (progress reads the tags).
func launchIntent(app string) string   { return "launch " + app }
func typeSubmitIntent(q string) string { return fmt.Sprintf("type %q and submit", q) }
func enterIntent(q string) string      { return fmt.Sprintf("submit the search for %q", q) }
func tapIntent(label string) string    { return fmt.Sprintf("tap %q", label) }
func typeIntent(t string) string       { return fmt.Sprintf("type %q", t) }

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
		if r.Status == lifecycle.StepFailed && r.Tag.Kind != tagLook && r.Tag.Kind != tagLookBack {
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

// tag is the tag of a step of the current action.
func (w *work) tag(k plan.TagKind) plan.Tag { return plan.Tag{Kind: k, Action: w.cur} }

// tagOn is the tag of a step of the current action on arg.
func (w *work) tagOn(k plan.TagKind, arg string) plan.Tag {
	return plan.Tag{Kind: k, Action: w.cur, Arg: arg}
}

// failedHere returns the step with this tag that already failed on this
// very screen: doing it again would fail again. A step a system dialog
// interrupted (it ended with the dialog in front) does not count: once the
// dialog is dismissed the same step can work.
func (w *work) failedHere(t plan.Tag) (plan.StepRecord, bool) {
	for i := len(w.all) - 1; i >= 0; i-- {
		r := w.all[i]
		if r.Status == lifecycle.StepFailed && r.Tag == t && r.Before == w.fp && !w.interrupted(r) {
			return r, true
		}
	}
	return plan.StepRecord{}, false
}

// failedHereTimes counts the steps with this tag that failed on this very
// screen.
func (w *work) failedHereTimes(t plan.Tag) int {
	n := 0
	for _, r := range w.all {
		if r.Status == lifecycle.StepFailed && r.Tag == t && r.Before == w.fp && !w.interrupted(r) {
			n++
		}
	}
	return n
}

// interrupted reports a step that ended with a system dialog in front (a
// permission prompt, App isn't responding, a system update) that it did
// not start on, or that the runtime found interrupted (EffectInterrupted:
// an app's own ad layer came over the pressed element, and the press may
// never have reached it).
func (w *work) interrupted(r plan.StepRecord) bool {
	if r.Effect == plan.EffectInterrupted {
		return true
	}
	pkg := func(fp string) string {
		for _, sc := range w.scenes {
			if sc.Fingerprint == fp {
				return sc.Package
			}
		}
		return ""
	}
	return r.After != r.Before && apps.SystemDialog(pkg(r.After)) && !apps.SystemDialog(pkg(r.Before))
}

// count is how many steps of the current action had this tag.
func (w *work) count(t plan.Tag) int {
	n := 0
	for _, r := range w.hist {
		if r.Tag == t {
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
	app, _ := contextAt(w.acts, w.cur)
	return app
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
	back := w.tag(tagBackToApp)
	onLauncher := apps.Launcher(w.sc.Package)
	if w.count(back) < maxBacks && !onLauncher {
		if _, failed := w.failedHere(back); !failed {
			return []plan.PlannedStep{backStep(w.sc, "go back to "+app, back)}, nil, true
		}
	}
	again := w.tagOn(tagRelaunch, app)
	if w.count(again) < 1 {
		return []plan.PlannedStep{launchStep(app, "open "+app+" again", again)}, nil, true
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
		if r.Status != lifecycle.StepSucceeded || (r.Tag.Kind != tagLaunch && r.Tag.Kind != tagRelaunch) || r.Tag.Arg != app {
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
	t := w.tagOn(tagLaunch, a.app)
	for _, r := range w.hist {
		if r.Tag == t && r.Status == lifecycle.StepFailed {
			// Launching failed (not installed, or it never came to the
			// front after the retries): launching again will not help.
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
	}
	return []plan.PlannedStep{launchStep(a.app, launchIntent(a.app), t)}, nil
}

func (w *work) search(a action, submitted bool) ([]plan.PlannedStep, *plan.Finish) {
	q := a.query
	if submitted {
		// The query went in; the results are still loading.
		if r, failed := w.failedHere(w.tag(tagWaitResults)); failed {
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		return []plan.PlannedStep{waitStep("wait for the results", spinnerSelector(w.sc), w.tag(tagWaitResults))}, nil
	}
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	if step, ok := w.waitForApp(); ok {
		return []plan.PlannedStep{step}, nil
	}
	if field, ok := w.searchField(); ok {
		if r, failed := w.failedHere(w.tag(tagSubmit)); failed {
			if fieldHas(field, q) {
				if _, enterFailed := w.failedHere(w.tag(tagEnter)); !enterFailed {
					return []plan.PlannedStep{{
						Intent: enterIntent(q),
						Tag:    w.tag(tagEnter),
						Call:   tools.NewCall(tools.PressKey, map[string]string{"key": "enter"}),
						Expect: plan.Expectation{Kind: plan.ExpectChanged},
					}}, nil
				}
			}
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		return []plan.PlannedStep{typeSubmitStep(q, selectorFor(w.sc, field, false), w.tag(tagSubmit))}, nil
	}
	if step, ok := w.tapSearchBox(); ok {
		return []plan.PlannedStep{step, typeSubmitStep(q, editableSelector(), w.tag(tagSubmit))}, nil
	}
	return w.lookFor("the search box", "up")
}

// tapSearchBox plans tapping what reveals the search field: a search bar
// that opens a search page, a magnifier.
func (w *work) tapSearchBox() (plan.PlannedStep, bool) {
	entry, ok := w.searchEntry()
	if !ok {
		return plan.PlannedStep{}, false
	}
	return plan.PlannedStep{
		Intent: intentTapSearchBox,
		Tag:    w.tag(tagSearchBox),
		Call:   tools.NewCall(tools.Tap, map[string]any{}),
		Target: ptr(selectorFor(w.sc, entry, true)),
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}, true
}

// waitForApp plans waiting while the app shows nothing to interact with
// (a splash screen, a blank page while loading), a bounded number of times.
func (w *work) waitForApp() (plan.PlannedStep, bool) {
	if interactive(w.sc) {
		return plan.PlannedStep{}, false
	}
	t := w.tag(tagWaitApp)
	if w.count(t) >= 2 {
		return plan.PlannedStep{}, false
	}
	if _, failed := w.failedHere(t); failed {
		return plan.PlannedStep{}, false
	}
	return plan.PlannedStep{
		Intent: "wait for the app to load",
		Tag:    t,
		Call:   tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.1}),
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}, true
}

// lookFor scrolls (bounded) toward a target that is not on the screen, then
// goes back from what may be a wrong screen, then gives up.
func (w *work) lookFor(what, dir string) ([]plan.PlannedStep, *plan.Finish) {
	scroll := w.tagOn(tagLook, what)
	if w.count(scroll) < maxScrolls && scrollable(w.sc) {
		if _, failed := w.failedHere(scroll); !failed {
			return []plan.PlannedStep{scrollStep(dir, fmt.Sprintf("scroll %s to look for %s", dir, what), plan.ExpectChanged, scroll)}, nil
		}
	}
	back := w.tagOn(tagLookBack, what)
	if w.count(back) < 1 && w.navigated() {
		if _, failed := w.failedHere(back); !failed {
			return []plan.PlannedStep{backStep(w.sc, "go back to look for "+what, back)}, nil
		}
	}
	n := w.count(scroll)
	reason := fmt.Sprintf("could not find %s on the screen", what)
	if n > 0 || scrollable(w.sc) {
		reason += fmt.Sprintf(" (scrolled %s %d time%s)", dir, n, plural(n))
	} else {
		reason += " (nothing on it scrolls)"
	}
	if f := mainFailure(w.hist); f != "" {
		reason += "; " + f
	}
	reason += "; the screen shows " + describe(w.sc)
	reason += w.languageNote()
	return nil, &plan.Finish{Reason: reason}
}

// navigated reports whether a step of the current action changed screens
// (so going back may lead somewhere useful).
func (w *work) navigated() bool {
	for _, r := range w.hist {
		switch r.Tag.Kind {
		case tagLook, tagScroll, tagDismiss, tagPickScroll:
			continue
		}
		if r.Changed {
			return true
		}
	}
	return false
}

// synonyms are words a button may use for what a goal says ("Add
// contact" is "Create contact" on Android's Contacts).
var synonyms = [][]string{{"add", "create", "new"}, {"添加", "新建", "创建"}, {"delete", "remove"}, {"删除", "移除"}}

// variants are label with each word swapped for its synonyms.
func variants(label string) []string {
	var out []string
	low := strings.ToLower(label)
	for _, set := range synonyms {
		for _, w := range set {
			if !strings.Contains(low, w) {
				continue
			}
			for _, o := range set {
				if o != w {
					out = append(out, strings.Replace(low, w, o, 1))
				}
			}
		}
	}
	return out
}

func (w *work) tap(a action) ([]plan.PlannedStep, *plan.Finish) {
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	if step, ok := w.waitForApp(); ok {
		return []plan.PlannedStep{step}, nil
	}
	t := w.tag(tagTap)
	if r, failed := w.failedHere(t); failed {
		return nil, &plan.Finish{Reason: failedStep(r)}
	}
	// The label as written (exactly or contained) wins over a look-alike:
	// "Location" must not tap "Notifications", a fuzzy match, while the
	// Location row is one scroll away. The label with a synonym ("Add
	// contact" as "Create contact") comes next, then scrolling; a fuzzy
	// match (a typo in the goal) is taken only once scrolling found
	// nothing better.
	sel, ok := w.labelled(a.label, scene.ModeContains)
	for _, v := range variants(a.label) {
		if ok {
			break
		}
		sel, ok = w.labelled(v, scene.ModeContains)
	}
	if !ok {
		steps, fin := w.lookFor(strconv.Quote(a.label), "down")
		if fin == nil {
			return steps, nil
		}
		if sel, ok = w.labelled(a.label, scene.ModeAny); !ok || !sameNumbers(w.sc, sel, a.label) {
			return nil, fin
		}
	}
	return []plan.PlannedStep{{
		Intent: tapIntent(a.label),
		Tag:    t,
		Call:   tools.NewCall(tools.Tap, map[string]any{}),
		Target: &sel,
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}}, nil
}

// numberRE finds the numbers of a label.
var numberRE = regexp.MustCompile(`\d+`)

// sameNumbers reports whether the element sel finds has the numbers of
// label: a look-alike may fix a typo in a word, never change a number
// ("Alarm 10:20 AM" is not "Alarm 8:30 AM").
func sameNumbers(sc *scene.Scene, sel scene.Selector, label string) bool {
	el, ok := sc.Resolve(sel)
	if !ok {
		return false
	}
	return strings.Join(numberRE.FindAllString(label, -1), ":") == strings.Join(numberRE.FindAllString(el.Label(), -1), ":")
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
	t := w.tag(tagType)
	if r, failed := w.failedHere(t); failed {
		return nil, &plan.Finish{Reason: failedStep(r)}
	}
	var sel scene.Selector
	switch {
	case a.field != "":
		sel = scene.Selector{Field: scene.FieldLabel, Value: a.field, Editable: true}
		if _, ok := w.sc.Resolve(sel); !ok {
			if el, ok := w.fieldNamed(a.field); ok {
				sel = selectorFor(w.sc, el, false)
			} else if el, ok := w.searchField(); ok && containsAny(fold(a.field), searchWords) {
				sel = selectorFor(w.sc, el, false)
			} else if step, ok := w.tapSearchBox(); ok && containsAny(fold(a.field), searchWords) && w.count(w.tag(tagSearchBox)) == 0 {
				// "into the search box" where the screen shows a search
				// bar: tapping it reveals the field.
				return []plan.PlannedStep{step}, nil
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
			return nil, &plan.Finish{Reason: fmt.Sprintf("no text field on the screen to type %q into; the screen shows %s", a.text, describe(w.sc))}
		}
		sel = selectorFor(w.sc, el, false)
	}
	return []plan.PlannedStep{{
		Intent: typeIntent(a.text),
		Tag:    t,
		Call:   tools.NewCall(tools.TypeText, map[string]any{"text": a.text}),
		Target: &sel,
		Expect: plan.Expectation{Kind: plan.ExpectFieldText, Text: a.text},
	}}, nil
}

// scroll plans one scroll of a counted scroll, or the next one toward the
// end of the list for "scroll to the bottom".
func (w *work) scroll(a action) ([]plan.PlannedStep, *plan.Finish) {
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	t := w.tag(tagScroll)
	if a.edge && w.count(t) >= maxEdgeScrolls {
		return nil, &plan.Finish{Reason: fmt.Sprintf("scrolled %s %d times and the list has not ended; the screen shows %s", a.dir, maxEdgeScrolls, describe(w.sc))}
	}
	if !scrollable(w.sc) {
		return nil, &plan.Finish{Reason: fmt.Sprintf("%q: nothing on the screen scrolls; the screen shows %s", a.clause, describe(w.sc))}
	}
	intent := "scroll " + a.dir
	if a.edge {
		intent += " toward the " + map[string]string{"down": "bottom", "up": "top", "left": "start", "right": "end"}[a.dir]
	} else if a.times() > 1 {
		intent += fmt.Sprintf(" (%d of %d)", w.count(t)+1, a.times())
	}
	return []plan.PlannedStep{scrollStep(a.dir, intent, plan.ExpectNothing, t)}, nil
}

// scrollable reports whether anything on the screen scrolls.
func scrollable(sc *scene.Scene) bool {
	for _, el := range sc.Elements {
		if el.Scrollable && sc.Visible(el) {
			return true
		}
	}
	return false
}

// sketchFrom outlines the actions from index i on, as the plan of record:
// they are planned for real from the Scene of their moment.
func (w *work) sketchFrom(i int) []plan.PlannedStep {
	var out []plan.PlannedStep
	for ; i < len(w.acts); i++ {
		a := w.acts[i]
		tg := func(k plan.TagKind) plan.Tag { return plan.Tag{Kind: k, Action: i} }
		switch a.kind {
		case actLaunch:
			out = append(out, launchStep(a.app, launchIntent(a.app), plan.Tag{Kind: tagLaunch, Action: i, Arg: a.app}))
		case actSearch:
			out = append(out,
				plan.PlannedStep{
					Intent: intentTapSearchBox,
					Tag:    tg(tagSearchBox),
					Call:   tools.NewCall(tools.Tap, map[string]any{}),
					Target: &scene.Selector{Field: scene.FieldID, Value: "search", Mode: scene.ModeContains, Clickable: true},
					Expect: plan.Expectation{Kind: plan.ExpectChanged},
				},
				typeSubmitStep(a.query, editableSelector(), tg(tagSubmit)))
		case actTap:
			out = append(out, plan.PlannedStep{
				Intent: tapIntent(a.label), Tag: tg(tagTap), Call: tools.NewCall(tools.Tap, map[string]any{}),
				Target: &scene.Selector{Value: a.label, Clickable: true},
				Expect: plan.Expectation{Kind: plan.ExpectChanged},
			})
		case actType:
			out = append(out, plan.PlannedStep{
				Intent: typeIntent(a.text), Tag: tg(tagType), Call: tools.NewCall(tools.TypeText, map[string]any{"text": a.text}),
				Target: ptr(editableSelector()),
				Expect: plan.Expectation{Kind: plan.ExpectFieldText, Text: a.text},
			})
		case actScroll:
			for n := 0; n < a.times(); n++ {
				out = append(out, scrollStep(a.dir, "scroll "+a.dir, plan.ExpectNothing, tg(tagScroll)))
			}
		case actBack:
			for n := 0; n < a.times(); n++ {
				out = append(out, keyStep("back", "go back", tg(tagBack)))
			}
		case actHome:
			out = append(out, keyStep("home", "go home", tg(tagHome)))
		case actPick:
			out = append(out, plan.PlannedStep{
				Intent: pickIntent(a), Tag: tg(tagPick), Call: tools.NewCall(tools.Tap, map[string]any{}),
				Expect: plan.Expectation{Kind: plan.ExpectChanged},
			})
		case actSwitch:
			out = append(out, plan.PlannedStep{
				Intent: switchIntent(a), Tag: tg(tagSwitch), Call: tools.NewCall(tools.Tap, map[string]any{}),
				Expect: plan.Expectation{Kind: plan.ExpectChanged},
			})
		}
	}
	return out
}

func launchStep(app, intent string, t plan.Tag) plan.PlannedStep {
	want := appPackage(app)
	if want == "" {
		want = app
	}
	return plan.PlannedStep{
		Intent: intent,
		Tag:    t,
		Call:   tools.NewCall(tools.LaunchApp, map[string]string{"app": app}),
		Expect: plan.Expectation{Kind: plan.ExpectApp, App: want},
	}
}

func typeSubmitStep(q string, field scene.Selector, t plan.Tag) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: typeSubmitIntent(q),
		Tag:    t,
		Call:   tools.NewCall(tools.TypeText, map[string]any{"text": q, "submit": true}),
		Target: &field,
		// A submit leaves the search page: more changes than the field's text.
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}
}

func scrollStep(dir, intent string, expect plan.ExpectKind, t plan.Tag) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: intent,
		Tag:    t,
		Call:   tools.NewCall(tools.Scroll, map[string]string{"direction": dir}),
		Expect: plan.Expectation{Kind: expect},
	}
}

// backStep goes back: BACK, or, on a phone without a back key (an iPhone),
// the screen's navigation-bar Back button when it shows one.
func backStep(sc *scene.Scene, intent string, t plan.Tag) plan.PlannedStep {
	if b, ok := navBack(sc); ok {
		sel := scene.Selector{Field: scene.FieldID, Value: b.ResourceID, Clickable: true}
		if b.ResourceID == "" {
			sel = scene.Selector{Field: scene.FieldLabel, Value: b.Label(), Clickable: true}
		}
		return plan.PlannedStep{
			Intent: intent,
			Tag:    t,
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &sel,
			Expect: plan.Expectation{Kind: plan.ExpectChanged},
		}
	}
	return keyStep("back", intent, t)
}

// navBack is an iPhone screen's navigation-bar Back button: the button at
// the leading edge of a NavigationBar (its label is the previous screen's
// title, or "Back"; device/wda keeps a name that differs from the label as
// the element's id), or a button named "Back".
func navBack(sc *scene.Scene) (scene.Element, bool) {
	if sc == nil {
		return scene.Element{}, false
	}
	for _, e := range sc.Elements {
		if e.Class != "XCUIElementTypeButton" || !e.Clickable || !sc.Visible(e) {
			continue
		}
		bar, _ := sc.Element(e.Parent)
		if e.ResourceID == "Back" || (e.ResourceID == "" && e.Text == "Back") ||
			(bar.Class == "XCUIElementTypeNavigationBar" && e.Bounds.Right <= sc.Width/3) {
			return e, true
		}
	}
	return scene.Element{}, false
}

// keyStep presses a key. It expects nothing: pressing back twice because the
// first press showed no change would leave the screen the user wanted.
func keyStep(key, intent string, t plan.Tag) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: intent,
		Tag:    t,
		Call:   tools.NewCall(tools.PressKey, map[string]string{"key": key}),
	}
}

func waitStep(intent string, spin scene.Selector, t plan.Tag) plan.PlannedStep {
	return plan.PlannedStep{
		Intent: intent,
		Tag:    t,
		Call:   tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.5}),
		Expect: plan.Expectation{Kind: plan.ExpectGone, Target: spin},
	}
}

func editableSelector() scene.Selector {
	return scene.Selector{Field: scene.FieldClass, Value: "EditText", Mode: scene.ModeContains, Editable: true}
}

func ptr[T any](v T) *T { return &v }
