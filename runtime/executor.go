package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// executor turns one PlannedStep into tool calls: it waits for the step's
// target (waitfor.go), acts, lets the screen settle (settle.go), checks the
// expectation (verify.go) and retries with the backoff policy (retry.go),
// never repeating an input whose effect is already on the screen. Every
// wait is the one poll loop (poll.go); observations go through observe.go.
type executor struct {
	cfg     Config
	dev     device.Device
	clock   clock.Clock
	log     *slog.Logger
	backoff Backoff
	// fps caches the fingerprints of the Scenes this step compares (a
	// fingerprint hashes every listed element).
	fps []fpEntry
	// dumpLatency is a running average of one observation's duration.
	dumpLatency time.Duration
	// read is the latest Scene read from the device and readAt when: a
	// step planned on another Scene, or on this one longer ago than
	// StaleAfter, checks a fresh read before it acts (guardedRun).
	read   *scene.Scene
	readAt time.Time
	// noCounter: the device has no change counter (changes.go), or it
	// stopped offering one.
	noCounter bool
	// counted: the change counter has answered in this task.
	counted bool
	// firstSeen is when the first read after the latest action saw the
	// screen (zero until one did).
	firstSeen time.Time
	// acting is when the latest action began reaching the phone: a
	// gesture's own effect (a scroll) can come before its call returns.
	acting time.Time
	// last is the latest Scene observed since the step's last action, which
	// the runner reuses as its next observation instead of reading the
	// screen again (a dump costs 0.2–2 s on a phone).
	last *scene.Scene
	// beside is the planner's BesideRead, when it has one.
	beside func(context.Context) func(*scene.Scene)

	// gate is asked before every action that touches the phone, person
	// when the gate wants a person's yes; goal is the task's, for the gate.
	gate   Gate
	person Person
	goal   string
	// refused are the actions refused in this task (refusalKey), so that a
	// planner asking again ends the task instead of asking a person twice.
	refused map[string]refusal
	// refusal is set when the step just executed was refused.
	refusal *refusal
	// moved is what changed on the screen when this step was not run for
	// it (replanned), "" otherwise.
	moved string
	// outside: the calls come from a caller that plans outside (a
	// Stepper's MCP client); every plan is older than the screen.
	outside bool
	// ran are the approved actions that ran in this task (refusalKey →
	// step number): one asked for again is not approved as if new.
	ran map[string]int
	// watching is the attempt's press watched for toasts (toastwatch.go),
	// nil when it is not: check does not take an old toast going for its
	// effect.
	watching *toastWatch
}

// newExecutor builds the Executor of one task. A nil backoff is the default
// policy (NewBackoff over the Config).
func newExecutor(cfg Config, dev device.Device, clk clock.Clock, log *slog.Logger, backoff Backoff) *executor {
	if backoff == nil {
		backoff = NewBackoff(cfg.BackoffBase, cfg.BackoffMax, cfg.Seed)
	}
	return &executor{cfg: cfg, dev: dev, clock: clk, log: log, backoff: backoff, gate: defaultGate, refused: map[string]refusal{}, ran: map[string]int{}}
}

