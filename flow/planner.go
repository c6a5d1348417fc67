package flow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/rule"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Options tune a replay Planner.
type Options struct {
	// Params are the values of the flow's parameters (--set); the rest
	// take their defaults.
	Params map[string]string
	// Healer, when set, is asked for a step whose target cannot be found
	// or whose expectation fails: that step only, with the goal, the flow
	// so far and the current Scene (the AI planner). Nil: such a step
	// fails the task with a cause naming it.
	Healer plan.Planner
	// Logger receives debug lines; discarded when nil.
	Logger *slog.Logger
}

// Planner replays a flow: a plan.Planner that hands the runtime one step at
// a time, its target resolved on the Scene of the moment. It is for one
// task (it keeps its place in the flow).
type Planner struct {
	orig   *Flow // as written, parameters unbound (the healed flow is built from it)
	f      *Flow // bound
	vals   map[string]string
	healer plan.Planner
	log    *slog.Logger

	next    int
	handed  *handed
	retried map[int]bool
	popups  int
	healed  map[int]*Step // flow step index → its replacement; nil: removed
	healWhy map[int]string
	heals   map[int]int // the healer's decisions per flow step
	waits   map[int]int // the planner's own waits per flow step
}

type handKind int

const (
	kindStep handKind = iota
	kindPopup
	kindWait // waiting for a target the Executor's wait could mistake
	kindHeal
)

// handed is the step the runtime is executing for the planner.
type handed struct {
	kind  handKind
	index int // the flow step
	ps    plan.PlannedStep
	sc    *scene.Scene // the Scene it was planned on
	why   string       // for a heal: why the flow's step did not fit
}

// ErrHealFailed: a step could not be healed.
var ErrHealFailed = errors.New("flow: healing failed")

