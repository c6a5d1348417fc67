package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"phonepilot/apps"
	"phonepilot/device"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Effects can lag behind the action by more than the settle window (a slow
// phone starts drawing late). Before an attempt is called failed the screen
// is watched a little longer: up to the effect window when nothing changed
// yet (minEffectWindow, or two observations on a phone whose dumps are
// slow), up to WaitTimeout when the action visibly took effect and the
// expected element is still on its way.
const minEffectWindow = 600 * time.Millisecond

// counterEffectWindow is the effect window on a device that counts its
// screen's changes: an effect there shows as a change within a few frames
// of the input (the helper injects it and sees its events), so a screen
// still unchanged this long after the action was not changed by it.
const counterEffectWindow = 300 * time.Millisecond

func (e *executor) effectWindow() time.Duration {
	if e.counter() != nil {
		return min(counterEffectWindow, e.cfg.WaitTimeout)
	}
	return min(max(minEffectWindow, 2*e.dumpLatency), e.cfg.WaitTimeout)
}

// pollExpectation watches the screen after an attempt until the step's
// expectation is met or the window (counted from start, the action) ends.
// An irreversible action (long is set) is watched for WaitTimeout even when
// nothing changed yet: it runs once, so it is judged once, on its effect
// (issue 12: an approved Pay now judged on the old screen of a long
// transition, "did not change", was asked for again with the order placed).
func (e *executor) pollExpectation(ctx context.Context, ps plan.PlannedStep, call tools.Call, base, after *scene.Scene, start time.Time, long bool) (*scene.Scene, bool, string, error) {
	why := ""
	limit := func() time.Duration {
		if long || e.fp(after) != e.fp(base) && (ps.Expect.Kind == plan.ExpectPresent || ps.Expect.Kind == plan.ExpectApp) {
			// On its way to a new screen: give it the wait-for-element time.
			return e.cfg.WaitTimeout
		}
		return e.effectWindow()
	}
	met, err := e.poll(ctx, poll{
		try: func(n int) (bool, error) {
			if n > 1 {
				if cc := e.counter(); cc != nil {
					// Read again only when the screen has changed.
					if _, err := e.awaitChange(ctx, cc, e.clock.Now(), start.Add(limit())); err != nil && !errors.Is(err, errNoCounter) {
						return false, err
					}
				}
				sc, err := e.observe(ctx)
				if err != nil {
					return false, err
				}
				after = sc
			}
			var met bool
			met, why = e.check(ps, call, base, after)
			return met, nil
		},
		over: func(int) bool { return e.clock.Now().Sub(start) >= limit() },
		pause: func() time.Duration {
			if e.counter() != nil {
				return 0 // the wait is on the counter
			}
			return e.cfg.PollInterval
		},
	})
	if met {
		why = ""
	}
	return after, met, why, err
}

// outcome is the pair of screens a tool judges its effect on.
func (e *executor) outcome(base, after *scene.Scene) tools.Outcome {
	return tools.Outcome{Before: base, After: after, Changed: e.fp(after) != e.fp(base)}
}

// check tells whether the screen after the action shows what the step
// expected, and if not, why. What counts as a change is the tool's to say.
func (e *executor) check(ps plan.PlannedStep, call tools.Call, base, after *scene.Scene) (bool, string) {
	x := ps.Expect
	switch x.Kind {
	case plan.ExpectNothing:
		return true, ""
	case plan.ExpectChanged:
		t, ok := tools.Lookup(call.Name)
		if !ok { // validated before any action; kept so a bug cannot pass
			return false, fmt.Sprintf("unknown tool %q", call.Name)
		}
		if d := e.interruption(base, after); d != "" {
			return false, fmt.Sprintf("a system dialog (%s) came up over the screen and nothing else changed", d)
		}
		if c, ok := onlyCovered(call, base, after, e.watching.silent()); ok {
			return false, fmt.Sprintf("%s came up over the pressed element and nothing else changed", describeElement(c))
		}
		if e.watching.silent() && toastOnly(base, after) {
			// The press was watched and no toast answered it: a toast
			// that came or went is not its effect (an old one going).
			return false, "no toast answered the press and only a toast that was already there changed"
		}
		return t.Changed(call, e.outcome(base, after))
	case plan.ExpectApp:
		if apps.InFront(after.Package, x.App) || (!strings.Contains(x.App, ".") && after.Package != base.Package && after.Package != "" && !apps.SystemDialog(after.Package)) {
			return true, ""
		}
		if apps.SystemDialog(after.Package) && appUnder(after, x.App) {
			// The app is in front, under a system dialog that came up
			// over it: launching again would not help; the planner
			// dismisses the dialog.
			return true, ""
		}
		return false, fmt.Sprintf("%s is not in front (foreground: %s)", x.App, after.Package)
	case plan.ExpectPresent:
		if _, ok := after.Resolve(x.Target); ok {
			return true, ""
		}
		return false, describe(x.Target) + " is not on the screen"
	case plan.ExpectGone:
		if _, ok := after.Resolve(x.Target); !ok {
			return true, ""
		}
		return false, describe(x.Target) + " is still on the screen"
	case plan.ExpectFieldText:
		if f, ok := actedField(call, base, after); ok {
			// The field the call typed into, not any field: a focus tap
			// that was lost sends the text to the field focused before.
			if sameText(f.Text, x.Text) {
				return true, ""
			}
			return false, fmt.Sprintf("the field typed into holds %q, not %q", f.Text, x.Text)
		}
		if tools.FieldHolds(after, x.Text) {
			return true, ""
		}
		return false, fmt.Sprintf("no field holds %q", x.Text)
	}
	return false, fmt.Sprintf("unknown expectation %q", x.Kind)
}

// interruption names the system dialog that came to the front over the
// app between base and after while the app's own screen stayed as it was
// ("" when that is not what happened). The change is then the dialog's,
// not the action's: a tap that was lost under it must not count as done.
func (e *executor) interruption(base, after *scene.Scene) string {
	if base == nil || after == nil || after.Package == base.Package || !apps.SystemDialog(after.Package) || apps.SystemDialog(base.Package) {
		return ""
	}
	if appPart(base, base.Package) != appPart(after, base.Package) {
		return ""
	}
	return after.Package
}

// appUnder reports a screen showing app's window (under a dialog).
func appUnder(sc *scene.Scene, app string) bool {
	for _, el := range sc.Elements {
		if el.Package != sc.Package && apps.InFront(el.Package, app) {
			return true
		}
	}
	return false
}

// appPart is what the screen shows of package pkg, for comparing it alone.
func appPart(sc *scene.Scene, pkg string) string { return appPartExcept(sc, pkg, nil) }

// appPartExcept is appPart without the windows in skip.
func appPartExcept(sc *scene.Scene, pkg string, skip map[int]bool) string {
	var b strings.Builder
	for _, el := range sc.Elements {
		if el.Package != pkg || skip[el.Window] {
			continue
		}
		fmt.Fprintf(&b, "%s|%s|%s|%s|%v|%t\n", el.Class, el.ResourceID, el.Text, el.Desc, el.Bounds, el.Checked)
	}
	return b.String()
}

// tookEffect reports whether an input's effect is already on the screen, so
// repeating it would do it twice; the tool says what its effect is.
//
// A press watched for toasts (tw, the previous attempt's) is judged by
// them: a toast of the app announced after one a toast may answer means it
// landed; none, that an old toast on the screen, or its going, is not its
// effect.
func (e *executor) tookEffect(ctx context.Context, ps plan.PlannedStep, t *tools.Tool, call tools.Call, base, cur *scene.Scene, tw *toastWatch) bool {
	if ps.Expect.Kind == plan.ExpectGone && ps.Target != nil && t.Press() {
		// Closing something: while it is still there, the press did not
		// close it (what changed was something else), and pressing a
		// close button again is safe.
		if _, still := cur.Resolve(ps.Expect.Target); still {
			return false
		}
	}
	silent := false
	if t.Press() && tw != nil {
		// One ask of the watcher: answered would ask again.
		if tw.listen(ctx) && tw.answers {
			return true
		}
		if silent = tw.silent(); silent && toastOnly(base, cur) {
			return false // only the old toast went (or another came)
		}
	}
	if t.Press() && toastShown(cur) && !silent {
		// A toast is the app's answer to a press ("Added to cart"): with
		// one on the screen the press most likely landed even though
		// nothing else changed (the same toast already showed), and
		// pressing again would do it again (issue 12: a cart of 8).
		return true
	}
	if ps.Expect.Kind == plan.ExpectFieldText {
		if f, ok := actedField(call, base, cur); ok && !sameText(f.Text, ps.Expect.Text) {
			// The text may be in another field (the focus tap was lost):
			// typing again into this one is not typing it twice.
			return false
		}
	}
	return t.TookEffect(call, e.outcome(base, cur))
}

// toastShown reports a toast on the screen (scene.ShowsToast: Android's
// and an iPhone app's).
func toastShown(sc *scene.Scene) bool { return sc.ShowsToast() }

// actedField finds on after the editable field the call names by index on
// base (same resource id and bounds), if base has it and after still shows
// it.
func actedField(call tools.Call, base, after *scene.Scene) (scene.Element, bool) {
	var a struct {
		Element *int `json:"element"`
	}
	if base == nil || after == nil || json.Unmarshal(call.Args, &a) != nil || a.Element == nil ||
		*a.Element < 0 || *a.Element >= len(base.Elements) {
		return scene.Element{}, false
	}
	want := base.Elements[*a.Element]
	if !want.Editable {
		return scene.Element{}, false
	}
	for _, el := range after.Elements {
		if el.Editable && el.Bounds == want.Bounds && el.ResourceID == want.ResourceID {
			return el, true
		}
	}
	return scene.Element{}, false
}

func sameText(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return norm(a) == norm(b)
}

func describe(sel scene.Selector) string {
	var parts []string
	if sel.Value != "" {
		f := string(sel.Field)
		if f == "" {
			f = "label"
		}
		parts = append(parts, fmt.Sprintf("%s %q", f, sel.Value))
	}
	if sel.Editable {
		parts = append(parts, "editable")
	}
	if sel.Clickable {
		parts = append(parts, "clickable")
	}
	if len(parts) == 0 {
		return "the element"
	}
	return "the element (" + strings.Join(parts, ", ") + ")"
}

// toastWait caps the wait for a toast to go before a press: Android's
// long toast shows for 3.5 s.
const toastWait = 4 * time.Second

// afterToast waits, before a press, for a toast on the screen to go: the
// press's own answer is often a toast like it ("Added to cart"), and with
// the old one still showing a press that was dropped and one that landed
// look alike (issue 12: a second Add to cart, dropped under the first
// one's toast, passed and the cart held one). It returns the call with its
// element found again on the fresh screen and that screen; the call and sc
// as they were when the element is not there the same.
func (e *executor) afterToast(ctx context.Context, call tools.Call, sc *scene.Scene) (tools.Call, *scene.Scene, error) {
	start := e.clock.Now()
	now := sc
	_, err := e.poll(ctx, poll{
		try: func(n int) (bool, error) {
			if n == 1 {
				return false, nil
			}
			s, err := e.observe(ctx)
			if err != nil {
				return false, err
			}
			now = s
			return !toastShown(s), nil
		},
		over: func(int) bool { return e.clock.Now().Sub(start) >= toastWait },
	})
	if err != nil {
		return call, sc, err
	}
	idx, ok := tools.ElementArg(call)
	if !ok {
		return call, now, nil
	}
	was, ok := sc.Element(idx)
	if !ok {
		return call, sc, nil
	}
	same := func(el scene.Element) bool {
		return el.Class == was.Class && el.Label() == was.Label() && el.ResourceID == was.ResourceID && el.Bounds == was.Bounds
	}
	if el, ok := now.Element(idx); ok && same(el) {
		return call, now, nil
	}
	for _, el := range now.Elements {
		if same(el) {
			return tools.WithElement(call, el.Index), now, nil
		}
	}
	return call, sc, nil
}

// transientMissed reports a press whose screen did not change, read so
// long after the press that a toast — the only answer many buttons give
// ("Added to cart") — would have come and gone unseen: nothing tells a
// press that landed from one that was lost, so it must not be repeated
// (issue 24: a second Add to cart, and a cart of three). A toggle shows its
// state and an editable field its text, so only a button's press counts.
func (e *executor) transientMissed(ps plan.PlannedStep, t *tools.Tool, call tools.Call, base, after *scene.Scene, acted time.Time) bool {
	if e.firstSeen.IsZero() || e.firstSeen.Sub(acted) <= toastShort || !toastAnswers(ps, t, call, base) {
		return false
	}
	if e.fp(after) == e.fp(base) {
		return true
	}
	// Or a popup or a system dialog came over the button and nothing else
	// changed: it came on its own, whether the press landed or was lost.
	_, covered := onlyCovered(call, base, after, e.watching.silent())
	return covered || e.interruption(base, after) != ""
}

// focusedIn reports a popup holding the focused text field: it asks for
// input, the answer of the press that opened it (a time picker, a form);
// a popup that comes on its own (an ad, a system dialog) takes no focus.
func focusedIn(popup scene.Element, sc *scene.Scene) bool {
	for _, e := range sc.Elements {
		if e.Editable && e.Focused && e.Index > popup.Index && inside(e.Bounds, popup.Bounds) {
			return true
		}
	}
	return false
}

func inside(a, b scene.Bounds) bool {
	return a.Left >= b.Left && a.Top >= b.Top && a.Right <= b.Right && a.Bottom <= b.Bottom
}

// onlyCovered reports a press whose element is still where it was, the
// same, with a popup come over it (coveredBy) and every element of base
// still there: the popup is the only change, and it says nothing about
// the press.
//
// A toast on after is taken for the press's answer (and so not "only
// covered") unless toastIsOld: a press watched for toasts that none
// answered (toastWatch.silent), where the toast is the one already there.
func onlyCovered(call tools.Call, base, after *scene.Scene, toastIsOld bool) (scene.Element, bool) {
	i, ok := tools.ElementArg(call)
	if !ok || base == nil || after == nil || after.Package != base.Package || i >= len(after.Elements) {
		return scene.Element{}, false
	}
	el, ok := base.Element(i)
	if !ok {
		return scene.Element{}, false
	}
	now := after.Elements[i]
	if now.Class != el.Class || now.Label() != el.Label() || now.Bounds != el.Bounds {
		return scene.Element{}, false
	}
	c, ok := coveredBy(&el, base, after)
	if !ok || toastShown(after) && !toastIsOld || focusedIn(c, after) {
		return scene.Element{}, false
	}
	key := func(e scene.Element) string {
		return fmt.Sprintf("%s|%s|%s|%v|%t", e.Class, e.ResourceID, e.Label(), e.Bounds, e.Checked)
	}
	// An old toast going, or staying, is nothing of the press's either.
	var baseToasts, afterToasts map[int]bool
	if toastIsOld {
		baseToasts, afterToasts = base.ToastWindows(), after.ToastWindows()
	}
	had, have := map[string]bool{}, map[string]bool{}
	for _, e := range base.Elements {
		had[key(e)] = true
	}
	for _, e := range after.Elements {
		if afterToasts[e.Window] {
			continue
		}
		have[key(e)] = true
		b, cb := e.Bounds, c.Bounds
		if !had[key(e)] && after.Visible(e) && (b.Left < cb.Left || b.Top < cb.Top || b.Right > cb.Right || b.Bottom > cb.Bottom) {
			return scene.Element{}, false // something new outside the popup
		}
	}
	for _, e := range base.Elements {
		if base.Visible(e) && !have[key(e)] && !baseToasts[e.Window] {
			return scene.Element{}, false
		}
	}
	return c, true
}

// toastAnswers reports a press that a toast alone may answer: a button's
// (a toggle shows its state and an editable field its text) that is
// expected to change the screen.
func toastAnswers(ps plan.PlannedStep, t *tools.Tool, call tools.Call, base *scene.Scene) bool {
	if ps.Expect.Kind != plan.ExpectChanged || !t.Press() {
		return false
	}
	i, ok := tools.ElementArg(call)
	if !ok {
		return false
	}
	el, ok := base.Element(i)
	return ok && !el.Checkable && !el.Editable && strings.HasSuffix(scene.SimpleClass(el.Class), "Button")
}

// toastHeard is what the system's toast queue said right after a press.
type toastHeard struct {
	kind toastKind
	text string // the toast's text (toastAnswered)
}

type toastKind int

const (
	// toastUnasked: the queue was not read (the press is not one a toast
	// answers, reads are cheap enough to see the toast, or the device
	// cannot read it): a late read decides as transientMissed says.
	toastUnasked toastKind = iota
	// toastNone: the queue held no toast of the app: the press was not
	// answered by one, so a screen that did not change means it was lost.
	toastNone
	// toastAnswered: the app showed a toast: the press landed.
	toastAnswered
)

func (h toastHeard) answered() bool { return h.kind == toastAnswered }

// hearToast reads the system's toast queue right after a press that a
// toast alone may answer, where reads of the screen are dear (no change
// counter): a dump that comes back more than a toast's 2 s later cannot
// tell a press that landed from one that was lost (issue 24: a lost Add to
// cart taken for done, or a landed one pressed again). The queue keeps a
// toast from its show() until its time is up, and reading it is one shell
// command, most of it within the wait the first dump makes anyway
// (transitionLead). A failed read is no evidence either way.
func (e *executor) hearToast(ctx context.Context, ps plan.PlannedStep, t *tools.Tool, call tools.Call, acted *scene.Scene) toastHeard {
	tr, ok := e.dev.(device.ToastReader)
	if !ok || e.cfg.FixedDelay > 0 || acted == nil || !toastAnswers(ps, t, call, acted) || e.counts(ctx) {
		return toastHeard{}
	}
	ts, err := tr.Toasts(ctx)
	if err != nil {
		e.log.Debug("toast queue unreadable", "err", err)
		return toastHeard{}
	}
	for _, ts := range ts {
		if ts.Package == acted.Package {
			return toastHeard{kind: toastAnswered, text: ts.Text}
		}
	}
	return toastHeard{kind: toastNone}
}
