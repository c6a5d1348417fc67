package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/perception"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/task/lifecycle"
	"phonepilot/tools"
)

// executor turns one PlannedStep into tool calls: it waits for the step's
// target, acts, lets the screen settle, checks the expectation and retries
// with capped, jittered exponential backoff, never repeating an input whose
// effect is already on the screen.
type executor struct {
	cfg   Config
	dev   device.Device
	clock clock.Clock
	log   *slog.Logger
	rng   *rand.Rand
	// fps caches the fingerprints of the Scenes this step compares (a
	// fingerprint hashes every listed element).
	fps []fpEntry
	// dumpLatency is a running average of one observation's duration.
	dumpLatency time.Duration
	// last is the latest Scene observed since the step's last action, which
	// the runner reuses as its next observation instead of reading the
	// screen again (a dump costs 0.2–2 s on a phone).
	last *scene.Scene
}

type fpEntry struct {
	sc *scene.Scene
	fp string
}

// fp is e.fp(sc), remembered for the last few Scenes.
func (e *executor) fp(sc *scene.Scene) string {
	for _, c := range e.fps {
		if c.sc == sc {
			return c.fp
		}
	}
	f := sc.Fingerprint()
	if len(e.fps) >= 8 {
		e.fps = e.fps[1:]
	}
	e.fps = append(e.fps, fpEntry{sc, f})
	return f
}

// takeLast returns the latest post-action observation once.
func (e *executor) takeLast() *scene.Scene {
	sc := e.last
	e.last = nil
	return sc
}