// execute runs one step. It returns the step's record, the Scene the step
// acted on, and an error only when the task must end (ctx cancelled, device
// disconnected).
func (e *executor) execute(ctx context.Context, number int, ps plan.PlannedStep, planScene *scene.Scene,
	onAttempt func(plan.Attempt, tools.Call)) (plan.StepRecord, *scene.Scene, error) {
	start := e.clock.Now()
	e.refusal, e.moved = nil, ""
	rec := plan.StepRecord{
		Number: number, Intent: ps.Intent, Tag: ps.Tag, Call: ps.Call, Attempts: []plan.Attempt{},
		Before: e.fp(planScene), Started: start,
	}
	actedOn := planScene // the Scene the call's element index refers to
	fail := func(reason string) (plan.StepRecord, *scene.Scene, error) {
		rec.Status, rec.Reason = lifecycle.StepFailed, reason
		rec.Duration = e.clock.Now().Sub(start)
		if rec.After == "" {
			rec.After = rec.Before
		}
		return rec, actedOn, nil
	}
	probe := ps.Call
	if ps.Target != nil {
		// The element is filled in once the target resolves.
		probe = tools.WithElement(probe, 0)
	}
	if err := tools.Validate(probe); err != nil {
		return fail(fmt.Sprintf("invalid tool call %s: %v", ps.Call, err))
	}
	tool, _ := tools.Lookup(ps.Call.Name) // Validate accepted the name

	cur := planScene
	var base *scene.Scene // the screen right before the first action
	lastReason := ""
	approved := false // a person approved this step's action: it runs once, never again
	// irreversible: the gate took the action for one (a payment, a send),
	// approved or allowed by the policy. Its effect is waited for as long
	// as a target is (a payment is processed, a transition can be long),
	// and it is not repeated within the step: it may have landed unseen.
	irreversible := false
	replanned := func(n int, aStart time.Time, call tools.Call, r ran) (plan.StepRecord, *scene.Scene, error) {
		a := plan.Attempt{Number: n, Result: "not run: " + r.moved, Duration: e.clock.Now().Sub(aStart)}
		rec.Attempts = append(rec.Attempts, a)
		onAttempt(a, call)
		rec.Status, rec.Reason = lifecycle.StepReplanned, "the screen changed since the step was planned: "+r.moved
		rec.Duration = e.clock.Now().Sub(start)
		rec.After = e.fp(r.scene)
		rec.Changed = rec.After != rec.Before
		// The fresh read is the screen the planner sees next.
		e.last, e.moved = r.scene, r.moved
		return rec, r.scene, nil
	}
	refused := func(n int, aStart time.Time, call tools.Call) (plan.StepRecord, *scene.Scene, error) {
		a := plan.Attempt{Number: n, Result: e.refusal.reason, Duration: e.clock.Now().Sub(aStart)}
		rec.Attempts = append(rec.Attempts, a)
		onAttempt(a, call)
		return fail(e.refusal.reason)
	}
	var watched *toastWatch // the latest attempt's press, watched for toasts
	defer func() { e.watching = nil }()
	for n := 1; n <= e.cfg.StepRetries; n++ {
		e.watching = nil
		if n > 1 {
			if err := e.clock.Sleep(ctx, e.backoff.Delay(n)); err != nil {
				return e.abort(rec, start, actedOn, err)
			}
			sc, err := e.observe(ctx)
			if err != nil {
				return e.abort(rec, start, actedOn, err)
			}
			cur = sc
		}
		aStart := e.clock.Now()
		call := ps.Call
		actScene := planScene
		if ps.Target != nil {
			el, sc, ok, err := e.waitFor(ctx, *ps.Target, cur)
			if err != nil {
				return e.abort(rec, start, actedOn, err)
			}
			if !ok {
				lastReason = fmt.Sprintf("%s did not appear within %s", describe(*ps.Target), e.cfg.WaitTimeout)
				a := plan.Attempt{Number: n, Result: lastReason, Duration: e.clock.Now().Sub(aStart)}
				rec.Attempts = append(rec.Attempts, a)
				onAttempt(a, call)
				// Waiting was this step's retry: another attempt would wait
				// for the same element again.
				rec.After = e.fp(sc)
				return fail(lastReason)
			}
			call = tools.WithElement(call, el.Index)
			actScene, cur = sc, sc
		}
		if base == nil {
			base = actScene
		}
		actedOn = actScene
		rec.Call = call

		var result string
		pressed := false // an input reached the phone in this attempt
		if n > 1 && e.tookEffect(ctx, ps, tool, call, base, cur, watched) {
			if rest, done, ok := tool.Remainder(call, e.outcome(base, cur)); ok {
				// Part of the input is on the screen (the text is in the
				// field, the submit did not land): do only the rest.
				call = rest
				r, err := e.guardedRun(ctx, number, tool, call, cur, nil)
				if err != nil {
					return e.abort(rec, start, actedOn, err)
				}
				switch r.outcome {
				case guardRefused:
					return refused(n, aStart, call)
				case guardReplan:
					return replanned(n, aStart, call, r)
				}
				approved = approved || r.outcome == guardApproved
				irreversible = irreversible || r.flagged
				cur = r.scene
				if r.err != nil {
					result = done + "; the rest failed: " + r.err.Error()
				} else {
					result = done + "; " + r.res.Text
				}
			} else {
				result = "already took effect; not repeated"
			}
		} else {
			watched = e.watchToasts(ctx, ps, tool, call, actScene)
			if _, onElement := tools.ElementArg(call); onElement && tool.Press() && toastShown(actScene) && watched == nil {
				// A button's press (not a key: BACK's effect is not a toast).
				was := actScene
				c, sc, err := e.afterToast(ctx, call, actScene)
				if err != nil {
					return e.abort(rec, start, actedOn, err)
				}
				call, actScene, cur, actedOn, rec.Call = c, sc, sc, sc, c
				if base == was {
					base = sc
				}
			}
			r, err := e.guardedRun(ctx, number, tool, call, actScene, watched)
			if err != nil {
				return e.abort(rec, start, actedOn, err)
			}
			irreversible = irreversible || r.flagged
			switch r.outcome {
			case guardRefused:
				return refused(n, aStart, call)
			case guardReplan:
				return replanned(n, aStart, call, r)
			}
			approved = approved || r.outcome == guardApproved
			actScene, cur = r.scene, r.scene
			if r.err != nil {
				a := plan.Attempt{Number: n, Result: r.err.Error(), Duration: e.clock.Now().Sub(aStart)}
				rec.Attempts = append(rec.Attempts, a)
				onAttempt(a, call)
				lastReason = r.err.Error()
				if permanent(r.err) || approved || irreversible {
					return fail(lastReason)
				}
				continue
			}
			result = r.res.Text
			pressed = true
		}

		actedAt := e.clock.Now()
		// A press whose effect was there before it (home on the home
		// screen) has nothing to wait for.
		already := tool.Press() && tool.TookEffect(call, e.outcome(actScene, actScene))
		var heard toastHeard
		tw := watched
		if !pressed || already {
			tw = nil
		}
		e.watching = tw
		switch {
		case tw != nil:
			// Watched: a toast announced right after the press is its
			// answer, heard before any read (issue 12's second Add to
			// cart, under the first one's toast, need not wait for it).
			tw.listen(ctx)
			heard = tw.heardAs()
		case pressed && !already:
			heard = e.hearToast(ctx, ps, tool, call, actScene)
		}
		var (
			after *scene.Scene
			err   error
		)
		if tw != nil && heard.answered() {
			after, err = e.seen(e.observe(ctx))
		} else {
			after, err = e.settle(ctx, cur, func(sc *scene.Scene) bool {
				met, _ := e.check(ps, call, base, sc)
				if !met && tw.answered(ctx) {
					heard = tw.heardAs()
				}
				return met || heard.answered()
			}, already || heard.answered(), actedAt)
		}
		if err != nil {
			return e.abort(rec, start, actedOn, err)
		}
		met, why := e.check(ps, call, base, after)
		if !met && tw != nil && tw.answers && !heard.answered() && tw.old {
			// Its toast may be queued behind the old one.
			if after, err = e.hearQueued(ctx, tw, actedAt, after); err != nil {
				return e.abort(rec, start, actedOn, err)
			}
			heard = tw.heardAs()
			met, why = e.check(ps, call, base, after)
		}
		if !met && heard.answered() {
			// The app answered the press with a toast, heard in the
			// system's queue right after it: the press landed, whatever
			// a later read shows.
			met, rec.Effect = true, plan.EffectToast
			result += fmt.Sprintf("; %s: %q", AnsweredByToast, heard.text)
		}
		if !met && e.cfg.FixedDelay == 0 {
			after, met, why, err = e.pollExpectation(ctx, ps, call, base, after, actedAt, irreversible)
			if err != nil {
				return e.abort(rec, start, actedOn, err)
			}
		}
		repairFailed := ""
		if !met && ps.Expect.Kind == plan.ExpectFieldText {
			if was, idx, ok := strayField(call, ps.Expect.Text, base, after); ok {
				// Another field holds the text now, its own content lost:
				// put it back before typing again where it was meant to go.
				sc, did, restored, err := e.restoreStray(ctx, was, idx, after)
				if err != nil {
					return e.abort(rec, start, actedOn, err)
				}
				after, result, why = sc, result+"; "+did, why+"; "+did
				if !restored {
					repairFailed = why
				}
			}
		}
		if !met && repairFailed == "" && heard.kind == toastUnasked && e.transientMissed(ps, tool, call, base, after, actedAt) {
			met, rec.Effect = true, plan.EffectUnseen
			// The conclusion first: a planner's history cuts a long
			// result (an iPhone's class names are long).
			result += fmt.Sprintf("; %s (no change seen, but the screen was read %.1f s after the press, when a short message it may have shown, a toast, is gone)",
				MayHaveTakenEffect, e.firstSeen.Sub(actedAt).Seconds())
		}
		cur = after
		a := plan.Attempt{Number: n, Result: result, Changed: e.fp(after) != e.fp(base), Duration: e.clock.Now().Sub(aStart)}
		rec.Attempts = append(rec.Attempts, a)
		onAttempt(a, call)
		rec.After = e.fp(after)
		rec.Changed = rec.After != rec.Before
		if met {
			rec.Status = lifecycle.StepSucceeded
			rec.Duration = e.clock.Now().Sub(start)
			if _, onElement := tools.ElementArg(call); rec.Effect == plan.EffectSeen && onElement && tool.Press() && toastShown(after) && !toastShown(base) {
				// Answered by a toast: once it is gone, a popup that came
				// with it may be all the screen shows of the press.
				rec.Effect = plan.EffectToast
			}
			return rec, actedOn, nil
		}
		lastReason = why
		e.log.Debug("expectation not met", "step", number, "attempt", n, "why", why)
		if repairFailed != "" {
			// Typing again would leave the other field wrong: the planner
			// sees both fields and decides.
			return fail(repairFailed)
		}
		if _, covered := onlyCovered(call, base, after, e.watching.silent()); covered || e.interruption(base, after) != "" {
			// The dialog covers the screen: another attempt would tap it.
			// The planner sees it and deals with it first.
			rec.Effect = plan.EffectInterrupted
			return fail(why)
		}
		if approved {
			// What was approved ran; anything more is a new decision for
			// the planner and, through the gate, for a person.
			return fail(fmt.Sprintf("the approved action ran but %s within %s", why, e.cfg.WaitTimeout))
		}
		if irreversible {
			return fail(fmt.Sprintf("the action ran but %s within %s; not repeated (it may have taken effect)", why, e.cfg.WaitTimeout))
		}
	}
	return fail(fmt.Sprintf("%s after %d attempts", lastReason, len(rec.Attempts)))
}

