package tasks

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The tiny executor of these tests: it plays a task's Script straight on the
// simulator, finding each Target in the listing by FindTarget's rule, as the
// harness's scripted decision-maker does through the AI planner. It proves
// that a script and its check agree with the simulator.

const maxFindScrolls = 8

type runResult struct {
	finished bool
	success  bool
	reason   string
	stops    int             // gate stops met
	cause    lifecycle.Cause // an unsuccessful finish's cause, by the runtime's rule
	state    []byte
	start    []byte
}

func newPhone(t testing.TB, tk Task, loc string, seed int64, profile string) (*sim.Phone, *clock.Fake, map[string]string) {
	t.Helper()
	params := tk.ParamsFor(seed)
	fc := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Locale: loc, Clock: fc, Seed: seed, Profile: profile, Start: tk.Start(params)})
	if err != nil {
		t.Fatalf("%s: sim.New: %v", tk.Name, err)
	}
	return p, fc, params
}

type executor struct {
	p    *sim.Phone
	dev  *sim.Device
	fc   *clock.Fake
	ctx  context.Context
	goal string
	gate *safety.Gate
	// onStop is called when the gate would stop a step for a person,
	// before the step runs (the harness's waiting_approval); the executor
	// then runs it, as an approval does.
	onStop func(step int, d safety.Decision) error
	// tolerate: a failing tool call or a missing Target ends the script as
	// a failure instead of an error (Impossible tasks).
	tolerate bool
}

func (x *executor) scene() (*scene.Scene, error) {
	// The settle the runtime would do: let transitions, splash and loading
	// finish before reading the screen.
	if d := x.p.ReadyAt().Sub(x.fc.Now()); d > 0 {
		x.fc.Advance(d)
	}
	return x.dev.Scene(x.ctx)
}

// find returns the element Target names, scrolling down (then up) at most
// maxFindScrolls times each way to bring it into view (not at all when
// here).
func (x *executor) find(target string, here bool) (scene.Element, bool, error) {
	limit := maxFindScrolls
	if here {
		limit = 0
	}
	for _, dir := range []string{"down", "up"} {
		for i := 0; i <= limit; i++ {
			sc, err := x.scene()
			if err != nil {
				return scene.Element{}, false, err
			}
			if l, ok := FindTarget(sc.Listing(), target); ok {
				e, _ := sc.Element(l.Index)
				return e, true, nil
			}
			if i == limit {
				break
			}
			if err := x.scroll(sc, dir, nil); err != nil {
				return scene.Element{}, false, err
			}
		}
	}
	return scene.Element{}, false, nil
}

// scroll swipes the element (or the largest scrollable, or the screen) so
// that content further in dir shows.
func (x *executor) scroll(sc *scene.Scene, dir string, on *scene.Element) error {
	b := scene.Bounds{Left: 0, Top: sc.Height / 4, Right: sc.Width, Bottom: sc.Height * 3 / 4}
	if on != nil {
		b = on.Bounds
	} else {
		best := 0
		for _, e := range sc.Elements {
			if a := e.Bounds.Width() * e.Bounds.Height(); e.Scrollable && sc.Visible(e) && a > best {
				best, b = a, e.Bounds
			}
		}
	}
	cx, cy := b.Center()
	d := b.Height() / 3
	switch dir {
	case "down":
		return x.dev.Swipe(x.ctx, cx, cy+d, cx, cy-d, 300*time.Millisecond)
	case "up":
		return x.dev.Swipe(x.ctx, cx, cy-d, cx, cy+d, 300*time.Millisecond)
	}
	return fmt.Errorf("scroll direction %q", dir)
}

