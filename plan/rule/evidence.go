package rule

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"phonepilot/apps"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// done ends a task whose every action has its closing steps: completed
// only when the Scene shows the last action's effect (and the app the goal
// works in is in front), with a message that says what the screen shows;
// otherwise failed, saying what is missing.
func (w *work) done() plan.Decision {
	last := len(w.acts) - 1
	w.cur = last
	a := w.acts[last]
	if miss := w.missing(a); miss != "" {
		return finish(false, fmt.Sprintf("the steps of %q ran, but %s; the screen shows %s", a.clause, miss, describe(w.sc)))
	}
	return finish(true, "done: "+summary(w.acts, w.all)+"; the screen shows "+describe(w.sc))
}

// missing says what the Scene lacks of action a's effect ("" when it
// shows it).
func (w *work) missing(a action) string {
	if app := w.appContext(); app != "" && a.kind != actHome && a.kind != actBack {
		if pkg := w.packageOf(app); pkg != "" && !inApp(w.sc.Package, pkg) {
			return fmt.Sprintf("%s is not in front (%s is)", app, w.sc.Package)
		}
	}
	switch a.kind {
	case actLaunch:
		if pkg := w.packageOf(a.app); pkg != "" && !inApp(w.sc.Package, pkg) {
			return fmt.Sprintf("%s is not in front (%s is)", a.app, w.sc.Package)
		}
	case actSearch:
		if spinner(w.sc) {
			return "the results are still loading"
		}
		if !w.shows(a.query) {
			return fmt.Sprintf("nothing on the screen shows the search for %q", a.query)
		}
	case actType:
		if !w.fieldHolds(a.text) {
			return fmt.Sprintf("no field on the screen holds %q", a.text)
		}
	case actHome:
		if !apps.Launcher(w.sc.Package) {
			return fmt.Sprintf("the home screen is not in front (%s is)", w.sc.Package)
		}
	case actPick:
		if title := w.picked(); title != "" && !w.shows(title) {
			return fmt.Sprintf("the screen does not show the item it tapped (%q)", title)
		}
	case actSwitch:
		on, seen := w.switchState(a.sw)
		if !seen {
			return fmt.Sprintf("the %s switch is not on the screen", a.sw.name)
		}
		if on != a.on {
			return fmt.Sprintf("%s is %s", a.sw.name, onOff(on))
		}
	}
	return ""
}

