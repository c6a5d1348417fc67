// Package tasks is phonebench's task set: parameterised goals over the
// simulated phone's apps (device/sim), in English and Chinese, each with the
// phone's starting state, the intent script a perfect planner would follow,
// and a check on the simulator's state JSON.
//
// A task is judged on the phone's state, never on the agent's claim: after a
// run the harness reads sim.Phone.State() and calls Check. What success
// means depends on the Kind: a Normal task passes its Check; an AlreadyDone
// task starts in the goal state and must end completed with the state
// unchanged (an agent that toggles blindly undoes it); an Impossible task
// must fail with WantCause and leave the user's data untouched; an Approval
// task must stop at the safety gate (waiting_approval, Check failing: no
// order or message yet), then pass its Check exactly once after a person
// approves. Unchanged compares the user's data of two states (settings,
// contacts, messages sent, alarms, cart, orders, history, installed apps).
//
// Parameters are drawn per seed from small lists. A parameter that differs
// by locale comes as two keys, "name_en" and "name_zh" (a contact is Alice
// Chen on an English phone and 张伟 on a Chinese one); each locale's goal
// uses its own, and Check reads the locale from the state.
//
// A Step's Target names an element by its label in the Scene listing a
// model reads; FindTarget is the one matching rule, for this package's
// tests and the harness's scripted decision-maker alike.
package tasks

import (
	"path"
	"sort"
	"strings"

	"phonepilot/device/sim"
	"phonepilot/lifecycle"
)

// Kind says how a task is judged.
type Kind string

// The kinds of task.
const (
	Normal      Kind = "normal"       // reach the goal; Check passes
	AlreadyDone Kind = "already_done" // starts in the goal state; success = completed, Check passes, and no toggle/write reached the phone (state unchanged)
	Impossible  Kind = "impossible"   // cannot be done; success = failed with WantCause and the state's user data untouched
	Approval    Kind = "approval"     // ends at the gate; success = waiting_approval with Check failing (no order/message), then after approve: completed and Check passing exactly once
)

// Kinds lists every Kind.
var Kinds = []Kind{Normal, AlreadyDone, Impossible, Approval}

// Task is one phonebench task.
type Task struct {
	Name   string                                   // "settings.bluetooth.on": app.what[.variant], unique, used by --tasks PATTERN (path.Match / substring)
	Apps   []string                                 // packages it touches
	Kind   Kind                                     // how it is judged
	Goal   map[string]string                        // locale ("en","zh") → template with {param} placeholders
	Rule   map[string]string                        // locale → phrasing the rule planner covers (template too); absent = rule policy skips the task
	Params func(seed int64) map[string]string       // deterministic per seed (nil = no params)
	Start  func(params map[string]string) sim.Start // the phone's starting state
	// Script is the intent script the reference decision-maker follows, per locale, with
	// labels as the phone shows them in that locale and params filled in.
	Script func(locale string, params map[string]string) []Step
	// Check judges the phone's state JSON (sim.Phone.State()) after the run: nil = goal met.
	Check     func(state []byte, params map[string]string) error
	WantCause lifecycle.Cause // Impossible: the cause the run must end with
	// Refusable: the impossibility shows before the first action (an app
	// that is not installed), so a planner that refuses the goal then
	// (goal_not_understood, nothing touched) is right too.
	Refusable bool
	MaxSteps  int // 0 = runtime default
	// Approvals, for an Approval task, is how many times the safety gate
	// stops the script for a person (0 = 1): a purchase through "Buy now"
	// stops at Buy now and again at Pay now. The harness approves each;
	// Check fails until the last one has run.
	Approvals int
}

// Step is one intent of the script. The decision-maker turns it into one tool call of
// TOOLS.md, reading only the listing a model would see.
type Step struct {
	Intent string // what a model would say it is doing
	Tool   string // a TOOLS.md tool: launch_app, tap, long_press, type_text, scroll, press_key, wait, finish_task …
	// Target is the element to act on, by its label as listed ("" = none); the
	// decision-maker scrolls down (then up) to find it, at most 8 scrolls.
	// How a Target matches a listing line is FindTarget's rule (target.go).
	Target string
	Args   map[string]any // the call's other arguments (text, key, direction, app, success, reason …)
	// IfMissing: what to do when Target cannot be found: "" = fail the step (the decision-maker
	// finishes with success=false, reason naming the target); "skip" = go to the next step.
	IfMissing string
	// Until, for a step that repeats (e.g. scroll until a row shows): a label that must be listed
	// before the script moves on ("" = the step is done once its call succeeded).
	Until string
	// Here: look for Target on the current screen only, without scrolling (a popup's
	// button that may or may not be showing; with IfMissing "skip").
	Here bool
	// Shows, on a finish_task step that claims what the screen shows (the
	// results are listed, the alarm is off, the setting is on), is the
	// label of the element the claim rests on, as the screen lists it
	// after the last action (FindTarget's rule). An agent must have seen
	// it to claim it: the floor charges the wait until a read can first
	// show it, and the decision-maker finishes only once it is listed.
	// "" = the claim rests on the last action's effect alone (the screen
	// changed), or on a tool's answer (an app that is not installed).
	Shows string
}

// Locales are the goal languages every task has.
var Locales = []string{"en", "zh"}

// registry holds every task; each app's file adds its own in init.
var registry []Task

func register(ts ...Task) { registry = append(registry, ts...) }

// All returns every task, sorted by Name.
func All() []Task {
	out := append([]Task(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Select returns the tasks whose Name matches pattern: a path.Match glob
// ("settings.*") or, failing that, a substring ("bluetooth"). Several
// patterns may be given separated by commas. "" and "*" select all.
func Select(pattern string) []Task {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return All()
	}
	var out []Task
	for _, t := range All() {
		for _, p := range strings.Split(pattern, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if ok, err := path.Match(p, t.Name); (err == nil && ok) || strings.Contains(t.Name, p) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// Fill replaces every {name} in template with params[name]. A placeholder
// with no value is left as is (the tests check that none remains).
func Fill(template string, params map[string]string) string {
	if len(params) == 0 || !strings.Contains(template, "{") {
		return template
	}
	pairs := make([]string, 0, 2*len(params))
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pairs = append(pairs, "{"+k+"}", params[k])
	}
	return strings.NewReplacer(pairs...).Replace(template)
}

// ParamsFor returns the task's parameters for seed (an empty map when it
// has none).
func (t Task) ParamsFor(seed int64) map[string]string {
	if t.Params == nil {
		return map[string]string{}
	}
	return t.Params(seed)
}

// GoalFor is the task's goal in locale with params filled in.
func (t Task) GoalFor(locale string, params map[string]string) string {
	return Fill(t.Goal[locale], params)
}

// RuleFor is the rule planner's phrasing in locale with params filled in,
// and whether the task has one.
func (t Task) RuleFor(locale string, params map[string]string) (string, bool) {
	r, ok := t.Rule[locale]
	if !ok {
		return "", false
	}
	return Fill(r, params), true
}

// GateStops is how many times the safety gate stops an Approval task's
// script (Approvals, at least 1), and 0 for the other kinds.
func (t Task) GateStops() int {
	if t.Kind != Approval {
		return 0
	}
	return max(t.Approvals, 1)
}
