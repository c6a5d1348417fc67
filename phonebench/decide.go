package phonebench

import (
	"encoding/json"
	"fmt"
	"strings"

	"phonepilot/device"
	"phonepilot/phonebench/tasks"
	"phonepilot/runtime"
	"phonepilot/tools"
)

// Limits of the scripted decision-maker, per script step.
const (
	maxScrolls    = 8  // looking for a target (the contract's bound)
	maxWaits      = 10 // while the screen shows it is loading
	maxDismissals = 6  // popups closed before the step's own call
	maxRepeats    = 2  // a tap whose screen did not change is made again
	maxFailures   = 3  // calls of the step that came back failed
	maxUntil      = 8  // repeats of a step until its Until label shows
	waitSeconds   = 1.0
)

// move is the decision-maker's answer for one turn: one tool call and what
// it would say it is doing.
type move struct {
	Intent string
	Call   tools.Call
	// Finish is set for finish_task: Success and Reason are its arguments.
	Finish  bool
	Success bool
	Reason  string
	// Shows, on a finish the script made, is the label its claim rests
	// on (tasks.Step.Shows).
	Shows string
}

// outcome is how the previous call went, as a model reads it: the tool
// result of its call (ok or an error, and its text).
type outcome struct {
	OK   bool
	Text string
}

// what the decision-maker's previous call was for.
type callKind int

const (
	kindNone    callKind = iota
	kindStep             // the script step's own call
	kindScroll           // scrolling to find the step's target
	kindWait             // waiting for a loading screen
	kindDismiss          // closing a popup in the way
)

// decider is the scripted decision-maker: it follows a task's intent
// script, reading only what a model is given each turn (the listing of the
// screen and the result of its previous call), and turns each intent into
// one tool call of TOOLS.md. It finds a step's target by tasks.FindTarget,
// closes popups in the way, waits while a screen shows it is loading,
// scrolls (down, then up, at most maxScrolls) to find a target that is not
// listed when something on the screen scrolls (and gives up at once when
// nothing does), presses again a button whose press did not take (it is still
// there and the next target is not), and finishes with success=false
// naming the target when it cannot find it. It is a perfect planner, not a clever one: it never
// improvises beyond that.
//
// It keeps only its place in the script and counters between turns (what a
// model's conversation history would give it).
type decider struct {
	script []tasks.Step
	i      int
	// per-step counters, reset when the script moves on
	scrolls, waits, dismissals, repeats, failures, untils int
	scrollUp                                              bool
	last                                                  callKind
	backtracked                                           map[int]bool // steps that went back once
	lastListing                                           string
	done                                                  bool
}

func newDecider(script []tasks.Step) *decider { return &decider{script: script} }

// next decides the next call from the current listing and the outcome of
// the previous call (nil on the first turn).
func (d *decider) next(text string, prev *outcome) move {
	if d.done {
		return d.finish(false, "the decision-maker was asked again after it finished")
	}
	l, err := parseListing(text)
	if err != nil {
		return d.finish(false, "cannot read the screen: "+err.Error())
	}
	if m, ok := d.judge(l, prev); ok {
		return m
	}
	return d.act(l)
}

// judge reads the outcome of the previous call and moves the script on, or
// ends it. ok is set when that already decides the turn.
func (d *decider) judge(l listing, prev *outcome) (move, bool) {
	if prev == nil || d.last == kindNone || d.i >= len(d.script) {
		return move{}, false
	}
	unchanged := l.Text == d.lastListing
	switch d.last {
	case kindStep:
		st := d.script[d.i]
		switch {
		case !prev.OK && strings.Contains(prev.Text, device.ErrAppNotFound.Error()):
			// The tool's answer settles it (the app is not installed):
			// a model does not ask again, it finishes — with the
			// script's own finish when that comes next.
			if d.i+1 < len(d.script) && d.script[d.i+1].Tool == tasks.ToolFinishTask {
				d.advance()
				return move{}, false
			}
			return d.finish(false, fmt.Sprintf("could not %s: %s", st.Intent, first(prev.Text, 200))), true
		case !prev.OK:
			d.failures++
			if d.failures >= maxFailures {
				return d.finish(false, fmt.Sprintf("could not %s: %s", st.Intent, first(prev.Text, 200))), true
			}
		case strings.Contains(prev.Text, runtime.MayHaveTakenEffect), strings.Contains(prev.Text, runtime.AnsweredByToast):
			// The runtime could not tell whether the press landed (its
			// only answer may have been a toast that was gone before the
			// screen was read), or heard the toast that answered it, and
			// says so: a model does not press it again.
			d.advance()
		case (unchanged || overlaid(d.lastListing, l) && !strings.Contains(prev.Text, "the screen changed")) && (st.Tool == tasks.ToolTap || st.Tool == tasks.ToolLongPress) && d.repeats < maxRepeats:
			// The screen did not change, or only a popup came over it:
			// the tap did not take. A model looking at the same screen
			// (under the popup, which it closes first) taps again.
			d.repeats++
		case st.Until != "" && !tasks.IsListed(l.Text, st.Until):
			d.untils++
			if d.untils >= maxUntil {
				return d.finish(false, fmt.Sprintf("%q is not shown after %d tries to %s", st.Until, d.untils, st.Intent)), true
			}
		default:
			d.advance()
		}
	case kindScroll:
		if unchanged {
			// The end of the list in this direction.
			if d.scrollUp {
				d.scrolls = maxScrolls
			}
			d.scrollUp = true
		}
	}
	return move{}, false
}

func (d *decider) advance() {
	d.i++
	d.scrolls, d.waits, d.dismissals, d.repeats, d.failures, d.untils = 0, 0, 0, 0, 0, 0
	d.scrollUp = false
}