// picked is the title of the item the last pick tapped.
func (w *work) picked() string {
	for i := len(w.all) - 1; i >= 0; i-- {
		if w.all[i].Tag.Kind == tagPick {
			return w.all[i].Tag.Arg
		}
	}
	return ""
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// shows reports whether a visible element's label (or a field's text)
// holds s.
func (w *work) shows(s string) bool {
	want := fold(s)
	for _, el := range w.sc.Elements {
		if w.sc.Visible(el) && (strings.Contains(fold(el.Text), want) || strings.Contains(fold(el.Desc), want)) {
			return true
		}
	}
	return false
}

func (w *work) fieldHolds(s string) bool {
	for _, el := range w.sc.Elements {
		if el.Editable && w.sc.Visible(el) && fold(el.Text) == fold(s) && el.Text != el.Hint {
			return true
		}
	}
	return false
}

// summary says what each action did, from its steps.
func summary(acts []action, hist []plan.StepRecord) string {
	var parts []string
	for i, a := range acts {
		switch a.kind {
		case actLaunch:
			parts = append(parts, "opened "+a.app)
		case actSearch:
			parts = append(parts, fmt.Sprintf("searched for %q", a.query))
		case actTap:
			parts = append(parts, fmt.Sprintf("tapped %q", a.label))
		case actType:
			parts = append(parts, fmt.Sprintf("typed %q", a.text))
		case actScroll:
			if a.edge {
				parts = append(parts, fmt.Sprintf("scrolled %s until the list ended", a.dir))
			} else {
				parts = append(parts, fmt.Sprintf("scrolled %s %s (the list moved each time)", a.dir, timesText(a.times())))
			}
		case actBack:
			parts = append(parts, "went back "+timesText(a.times()))
		case actHome:
			parts = append(parts, "went home")
		case actPick:
			title := ""
			for _, r := range hist {
				if r.Tag.Kind == tagPick && r.Tag.Action == i {
					title = r.Tag.Arg
				}
			}
			parts = append(parts, fmt.Sprintf("opened the %s %s (%q)", ordinalText(a.nth), nounOr(a.noun), title))
		case actSwitch:
			seen := false
			for _, r := range hist {
				seen = seen || r.Tag.Kind == tagSwitchSeen && r.Tag.Action == i
			}
			if seen {
				parts = append(parts, fmt.Sprintf("%s was already %s", a.sw.name, onOff(a.on)))
			} else {
				parts = append(parts, fmt.Sprintf("turned %s %s", a.sw.name, onOff(a.on)))
			}
		}
	}
	return strings.Join(parts, ", ")
}

func nounOr(n string) string {
	if n == "" {
		return "item"
	}
	return n
}

func ordinalText(n int) string {
	for k, v := range ordinals {
		if v == n {
			return k
		}
	}
	return "#" + strconv.Itoa(n)
}

// describe says what the screen shows, in a few words: the app in front
// and the first labels of its screen.
func describe(sc *scene.Scene) string {
	name := sc.Package
	if n := apps.NamesOf(sc.Package); len(n) > 0 {
		name = n[0] + " (" + sc.Package + ")"
	}
	if apps.Launcher(sc.Package) {
		name = "the home screen (" + sc.Package + ")"
	}
	var labels []string
	seen := map[string]bool{}
	for _, el := range sc.Elements {
		l := strings.TrimSpace(el.Label())
		if l == "" || seen[l] || !sc.Visible(el) || apps.SystemUI(el.Package) || len([]rune(l)) > 40 {
			continue
		}
		seen[l] = true
		labels = append(labels, strconv.Quote(l))
		if len(labels) == 4 {
			break
		}
	}
	if len(labels) == 0 {
		return name + " with nothing to read"
	}
	return name + ": " + strings.Join(labels, ", ") + " …"
}

func pickIntent(a action) string {
	return fmt.Sprintf("open the %s %s", ordinalText(a.nth), nounOr(a.noun))
}

// adWords label a sponsored row: not what "the first product" means.
var adWords = map[string]bool{"ad": true, "ads": true, "sponsored": true, "广告": true, "推广": true}

// item is one entry of a list on the screen.
type item struct {
	el    scene.Element
	title string
	ad    bool
}

// listItems are the entries of the list on the screen that has the most
// of them: the clickable elements under a scrollable container (each the
// outermost clickable on its branch), top to bottom, left to right.
func (w *work) listItems() []item {
	sc := w.sc
	best := []item(nil)
	for _, box := range sc.Elements {
		if !listLike(box) || !sc.Visible(box) {
			continue
		}
		var items []item
		for _, el := range sc.Elements {
			if !el.Clickable || !sc.Visible(el) || el.Index == box.Index || !w.under(el, box.Index) || w.clickableBetween(el, box.Index) {
				continue
			}
			it := item{el: el}
			for _, d := range sc.Elements {
				if d.Index != el.Index && !w.under(d, el.Index) {
					continue
				}
				if t := strings.TrimSpace(d.Text); t != "" && it.title == "" && !adWords[fold(t)] {
					it.title = t
				}
				if adWords[fold(d.Label())] {
					it.ad = true
				}
			}
			if it.title == "" {
				it.title = strings.TrimSpace(el.Desc)
			}
			items = append(items, it)
		}
		if len(items) > len(best) {
			best = items
		}
	}
	sort.SliceStable(best, func(i, j int) bool {
		a, b := best[i].el.Bounds, best[j].el.Bounds
		if a.Top != b.Top {
			return a.Top < b.Top
		}
		return a.Left < b.Left
	})
	return best
}

// listLike reports a container of entries: one that scrolls, or a list
// view too short to scroll yet.
func listLike(el scene.Element) bool {
	c := scene.SimpleClass(el.Class)
	return el.Scrollable || strings.Contains(c, "RecyclerView") || strings.Contains(c, "ListView") || strings.Contains(c, "GridView")
}

// under reports whether el lies under the element at index anc.
func (w *work) under(el scene.Element, anc int) bool {
	for i := el.Parent; i >= 0 && i < len(w.sc.Elements); i = w.sc.Elements[i].Parent {
		if i == anc {
			return true
		}
		if w.sc.Elements[i].Parent == i {
			break
		}
	}
	return false
}

// clickableBetween reports a clickable element between el and its
// ancestor anc (el is then part of an entry, not the entry).
func (w *work) clickableBetween(el scene.Element, anc int) bool {
	for i := el.Parent; i >= 0 && i < len(w.sc.Elements) && i != anc; i = w.sc.Elements[i].Parent {
		if w.sc.Elements[i].Clickable {
			return true
		}
		if w.sc.Elements[i].Parent == i {
			break
		}
	}
	return false
}

// pick plans opening the nth item of the list on the screen ("the first
// product"): the entry at that place, never a label that merely contains
// the noun. Sponsored entries are not counted. "The last" scrolls to the
// end of the list first.
func (w *work) pick(a action) ([]plan.PlannedStep, *plan.Finish) {
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	if step, ok := w.waitForApp(); ok {
		return []plan.PlannedStep{step}, nil
	}
	if spinner(w.sc) {
		t := w.tag(tagWaitResults)
		if r, failed := w.failedHere(t); failed {
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		return []plan.PlannedStep{waitStep("wait for the list to load", spinnerSelector(w.sc), t)}, nil
	}
	t := w.tag(tagPick)
	for _, r := range w.all {
		if r.Status == lifecycle.StepFailed && r.Tag.Kind == tagPick && r.Tag.Action == w.cur && r.Before == w.fp && !w.interrupted(r) {
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
	}
	var items []item
	skipped := 0
	for _, it := range w.listItems() {
		if it.ad {
			skipped++
			continue
		}
		items = append(items, it)
	}
	if a.nth == -1 {
		st := w.tag(tagPickScroll)
		moved := true
		for _, r := range w.hist {
			if r.Tag == st {
				moved = r.Changed
			}
		}
		if moved && w.count(st) < maxEdgeScrolls && scrollable(w.sc) {
			return []plan.PlannedStep{scrollStep("down", "scroll down to the end of the list", plan.ExpectNothing, st)}, nil
		}
	}
	if len(items) == 0 {
		return nil, &plan.Finish{Reason: fmt.Sprintf("%q: no list of %s on the screen to pick from; the screen shows %s", a.clause, nounOr(a.noun), describe(w.sc))}
	}
	n := a.nth
	if n == -1 {
		n = len(items)
	}
	if n > len(items) {
		return nil, &plan.Finish{Reason: fmt.Sprintf("%q: the list on the screen shows %d entr%s, not %d; the screen shows %s",
			a.clause, len(items), map[bool]string{true: "y", false: "ies"}[len(items) == 1], n, describe(w.sc))}
	}
	it := items[n-1]
	t.Arg = it.title
	intent := fmt.Sprintf("%s: %q", pickIntent(a), it.title)
	if skipped > 0 {
		intent += fmt.Sprintf(" (not counting %d sponsored)", skipped)
	}
	sel := selectorFor(w.sc, it.el, true)
	return []plan.PlannedStep{{
		Intent: intent,
		Tag:    t,
		Call:   tools.NewCall(tools.Tap, map[string]any{}),
		Target: &sel,
		Expect: plan.Expectation{Kind: plan.ExpectChanged},
	}}, nil
}

func switchIntent(a action) string { return fmt.Sprintf("turn %s %s", a.sw.name, onOff(a.on)) }

// switchRow finds the switch's row on the screen: the clickable row whose
// title is one of its names, and the switch in it.
func (w *work) switchRow(sw *switchSetting) (row scene.Element, on bool, ok bool) {
	for _, el := range w.sc.Elements {
		if !w.sc.Visible(el) || !labelIn(el.Label(), sw.rows) {
			continue
		}
		row = el
		for i := el.Index; i >= 0 && i < len(w.sc.Elements); i = w.sc.Elements[i].Parent {
			if w.sc.Elements[i].Clickable {
				row = w.sc.Elements[i]
				break
			}
			if w.sc.Elements[i].Parent == i {
				break
			}
		}
		for _, d := range w.sc.Elements {
			if d.Checkable && (d.Index == row.Index || w.under(d, row.Index)) {
				return row, d.Checked, true
			}
		}
	}
	return scene.Element{}, false, false
}

// switchState is the switch's state as the screen shows it.
func (w *work) switchState(sw *switchSetting) (on, seen bool) {
	_, on, seen = w.switchRow(sw)
	return on, seen
}

func labelIn(l string, names []string) bool {
	f := fold(l)
	for _, n := range names {
		if f == fold(n) {
			return true
		}
	}
	return false
}

// toggle plans turning a switch of Settings on or off: its page from the
// main page, then its row, unless the switch already shows the state
// wanted (then it only looks: a blind tap would undo it).
func (w *work) toggle(a action) ([]plan.PlannedStep, *plan.Finish) {
	if steps, fin, ok := w.wrongApp(); ok {
		return steps, fin
	}
	if step, ok := w.waitForApp(); ok {
		return []plan.PlannedStep{step}, nil
	}
	if row, on, ok := w.switchRow(a.sw); ok {
		if on == a.on {
			return []plan.PlannedStep{{
				Intent: fmt.Sprintf("see that %s is already %s", a.sw.name, onOff(on)),
				Tag:    w.tag(tagSwitchSeen),
				Call:   tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.1}),
			}}, nil
		}
		t := w.tag(tagSwitch)
		if r, failed := w.failedHere(t); failed {
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		sel := selectorFor(w.sc, row, true)
		return []plan.PlannedStep{{
			Intent: switchIntent(a),
			Tag:    t,
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &sel,
			Expect: plan.Expectation{Kind: plan.ExpectChanged},
		}}, nil
	}
	for _, el := range w.sc.Elements {
		if !w.sc.Visible(el) || !labelIn(el.Label(), a.sw.page) {
			continue
		}
		t := w.tag(tagSwitchPage)
		if r, failed := w.failedHere(t); failed {
			return nil, &plan.Finish{Reason: failedStep(r)}
		}
		sel := selectorFor(w.sc, el, true)
		return []plan.PlannedStep{{
			Intent: fmt.Sprintf("open %q, where %s is", el.Label(), a.sw.name),
			Tag:    t,
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &sel,
			Expect: plan.Expectation{Kind: plan.ExpectChanged},
		}}, nil
	}
	return w.lookFor(fmt.Sprintf("the %s switch or its page", a.sw.name), "down")
}
