// Package plan defines the Planner: given a goal, the current Scene and what
// this task has tried so far, it decides the next step(s). The rule Planner
// (plan/rule) and the AIPlanner (plan/ai) implement it.
package plan

import (
	"context"
	"fmt"
	"time"

	"phonepilot/apps"
	"phonepilot/lifecycle"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Planner decides what to do next.
type Planner interface {
	Plan(ctx context.Context, in Input) (Decision, error)
}

// Input is everything a Planner may look at for one decision.
type Input struct {
	Goal  string
	Scene *scene.Scene
	// Steps attempted so far in this task, oldest first, with outcomes.
	History []StepRecord
	// Recent screens of this task, oldest first (bounded).
	Scenes []SceneRecord
	// Replan is set when the previous step failed or the Scene was not what
	// it expected; Reason says why.
	Replan bool
	Reason string
	// Stuck is set by the loop detector: a description of the loop seen.
	Stuck string
	// Apps are the phone's installed apps, when the device can list them
	// (nil when not known): a planner checks the apps a goal names
	// against them before the first action.
	Apps []apps.Installed
	// Answer is a person's answer to the question the previous step asked
	// (ask_user), nil otherwise; Scene is then the phone as the person
	// left it.
	Answer *Answer
}

// Answer is what a person answered to a planner's question.
type Answer struct {
	Question string `json:"question"`
	Text     string `json:"text"`
}

// Decision is a Planner's answer. Either Steps is non-empty, or Finish is set.
type Decision struct {
	Steps  []PlannedStep
	Finish *Finish
	Usage  Usage // model tokens and latency spent on this decision, if any
}

// Finish ends the task: completed when Success, otherwise failed with Reason
// and Cause (lifecycle.CausePlannerGaveUp when empty; a planner that cannot
// read the goal says lifecycle.CauseGoalNotUnderstood).
type Finish struct {
	Success bool
	Reason  string
	Cause   lifecycle.Cause
}

// Usage is what a decision cost, as the provider reported it (or, for a
// server that reports nothing, as counted: see plan/ai). InputTokens is every
// input token of the requests, cached or not; CacheReadTokens and
// CacheWriteTokens are the parts of it read from and written to the
// provider's prompt cache (OpenAI reports no writes: its caching is
// automatic and free). Estimated says at least one call's figures were
// counted here rather than reported by the provider.
type Usage struct {
	InputTokens      int64         `json:"input_tokens"`
	CacheReadTokens  int64         `json:"cache_read_tokens"`
	CacheWriteTokens int64         `json:"cache_write_tokens"`
	OutputTokens     int64         `json:"output_tokens"`
	Latency          time.Duration `json:"latency_ns"`
	Estimated        bool          `json:"estimated,omitempty"`
}

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		Latency:          u.Latency + o.Latency,
		Estimated:        u.Estimated || o.Estimated,
	}
}

// Tokens is the token counts in a few words, for people: "4210 in (3100
// cached, 610 written), 48 out", with "~" before counts phonepilot counted
// itself; "" when there are none.
func (u Usage) Tokens() string {
	if u.InputTokens+u.OutputTokens == 0 {
		return ""
	}
	approx := ""
	if u.Estimated {
		approx = "~"
	}
	s := fmt.Sprintf("%s%d in", approx, u.InputTokens)
	if u.CacheReadTokens+u.CacheWriteTokens > 0 {
		s += fmt.Sprintf(" (%d cached, %d written)", u.CacheReadTokens, u.CacheWriteTokens)
	}
	return s + fmt.Sprintf(", %s%d out", approx, u.OutputTokens)
}

// Uncached is the input tokens neither read from nor written to the cache.
func (u Usage) Uncached() int64 { return u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens }

// PlannedStep is one intended step: why, which tool call, on which element,
// and what the screen should show afterwards.
type PlannedStep struct {
	Intent string     // "find the search box", "tap it", …: prose, for people
	Call   tools.Call // the capability tool call
	// Tag is what the step is to the planner that built it, set where the
	// step is built and carried into its StepRecord: a planner that reads
	// its progress back from the history compares tags, never intents.
	Tag Tag
	// Target, when set, is resolved against the Scene of the moment by the
	// Executor (waiting for it to appear), which then fills the call's
	// "element" argument. When nil, the call's own arguments stand.
	Target *scene.Selector
	Expect Expectation
}