// act decides the call for the current script step on l.
func (d *decider) act(l listing) move {
	for d.i < len(d.script) {
		st := d.script[d.i]
		if st.Tool == tasks.ToolFinishTask && (st.Shows == "" || tasks.IsListed(l.Text, st.Shows)) {
			// A finish that claims what the screen shows is made once it
			// is listed: until then its label is looked for as a target.
			ok, _ := st.Args["success"].(bool)
			reason, _ := st.Args["reason"].(string)
			m := d.finish(ok, reason)
			m.Shows = st.Shows
			return m
		}
		want := st.Target
		if st.Tool == tasks.ToolFinishTask {
			want = st.Shows
		}
		var target *tasks.Listed
		if want != "" {
			// Text goes into a field: a button labelled like the field
			// ("短信", the button that opens the message box, where the
			// box is not open yet) is not the target a model types into.
			if t, ok := tasks.FindTarget(l.Text, want); ok && (st.Tool != tasks.ToolTypeText || l.editable(t.Index)) {
				target = &t
			}
		}
		if ob, ok := l.obstacle(); ok && (target == nil || target.Index != ob.Index) && d.dismissals < maxDismissals {
			d.dismissals++
			return d.call(l, kindDismiss, fmt.Sprintf("close what is in the way (%q)", ob.Label), tools.Tap, map[string]any{"element": ob.Index})
		}
		if want == "" {
			return d.call(l, kindStep, st.Intent, st.Tool, st.Args)
		}
		if target != nil {
			args := map[string]any{}
			for k, v := range st.Args {
				args[k] = v
			}
			args["element"] = target.Index
			return d.call(l, kindStep, st.Intent, st.Tool, args)
		}
		// The target is not listed.
		if l.loading() && d.waits < maxWaits {
			d.waits++
			return d.call(l, kindWait, "wait for the screen to load", tools.Wait, map[string]any{"seconds": waitSeconds})
		}
		if st.IfMissing == "skip" {
			d.advance()
			continue
		}
		if d.scrolls == 0 && d.backtrack(l) {
			continue
		}
		sc, scrolls := l.scrollable()
		if !scrolls {
			// Nothing on the screen scrolls (a list marks itself
			// scrollable only while it has more to show, as
			// RecyclerView, ListView and ScrollView do): all of it is
			// listed, and a model does not swipe for more.
			return d.finish(false, fmt.Sprintf("no %q on the screen, and nothing on it scrolls (looked for it to %s)", want, st.Intent))
		}
		if d.scrolls < maxScrolls {
			d.scrolls++
			dir := "down"
			if d.scrollUp {
				dir = "up"
			}
			args := map[string]any{"direction": dir, "element": sc.Index}
			return d.call(l, kindScroll, fmt.Sprintf("scroll %s to find %q", dir, want), tools.Scroll, args)
		}
		return d.finish(false, fmt.Sprintf("no %q on the screen (looked for it to %s)", want, st.Intent))
	}
	return d.finish(true, "every step of the script is done")
}

// overlaid says whether now is the screen before with only a popup over
// it: every line of before is still listed, a popup that was not there is,
// and every new line is the popup's (its id says so: a dialog of the app's
// own, a toast, would be the tap's effect).
func overlaid(before string, now listing) bool {
	if _, ok := now.obstacle(); !ok {
		return false
	}
	b, err := parseListing(before)
	if err != nil {
		return false
	}
	if _, ok := b.obstacle(); ok {
		return false
	}
	had := map[int]item{}
	for _, it := range b.Items {
		had[it.Index] = it
	}
	kept := 0
	for _, it := range now.Items {
		if old, ok := had[it.Index]; ok && old == it {
			kept++
			continue
		}
		if !containsAny(strings.ToLower(it.ID), popupIDs) {
			return false
		}
	}
	return kept == len(b.Items)
}

// backtrack goes back one step when the previous step was a tap whose
// target is still on the screen while this step's is not: the tap did not
// take, whatever its result said (a popup that came at that moment looks
// like its effect). A model looking at the screen sees the button it
// pressed still there and presses it again; once per step.
func (d *decider) backtrack(l listing) bool {
	if d.i == 0 || d.backtracked[d.i] {
		return false
	}
	prev := d.script[d.i-1]
	if (prev.Tool != tasks.ToolTap && prev.Tool != tasks.ToolLongPress) || prev.Target == "" {
		return false
	}
	// Still there as something to press (a page titled like the row that
	// opened it is not the row).
	t, ok := tasks.FindTarget(l.Text, prev.Target)
	if !ok || !l.clickable(t.Index) {
		return false
	}
	if d.backtracked == nil {
		d.backtracked = map[int]bool{}
	}
	d.backtracked[d.i] = true
	d.i--
	d.scrolls, d.waits, d.dismissals, d.repeats, d.failures, d.untils = 0, 0, 0, 0, 0, 0
	d.scrollUp = false
	return true
}

func (d *decider) call(l listing, kind callKind, intent, tool string, args map[string]any) move {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return d.finish(false, fmt.Sprintf("the script's arguments for %s are not JSON: %v", tool, err))
	}
	d.last, d.lastListing = kind, l.Text
	return move{Intent: intent, Call: tools.Call{Name: tool, Args: b}}
}

func (d *decider) finish(success bool, reason string) move {
	d.done = true
	d.last = kindNone
	b, _ := json.Marshal(map[string]any{"success": success, "reason": reason})
	return move{Intent: "finish the task", Call: tools.Call{Name: tools.FinishTask, Args: b}, Finish: true, Success: success, Reason: reason}
}
