package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"phonepilot/lifecycle"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// defaultGate is the gate of a Runner given none: the default policy,
// which confirms every category the gate flags.
var defaultGate Gate = (*safety.Gate)(nil)

// guardOutcome is what the gate (and a person) said about one action.
type guardOutcome int

const (
	guardRun      guardOutcome = iota // allowed: run it
	guardApproved                     // a person approved it: run it, once
	guardRefused                      // refused: do not run it; e.refusal says why
	guardReplan                       // the screen changed since the plan: do not run it, plan again
)

// refusal is an action that was refused, and the cause a task ends with
// when its planner cannot go on without it.
type refusal struct {
	cause  lifecycle.Cause // approval_denied or policy_denied
	reason string
}

// refusedError ends a task whose planner asked again for an action that
// was refused on the same screen: it cannot go on without it.
type refusedError struct{ refusal }

func (e *refusedError) Error() string { return e.reason }

// guard asks the gate about call on sc before it touches the phone, and a
// person when the gate wants one. It returns the Scene to act on (a fresh
// one after a wait for a person: the same element on the same screen),
// whether the gate took the action for an irreversible one (it found a
// category, whatever the policy's verdict), or an error that ends the task
// (cancelled, a timeout, a refused action asked for again).
func (e *executor) guard(ctx context.Context, number int, tool *tools.Tool, call tools.Call, sc *scene.Scene) (guardOutcome, *scene.Scene, bool, error) {
	if len(tools.Declare(call, sc).Inputs) == 0 {
		return guardRun, sc, false, nil
	}
	el := elementOf(call, sc)
	d := e.judge(call, sc)
	irreversible := len(d.Findings) > 0 || d.Category != ""
	if d.Verdict == safety.Allow {
		return guardRun, sc, irreversible, nil
	}
	key := refusalKey(call, el, sc)
	if r, ok := e.refused[key]; ok {
		return guardRefused, sc, true, &refusedError{refusal{r.cause, fmt.Sprintf("the planner asked again for an action that was refused: %s", r.reason)}}
	}
	refuse := func(cause lifecycle.Cause, reason string) (guardOutcome, *scene.Scene, bool, error) {
		r := refusal{cause, reason}
		e.refused[key] = r
		e.refusal = &r
		return guardRefused, sc, true, nil
	}
	what := fmt.Sprintf("%s (%s: %s)", call, d.Category, d.Reason)
	if d.Verdict == safety.Deny {
		return refuse(lifecycle.CausePolicyDenied, "the safety policy forbids "+what)
	}
	if e.person == nil {
		return refuse(lifecycle.CauseApprovalDenied, "refused: nobody to ask for approval of "+what)
	}
	if prev, ok := e.ran[key]; ok {
		// The same action was approved and ran in an earlier step: the
		// planner asks again because it saw no effect. It is never put to
		// the person as if it had not happened (issue 12: a second "Pay
		// now" approval with the order already placed). First a fresh read:
		// the effect may have come since.
		now, err := e.observe(ctx)
		if err != nil {
			return guardRefused, sc, true, err
		}
		if why := moved(call, sc, now); why != "" {
			r := refusal{lifecycle.CauseApprovalDenied, fmt.Sprintf("not asked again: step %d ran this approved action already, and the screen has changed since (%s)", prev, why)}
			e.refusal = &r
			return guardRefused, now, true, nil
		}
		sc = now
		d.Reason = fmt.Sprintf("approved and run once already (step %d), and the screen has not changed since; approving again may do it twice. %s", prev, d.Reason)
	}
	dec, err := e.person.Approve(ctx, Approval{Step: number, Call: call, Element: el, Scene: sc, Decision: d})
	if err != nil {
		return guardRefused, sc, true, err
	}
	if !dec.Approved && dec.Unasked {
		return refuse(lifecycle.CauseApprovalDenied, fmt.Sprintf("not approved: %s (%s)", strings.TrimSpace(dec.Note), what))
	}
	if !dec.Approved {
		reason := fmt.Sprintf("a person (%s) denied %s", dec.By, what)
		if note := strings.TrimSpace(dec.Note); note != "" {
			reason += ": " + note
		}
		return refuse(lifecycle.CauseApprovalDenied, reason)
	}
	// The phone may have changed while it waited: the approved action runs
	// only on the same element of the same app, never on whatever is there
	// now.
	now, err := e.observe(ctx)
	if err != nil {
		return guardRefused, sc, true, err
	}
	if why := moved(call, sc, now); why != "" {
		r := refusal{lifecycle.CauseApprovalDenied, "approved, but not run: " + why}
		e.refusal = &r
		return guardRefused, now, true, nil
	}
	e.ran[key] = number
	return guardApproved, now, true, nil
}

// judge is the gate's decision on call, planned on sc.
func (e *executor) judge(call tools.Call, sc *scene.Scene) safety.Decision {
	return e.gate.Check(safety.Input{Goal: e.goal, Scene: sc, Call: call, Element: elementOf(call, sc), Secure: sc != nil && sc.Secure})
}

// elementOf is the element a call acts on in sc, nil for none.
func elementOf(call tools.Call, sc *scene.Scene) *scene.Element {
	idx, ok := tools.ElementArg(call)
	if !ok || sc == nil || idx < 0 || idx >= len(sc.Elements) {
		return nil
	}
	el := sc.Elements[idx]
	return &el
}

