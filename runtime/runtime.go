// Package runtime runs a task: the TaskRunner's observe → plan → act →
// observe loop, the Executor that turns a planned step into tool calls
// (waiting for its element, settling, checking, retrying), and the Memory of
// what this task has seen and tried.
//
// The loop is a plain for loop; it ends when the Planner finishes the task,
// the task fails with a reason (max steps, the Planner gives up, the device is
// gone, the loop is stuck), or its context is cancelled.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"phonepilot/apps"
	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Config tunes the loop and the Executor. The zero value is not valid; start
// from Defaults.
type Config struct {
	// MaxSteps bounds the steps a task may execute.
	MaxSteps int
	// StepRetries is the retry ceiling: how many attempts one step gets
	// before it is failed and the Planner re-plans.
	StepRetries int
	// WaitTimeout bounds the wait for a step's target element to appear and
	// for an expected element to show after an action that took effect.
	WaitTimeout time.Duration
	// PollInterval is how often the Scene is observed while waiting for an
	// element. While settling, a read follows the previous one after
	// PollInterval less the time a dump takes (on a phone, back to back).
	PollInterval time.Duration
	// SettleTimeout caps the wait for the screen to settle after an action:
	// for the first read that shows the step's expected outcome with no
	// loading indicator, or else for two consecutive equal reads.
	SettleTimeout time.Duration
	// BackoffBase and BackoffMax shape the jittered exponential backoff
	// between attempts of a step.
	BackoffBase, BackoffMax time.Duration
	// FixedDelay, when > 0, replaces settling: sleep this long after every
	// action, then observe once (what other agents do; the bench compares).
	FixedDelay time.Duration
	// StuckSteps: no new screen for this many steps in a row counts as a loop.
	StuckSteps int
	// RepeatLimit: the same action on the same screen this many times counts
	// as a loop.
	RepeatLimit int
	// RecentScenes bounds the Scenes Memory keeps for the Planner.
	RecentScenes int
	// Seed seeds the backoff jitter (reproducible runs).
	Seed int64
	// StaleAfter: a step planned on a screen read longer ago than this
	// (an AI planner always: it thinks for seconds) does not act on that
	// screen. It reads the screen again and acts only when every input
	// lands on the element it was planned on (same class, label, id,
	// bounds, app) with nothing new on top at its point; otherwise the
	// step is recorded as re-planned and the planner plans again on the
	// new screen. 0: whenever any time passed.
	StaleAfter time.Duration
}

// Defaults returns the configuration a task runs with unless told otherwise.
func Defaults() Config {
	return Config{
		MaxSteps:      30,
		StepRetries:   3,
		WaitTimeout:   10 * time.Second,
		PollInterval:  100 * time.Millisecond,
		SettleTimeout: 3 * time.Second,
		BackoffBase:   200 * time.Millisecond,
		BackoffMax:    2 * time.Second,
		StuckSteps:    8,
		RepeatLimit:   3,
		RecentScenes:  8,
		Seed:          1,
		StaleAfter:    250 * time.Millisecond,
	}
}

// Validate reports the first setting that cannot work, naming it.
func (c Config) Validate() error {
	switch {
	case c.MaxSteps < 1:
		return fmt.Errorf("runtime: max_steps must be at least 1, got %d", c.MaxSteps)
	case c.StepRetries < 1:
		return fmt.Errorf("runtime: step_retries must be at least 1, got %d", c.StepRetries)
	case c.WaitTimeout <= 0:
		return fmt.Errorf("runtime: wait_timeout must be positive, got %s", c.WaitTimeout)
	case c.PollInterval <= 0:
		return fmt.Errorf("runtime: poll_interval must be positive, got %s", c.PollInterval)
	case c.SettleTimeout <= 0:
		return fmt.Errorf("runtime: settle_timeout must be positive, got %s", c.SettleTimeout)
	case c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase:
		return fmt.Errorf("runtime: backoff must satisfy 0 < base (%s) <= max (%s)", c.BackoffBase, c.BackoffMax)
	case c.StaleAfter < 0:
		return fmt.Errorf("runtime: stale_after must not be negative, got %s", c.StaleAfter)
	case c.FixedDelay < 0:
		return fmt.Errorf("runtime: fixed_delay must not be negative, got %s", c.FixedDelay)
	case c.StuckSteps < 2:
		return fmt.Errorf("runtime: stuck_steps must be at least 2, got %d", c.StuckSteps)
	case c.RepeatLimit < 2:
		return fmt.Errorf("runtime: repeat_limit must be at least 2, got %d", c.RepeatLimit)
	case c.RecentScenes < 1:
		return fmt.Errorf("runtime: recent_scenes must be at least 1, got %d", c.RecentScenes)
	}
	return nil
}