// NewPlanner binds f's parameters and returns its replay Planner.
func NewPlanner(f *Flow, opt Options) (*Planner, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	bound, err := f.Bind(opt.Params)
	if err != nil {
		return nil, err
	}
	vals := f.defaults(false)
	for k, v := range opt.Params {
		vals[k] = v
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Planner{orig: f, f: bound, vals: vals, healer: opt.Healer, log: log,
		retried: map[int]bool{}, healed: map[int]*Step{}, healWhy: map[int]string{}, heals: map[int]int{}, waits: map[int]int{}}, nil
}

// Goal is the bound flow's goal, the task's goal.
func (p *Planner) Goal() string { return p.f.Goal }

var _ plan.Planner = (*Planner)(nil)

// Plan decides the next step: close a popup in the way, the next flow step
// with its target resolved, a healed step, or the end of the flow.
func (p *Planner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if in.Scene == nil {
		return plan.Decision{}, errors.New("flow planner: no scene")
	}
	if h := p.handed; h != nil {
		p.handed = nil
		ok := !in.Replan && len(in.History) > 0 && in.History[len(in.History)-1].Status == lifecycle.StepSucceeded
		switch h.kind {
		case kindStep:
			if !ok {
				return p.stepFailed(ctx, in, h)
			}
			p.next++
		case kindHeal:
			if !ok {
				return p.finishFailed(fmt.Sprintf("%s: the healed step (%s) failed too: %s", p.name(h.index), h.ps.Intent, in.Reason)), nil
			}
			if t, known := tools.Lookup(h.ps.Call.Name); known && t.Passive() {
				// A wait does not do the step: try the flow's step again on
				// the screen it waited for (and heal again if it still does
				// not fit, up to maxHeals).
				break
			}
			p.healed[h.index] = p.stepFrom(h)
			p.healWhy[h.index] = h.why
			p.next++
		case kindPopup, kindWait:
			// Closed or not, waited or not: the flow's step decides on the
			// next screen.
		}
	}
	for p.next < len(p.f.Steps) {
		s := p.f.Steps[p.next]
		if s.Target == nil {
			return p.hand(kindStep, p.next, p.planned(s, nil, in.Scene), in.Scene), nil
		}
		el, found := Resolve(in.Scene, *s.Target)
		// A popup over the screen first (the target may be under it),
		// unless closing it is this very step.
		if ps, ok := rule.DismissPopup(in.Scene, in.History); ok && p.popups < 2*len(p.f.Steps) && !(found && sameElement(in.Scene, ps, el)) {
			p.popups++
			return p.hand(kindPopup, p.next, ps, in.Scene), nil
		}
		if found {
			return p.hand(kindStep, p.next, p.planned(s, &el, in.Scene), in.Scene), nil
		}
		if s.Optional {
			p.log.Debug("optional step skipped: its target is not on the screen", "step", p.next+1, "target", s.Target.String())
			p.next++
			continue
		}
		if ambiguous(*s.Target) {
			// The Executor's wait (by id or label) could act on another
			// element of the same kind; the planner waits itself and
			// resolves the whole selector on each new screen.
			if n := p.waits[p.next]; n < len(waits) {
				p.waits[p.next]++
				ps := plan.PlannedStep{Intent: "wait for " + s.Target.String(), Call: tools.NewCall(tools.Wait, tools.WaitArgs{Seconds: waits[n]})}
				return p.hand(kindWait, p.next, ps, in.Scene), nil
			}
			return p.stepFailed(ctx, plan.Input{Goal: in.Goal, Scene: in.Scene, History: in.History, Scenes: in.Scenes, Replan: true,
				Reason: fmt.Sprintf("it did not appear within %s", waited(len(waits)))}, &handed{kind: kindStep, index: p.next})
		}
		// Not there yet: the Executor waits for it (a list still loading).
		return p.hand(kindStep, p.next, p.planned(s, nil, in.Scene), in.Scene), nil
	}
	return plan.Decision{Finish: &plan.Finish{Success: true, Reason: fmt.Sprintf("flow: all %d steps done", len(p.f.Steps))}}, nil
}

func (p *Planner) hand(kind handKind, index int, ps plan.PlannedStep, sc *scene.Scene) plan.Decision {
	p.handed = &handed{kind: kind, index: index, ps: ps, sc: sc}
	return plan.Decision{Steps: []plan.PlannedStep{ps}}
}

// name is a flow step as a cause names it: number, line and intent.
func (p *Planner) name(i int) string {
	s := p.f.Steps[i]
	n := fmt.Sprintf("flow step %d of %d", i+1, len(p.f.Steps))
	if l := p.orig.Steps[i].line; l > 0 {
		n += fmt.Sprintf(" (line %d)", l)
	}
	return n + " " + stepIntent(s)
}

// stepFailed handles a flow step the Executor could not carry out: once
// more if its target has turned up since, else heal it, else end the task
// with a cause that names the step and what was missing.
func (p *Planner) stepFailed(ctx context.Context, in plan.Input, h *handed) (plan.Decision, error) {
	s := p.f.Steps[h.index]
	missing := ""
	if s.Target != nil {
		if el, ok := Resolve(in.Scene, *s.Target); ok {
			if !p.retried[h.index] {
				p.retried[h.index] = true
				return p.hand(kindStep, h.index, p.planned(s, &el, in.Scene), in.Scene), nil
			}
		} else {
			missing = fmt.Sprintf("no element matches its target (%s) on the screen (%s)", s.Target, screenName(in.Scene))
		}
	}
	why := in.Reason
	if n := len(in.History); n > 0 && in.History[n-1].Status != lifecycle.StepSucceeded && in.History[n-1].Reason != "" {
		// The Executor's own words, without the task's step number (the
		// flow's is named).
		why = in.History[n-1].Reason
	}
	if missing != "" {
		why = missing + "; " + why
	}
	if p.healer == nil {
		return p.finishFailed(fmt.Sprintf("%s: %s", p.name(h.index), why)), nil
	}
	return p.heal(ctx, in, h.index, why)
}

func (p *Planner) finishFailed(reason string) plan.Decision {
	// No cause of its own: the runtime gives step_failed, or the refusal's
	// cause (approval_denied, policy_denied) when the step was refused.
	return plan.Decision{Finish: &plan.Finish{Success: false, Reason: reason}}
}

// waits is the planner's own wait for an ambiguous target, in seconds:
// 10 s in all (the runtime's default wait for an element), in few steps of
// different lengths, which the runtime's loop detector does not take for a
// planner repeating itself.
var waits = []float64{0.5, 1, 1.5, 2, 2.5, 2.5}

func waited(n int) time.Duration {
	total := 0.0
	for _, w := range waits[:n] {
		total += w
	}
	return time.Duration(total * float64(time.Second))
}

// ambiguous says whether the Executor's wait selector (id, else label) may
// find another element than sel names: sel picks among equals.
func ambiguous(sel Selector) bool {
	return sel.Nth > 0 || len(sel.Container) > 0
}

// maxHeals bounds the healer's decisions for one flow step.
const maxHeals = 3

// heal asks the healer for flow step i only.
func (p *Planner) heal(ctx context.Context, in plan.Input, i int, why string) (plan.Decision, error) {
	s := p.f.Steps[i]
	if p.heals[i] >= maxHeals {
		return p.finishFailed(fmt.Sprintf("%s: %s; asked %d times, the healer did not do the step", p.name(i), why, maxHeals)), nil
	}
	p.heals[i]++
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nThis task replays a recorded flow of %d steps. Steps 1 to %d are done. ", p.f.Goal, len(p.f.Steps), i)
	fmt.Fprintf(&b, "Step %d no longer fits this screen: %s", i+1, stepIntent(s))
	if s.Target != nil {
		fmt.Fprintf(&b, " on the element %s", s.Target)
	}
	fmt.Fprintf(&b, ". It failed: %s.\nDo only that step now, on the element of this screen that does what it did (the app's layout may have changed: it may have moved or been renamed). ", why)
	b.WriteString("If the step is not needed any more, call finish_task with success true; if it cannot be done, finish_task with success false.")
	if i+1 < len(p.f.Steps) {
		fmt.Fprintf(&b, " The flow goes on with: %s.", stepIntent(p.f.Steps[i+1]))
	}
	hin := in
	hin.Goal, hin.Replan, hin.Reason, hin.Stuck = b.String(), false, "", ""
	dec, err := p.healer.Plan(ctx, hin)
	if err != nil {
		return dec, fmt.Errorf("%w at %s: %w", ErrHealFailed, p.name(i), err)
	}
	if dec.Finish != nil || len(dec.Steps) > 0 && isEnding(dec.Steps[0].Call) {
		fin := dec.Finish
		if fin == nil {
			e, _ := tools.Ending(dec.Steps[0].Call)
			if e == nil {
				return p.finishFailed(fmt.Sprintf("%s: %s; the healer's finish_task call was malformed", p.name(i), why)), nil
			}
			fin = &plan.Finish{Success: e.Success, Reason: e.Reason}
		}
		if !fin.Success {
			d := p.finishFailed(fmt.Sprintf("%s: %s; healing gave up: %s", p.name(i), why, fin.Reason))
			d.Usage = dec.Usage
			return d, nil
		}
		// Not needed any more: the healed flow drops it.
		p.healed[i], p.healWhy[i] = nil, why
		p.next = i + 1
		next, err := p.Plan(ctx, plan.Input{Goal: in.Goal, Scene: in.Scene, History: in.History, Scenes: in.Scenes})
		next.Usage = next.Usage.Add(dec.Usage)
		return next, err
	}
	if len(dec.Steps) == 0 {
		return p.finishFailed(fmt.Sprintf("%s: %s; the healer planned nothing", p.name(i), why)), nil
	}
	ps := dec.Steps[0]
	d := p.hand(kindHeal, i, ps, in.Scene)
	p.handed.why = why
	d.Usage = dec.Usage
	p.log.Debug("healing a flow step", "step", i+1, "why", why, "call", ps.Call.String())
	return d, nil
}

func isEnding(c tools.Call) bool {
	t, ok := tools.Lookup(c.Name)
	return ok && t.Ends()
}

// planned is flow step s as the runtime runs it; el is its target resolved
// on sc, nil when it is not there yet (the Executor waits for it).
func (p *Planner) planned(s Step, el *scene.Element, sc *scene.Scene) plan.PlannedStep {
	call, _ := s.call(nil) // bound already; Validate checked the arguments marshal
	ps := plan.PlannedStep{Intent: stepIntent(s), Call: call, Expect: expectation(s, call)}
	if s.Target != nil {
		var sel scene.Selector
		if el != nil {
			sel = executorSelector(sc, *el)
		} else {
			sel = waitSelector(*s.Target)
		}
		ps.Target = &sel
	}
	return ps
}

// expectation maps a step's Expect onto the Executor's; none written is
// the tool's own effect.
func expectation(s Step, call tools.Call) plan.Expectation {
	x := s.Expect
	switch {
	case x == nil:
		return plan.ExpectationOf(call)
	case x.Changed:
		return plan.Expectation{Kind: plan.ExpectChanged}
	case x.App != "":
		return plan.Expectation{Kind: plan.ExpectApp, App: x.App}
	case x.FieldText != "":
		return plan.Expectation{Kind: plan.ExpectFieldText, Text: x.FieldText}
	case x.Present != nil:
		return plan.Expectation{Kind: plan.ExpectPresent, Target: waitSelector(*x.Present)}
	case x.Gone != nil:
		return plan.Expectation{Kind: plan.ExpectGone, Target: waitSelector(*x.Gone)}
	}
	return plan.Expectation{}
}

func stepIntent(s Step) string {
	if s.Intent != "" {
		return s.Intent
	}
	if s.Target != nil {
		return s.Tool + " " + s.Target.String()
	}
	call, _ := s.call(nil)
	return call.String()
}

func screenName(sc *scene.Scene) string {
	if sc.Activity != "" {
		return sc.Package + " " + sc.Activity
	}
	return sc.Package
}

// stepFrom is the flow step a successful heal becomes: the healer's call
// with its element named by a selector on the Scene it acted on, the
// parameters' values turned back into ${name}.
func (p *Planner) stepFrom(h *handed) *Step {
	s := stepOf(h.ps.Call, h.sc, p.vals)
	s.Intent = cleanIntent(h.ps.Intent)
	s.Healed = h.why
	return &s
}

// Healed returns the flow as written with the healed steps in place of
// the ones that no longer fit (marked healed:, with why), and whether any
// step was healed.
func (p *Planner) Healed() (*Flow, bool) {
	if len(p.healed) == 0 {
		return p.orig, false
	}
	out := *p.orig
	out.Steps = nil
	for i, s := range p.orig.Steps {
		h, ok := p.healed[i]
		switch {
		case !ok:
			out.Steps = append(out.Steps, s)
		case h != nil:
			out.Steps = append(out.Steps, *h)
		}
	}
	return &out, true
}

// HealedAfter is the healed flow to write after a run that ended with
// status: the healed flow only when the run completed (a heal is proven by
// the run reaching its goal), nothing when no step was healed, and an
// error, with nothing to write, when steps were healed but the run did not
// complete.
func (p *Planner) HealedAfter(status lifecycle.Status) (*Flow, bool, error) {
	healed, changed := p.Healed()
	if !changed {
		return nil, false, nil
	}
	if status != lifecycle.Completed {
		return nil, false, errors.New("the flow was healed but did not complete; no healed flow written")
	}
	return healed, true, nil
}

// sameElement: the step ps targets el.
func sameElement(sc *scene.Scene, ps plan.PlannedStep, el scene.Element) bool {
	if ps.Target == nil {
		return false
	}
	t, ok := sc.Resolve(*ps.Target)
	return ok && t.Index == el.Index
}