// Tag is a step's machine name: which kind of step of its planner it is,
// for which part of the goal, on what. The zero Tag is a step no planner
// tagged (the AIPlanner's, an MCP client's).
type Tag struct {
	Kind   TagKind `json:"kind,omitempty"`
	Action int     `json:"action,omitempty"` // the part of the goal it serves, numbered by its planner
	Arg    string  `json:"arg,omitempty"`    // what it acts on, when the kind needs it (a popup's button)
}

// TagKind names a kind of step. Each planner declares its own values.
type TagKind string

// Is reports whether t is of kind k for action i.
func (t Tag) Is(k TagKind, i int) bool { return t.Kind == k && t.Action == i }

// ExpectKind says what kind of change a step expects.
type ExpectKind string

// The expectations a step can carry.
const (
	ExpectNothing   ExpectKind = ""           // no check (wait, finish)
	ExpectChanged   ExpectKind = "changed"    // the screen fingerprint changes
	ExpectApp       ExpectKind = "app"        // App is in front
	ExpectPresent   ExpectKind = "present"    // an element matching Target is on screen
	ExpectGone      ExpectKind = "gone"       // no element matches Target
	ExpectFieldText ExpectKind = "field_text" // an editable field holds Text
)

// Expectation is what the next Scene should show after a step.
type Expectation struct {
	Kind   ExpectKind     `json:"kind,omitempty"`
	App    string         `json:"app,omitempty"`
	Target scene.Selector `json:"target,omitzero"`
	Text   string         `json:"text,omitempty"`
}

// Attempt is one try of a step's tool call.
type Attempt struct {
	Number   int           `json:"number"`
	Result   string        `json:"result"` // the tool's short result or error
	Changed  bool          `json:"changed"`
	Duration time.Duration `json:"duration_ns"`
}

// Effect is what the runtime could tell of a step's effect beyond its
// status.
type Effect string

// The effects a step record can carry.
const (
	// EffectSeen: judged on the screen as the step expected (the default).
	EffectSeen Effect = ""
	// EffectInterrupted: the step failed because something came up over
	// the screen as it acted (a system dialog, an ad over the pressed
	// element), not because the element refused the action: once what came
	// up is cleared the same action may work.
	EffectInterrupted Effect = "interrupted"
	// EffectUnseen: the step succeeded without its effect seen (a press
	// read too late for the toast that is many buttons' only answer): it
	// may have taken effect, so it is never pressed again, even when a
	// popup that came over it is all the screen still shows.
	EffectUnseen Effect = "unseen"
	// EffectToast: the press was answered by a short message (a toast),
	// gone once the screen is read again: it took effect, whatever came up
	// over the screen with it.
	EffectToast Effect = "toast"
)

// StepRecord is a step as executed: what was planned, each attempt, and how
// it ended. The runtime's Memory keeps them; Planners read them.
type StepRecord struct {
	Number   int                  `json:"number"`
	Intent   string               `json:"intent"`
	Tag      Tag                  `json:"tag,omitzero"`
	Call     tools.Call           `json:"call"`
	Attempts []Attempt            `json:"attempts"`
	Status   lifecycle.StepStatus `json:"status"`
	Reason   string               `json:"reason,omitempty"`
	Before   string               `json:"before"` // Scene fingerprint before the step
	After    string               `json:"after"`  // Scene fingerprint after the step
	Changed  bool                 `json:"changed"`
	// Effect is what the runtime could tell of the effect beyond the
	// status (interrupted, unseen, a toast), for the planner deciding
	// whether to do the step again.
	Effect   Effect        `json:"effect,omitempty"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	Usage    Usage         `json:"usage"`
}

// SceneRecord is a past screen, kept small: its fingerprint and the compact
// listing a model reads.
type SceneRecord struct {
	Fingerprint string `json:"fingerprint"`
	Package     string `json:"package"`
	Listing     string `json:"listing"`
}
