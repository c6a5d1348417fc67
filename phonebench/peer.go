package phonebench

import (
	"context"
	"fmt"
	"time"

	"phonepilot/device"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The peer loop is a plain loop here over the phone's device.Device and
// the tools' own execution (tools.Run), not a mode of the runtime: that is
// how Open-AutoGLM and droidrun are built (a screen read, a model call,
// one action, a fixed sleep), and a runtime mode would have to switch off
// most of what the runtime is (wait-for-element, settle, verification,
// retries, the stuck detector) and still bring its own observation
// cadence. The one thing it keeps from phonepilot is the safety gate: an
// irreversible action waits for the harness's approval, as Open-AutoGLM's
// confirmation of sensitive actions does, so unapproved_irreversible
// compares like with like.

// peerResult is how a peer loop's run ended.
type peerResult struct {
	status   lifecycle.Status
	cause    lifecycle.Cause
	reason   string
	steps    []StepLine
	duration time.Duration
	calls    int // model calls
}

// maxObserveFailures bounds the screen reads in a row that fail (the loop
// sleeps its delay and reads again: it has no other answer).
const maxObserveFailures = 10

// peerLoop runs one peer's loop on r: per turn it reads the screen its way
// (charged on its paths), asks its model (calls per turn), acts once
// through its input path, makes its extra commands, reads and model calls,
// and sleeps its own wait for that kind of action. A failed read is
// followed by the peer's own retry wait.
func (h *harness) peerLoop(ctx context.Context, r *run, pr peer) peerResult {
	d := newDecider(h.scriptOn(r.u.t, r.u.locale, r.params))
	maxSteps := r.u.t.MaxSteps
	if maxSteps <= 0 {
		maxSteps = runtime.Defaults().MaxSteps
	}
	var gate runtime.Gate = (*safety.Gate)(nil)
	if h.opt.gate != nil {
		gate = h.opt.gate
	}
	var input peerInput = r.phone.DeviceVia(pr.input)
	look := func(ctx context.Context) (*scene.Scene, error) { return pr.look(ctx, r.phone) }
	if h.opt.Platform == PlatformIOS {
		// An iPhone's peer reads /source and acts through WDA, as every
		// agent that drives an iPhone does.
		dev, err := iosDevice(ctx, r.phone)
		if err != nil {
			return peerResult{status: lifecycle.Failed, cause: lifecycle.CauseStepFailed, reason: err.Error()}
		}
		input = iosInput{dev}
		look = dev.Scene
	}
	start := r.clk.Now()
	res := peerResult{calls: pr.runCalls}
	end := func(status lifecycle.Status, cause lifecycle.Cause, reason string) peerResult {
		res.status, res.cause, res.reason = status, cause, reason
		res.duration = r.clk.Now().Sub(start)
		return res
	}
	cancelled := func() peerResult { return end(lifecycle.Cancelled, lifecycle.CauseCancelled, "cancelled") }
	var prev *outcome
	failedReads := 0
	for {
		if ctx.Err() != nil {
			return cancelled()
		}
		sc, err := look(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return cancelled()
			}
			failedReads++
			if failedReads >= maxObserveFailures {
				return end(lifecycle.Failed, lifecycle.CauseStepFailed, fmt.Sprintf("observing the screen failed %d times in a row: %v", failedReads, err))
			}
			if err := r.clk.Sleep(ctx, pr.retryAfter(failedReads)); err != nil {
				return cancelled()
			}
			continue
		}
		failedReads = 0
		if err := r.clk.Sleep(ctx, pr.turnWait); err != nil {
			return cancelled()
		}
		res.calls += pr.calls
		m := d.next(sc.Listing(), prev)
		if m.Finish {
			if m.Success {
				return end(lifecycle.Completed, lifecycle.CauseNone, m.Reason)
			}
			return end(lifecycle.Failed, finishCause(res.steps), m.Reason)
		}
		if len(res.steps) >= maxSteps {
			return end(lifecycle.Failed, lifecycle.CauseMaxSteps, fmt.Sprintf("reached the maximum of %d steps without reaching the goal", maxSteps))
		}
		line := StepLine{Number: len(res.steps) + 1, Intent: m.Intent, Call: m.Call.String()}
		w := pr.way(m.Call)
		text, ok := h.peerAct(ctx, r, gate, input, sc, m.Call)
		line.Result = text
		line.Status = string(lifecycle.StepSucceeded)
		if !ok {
			line.Status = string(lifecycle.StepFailed)
		}
		res.steps = append(res.steps, line)
		prev = &outcome{OK: ok, Text: text}
		res.calls += w.calls
		for i := 0; i < w.commands; i++ {
			if err := input.ChargeInput(ctx); err != nil {
				return cancelled()
			}
		}
		for i := 0; i < w.reads; i++ {
			if _, err := look(ctx); err != nil && ctx.Err() != nil {
				return cancelled()
			}
		}
		if err := r.clk.Sleep(ctx, w.wait); err != nil {
			return cancelled()
		}
	}
}

// peerAct runs one call once: the gate first (the harness approves what
// it stops), then the tool. It returns the tool's result or error text.
func (h *harness) peerAct(ctx context.Context, r *run, gate runtime.Gate, dev device.Device, sc *scene.Scene, call tools.Call) (string, bool) {

	if len(tools.Declare(call, sc).Inputs) > 0 {
		var el *scene.Element
		if i, ok := tools.ElementArg(call); ok {
			if e, found := sc.Element(i); found {
				el = &e
			}
		}
		if dec := gate.Check(safety.Input{Goal: r.goal, Scene: sc, Call: call, Element: el, Secure: sc.Secure}); dec.Verdict == safety.Deny {
			return "refused by the safety policy: " + dec.Reason, false
		} else if dec.Verdict == safety.Confirm {
			r.sawWait()
		}
	}
	res, err := tools.Run(ctx, dev, sc, call, tools.RunOptions{Clock: r.clk})
	if err != nil {
		return err.Error(), false
	}
	return res.Text, true
}

// finishCause is the cause of a peer loop's unsuccessful finish, as the
// runtime gives it: step_failed when the step before failed, else
// planner_gave_up.
func finishCause(steps []StepLine) lifecycle.Cause {
	if n := len(steps); n > 0 && steps[n-1].Status == string(lifecycle.StepFailed) {
		return lifecycle.CauseStepFailed
	}
	return lifecycle.CausePlannerGaveUp
}

// peerInput is what a peer acts through: a device that can also charge an
// extra command of the agent's (a shell command it makes besides the
// action).
type peerInput interface {
	device.Device
	ChargeInput(ctx context.Context) error
}

// iosInput acts on the simulated iPhone through WDA; its peer makes no
// extra commands.
type iosInput struct{ device.Device }

func (iosInput) ChargeInput(context.Context) error { return nil }
