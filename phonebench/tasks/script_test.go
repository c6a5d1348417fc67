package tasks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/scene"
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
	p   *sim.Phone
	dev *sim.Device
	fc  *clock.Fake
	ctx context.Context
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
// maxFindScrolls times each way to bring it into view.
func (x *executor) find(target string) (scene.Element, bool, error) {
	for _, dir := range []string{"down", "up"} {
		for i := 0; i <= maxFindScrolls; i++ {
			sc, err := x.scene()
			if err != nil {
				return scene.Element{}, false, err
			}
			if l, ok := FindTarget(sc.Listing(), target); ok {
				e, _ := sc.Element(l.Index)
				return e, true, nil
			}
			if i == maxFindScrolls {
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

func (x *executor) run(steps []Step) (runResult, error) {
	var res runResult
	for i, st := range steps {
		var el *scene.Element
		if st.Target != "" && st.Tool != ToolScroll {
			e, ok, err := x.find(st.Target)
			if err != nil {
				return res, fmt.Errorf("step %d %q: %w", i, st.Intent, err)
			}
			if !ok {
				if st.IfMissing == "skip" {
					continue
				}
				return res, fmt.Errorf("step %d %q: no element %q listed", i, st.Intent, st.Target)
			}
			el = &e
		}
		if err := x.do(st, el); err != nil {
			return res, fmt.Errorf("step %d %q: %w", i, st.Intent, err)
		}
		if st.Tool == ToolFinishTask {
			res.finished = true
			res.success, _ = st.Args["success"].(bool)
			res.reason, _ = st.Args["reason"].(string)
			break
		}
	}
	sc, err := x.scene()
	_ = sc
	if err != nil {
		return res, err
	}
	res.state, err = x.p.State()
	return res, err
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

func runTask(t testing.TB, tk Task, loc string, seed int64, profile string) (runResult, error) {
	p, fc, params := newPhone(t, tk, loc, seed, profile)
	start, err := p.State()
	if err != nil {
		return runResult{}, err
	}
	x := &executor{p: p, dev: p.Device(), fc: fc, ctx: context.Background()}
	res, err := x.run(tk.Script(loc, params))
	res.start = start
	return res, err
}

// TestScriptsReachTheirGoal plays every Normal and AlreadyDone task's script
// on the simulator, in both locales and a few seeds, and checks its Check
// passes: the script, the labels it names and the check agree with the
// phone.
func TestScriptsReachTheirGoal(t *testing.T) {
	for _, tk := range All() {
		if tk.Kind != Normal && tk.Kind != AlreadyDone {
			continue
		}
		for _, loc := range Locales {
			for _, seed := range []int64{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/%d", tk.Name, loc, seed), func(t *testing.T) {
					res, err := runTask(t, tk, loc, seed, "")
					if err != nil {
						t.Fatal(err)
					}
					if !res.finished || !res.success {
						t.Fatalf("script did not finish with success: %+v", res)
					}
					params := tk.ParamsFor(seed)
					if err := tk.Check(res.state, params); err != nil {
						t.Fatalf("check after the script: %v\nstate: %s", err, res.state)
					}
				})
			}
		}
	}
}

// unused guard: strings is used by helpers in other test files.
var _ = strings.TrimSpace