// ran is what guardedRun did with one call.
type ran struct {
	outcome guardOutcome // guardRefused, guardReplan: nothing touched the phone
	scene   *scene.Scene // the Scene the call ran on (a fresh read after a wait for a person); the fresh read when re-planned
	moved   string       // guardReplan: what changed on the screen since the plan
	flagged bool         // the gate took the call for an irreversible action
	res     tools.Result
	err     error // the tool's error: the call did not run, or not all of it
}

// guardedRun is the one way a call reaches the phone: checked against the
// Scene it was planned on (a call Run would refuse is refused before the
// gate asks anyone), gated (and approved by a person when the gate wants
// one), then run. The error ends the task (cancelled, device gone, a
// refused action asked for again); a tool's own failure is in ran.err.
//
// tw is the press's toast watch (nil for none): after a person's approval
// its mark is taken again, as the press is made.
func (e *executor) guardedRun(ctx context.Context, number int, tool *tools.Tool, call tools.Call, sc *scene.Scene, tw *toastWatch) (ran, error) {
	if sc != nil && e.older(sc) && tools.Aims(call, sc) {
		// Planned on a screen older than the phone's: act on the screen of
		// the moment, or not at all. A call that lands on nothing (back,
		// home, a launch) does the same on any screen and needs no read.
		now, why, err := e.recheck(ctx, call, sc)
		if err != nil {
			return ran{outcome: guardRefused, scene: sc}, err
		}
		if why != "" {
			return ran{outcome: guardReplan, scene: now, moved: why}, nil
		}
		sc = now
	}
	if _, err := tools.Prepare(call, sc); err != nil {
		return ran{outcome: guardRun, scene: sc, err: err}, nil
	}
	outcome, now, flagged, err := e.guard(ctx, number, tool, call, sc)
	r := ran{outcome: outcome, scene: sc, flagged: flagged}
	if err != nil || outcome == guardRefused {
		return r, err
	}
	if outcome == guardApproved {
		// The same element on a fresh read of the same screen.
		r.scene = now
		tw.remark(ctx)
	}
	r.res, r.err = e.input(ctx, r.scene, call)
	if r.err != nil && (ctx.Err() != nil || errors.Is(r.err, device.ErrDisconnected)) {
		return r, r.err
	}
	return r, nil
}