// Options are what a Runner is given besides its Config and Planner.
type Options struct {
	// Clock drives every wait; clock.Real when nil.
	Clock clock.Clock
	// Logger receives debug lines; discarded when nil.
	Logger *slog.Logger
	// OnEvent is called synchronously, in order, from the loop.
	OnEvent func(Event)
	// Backoff is the pause between attempts of a step; nil is NewBackoff
	// over Config's BackoffBase, BackoffMax and Seed.
	Backoff Backoff
	// Gate is asked before every action that touches the phone; nil is the
	// default safety gate (confirm every category it flags).
	Gate Gate
	// Person confirms gated actions and answers questions; nil refuses
	// every confirmation (nobody to ask) and fails a question.
	Person Person
}

// Event is one thing that happened during a run. Fields not relevant to the
// Type are zero.
type Event struct {
	Type lifecycle.EventType
	Time time.Time
	// Step is the step number (1-based) the event belongs to, 0 before any.
	Step   int
	Intent string
	Call   *tools.Call
	// Attempt is set on EventAttempt.
	Attempt *plan.Attempt
	// Record is set on EventStepFinished.
	Record *plan.StepRecord
	// Scene is the Scene observed (EventSceneObserved) or the Scene the step
	// acted on (EventStepStarted, EventStepFinished).
	Scene *scene.Scene
	// Steps is the Planner's ordered plan (EventPlan).
	Steps []plan.PlannedStep
	// Status, Cause and Reason are set on EventStatus (Reason also on
	// EventPlan when re-planning, and on EventTaskStarted: the goal).
	Status lifecycle.Status
	Cause  lifecycle.Cause
	Reason string
	// Usage is the decision's cost on EventPlan, the task's total on
	// EventStatus.
	Usage plan.Usage
}

// Result is how a task ended: a final status, the typed cause (empty when
// completed) and the reason in words.
type Result struct {
	Status   lifecycle.Status  `json:"status"`
	Cause    lifecycle.Cause   `json:"cause,omitempty"`
	Reason   string            `json:"reason,omitempty"`
	Steps    []plan.StepRecord `json:"steps"`
	Usage    plan.Usage        `json:"usage"`
	Started  time.Time         `json:"started"`
	Duration time.Duration     `json:"duration_ns"`
	// FinalScene is the last screen the loop observed: the screen after the
	// last action when the task got that far. Nil when none was read.
	FinalScene *scene.Scene `json:"-"`
}

// Runner runs tasks on one device. Run may be called again after it returns;
// concurrent Runs on one device would fight over the screen and are not
// supported.
type Runner struct {
	cfg     Config
	dev     device.Device
	planner plan.Planner
	clock   clock.Clock
	log     *slog.Logger
	onEvent func(Event)
	backoff Backoff
	gate    Gate
	person  Person
}

