package phonebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/rule"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/task"
)

// run is one policy's run of one unit while it goes: its phone, its clock,
// and what the harness saw when it stopped for approval.
type run struct {
	u       unit
	params  map[string]string
	policy  string
	goal    string
	phone   *sim.Phone
	clk     *clock.Fake
	planner plan.Planner

	mu        sync.Mutex
	waits     []waitSeen
	approvals int
	start     []byte
	failure   error // the harness could not read the phone at a wait
}

// runDevice is the run's phone as the task service hands it to the
// runner: the device, and the run it belongs to.
type runDevice struct {
	device.Device
	r *run
}

// sawWait records what the phone shows at a stop for approval, before the
// harness approves.
func (r *run) sawWait() {
	st, err := r.phone.State()
	var w waitSeen
	if err == nil {
		var from, now irreversible
		if from, err = readIrreversible(r.start); err == nil {
			if now, err = readIrreversible(st); err == nil {
				w.Done = now.since(from)
				w.CheckFailed = r.u.t.Check(st, r.params) != nil
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.failure == nil {
		r.failure = err
	}
	r.waits = append(r.waits, w)
	r.approvals++
}

// runPolicy runs one policy on u and judges it.
func (h *harness) runPolicy(ctx context.Context, u unit, params map[string]string, pol string) (Record, error) {
	clk := clock.NewFake(epoch)
	phone, err := newPhone(u, params, clk, h.opt.Observer)
	if err != nil {
		return Record{}, err
	}
	start, err := phone.State()
	if err != nil {
		return Record{}, fmt.Errorf("simulator state: %w", err)
	}
	r := &run{u: u, params: params, policy: pol, phone: phone, clk: clk, start: start, goal: u.t.GoalFor(u.locale, params)}
	rec := Record{Task: u.t.Name, Kind: u.t.Kind, Locale: u.locale, Profile: u.profile, Platform: h.opt.Platform, Seed: u.seed, Policy: pol, Goal: r.goal}
	real := time.Now()
	var (
		status lifecycle.Status
		cause  lifecycle.Cause
		reason string
		steps  []StepLine
	)
	switch {
	case slices.Contains(PeerPolicies, pol):
		res := h.peerLoop(ctx, r, peerFor(pol, h.opt.Observer, h.opt.PeerDelay))
		status, cause, reason, steps = res.status, res.cause, res.reason, res.steps
		rec.Steps, rec.SimMS, rec.Calls = len(res.steps), res.duration.Milliseconds(), res.calls
	default:
		var dev device.Device = phone.Device()
		if h.opt.Platform == PlatformIOS {
			if dev, err = iosDevice(ctx, phone); err != nil {
				return Record{}, err
			}
		}
		var prov *scripted
		switch pol {
		case PolicyRule:
			r.goal, _ = u.t.RuleFor(u.locale, params)
			rec.Goal = r.goal
			r.planner = rule.New()
		case PolicyReference:
			cfg := ai.Defaults()
			prov = &scripted{d: newDecider(h.scriptOn(u.t, u.locale, params)), provider: cfg.Provider, seen: h.opt.requests}
			cfg.Vision, cfg.Clock, cfg.Logger = false, clk, h.opt.Logger
			if cam, ok := ai.CameraOf(dev); ok && h.opt.Vision {
				cfg.Vision, cfg.Camera = true, cam
			}
			r.planner = ai.NewWithProvider(cfg, prov)
		case PolicyAI:
			p, err := h.opt.AI(h.opt.Logger)
			if err != nil {
				return Record{}, fmt.Errorf("ai planner: %w", err)
			}
			r.planner = &countedPlanner{Planner: p}
		}
		_, res, err := h.svc.RunNow(ctx, task.Request{Goal: r.goal, Device: "sim:phonebench", Planner: pol, MaxSteps: u.t.MaxSteps},
			&runDevice{Device: dev, r: r})
		if err != nil {
			return Record{}, fmt.Errorf("task service: %w", err)
		}
		status, cause, reason = res.Status, res.Cause, res.Reason
		rec.Steps, rec.SimMS = len(res.Steps), res.Duration.Milliseconds()
		rec.InputTokens, rec.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
		rec.CacheReadTokens, rec.CacheWriteTokens = res.Usage.CacheReadTokens, res.Usage.CacheWriteTokens
		rec.TokensEstimated = res.Usage.Estimated
		if prov != nil && !h.opt.Vision {
			// Every turn's screenshot, as a request with vision on (the
			// planner's default) carries it: the reference policy plans on
			// the listing alone, so that the grid renders and encodes no
			// frame, and its tokens count the image each turn would send.
			// (With Vision the requests carry it and ai.Estimate counts it.)
			w, hgt := phone.Size()
			rec.InputTokens += int64(prov.turns) * ai.ScreenshotTokens(prov.provider, w, hgt, 0)
		}
		steps = stepLines(res.Steps)
		switch p := r.planner.(type) {
		case *countedPlanner:
			rec.Calls = p.calls
		default:
			if prov != nil {
				rec.Calls = prov.turns
			}
		}
	}
	rec.ModelMS = int64(rec.Calls) * h.opt.ModelLatency.Milliseconds()
	rec.Observer = string(h.opt.Observer)
	if slices.Contains(PeerPolicies, pol) && pol != PolicyPeerLoop {
		rec.Observer = "own"
	}
	rec.CPUMS = time.Since(real).Milliseconds()
	rec.Status, rec.Cause, rec.Reason = status, cause, reason
	rec.Dumps = phone.Dumps()
	rec.Reads = phone.Dumps() + phone.Frames()
	end, err := phone.State()
	if err != nil {
		return Record{}, fmt.Errorf("simulator state: %w", err)
	}
	r.mu.Lock()
	waits, approvals, failure := r.waits, r.approvals, r.failure
	r.mu.Unlock()
	if failure != nil {
		return Record{}, fmt.Errorf("reading the phone at an approval: %w", failure)
	}
	v, err := judge(u.t, params, status, cause, start, end, waits, approvals)
	if err != nil {
		return Record{}, err
	}
	rec.Success, rec.Why, rec.UnapprovedIrreversible, rec.Approvals = v.Success, v.Why, v.Unapproved, approvals
	if !rec.Success || debugSteps {
		rec.FailedSteps = lastSteps(steps)
	}
	return rec, nil
}

// runTask is the task service's runner: the runtime, on the run's phone
// and clock, with the run's planner; the service is the person it asks.
func (h *harness) runTask(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
	rd, ok := dev.(*runDevice)
	if !ok {
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed, Reason: "phonebench: a device the harness did not open"}
	}
	r := rd.r
	h.pending.Store(t.ID, r)
	defer h.pending.Delete(t.ID)
	cfg := runtime.Defaults()
	cfg.Seed = r.u.seed
	if t.MaxSteps > 0 {
		cfg.MaxSteps = t.MaxSteps
	}
	runner, err := runtime.New(cfg, rd.Device, r.planner, runtime.Options{Clock: r.clk, Logger: h.opt.Logger, OnEvent: emit,
		Person: person, Gate: h.opt.gate})
	if err != nil {
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed, Reason: err.Error()}
	}
	return runner.Run(ctx, t.Goal)
}

// onPending is the person of every task: it reads the phone (is the
// irreversible action still undone?) and approves — the goal asked for it.
func (h *harness) onPending(id string, p storage.Pending) {
	v, ok := h.pending.Load(id)
	if !ok {
		h.opt.Logger.Error("phonebench: a task waits that the harness does not know", "task", id)
		return
	}
	r := v.(*run)
	ctx := context.Background()
	if p.Kind == lifecycle.PendingQuestion {
		if _, err := h.svc.Answer(ctx, id, "phonebench", "I cannot help; go on without me."); err != nil {
			h.opt.Logger.Error("phonebench: answer", "task", id, "err", err)
		}
		return
	}
	r.sawWait()
	if _, err := h.svc.Approve(ctx, id, "phonebench", "the goal asks for it"); err != nil && !errors.Is(err, task.ErrConflict) {
		h.opt.Logger.Error("phonebench: approve", "task", id, "err", err)
	}
}

// countedPlanner counts a real planner's decisions: one model call each.
type countedPlanner struct {
	plan.Planner
	calls int
}

func (c *countedPlanner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	c.calls++
	return c.Planner.Plan(ctx, in)
}

// stepLines are the runtime's step records as the report shows them.
func stepLines(steps []plan.StepRecord) []StepLine {
	out := make([]StepLine, 0, len(steps))
	for _, s := range steps {
		l := StepLine{Number: s.Number, Intent: s.Intent, Call: s.Call.String(), Status: string(s.Status), Result: s.Reason}
		if l.Result == "" && len(s.Attempts) > 0 {
			l.Result = s.Attempts[len(s.Attempts)-1].Result
		}
		if n := len(s.Attempts); n > 1 {
			l.Result = fmt.Sprintf("%s (%d attempts)", l.Result, n)
		}
		out = append(out, l)
	}
	return out
}

// debugSteps keeps the steps of every run, not only the failed ones
// (PHONEBENCH_STEPS=1: for looking into a run that succeeded slowly).
var debugSteps = os.Getenv("PHONEBENCH_STEPS") != ""