func (x *executor) run(steps []Step) (res runResult, err error) {
	lastFailed := false
	defer func() {
		// runtime.giveUpCause: finishing unsuccessfully right after a failed
		// step is step_failed, otherwise planner_gave_up.
		if res.finished && !res.success {
			res.cause = lifecycle.CausePlannerGaveUp
			if lastFailed {
				res.cause = lifecycle.CauseStepFailed
			}
		}
	}()
	for i, st := range steps {
		var el *scene.Element
		if st.Target != "" && st.Tool != ToolScroll {
			e, ok, err := x.find(st.Target, st.Here)
			if err != nil {
				return res, fmt.Errorf("step %d %q: %w", i, st.Intent, err)
			}
			if !ok {
				if st.IfMissing == "skip" {
					continue
				}
				if x.tolerate {
					// The decision-maker finishes with success=false, naming
					// the target.
					res.finished, res.reason = true, fmt.Sprintf("%q is not on the phone", st.Target)
					break
				}
				return res, fmt.Errorf("step %d %q: no element %q listed", i, st.Intent, st.Target)
			}
			el = &e
		}
		if err := x.ask(i, st, el, &res); err != nil {
			return res, err
		}
		if err := x.do(st, el); err != nil {
			if x.tolerate {
				lastFailed = true
				continue // the planner reads the failure and goes on
			}
			return res, fmt.Errorf("step %d %q: %w", i, st.Intent, err)
		}
		if st.Tool == ToolFinishTask {
			// A finish is the planner's decision, not a step: the cause
			// reads the step before it.
			res.finished = true
			res.success, _ = st.Args["success"].(bool)
			res.reason, _ = st.Args["reason"].(string)
			break
		}
		lastFailed = false
	}
	if _, err := x.scene(); err != nil {
		return res, err
	}
	res.state, err = x.p.State()
	return res, err
}

// ask puts the step's call to the safety gate (default policy: confirm
// every category), as the Executor does before it touches the phone.
func (x *executor) ask(i int, st Step, el *scene.Element, res *runResult) error {
	if x.gate == nil {
		return nil
	}
	args := map[string]any{}
	for k, v := range st.Args {
		args[k] = v
	}
	if el != nil {
		args["element"] = el.Index
	}
	sc, err := x.scene()
	if err != nil {
		return err
	}
	d := x.gate.Check(safety.Input{Goal: x.goal, Scene: sc, Call: tools.NewCall(st.Tool, args), Element: el})
	if d.Verdict == safety.Allow {
		return nil
	}
	res.stops++
	if x.onStop == nil {
		return fmt.Errorf("step %d %q: the gate says %s %s: %s", i, st.Intent, d.Verdict, d.Category, d.Reason)
	}
	return x.onStop(i, d)
}

func (x *executor) do(st Step, el *scene.Element) error {
	str := func(k string) string { s, _ := st.Args[k].(string); return s }
	switch st.Tool {
	case ToolLaunchApp:
		return x.dev.LaunchApp(x.ctx, str("app"))
	case ToolTap:
		cx, cy := el.Bounds.Center()
		return x.dev.Tap(x.ctx, cx, cy)
	case ToolLongPress:
		cx, cy := el.Bounds.Center()
		return x.dev.LongPress(x.ctx, cx, cy, 800*time.Millisecond)
	case ToolTypeText:
		if el != nil {
			cx, cy := el.Bounds.Center()
			if err := x.dev.Tap(x.ctx, cx, cy); err != nil {
				return err
			}
		}
		if err := x.dev.TypeText(x.ctx, str("text")); err != nil {
			return err
		}
		if sub, _ := st.Args["submit"].(bool); sub {
			return x.dev.Key(x.ctx, device.KeyEnter)
		}
		return nil
	case ToolScroll:
		for i := 0; i < maxFindScrolls; i++ {
			sc, err := x.scene()
			if err != nil {
				return err
			}
			if st.Until != "" && IsListed(sc.Listing(), st.Until) {
				return nil
			}
			var on *scene.Element
			if st.Target != "" {
				if l, ok := FindTarget(sc.Listing(), st.Target); ok {
					e, _ := sc.Element(l.Index)
					on = &e
				}
			}
			if err := x.scroll(sc, str("direction"), on); err != nil {
				return err
			}
			if st.Until == "" {
				return nil
			}
		}
		return fmt.Errorf("%q not listed after %d scrolls", st.Until, maxFindScrolls)
	case ToolPressKey:
		return x.dev.Key(x.ctx, device.Key(str("key")))
	case ToolWait:
		s, _ := st.Args["seconds"].(float64)
		x.fc.Advance(time.Duration(s * float64(time.Second)))
		return nil
	case ToolFinishTask:
		return nil
	}
	return fmt.Errorf("unknown tool %q", st.Tool)
}

// runTask plays tk's script in loc from a fresh phone. onStop (nil = any
// stop is an error) sees every gate stop.
func runTask(t testing.TB, tk Task, loc string, seed int64, onStop func(int, safety.Decision) error) (runResult, error) {
	return runTaskWith(t, tk, loc, seed, onStop, nil)
}