// New checks cfg and builds a Runner that asks planner. The Planner is the
// caller's (cmd/phonepilot builds the rule or the AI planner): the runtime
// knows nothing of providers, keys or cameras.
func New(cfg Config, dev device.Device, planner plan.Planner, opt Options) (*Runner, error) {
	if dev == nil {
		return nil, errors.New("runtime: no device")
	}
	if planner == nil {
		return nil, errors.New("runtime: no planner")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, dev: dev, planner: planner, clock: opt.Clock, log: opt.Logger, onEvent: opt.OnEvent, backoff: opt.Backoff,
		gate: opt.Gate, person: opt.Person}
	if r.clock == nil {
		r.clock = clock.Real{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// Planner returns the Planner the Runner uses.
func (r *Runner) Planner() plan.Planner { return r.planner }

// reportObserver emits EventObserverSwitched when the device (a
// device.ObserverReporter) switched how it is observed since the seen
// switches, and returns the count now.
func (r *Runner) reportObserver(step, seen int) int {
	o, ok := r.dev.(device.ObserverReporter)
	if !ok {
		return seen
	}
	st := o.Observer()
	if st.Switches > seen {
		r.emit(Event{Type: lifecycle.EventObserverSwitched, Step: step, Reason: "observing through " + st.Name + ": " + st.Reason})
	}
	return st.Switches
}

func (r *Runner) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = r.clock.Now()
	}
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

// Run drives the device toward goal and returns how the task ended. It never
// loops forever: MaxSteps bounds it, and a cancelled ctx ends it promptly
// as lifecycle.Cancelled.
func (r *Runner) Run(ctx context.Context, goal string) Result {
	res := Result{Started: r.clock.Now(), Steps: []plan.StepRecord{}}
	r.emit(Event{Type: lifecycle.EventTaskStarted, Time: res.Started, Reason: goal})
	finish := func(status lifecycle.Status, cause lifecycle.Cause, reason string) Result {
		res.Status, res.Cause, res.Reason = status, cause, reason
		res.Duration = r.clock.Now().Sub(res.Started)
		r.log.Debug("task ended", "status", status, "cause", cause, "reason", reason, "steps", len(res.Steps))
		r.emit(Event{Type: lifecycle.EventStatus, Step: len(res.Steps), Status: status, Cause: cause, Reason: reason, Usage: res.Usage})
		return res
	}
	fail := func(cause lifecycle.Cause, reason string) Result { return finish(lifecycle.Failed, cause, reason) }
	end := func(e ending) Result { return finish(e.status, e.cause, e.reason) }

	mem := NewMemory(r.cfg.RecentScenes, r.cfg.RepeatLimit, r.cfg.StuckSteps)
	exec := newExecutor(r.cfg, r.dev, r.clock, r.log, r.backoff)
	exec.goal, exec.person = goal, r.person
	if b, ok := r.planner.(BesideReads); ok {
		exec.beside = b.BesideRead
	}
	if r.gate != nil {
		exec.gate = r.gate
	}
	installed := r.installedApps(ctx)
	var replan bool
	var replanReason string
	var answer *plan.Answer
	var refused *refusal // the last step was refused: why, and the cause of giving up after it
	stuckReported := false
	observerSwitches := 0 // the device's observer switches reported so far

	for {
		if ctx.Err() != nil {
			return end(cancelled(ctx))
		}
		sc, err := exec.takeLast(), error(nil)
		if sc == nil {
			sc, err = exec.observe(ctx)
			exec.takeLast()
		}
		if err != nil {
			if e, ok := fatal(ctx, err); ok {
				return end(e)
			}
			return fail(lifecycle.CauseStepFailed, fmt.Sprintf("observing the screen: %v", err))
		}
		res.FinalScene = sc
		mem.AddScene(sc)
		r.emit(Event{Type: lifecycle.EventSceneObserved, Step: len(res.Steps), Scene: sc})
		observerSwitches = r.reportObserver(len(res.Steps), observerSwitches)

		stuck := mem.Stuck()
		if stuck != "" && stuckReported {
			return fail(lifecycle.CauseStuck, "stuck: "+stuck)
		}
		in := plan.Input{
			Goal:    goal,
			Scene:   sc,
			History: mem.Steps(),
			Scenes:  mem.Scenes(),
			Replan:  replan,
			Reason:  replanReason,
			Stuck:   stuck,
			Apps:    installed,
			Answer:  answer,
		}
		answer = nil
		if stuck != "" {
			stuckReported = true
			mem.MarkStuckReported()
		}
		dec, err := r.planner.Plan(ctx, in)
		res.Usage = res.Usage.Add(dec.Usage)
		if err != nil {
			if e, ok := fatal(ctx, err); ok {
				return end(e)
			}
			return fail(lifecycle.CauseModelError, fmt.Sprintf("planner: %v", err))
		}
		r.emit(Event{Type: lifecycle.EventPlan, Step: len(res.Steps), Steps: dec.Steps, Reason: replanReason, Usage: dec.Usage})
		if f := finishOf(dec); f != nil {
			if f.Success {
				return finish(lifecycle.Completed, lifecycle.CauseNone, f.Reason)
			}
			reason := f.Reason
			if reason == "" {
				reason = "the planner gave up without a reason"
			}
			if refused != nil && f.Cause == lifecycle.CauseNone {
				// It could not go on without the refused action; say which,
				// unless the planner's reason already does.
				if !strings.Contains(reason, refused.reason) {
					reason += " (after: " + refused.reason + ")"
				}
				return fail(refused.cause, reason)
			}
			return fail(giveUpCause(f, res.Steps), reason)
		}
		if len(dec.Steps) == 0 {
			if refused != nil {
				return fail(refused.cause, "the planner could not go on after: "+refused.reason)
			}
			return fail(lifecycle.CausePlannerGaveUp, "the planner returned no step and did not finish the task")
		}
		if len(res.Steps) >= r.cfg.MaxSteps {
			return fail(lifecycle.CauseMaxSteps, fmt.Sprintf("reached the maximum of %d steps without reaching the goal", r.cfg.MaxSteps))
		}

		// The runner executes the head of the plan and then observes and
		// asks again: the rest of the list is the plan of record, and a
		// popup or a wrong screen is seen before the next step, not after.
		ps := dec.Steps[0]
		number := len(res.Steps) + 1
		call := ps.Call
		r.emit(Event{Type: lifecycle.EventStepStarted, Step: number, Intent: ps.Intent, Call: &call, Scene: sc})
		onAttempt := func(a plan.Attempt, c tools.Call) {
			r.emit(Event{Type: lifecycle.EventAttempt, Step: number, Intent: ps.Intent, Call: &c, Attempt: &a})
		}
		var rec plan.StepRecord
		var actedOn *scene.Scene
		if q, asks, qerr := tools.Question(call); asks {
			rec, answer, err = r.ask(ctx, exec, number, ps, q, qerr, sc, onAttempt)
			actedOn = sc
		} else {
			rec, actedOn, err = exec.execute(ctx, number, ps, sc, onAttempt)
		}
		rec.Usage = dec.Usage
		if ctx.Err() != nil && rec.Status == lifecycle.StepFailed {
			// The step did not fail: the task was cancelled under it.
			rec.Status, rec.Reason = lifecycle.StepCancelled, cancelled(ctx).reason
		}
		mem.AddStep(rec)
		res.Steps = append(res.Steps, rec)
		recCopy := rec
		r.emit(Event{Type: lifecycle.EventStepFinished, Step: number, Intent: ps.Intent, Call: &recCopy.Call, Record: &recCopy, Scene: actedOn})
		if err != nil {
			if e, ok := fatal(ctx, err); ok {
				return end(e)
			}
		}
		refused = exec.refusal
		switch {
		case refused != nil:
			replan, replanReason = true, fmt.Sprintf("step %d (%s) was refused and did not run: %s. Do not ask for it again: find another way, or finish the task unsuccessfully.",
				number, rec.Intent, rec.Reason)
		case rec.Status == lifecycle.StepReplanned:
			replan, replanReason = true, fmt.Sprintf("step %d (%s) did not run: %s. Plan again on the screen as it is now.",
				number, rec.Intent, rec.Reason)
		case rec.Status == lifecycle.StepFailed:
			replan, replanReason = true, fmt.Sprintf("step %d (%s) failed: %s", number, rec.Intent, rec.Reason)
		default:
			replan, replanReason = false, ""
		}
	}
}

// ask hands the phone to a person for an ask_user step: the task waits
// (waiting_user) until the person answers, and the planner's next decision
// gets the answer and a fresh read of the screen.
func (r *Runner) ask(ctx context.Context, exec *executor, number int, ps plan.PlannedStep, q string, qerr error, sc *scene.Scene,
	onAttempt func(plan.Attempt, tools.Call)) (plan.StepRecord, *plan.Answer, error) {
	start := r.clock.Now()
	exec.refusal = nil
	fp := exec.fp(sc)
	rec := plan.StepRecord{Number: number, Intent: ps.Intent, Tag: ps.Tag, Call: ps.Call, Attempts: []plan.Attempt{}, Before: fp, After: fp, Started: start}
	end := func(status lifecycle.StepStatus, result string) plan.StepRecord {
		a := plan.Attempt{Number: 1, Result: result, Duration: r.clock.Now().Sub(start)}
		rec.Attempts = append(rec.Attempts, a)
		onAttempt(a, ps.Call)
		rec.Status, rec.Duration = status, r.clock.Now().Sub(start)
		if status == lifecycle.StepFailed {
			rec.Reason = result
		}
		return rec
	}
	switch {
	case qerr != nil:
		return end(lifecycle.StepFailed, fmt.Sprintf("invalid tool call %s: %v", ps.Call, qerr)), nil, nil
	case r.person == nil:
		return end(lifecycle.StepFailed, "nobody to ask: this run has no person to answer questions"), nil, nil
	}
	ans, err := r.person.Ask(ctx, Question{Step: number, Call: ps.Call, Text: q, Scene: sc})
	if err != nil {
		return end(lifecycle.StepFailed, err.Error()), nil, err
	}
	// The person may have used the phone: the next decision reads it anew.
	exec.last = nil
	return end(lifecycle.StepSucceeded, fmt.Sprintf("a person (%s) answered", ans.By)), &plan.Answer{Question: q, Text: ans.Text}, nil
}

// finishOf returns the decision's finish signal, also when a Planner put a
// call of a task-ending tool (finish_task) in its steps instead of setting
// Finish; the tool's definition reads the call.
func finishOf(dec plan.Decision) *plan.Finish {
	if dec.Finish != nil {
		return dec.Finish
	}
	if len(dec.Steps) == 0 {
		return nil
	}
	f, err := tools.Ending(dec.Steps[0].Call)
	switch {
	case err != nil:
		return &plan.Finish{Success: false, Reason: "the planner's " + dec.Steps[0].Call.Name + " call was malformed: " + err.Error()}
	case f != nil:
		return &plan.Finish{Success: f.Success, Reason: f.Reason}
	}
	return nil
}

// ending is how a task ends: a final status, its cause and reason.
type ending struct {
	status lifecycle.Status
	cause  lifecycle.Cause
	reason string
}

// fatal classifies errors that end the task whatever the Planner thinks.
func fatal(ctx context.Context, err error) (ending, bool) {
	switch {
	case ctx.Err() != nil:
		return cancelled(ctx), true
	case errors.Is(err, device.ErrDisconnected):
		return ending{lifecycle.Failed, lifecycle.CauseDeviceGone, fmt.Sprintf("device disconnected: %v", err)}, true
	case errors.Is(err, ErrApprovalTimeout):
		return ending{lifecycle.Failed, lifecycle.CauseApprovalTimeout, err.Error()}, true
	case errors.Is(err, ErrAnswerTimeout):
		return ending{lifecycle.Failed, lifecycle.CauseUserTimeout, err.Error()}, true
	}
	if e, ok := isRefused(err); ok {
		return e, true
	}
	return ending{}, false
}

// cancelled is the ending of a task whose context ended.
func cancelled(ctx context.Context) ending {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ending{lifecycle.Cancelled, lifecycle.CauseCancelled, "cancelled: the task's deadline passed"}
	}
	return ending{lifecycle.Cancelled, lifecycle.CauseCancelled, "cancelled"}
}

// giveUpCause is the cause of a planner's unsuccessful finish: its own
// when it gave one; step_failed when the step just before failed (the
// planner could not recover from it); else planner_gave_up.
func giveUpCause(f *plan.Finish, steps []plan.StepRecord) lifecycle.Cause {
	switch {
	case f.Cause != lifecycle.CauseNone:
		return f.Cause
	case len(steps) > 0 && steps[len(steps)-1].Status == lifecycle.StepFailed:
		return lifecycle.CauseStepFailed
	}
	return lifecycle.CausePlannerGaveUp
}

// installedApps lists the phone's apps for the planner, when the device can
// say (nil when it cannot, or the listing failed: the planner then does not
// check names against it).
func (r *Runner) installedApps(ctx context.Context) []apps.Installed {
	l, ok := r.dev.(device.PackageLister)
	if !ok {
		return nil
	}
	pkgs, err := l.Packages(ctx)
	if err != nil {
		r.log.Debug("listing the installed apps", "err", err)
		return nil
	}
	out := make([]apps.Installed, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, apps.Installed{Package: p, Names: apps.NamesOf(p)})
	}
	return out
}