// refusalKey names an action on a screen: the same call on the same
// element of the same app is the same action.
func refusalKey(call tools.Call, el *scene.Element, sc *scene.Scene) string {
	var b strings.Builder
	b.WriteString(call.String())
	if sc != nil {
		b.WriteString("|" + sc.Package)
	}
	if el != nil {
		fmt.Fprintf(&b, "|%s|%s|%s|%v", el.Class, el.Label(), el.ResourceID, el.Bounds)
	}
	return b.String()
}

// recheck reads the screen again for call, planned on was, and says why
// the call would not do there what was planned ("" when it would do the
// same): the one check before acting on a screen of the past, after a
// planner thought or a person approved.
func (e *executor) recheck(ctx context.Context, call tools.Call, was *scene.Scene) (*scene.Scene, string, error) {
	now, err := e.observe(ctx)
	if err != nil {
		return was, "", err
	}
	return now, moved(call, was, now), nil
}

// moved says why call, planned on was, would not do on now what was
// planned ("" when it would): another app in front, the element at the
// call's index gone, moved, relabelled or covered (sameTarget), or any of
// the call's inputs landing on another element than planned (something
// new on top at a tap's point, a swipe that would click something else, a
// key that would go to a newly focused button).
func moved(call tools.Call, was, now *scene.Scene) string {
	if why := sameTarget(elementOf(call, was), was, now); why != "" {
		return why
	}
	a, b := tools.Declare(call, was).Inputs, tools.Declare(call, now).Inputs
	if len(a) != len(b) {
		return fmt.Sprintf("%s would give the phone other inputs now", call.Name)
	}
	for i := range a {
		for _, p := range [][2]int{{a[i].On, b[i].On}, {a[i].Hit, b[i].Hit}} {
			x, y := elementAt(was, p[0]), elementAt(now, p[1])
			switch {
			case x == nil && y == nil:
			case x == nil:
				return fmt.Sprintf("its %s would now land on %s, which came up since", a[i].Kind, describeElement(*y))
			case y == nil:
				return fmt.Sprintf("its %s would no longer land on %s", a[i].Kind, describeElement(*x))
			case !sameElement(*x, *y):
				return fmt.Sprintf("its %s would land on %s instead of %s", a[i].Kind, describeElement(*y), describeElement(*x))
			}
		}
	}
	return ""
}

// elementAt is sc's element i, nil for none.
func elementAt(sc *scene.Scene, i int) *scene.Element {
	if e, ok := sc.Element(i); ok {
		return &e
	}
	return nil
}

// sameElement reports the same element on two reads: class, label, id
// and bounds.
func sameElement(a, b scene.Element) bool {
	return a.Class == b.Class && a.Label() == b.Label() && a.ResourceID == b.ResourceID && a.Bounds == b.Bounds
}

// sameTarget says why the screen now is not the one an action was approved
// on ("" when it is): another app in front, or the element gone, moved or
// relabelled.
func sameTarget(el *scene.Element, was, now *scene.Scene) string {
	if was != nil && now.Package != was.Package {
		return fmt.Sprintf("the app in front changed from %s to %s", was.Package, now.Package)
	}
	if el == nil {
		return ""
	}
	n, ok := now.Element(el.Index)
	if !ok || !now.Visible(n) {
		return fmt.Sprintf("element [%d] %s is gone from the screen", el.Index, describeElement(*el))
	}
	if !sameElement(n, *el) {
		a, b := describeElement(*el), describeElement(n)
		if a == b {
			a, b = fmt.Sprintf("%s at %v", a, el.Bounds), fmt.Sprintf("at %v", n.Bounds)
		}
		return fmt.Sprintf("element [%d] was %s and is now %s", el.Index, a, b)
	}
	if c, ok := coveredBy(el, was, now); ok {
		return fmt.Sprintf("element [%d] %s is covered by %s that came up since", el.Index, describeElement(*el), describeElement(c))
	}
	return ""
}

// coveredBy finds what came over el between was and now: an element drawn
// after it (later in the dump), new on the screen, that covers it whole and
// is much larger than it (a popup, an ad layer, a dialog's scrim; not a
// toast). A tap there would land on that, not on what was approved.
func coveredBy(el *scene.Element, was, now *scene.Scene) (scene.Element, bool) {
	if was == nil {
		return scene.Element{}, false
	}
	key := func(e scene.Element) string { return fmt.Sprintf("%s|%s|%v", e.Class, e.ResourceID, e.Bounds) }
	old := map[string]bool{}
	for _, e := range was.Elements {
		old[key(e)] = true
	}
	area := func(b scene.Bounds) int { return b.Width() * b.Height() }
	b := el.Bounds
	for _, c := range now.Elements[el.Index+1:] {
		cb := c.Bounds
		if old[key(c)] || !now.Visible(c) || cb.Left > b.Left || cb.Top > b.Top || cb.Right < b.Right || cb.Bottom < b.Bottom ||
			area(cb) < 4*area(b) {
			continue
		}
		return c, true
	}
	return scene.Element{}, false
}

func describeElement(e scene.Element) string {
	s := scene.SimpleClass(e.Class)
	if id := scene.IDName(e.ResourceID); id != "" {
		s += " " + id
	}
	if l := e.Label(); l != "" {
		s += fmt.Sprintf(" %q", l)
	}
	return s
}

// isRefused reports whether err ends the task because of a refusal, and
// its ending.
func isRefused(err error) (ending, bool) {
	var r *refusedError
	if errors.As(err, &r) {
		return ending{lifecycle.Failed, r.cause, r.reason}, true
	}
	return ending{}, false
}
