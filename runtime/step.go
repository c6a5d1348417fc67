package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Stepper runs one step at a time for a caller that plans itself (an MCP
// client): the same Executor as a task's loop — the gate and a person
// before the action, settling after it, the tool's own expectation
// checked and retried — without the loop around it. One Stepper belongs to
// one device and one caller at a time; it is not safe for concurrent use.
type Stepper struct {
	exec   *executor
	clock  clock.Clock
	number int
}

// StepOutcome is what one step did.
type StepOutcome struct {
	// Record is the step as executed (attempts, status, fingerprints).
	Record plan.StepRecord
	// After is the screen once the action settled; the screen the step
	// acted on when it did not act (refused, invalid).
	After *scene.Scene
	// Refused is set when the gate or a person refused the action: it did
	// not touch the phone.
	Refused *Refusal
	// Moved says what changed on the screen since the Scene the call was
	// chosen from when the step was not run for it (Record.Status is
	// replanned; After is the screen now).
	Moved string
}

// Refusal says why an action did not run: the cause (policy_denied when
// the policy forbids it, approval_denied when no person said yes) and the
// reason in words.
type Refusal struct {
	Cause  lifecycle.Cause
	Reason string
}

// NewStepper checks cfg and builds a Stepper on dev. opt's Gate and Person
// apply as in a task (nil Gate: the default policy; nil Person: every
// confirmation is refused); OnEvent is not used.
func NewStepper(cfg Config, dev device.Device, opt Options) (*Stepper, error) {
	if dev == nil {
		return nil, errors.New("runtime: no device")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clk, log := opt.Clock, opt.Logger
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := newExecutor(cfg, dev, clk, log, opt.Backoff)
	e.person = opt.Person
	e.outside = true
	if opt.Gate != nil {
		e.gate = opt.Gate
	}
	return &Stepper{exec: e, clock: clk}, nil
}

// Observe reads the screen, retrying failed reads as the loop does.
func (s *Stepper) Observe(ctx context.Context) (*scene.Scene, error) {
	sc, err := s.exec.observe(ctx)
	s.exec.takeLast()
	return sc, err
}

// Do runs call on sc, the screen the caller chose it from: gated, acted,
// settled and checked against the tool's expected effect. The caller
// planned outside, for an unknown time: a call that lands on the screen
// (tools.Aims) is first checked on a read of the screen of the moment,
// and when it would land elsewhere it is not run (Record.Status
// replanned, Moved says what changed, After is the screen now). The error is
// set only when ctx ended or the device is gone; a failed or refused step
// is told by the outcome.
func (s *Stepper) Do(ctx context.Context, call tools.Call, sc *scene.Scene) (StepOutcome, error) {
	s.number++
	ps := plan.PlannedStep{Call: call, Expect: plan.ExpectationOf(call)}
	if t, ok := tools.Lookup(call.Name); ok {
		var el *scene.Element
		if sc != nil {
			el = elementOf(call, sc)
		}
		ps.Intent = t.Intent(call, el)
	}
	rec, actedOn, err := s.exec.execute(ctx, s.number, ps, sc, func(plan.Attempt, tools.Call) {})
	out := StepOutcome{Record: rec, After: actedOn, Moved: s.exec.moved}
	// The Executor keeps its latest read of the screen (after settling, or
	// after a wait for a person): that is the screen now.
	if last := s.exec.takeLast(); last != nil {
		out.After = last
	}
	if r := s.exec.refusal; r != nil {
		out.Refused = &Refusal{Cause: r.cause, Reason: r.reason}
	}
	if err != nil {
		if e, ok := isRefused(err); ok {
			// Asked again for what was refused: refused again, not asked.
			out.Refused = &Refusal{Cause: e.cause, Reason: e.reason}
			return out, nil
		}
		if ctx.Err() != nil || errors.Is(err, device.ErrDisconnected) {
			return out, err
		}
		return out, fmt.Errorf("step: %w", err)
	}
	return out, nil
}
