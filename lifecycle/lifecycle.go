// Package lifecycle is the vocabulary of a task's life, written once: the
// task statuses, the typed causes of an end, the event types and the step
// statuses (../shared/design/TASKS.md is the contract). Every other package
// and the web page (through the API) take these words from here; nobody
// spells them by hand.
//
// It imports nothing of phonepilot, so storage, runtime, plan, api and the
// front ends can all depend on it.
package lifecycle

import "slices"

// Status is where a task is in its life.
type Status string

// The task statuses, in lifecycle order.
const (
	// Queued: accepted, waiting for its device.
	Queued Status = "queued"
	// Running: the loop owns the device.
	Running Status = "running"
	// WaitingApproval: the safety gate stopped an action; a person decides
	// (the task's pending decision, kind PendingApproval, says what).
	WaitingApproval Status = "waiting_approval"
	// WaitingUser: the planner needs a person (kind PendingQuestion).
	WaitingUser Status = "waiting_user"
	// Completed: the goal was reached.
	Completed Status = "completed"
	// Failed: the task ended without reaching its goal; Cause says why.
	Failed Status = "failed"
	// Cancelled: a person or a client asked it to stop.
	Cancelled Status = "cancelled"
	// Interrupted: the process that ran it died or stopped.
	Interrupted Status = "interrupted"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{Queued, Running, WaitingApproval, WaitingUser, Completed, Failed, Cancelled, Interrupted}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Terminal reports whether a task in status s has ended for good: a final
// task never changes again.
func (s Status) Terminal() bool {
	switch s {
	case Completed, Failed, Cancelled, Interrupted:
		return true
	}
	return false
}

// Active reports whether a task in status s holds its device (running or
// waiting for a person).
func (s Status) Active() bool {
	switch s {
	case Running, WaitingApproval, WaitingUser:
		return true
	}
	return false
}

func (s Status) String() string { return string(s) }

// ActiveStatuses are the Statuses that are Active, in Statuses' order:
// what the task service's end, the stores' recovery of a dead owner's
// tasks and the farm's reaper take a task from. Derived, so a new active
// status is in all of them.
func ActiveStatuses() []Status {
	var out []Status
	for _, s := range Statuses {
		if s.Active() {
			out = append(out, s)
		}
	}
	return out
}

// Cause is the typed reason a task ended; the human-readable reason stays
// beside it. A completed task has no cause (the empty Cause).
type Cause string

// The causes of TASKS.md.
const (
	// CauseNone is the cause of a completed task (and of one not ended).
	CauseNone Cause = ""
	// CauseMaxSteps: the step ceiling was reached.
	CauseMaxSteps Cause = "max_steps"
	// CauseStuck: the loop detector saw the task going round.
	CauseStuck Cause = "stuck"
	// CausePlannerGaveUp: finish_task(false), or the planner cannot go on.
	CausePlannerGaveUp Cause = "planner_gave_up"
	// CauseGoalNotUnderstood: the planner could not read the goal.
	CauseGoalNotUnderstood Cause = "goal_not_understood"
	// CauseStepFailed: a step failed after its retry ceiling and the task
	// could not go on.
	CauseStepFailed Cause = "step_failed"
	// CauseDeviceGone: the phone vanished or stopped answering.
	CauseDeviceGone Cause = "device_gone"
	// CauseModelError: the model provider failed after its retries.
	CauseModelError Cause = "model_error"
	// CauseApprovalDenied: an action was denied and the planner could not
	// go on.
	CauseApprovalDenied Cause = "approval_denied"
	// CauseApprovalTimeout: nobody decided in time.
	CauseApprovalTimeout Cause = "approval_timeout"
	// CauseUserTimeout: nobody answered in time.
	CauseUserTimeout Cause = "user_timeout"
	// CausePolicyDenied: the policy forbids the action outright.
	CausePolicyDenied Cause = "policy_denied"
	// CauseCancelled: a person or client cancelled the task.
	CauseCancelled Cause = "cancelled"
	// CauseInterrupted: the process that ran the task died or stopped.
	CauseInterrupted Cause = "interrupted"
)

// Causes lists every cause but CauseNone.
var Causes = []Cause{CauseMaxSteps, CauseStuck, CausePlannerGaveUp, CauseGoalNotUnderstood, CauseStepFailed,
	CauseDeviceGone, CauseModelError, CauseApprovalDenied, CauseApprovalTimeout, CauseUserTimeout,
	CausePolicyDenied, CauseCancelled, CauseInterrupted}

// Valid reports whether c is CauseNone or one of Causes.
func (c Cause) Valid() bool { return c == CauseNone || slices.Contains(Causes, c) }

func (c Cause) String() string { return string(c) }

// EventType names what an event reports.
type EventType string

// The event types, in the order they can occur in a task. EventStatus is
// written at every status change; the last event of a task is the status
// event of its final status.
const (
	EventTaskQueued    EventType = "task_queued"
	EventTaskStarted   EventType = "task_started"
	EventSceneObserved EventType = "scene_observed"
	// EventObserverSwitched: the phone changed how it is observed (its
	// helper failed; device.ObserverReporter); Reason says to what and why.
	EventObserverSwitched  EventType = "observer_switched"
	EventPlan              EventType = "plan"
	EventStepStarted       EventType = "step_started"
	EventAttempt           EventType = "attempt"
	EventStepFinished      EventType = "step_finished"
	EventApprovalRequested EventType = "approval_requested"
	EventApprovalDecided   EventType = "approval_decided"
	EventQuestionAsked     EventType = "question_asked"
	EventQuestionAnswered  EventType = "question_answered"
	EventStatus            EventType = "status"
)

// EventTypes lists every event type.
var EventTypes = []EventType{EventTaskQueued, EventTaskStarted, EventSceneObserved, EventObserverSwitched, EventPlan, EventStepStarted,
	EventAttempt, EventStepFinished, EventApprovalRequested, EventApprovalDecided, EventQuestionAsked,
	EventQuestionAnswered, EventStatus}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool { return slices.Contains(EventTypes, t) }

func (t EventType) String() string { return string(t) }

// Waiting reports whether a task in status s waits for a person (and so
// carries a pending decision).
func (s Status) Waiting() bool { return s == WaitingApproval || s == WaitingUser }

// PendingKind is what a waiting task waits for.
type PendingKind string

// The kinds of pending decision.
const (
	// PendingApproval: the gate stopped an action; approve or deny.
	PendingApproval PendingKind = "approval"
	// PendingQuestion: the planner asked a person (ask_user); answer.
	PendingQuestion PendingKind = "question"
)

// PendingKinds lists every kind.
var PendingKinds = []PendingKind{PendingApproval, PendingQuestion}

// Valid reports whether k is one of PendingKinds.
func (k PendingKind) Valid() bool { return slices.Contains(PendingKinds, k) }

// Status is the status of a task waiting for a pending decision of kind k.
func (k PendingKind) Status() Status {
	if k == PendingQuestion {
		return WaitingUser
	}
	return WaitingApproval
}

func (k PendingKind) String() string { return string(k) }

// StepStatus is how one executed step ended.
type StepStatus string

// The step statuses.
const (
	StepSucceeded StepStatus = "succeeded"
	StepFailed    StepStatus = "failed"
	// StepCancelled: the task was cancelled while the step was in flight.
	StepCancelled StepStatus = "cancelled"
	// StepReplanned: the step did not run because the screen changed
	// after it was planned (its element moved, changed or was covered);
	// the planner plans again on the new screen.
	StepReplanned StepStatus = "replanned"
)

// StepStatuses lists every step status.
var StepStatuses = []StepStatus{StepSucceeded, StepFailed, StepCancelled, StepReplanned}

// Valid reports whether s is one of StepStatuses.
func (s StepStatus) Valid() bool { return slices.Contains(StepStatuses, s) }

func (s StepStatus) String() string { return string(s) }

// Join joins words of one of the lists with sep, for messages and help
// texts ("one of queued, running, …").
func Join[T ~string](words []T, sep string) string {
	var b []byte
	for i, w := range words {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, w...)
	}
	return string(b)
}