func newExecutor(cfg Config, dev device.Device, clk clock.Clock, log *slog.Logger) *executor {
	seed := uint64(cfg.Seed)
	return &executor{cfg: cfg, dev: dev, clock: clk, log: log, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// observeRetries is the least number of tries a transient observation error
// (the accessibility service not idle during an animation, an empty dump)
// gets; retrying goes on until WaitTimeout has passed.
const observeRetries = 5

// observe reads the current Scene, retrying transient errors for up to
// WaitTimeout. A disconnected device or a cancelled ctx ends it at once.
func (e *executor) observe(ctx context.Context) (*scene.Scene, error) {
	var lastErr error
	deadline := e.clock.Now().Add(e.cfg.WaitTimeout)
	for i := 0; ; i++ {
		if i > 0 {
			if i >= observeRetries && !e.clock.Now().Before(deadline) {
				return nil, lastErr
			}
			if err := e.clock.Sleep(ctx, e.cfg.PollInterval); err != nil {
				return nil, err
			}
		}
		sc, err := e.timed().Scene(ctx)
		if err == nil {
			e.last = sc
			return sc, nil
		}
		if ctx.Err() != nil || errors.Is(err, device.ErrDisconnected) {
			return nil, err
		}
		lastErr = err
		e.log.Debug("observe failed; retrying", "err", err)
	}
}

// settle waits for the screen to show the outcome of an action, or sleeps
// FixedDelay when that is configured. It reads the screen right after the
// action returns and then back to back (see settleInterval), and ends at the
// first of:
//
//   - outcome: a read that differs from pre (the screen the action acted
//     on), meets the step's expectation (shows reports it) and shows no
//     loading indicator. It is taken at once, without a second, confirming
//     read: a uiautomator dump that succeeds on a phone has already waited
//     for the UI to be idle (about 1 s without accessibility events), so a
//     second read mostly pays another dump (0.2–3 s) to learn nothing; and
//     the next step guards against a screen that is still drawing, since it
//     waits for its own target and checks its own expectation.
//   - stable: two consecutive reads with the same fingerprint and no loading
//     indicator (a spinner, "Loading…", an app window with nothing to use).
//     This is what ends the wait when the action changed nothing (a dropped
//     tap) or changed something other than what was expected.
//   - the SettleTimeout cap: the last Scene read is returned.
//
// A read that fails the way an animating screen does (perception.Retryable)
// breaks the chain of equal reads. A cancelled ctx or a disconnected device
// ends settle with that error; another failure falls back to observe.
func (e *executor) settle(ctx context.Context, pre *scene.Scene, shows func(*scene.Scene) bool) (*scene.Scene, error) {
	if e.cfg.FixedDelay > 0 {
		if err := e.clock.Sleep(ctx, e.cfg.FixedDelay); err != nil {
			return nil, err
		}
		return e.observe(ctx)
	}
	deadline := e.clock.Now().Add(e.cfg.SettleTimeout)
	preFP := ""
	if pre != nil {
		preFP = e.fp(pre)
	}
	var last *scene.Scene
	lastFP := "" // of the previous read; "" after a failed read
	for {
		sc, err := e.timed().Scene(ctx)
		switch {
		case err == nil:
			e.last = sc
			fp := e.fp(sc)
			if fp != preFP && !loading(sc) && shows != nil && shows(sc) {
				return sc, nil
			}
			if last != nil && fp == lastFP && !loading(sc) {
				return sc, nil
			}
			last, lastFP = sc, fp
		case ctx.Err() != nil || errors.Is(err, device.ErrDisconnected):
			return nil, err
		case perception.Retryable(err):
			lastFP = ""
		default:
			e.log.Debug("settle: observation failed", "err", err)
			return e.observe(ctx)
		}
		if !e.clock.Now().Before(deadline) {
			if last == nil {
				return e.observe(ctx)
			}
			e.log.Debug("screen did not settle within the cap", "cap", e.cfg.SettleTimeout)
			return last, nil
		}
		if err := e.clock.Sleep(ctx, min(e.settleInterval(), deadline.Sub(e.clock.Now()))); err != nil {
			return nil, err
		}
	}
}

// settleInterval is the pause between two observations while settling:
// PollInterval less the time a dump itself takes, since a slow dump already
// gives the screen that time to change (at least 1 ms).
func (e *executor) settleInterval() time.Duration {
	return max(e.cfg.PollInterval-e.dumpLatency, time.Millisecond)
}

// timed is the device as an Observer that keeps a running average of how
// long one observation takes.
func (e *executor) timed() timedObserver { return timedObserver{e} }

type timedObserver struct{ e *executor }

func (t timedObserver) Scene(ctx context.Context) (*scene.Scene, error) {
	start := t.e.clock.Now()
	sc, err := t.e.dev.Scene(ctx)
	if err == nil {
		d := t.e.clock.Now().Sub(start)
		if t.e.dumpLatency == 0 {
			t.e.dumpLatency = d
		} else {
			t.e.dumpLatency = (3*t.e.dumpLatency + d) / 4
		}
	}
	return sc, err
}

// loading reports a screen that is still loading: a visible progress bar, a
// label that starts with "Loading" / "加载中", or an app window with nothing
// a finger can use yet (a splash screen, a blank page).
func loading(sc *scene.Scene) bool {
	usable := false
	for _, el := range sc.Elements {
		if el.Package != "" && sc.Package != "" && el.Package != sc.Package {
			continue // the status bar, the navigation bar, a keyboard
		}
		if sc.Visible(el) && (el.Clickable || el.Editable || el.Scrollable || el.LongClickable) {
			usable = true
			break
		}
	}
	if !usable {
		return true
	}
	for _, el := range sc.Elements {
		if !sc.Visible(el) {
			continue
		}
		if strings.Contains(scene.SimpleClass(el.Class), "ProgressBar") {
			return true
		}
		l := strings.ToLower(strings.TrimSpace(el.Label()))
		if strings.HasPrefix(l, "loading") || strings.HasPrefix(l, "加载中") || strings.HasPrefix(l, "正在加载") {
			return true
		}
	}
	return false
}

// backoff is the wait before attempt n (n >= 2): base·2^(n-2), capped, with
// the upper half jittered.
func (e *executor) backoff(n int) time.Duration {
	d := e.cfg.BackoffBase
	for i := 2; i < n && d < e.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, e.cfg.BackoffMax)
	half := d / 2
	return half + time.Duration(e.rng.Int64N(int64(half)+1))
}

// waitFor polls the Scene until sel resolves or WaitTimeout passes.
func (e *executor) waitFor(ctx context.Context, sel scene.Selector, sc *scene.Scene) (scene.Element, *scene.Scene, bool, error) {
	deadline := e.clock.Now().Add(e.cfg.WaitTimeout)
	for {
		if el, ok := sc.Resolve(sel); ok {
			return el, sc, true, nil
		}
		if !e.clock.Now().Before(deadline) {
			return scene.Element{}, sc, false, nil
		}
		if err := e.clock.Sleep(ctx, e.cfg.PollInterval); err != nil {
			return scene.Element{}, sc, false, err
		}
		next, err := e.observe(ctx)
		if err != nil {
			return scene.Element{}, sc, false, err
		}
		sc = next
	}
}

// permanent reports tool errors that another attempt cannot fix.
func permanent(err error) bool {
	var argErr *tools.ArgError
	var elErr *tools.ElementError
	return errors.Is(err, device.ErrAppNotFound) || errors.Is(err, device.ErrUnsupported) ||
		errors.Is(err, tools.ErrUnknownTool) || errors.As(err, &argErr) || errors.As(err, &elErr)
}

// execute runs one step. It returns the step's record, the Scene the step
// acted on, and an error only when the task must end (ctx cancelled, device
// disconnected).
func (e *executor) execute(ctx context.Context, number int, ps plan.PlannedStep, planScene *scene.Scene,
	onAttempt func(plan.Attempt, tools.Call)) (plan.StepRecord, *scene.Scene, error) {
	start := e.clock.Now()
	rec := plan.StepRecord{
		Number: number, Intent: ps.Intent, Call: ps.Call, Attempts: []plan.Attempt{},
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

	cur := planScene
	var base *scene.Scene // the screen right before the first action
	lastReason := ""
	for n := 1; n <= e.cfg.StepRetries; n++ {
		if n > 1 {
			if err := e.clock.Sleep(ctx, e.backoff(n)); err != nil {
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
		if n > 1 && e.tookEffect(ps, call, base, cur) {
			if c, ok := submitOnly(call, base, cur); ok {
				// The text is in the field but the submit did not land:
				// press enter, never type the query again.
				call = c
				e.last = nil
				res, err := tools.Run(ctx, e.dev, cur, call, tools.RunOptions{Clock: e.clock})
				if err != nil {
					if ctx.Err() != nil || errors.Is(err, device.ErrDisconnected) {
						return e.abort(rec, start, actedOn, err)
					}
					result = "text already typed; enter failed: " + err.Error()
				} else {
					result = "text already typed; " + res.Text
				}
			} else {
				result = "already took effect; not repeated"
			}
		} else {
			e.last = nil
			res, err := tools.Run(ctx, e.dev, actScene, call, tools.RunOptions{Clock: e.clock})
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, device.ErrDisconnected) {
					return e.abort(rec, start, actedOn, err)
				}
				a := plan.Attempt{Number: n, Result: err.Error(), Duration: e.clock.Now().Sub(aStart)}
				rec.Attempts = append(rec.Attempts, a)
				onAttempt(a, call)
				lastReason = err.Error()
				if permanent(err) {
					return fail(lastReason)
				}
				continue
			}
			result = res.Text
		}

		actedAt := e.clock.Now()
		after, err := e.settle(ctx, cur, func(sc *scene.Scene) bool {
			met, _ := e.check(ps, call, base, sc)
			return met
		})
		if err != nil {
			return e.abort(rec, start, actedOn, err)
		}
		met, why := e.check(ps, call, base, after)
		if !met && e.cfg.FixedDelay == 0 {
			after, met, why, err = e.pollExpectation(ctx, ps, call, base, after, actedAt)
			if err != nil {
				return e.abort(rec, start, actedOn, err)
			}
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
			return rec, actedOn, nil
		}
		lastReason = why
		e.log.Debug("expectation not met", "step", number, "attempt", n, "why", why)
	}
	return fail(fmt.Sprintf("%s after %d attempts", lastReason, len(rec.Attempts)))
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

// Effects can lag behind the action by more than the settle window (a slow
// phone starts drawing late). Before an attempt is called failed the screen
// is watched a little longer: up to the effect window when nothing changed
// yet (minEffectWindow, or two observations on a phone whose dumps are
// slow), up to WaitTimeout when the action visibly took effect and the
// expected element is still on its way.
const minEffectWindow = 600 * time.Millisecond

func (e *executor) effectWindow() time.Duration {
	return min(max(minEffectWindow, 2*e.dumpLatency), e.cfg.WaitTimeout)
}

func (e *executor) pollExpectation(ctx context.Context, ps plan.PlannedStep, call tools.Call, base, after *scene.Scene, start time.Time) (*scene.Scene, bool, string, error) {
	met, why := false, ""
	for {
		met, why = e.check(ps, call, base, after)
		if met {
			return after, true, "", nil
		}
		limit := e.effectWindow()
		if e.fp(after) != e.fp(base) && (ps.Expect.Kind == plan.ExpectPresent || ps.Expect.Kind == plan.ExpectApp) {
			// On its way to a new screen: give it the wait-for-element time.
			limit = e.cfg.WaitTimeout
		}
		if e.clock.Now().Sub(start) >= limit {
			return after, false, why, nil
		}
		if err := e.clock.Sleep(ctx, e.cfg.PollInterval); err != nil {
			return after, false, why, err
		}
		sc, err := e.observe(ctx)
		if err != nil {
			return after, false, why, err
		}
		after = sc
	}
}

// check tells whether the screen after the action shows what the step
// expected, and if not, why.
func (e *executor) check(ps plan.PlannedStep, call tools.Call, base, after *scene.Scene) (bool, string) {
	x := ps.Expect
	switch x.Kind {
	case plan.ExpectNothing:
		return true, ""
	case plan.ExpectChanged:
		if call.Name == tools.TypeText && typeSubmits(call) {
			if changedBeyondFields(base, after) {
				return true, ""
			}
			return false, "the screen did not change after submitting"
		}
		if e.fp(after) != e.fp(base) {
			return true, ""
		}
		if call.Name == tools.LaunchApp && AppMatches(after.Package, argString(call, "app")) {
			return true, "" // it was in front already
		}
		return false, "the screen did not change"
	case plan.ExpectApp:
		if AppMatches(after.Package, x.App) || (!strings.Contains(x.App, ".") && after.Package != base.Package && after.Package != "") {
			return true, ""
		}
		return false, fmt.Sprintf("%s is not in front (foreground: %s)", x.App, after.Package)
	case plan.ExpectPresent:
		if _, ok := after.Resolve(x.Target); ok {
			return true, ""
		}
		return false, describe(x.Target) + " is not on the screen"
	case plan.ExpectGone:
		if _, ok := after.Resolve(x.Target); !ok {
			return true, ""
		}
		return false, describe(x.Target) + " is still on the screen"
	case plan.ExpectFieldText:
		if fieldHolds(after, x.Text) {
			return true, ""
		}
		return false, fmt.Sprintf("no field holds %q", x.Text)
	}
	return false, fmt.Sprintf("unknown expectation %q", x.Kind)
}

// tookEffect reports whether an input's effect is already on the screen, so
// repeating it would do it twice (a query typed twice, an app launched twice,
// a toggle tapped back).
func (e *executor) tookEffect(ps plan.PlannedStep, call tools.Call, base, cur *scene.Scene) bool {
	if ps.Expect.Kind == plan.ExpectGone && ps.Target != nil && (call.Name == tools.Tap || call.Name == tools.PressKey) {
		// Closing something: while it is still there, the tap did not
		// close it (what changed was something else), and tapping a close
		// button again is safe.
		if _, still := cur.Resolve(ps.Expect.Target); still {
			return false
		}
	}
	switch call.Name {
	case tools.Wait:
		return false
	case tools.TypeText:
		return fieldHolds(cur, argString(call, "text"))
	case tools.LaunchApp:
		app := argString(call, "app")
		return AppMatches(cur.Package, app) || cur.Package != base.Package
	default:
		return e.fp(cur) != e.fp(base)
	}
}

// submitOnly turns a submitting type_text whose text is already in the field
// into the enter key alone, when the submit has not changed the screen yet.
func submitOnly(call tools.Call, base, cur *scene.Scene) (tools.Call, bool) {
	if call.Name != tools.TypeText || !typeSubmits(call) || changedBeyondFields(base, cur) {
		return tools.Call{}, false
	}
	return tools.NewCall(tools.PressKey, map[string]string{"key": string(device.KeyEnter)}), true
}

func typeSubmits(call tools.Call) bool {
	var a struct {
		Submit bool `json:"submit"`
	}
	_ = json.Unmarshal(call.Args, &a)
	return a.Submit
}

func argString(call tools.Call, name string) string {
	var m map[string]any
	_ = json.Unmarshal(call.Args, &m)
	s, _ := m[name].(string)
	return s
}

// fieldHolds reports whether an editable field on the screen holds text
// (compared without case and surrounding space).
func fieldHolds(sc *scene.Scene, text string) bool {
	want := normalize(text)
	for _, el := range sc.Elements {
		if el.Editable && normalize(el.Text) == want {
			return true
		}
	}
	return false
}

func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// changedBeyondFields reports whether the screen changed in more than the
// text of its editable fields (a submit navigates; typing only edits).
func changedBeyondFields(a, b *scene.Scene) bool {
	if a.Package != b.Package || a.Activity != b.Activity || len(a.Elements) != len(b.Elements) {
		return true
	}
	for i := range a.Elements {
		x, y := a.Elements[i], b.Elements[i]
		if x.Editable && y.Editable {
			continue
		}
		if x.Class != y.Class || x.Text != y.Text || x.Desc != y.Desc || x.ResourceID != y.ResourceID || x.Bounds != y.Bounds {
			return true
		}
	}
	return false
}

// AppMatches reports whether the foreground package is the app a step named,
// by package or by a name the package spells ("Taobao" → com.taobao.taobao).
func AppMatches(pkg, app string) bool {
	if pkg == "" || app == "" {
		return false
	}
	if strings.EqualFold(pkg, app) {
		return true
	}
	name := strings.ToLower(strings.ReplaceAll(app, " ", ""))
	if strings.Contains(name, ".") {
		return false
	}
	for _, part := range strings.Split(strings.ToLower(pkg), ".") {
		if part == name {
			return true
		}
	}
	return false
}

func describe(sel scene.Selector) string {
	var parts []string
	if sel.Value != "" {
		f := string(sel.Field)
		if f == "" {
			f = "label"
		}
		parts = append(parts, fmt.Sprintf("%s %q", f, sel.Value))
	}
	if sel.Editable {
		parts = append(parts, "editable")
	}
	if sel.Clickable {
		parts = append(parts, "clickable")
	}
	if len(parts) == 0 {
		return "the element"
	}
	return "the element (" + strings.Join(parts, ", ") + ")"
}

// parseFinish reads a finish_task call's arguments.
func parseFinish(c tools.Call) (plan.Finish, error) {
	var a struct {
		Success *bool  `json:"success"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return plan.Finish{}, err
	}
	if a.Success == nil {
		return plan.Finish{}, errors.New(`missing "success"`)
	}
	return plan.Finish{Success: *a.Success, Reason: a.Reason}, nil
}