// input runs call on sc through the tools, the one way an action reaches
// the phone: the reads kept from before it are stale, and acting marks when
// it began, from which the settle after it counts its effect.
func (e *executor) input(ctx context.Context, sc *scene.Scene, call tools.Call) (tools.Result, error) {
	e.last = nil
	e.acting = e.clock.Now()
	return tools.Run(ctx, e.dev, sc, call, tools.RunOptions{Clock: e.clock})
}

// older reports a plan made on sc as older than the screen: sc is not the
// latest read, or that read is older than StaleAfter (a planner thought
// meanwhile), or the caller planned outside (a Stepper's: how long it
// thought is unknown).
func (e *executor) older(sc *scene.Scene) bool {
	return e.outside || sc != e.read || e.clock.Now().Sub(e.readAt) > e.cfg.StaleAfter
}

// abort ends a step because the task ends (cancelled, disconnected) or the
// screen could not be read.
func (e *executor) abort(rec plan.StepRecord, start time.Time, actedOn *scene.Scene, err error) (plan.StepRecord, *scene.Scene, error) {
	rec.Status = lifecycle.StepFailed
	rec.Reason = err.Error()
	rec.Duration = e.clock.Now().Sub(start)
	if rec.After == "" {
		rec.After = rec.Before
	}
	return rec, actedOn, err
}
