package runtime

import (
	"context"
	"errors"

	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Gate decides about an action before it touches the phone (*safety.Gate
// is one). The Executor asks it for every call whose tool acts on the
// phone, whoever planned the call.
type Gate interface {
	Check(in safety.Input) safety.Decision
}

// Person is who the runtime turns to when it needs a person: an action the
// gate wants confirmed, a question the planner asks (ask_user). The task
// service implements it (the task waits, a front end decides); a run
// without one refuses every confirmation and cannot ask.
type Person interface {
	// Approve blocks until a person decides about a, ctx ends (its error),
	// or nobody decided in time (an error wrapping ErrApprovalTimeout).
	Approve(ctx context.Context, a Approval) (ApprovalDecision, error)
	// Ask blocks until a person answers q, ctx ends, or nobody answered in
	// time (an error wrapping ErrAnswerTimeout).
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Approval is an action the gate stopped before it touched the phone.
type Approval struct {
	Step int
	// Call is the call exactly as it will run (its element filled in).
	Call tools.Call
	// Element is the element it acts on, nil for calls without one.
	Element *scene.Element
	// Scene is the screen the call resolved on.
	Scene *scene.Scene
	// Decision is the gate's: its category and reason.
	Decision safety.Decision
}

// ApprovalDecision is a person's yes or no, and who said it.
type ApprovalDecision struct {
	Approved bool
	By, Note string
	// Unasked: nobody was asked (no terminal); Note says why. The step's
	// reason then says "not approved", never that a person denied it.
	Unasked bool
}

// Question is what the planner asks a person (the ask_user tool).
type Question struct {
	Step  int
	Call  tools.Call
	Text  string
	Scene *scene.Scene
}

// Answer is a person's reply to a Question.
type Answer struct {
	By, Text string
}

// Errors a Person returns when nobody came.
var (
	ErrApprovalTimeout = errors.New("nobody approved or denied the action in time")
	ErrAnswerTimeout   = errors.New("nobody answered the question in time")
)