// runTaskWith is runTask with a hook that receives the phone before the
// script starts.
func runTaskWith(t testing.TB, tk Task, loc string, seed int64, onStop func(int, safety.Decision) error, hook func(*sim.Phone)) (runResult, error) {
	p, fc, params := newPhone(t, tk, loc, seed, "")
	if hook != nil {
		hook(p)
	}
	start, err := p.State()
	if err != nil {
		return runResult{}, err
	}
	g, err := safety.New(safety.Policy{})
	if err != nil {
		return runResult{}, err
	}
	x := &executor{p: p, dev: p.Device(), fc: fc, ctx: context.Background(), goal: tk.GoalFor(loc, params),
		gate: g, onStop: onStop, tolerate: tk.Kind == Impossible}
	res, err := x.run(tk.Script(loc, params))
	res.start = start
	return res, err
}

// eachRun runs f for every task of the kinds, locale and a few seeds.
func eachRun(t *testing.T, kinds []Kind, f func(t *testing.T, tk Task, loc string, seed int64)) {
	for _, tk := range All() {
		if !slices.Contains(kinds, tk.Kind) {
			continue
		}
		for _, loc := range Locales {
			for _, seed := range []int64{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/%d", tk.Name, loc, seed), func(t *testing.T) { f(t, tk, loc, seed) })
			}
		}
	}
}

// TestScriptsReachTheirGoal plays every Normal and AlreadyDone task's script
// on the simulator, asking the safety gate before each step as the Executor
// does, and checks its Check passes: the script, the labels it names and
// the check agree with the phone, and nothing in it waits for a person.
// An AlreadyDone script also leaves the user's data as it found it.
func TestScriptsReachTheirGoal(t *testing.T) {
	eachRun(t, []Kind{Normal, AlreadyDone}, func(t *testing.T, tk Task, loc string, seed int64) {
		res, err := runTask(t, tk, loc, seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.finished || !res.success {
			t.Fatalf("script did not finish with success: %+v", res)
		}
		if err := tk.Check(res.state, tk.ParamsFor(seed)); err != nil {
			t.Fatalf("check after the script: %v\nstate: %s", err, res.state)
		}
		if tk.Kind == AlreadyDone {
			if err := Unchanged(res.start, res.state); err != nil {
				t.Fatalf("the already-done script changed the phone: %v", err)
			}
		}
	})
}

// TestApprovalScriptsStopAtTheGate plays every Approval task's script: the
// gate stops it exactly Approvals times, the goal is not met at any stop
// (nothing irreversible happened before a person said yes), and after the
// last approved action the goal is met.
func TestApprovalScriptsStopAtTheGate(t *testing.T) {
	eachRun(t, []Kind{Approval}, func(t *testing.T, tk Task, loc string, seed int64) {
		params := tk.ParamsFor(seed)
		var p *sim.Phone
		var cats []safety.Category
		onStop := func(i int, d safety.Decision) error {
			cats = append(cats, d.Category)
			b, err := p.State()
			if err != nil {
				return err
			}
			if err := tk.Check(b, params); err == nil {
				return fmt.Errorf("step %d: the goal is already met when the gate stops for %s", i, d.Category)
			}
			return nil
		}
		res, err := runTaskWith(t, tk, loc, seed, onStop, func(ph *sim.Phone) { p = ph })
		if err != nil {
			t.Fatal(err)
		}
		if want := tk.GateStops(); res.stops != want {
			t.Fatalf("the gate stopped %d times (%v), want %d", res.stops, cats, tk.GateStops())
		}
		if !res.finished || !res.success {
			t.Fatalf("script did not finish with success: %+v", res)
		}
		if err := tk.Check(res.state, params); err != nil {
			t.Fatalf("check after the approved script: %v\nstate: %s", err, res.state)
		}
	})
}

// TestImpossibleScriptsTouchNothing plays every Impossible task's script:
// it ends without success, the gate never stops it, the goal stays unmet
// and the user's data is as it was.
func TestImpossibleScriptsTouchNothing(t *testing.T) {
	eachRun(t, []Kind{Impossible}, func(t *testing.T, tk Task, loc string, seed int64) {
		res, err := runTask(t, tk, loc, seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.success {
			t.Fatalf("an impossible task's script succeeded: %+v", res)
		}
		if !res.finished {
			t.Fatalf("the script ran out without finishing")
		}
		if res.cause != tk.WantCause {
			t.Fatalf("the script ends with cause %s (%s), want %s", res.cause, res.reason, tk.WantCause)
		}
		if err := tk.Check(res.state, tk.ParamsFor(seed)); err == nil {
			t.Fatalf("the impossible goal is met")
		}
		if err := Unchanged(res.start, res.state); err != nil {
			t.Fatalf("the impossible task's script changed the phone: %v", err)
		}
	})
}
