package phonebench

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/perception"
	"phonepilot/phonebench/tasks"
	"phonepilot/tools"
)

// Each peer pays what its source makes it pay (docs/phonebench.md, "The
// peers, from their source"): the path of its reads and inputs, its model
// calls, its own wait after each kind of action, the commands and reads it
// makes around an action, and its wait before reading again after a
// failed read.
func TestPeersPayWhatTheirSourceSays(t *testing.T) {
	tap := tools.NewCall(tools.Tap, tools.TapArgs{Element: 3})
	scroll := tools.NewCall(tools.Scroll, tools.ScrollArgs{Direction: "down"})
	launch := tools.NewCall(tools.LaunchApp, tools.LaunchAppArgs{App: "Taobao"})
	typing := tools.NewCall(tools.TypeText, tools.TypeTextArgs{Text: "mac mini"})
	s := time.Second
	ms := time.Millisecond
	for _, tc := range []struct {
		policy                   string
		tree, frame, input       sim.Observer
		png                      bool
		calls, runCalls          int
		turnWait                 time.Duration
		retry                    []time.Duration
		tap, scroll, launch, typ peerWay
	}{
		// droidrun/mobilerun: Portal's state, 1 s after every action,
		// open_app 1 s more, a swipe gesture of 1 s; retries 1, 2, 3, 5,
		// 8, 10 s.
		{policy: PolicyDroidrunLoop, tree: sim.ObserverPortal, input: sim.ObserverPortal, calls: 1,
			retry: []time.Duration{s, 2 * s, 3 * s, 5 * s, 8 * s, 10 * s},
			tap:   peerWay{wait: s}, scroll: peerWay{wait: s + 700*ms}, launch: peerWay{wait: 2 * s}, typ: peerWay{wait: s}},
		// Open-AutoGLM: `screencap -p`, 1 s after every action, a ≈1.4 s
		// swipe, typing through ADB Keyboard: four commands, 1 s each.
		{policy: PolicyAutoGLMLoop, frame: sim.ObserverUIAutomator, png: true, input: sim.ObserverUIAutomator, calls: 1,
			retry: []time.Duration{s},
			tap:   peerWay{wait: s}, scroll: peerWay{wait: s + 1100*ms}, launch: peerWay{wait: s}, typ: peerWay{wait: 4 * s, commands: 3}},
		// Midscene: a PNG screenshot, 300 ms after every action, 500 ms
		// more after a scroll.
		{policy: PolicyMidsceneLoop, frame: sim.ObserverUIAutomator, png: true, input: sim.ObserverUIAutomator, calls: 1,
			retry: []time.Duration{300 * ms},
			tap:   peerWay{wait: 300 * ms}, scroll: peerWay{wait: 800 * ms}, launch: peerWay{wait: 300 * ms}, typ: peerWay{wait: 300 * ms}},
		// mobile-use: the uiautomator2 server's screenshot and dump (no
		// idle wait), `input` taps, no sleep after a tap, a 400 ms swipe,
		// a launch 1 s then a `dumpsys window` poll (44 ms, also beside
		// every turn's read) and the hopper's call, typing: a read for
		// focus, a tap at the field's end, a read of the field; the
		// planner's call once a run.
		{policy: PolicyMobileUseLoop, tree: sim.ObserverHelper, frame: sim.ObserverHelper, input: sim.ObserverUIAutomator,
			calls: 2, runCalls: 1, turnWait: 44 * ms, retry: []time.Duration{s},
			tap: peerWay{}, scroll: peerWay{wait: 100 * ms}, launch: peerWay{wait: s + 44*ms, calls: 1}, typ: peerWay{reads: 2, commands: 1}},
	} {
		pr := peerFor(tc.policy, sim.ObserverHelper, time.Second)
		if pr.tree != tc.tree || pr.frame != tc.frame || pr.input != tc.input || pr.png != tc.png {
			t.Errorf("%s reads the tree on %q, frames on %q (png %v), acts on %q; want %q, %q (%v), %q",
				tc.policy, pr.tree, pr.frame, pr.png, pr.input, tc.tree, tc.frame, tc.png, tc.input)
		}
		if pr.turnWait != tc.turnWait {
			t.Errorf("%s: %v of shell queries beside each turn's read; want %v", tc.policy, pr.turnWait, tc.turnWait)
		}
		if pr.calls != tc.calls || pr.runCalls != tc.runCalls {
			t.Errorf("%s: %d model calls a turn and %d a run; want %d and %d", tc.policy, pr.calls, pr.runCalls, tc.calls, tc.runCalls)
		}
		if !slices.Equal(pr.retry, tc.retry) {
			t.Errorf("%s retries a failed read after %v; want %v", tc.policy, pr.retry, tc.retry)
		}
		for _, w := range []struct {
			what string
			call tools.Call
			want peerWay
		}{{"a tap", tap, tc.tap}, {"a scroll", scroll, tc.scroll}, {"a launch", launch, tc.launch}, {"typing", typing, tc.typ}} {
			if got := pr.way(w.call); got != w.want {
				t.Errorf("%s, %s: %+v; want %+v", tc.policy, w.what, got, w.want)
			}
		}
	}
	dr := peerFor(PolicyDroidrunLoop, sim.ObserverHelper, time.Second)
	for n, want := range map[int]time.Duration{1: s, 2: 2 * s, 6: 10 * s, 9: 10 * s} {
		if got := dr.retryAfter(n); got != want {
			t.Errorf("droidrun's wait after failed read %d in a row: %v; want %v", n, got, want)
		}
	}
}

// mobile-use's read (the uiautomator2 server's screenshot and dump) does
// not wait for the screen to go idle: openatx's u2.jar sets the idle
// timeout to 0, so UiAutomation.waitForIdle gives up at once. Started in
// the first moments of a launch's transition, it comes back within the
// helper's tree and frame costs, without the one-shot dump's idle-state
// failure or its 0.9–3.2 s.
func TestMobileUseReadsWithoutWaitingForIdle(t *testing.T) {
	ctx := context.Background()
	pr := peerFor(PolicyMobileUseLoop, sim.ObserverHelper, time.Second)
	tree, frame := sim.CostsOf(sim.ObserverHelper).Tree, sim.CostsOf(sim.ObserverHelper).Frame
	lo, hi := tree.Min+frame.Min, tree.Max+frame.Max
	animating := 0
	for seed := int64(1); seed <= 20; seed++ {
		clk := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
		p, err := sim.New(sim.Config{Profile: "slow", Clock: clk, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		// Launched through the benchmark's free view, so that the read
		// starts as the transition does.
		if err := p.DeviceVia(sim.ObserverOracle).LaunchApp(ctx, "Settings"); err != nil {
			t.Fatal(err)
		}
		start := clk.Now()
		if !p.ReadyAt().After(start) {
			continue
		}
		animating++
		// A null root (no window yet) can come on any path; the one-shot
		// dump's idle-state failure must not.
		if _, err := pr.look(ctx, p); errors.Is(err, perception.ErrIdleState) {
			t.Errorf("seed %d: mobile-use's read during a transition failed: %v", seed, err)
		}
		if took := clk.Now().Sub(start); took < lo || took > hi {
			t.Errorf("seed %d: mobile-use's read during a transition took %v; want %v–%v (the helper's tree and frame, no idle wait)", seed, took, lo, hi)
		}
	}
	if animating == 0 {
		t.Fatal("no launch was still drawing when the read began")
	}
}

// mobileUseSearch runs mobile-use's loop once on taobao.search (seed 1,
// English) under a profile.
func mobileUseSearch(t *testing.T, profile string) Record {
	t.Helper()
	rep, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 1, Profiles: []string{profile}, Locales: []string{"en"},
		Tasks: tasks.Select("taobao.search"), Policies: []string{PolicyMobileUseLoop}, Observer: sim.ObserverHelper, ModelLatency: DefaultModelLatency})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Records, func(r Record) bool { return r.Task == "taobao.search" })
	if i < 0 {
		t.Fatal("no run of taobao.search")
	}
	return rep.Records[i]
}

// A run of mobile-use makes its planner's call once, two calls (cortex,
// executor) every turn, and the hopper's call for each launch: Taobao's
// search launches once.
func TestMobileUseCountsItsModelCalls(t *testing.T) {
	r := mobileUseSearch(t, "realistic")
	if want := 1 + 2*(r.Steps+1) + 1; !r.Success || r.Calls != want {
		t.Errorf("mobile-use on taobao.search: success %v, %d steps, %d calls; want a success and %d calls (planner, 2 a turn, the launch's hopper)", r.Success, r.Steps, r.Calls, want)
	}
}

// Beside every turn's read mobile-use's contextor asks `dumpsys window`
// for the app in front: on the fault-free phone, where reads and inputs
// cost nothing, a run of taobao.search still takes that query's 44 ms a
// turn, plus its launch's 1 s sleep and poll.
func TestMobileUsePaysItsContextorQueries(t *testing.T) {
	r := mobileUseSearch(t, "clean")
	least := (time.Duration(r.Steps+1)*dumpsysWindow + time.Second + dumpsysWindow).Milliseconds()
	if !r.Success || r.SimMS < least {
		t.Errorf("mobile-use on taobao.search, clean: success %v, %d steps in %d ms; want at least %d ms (44 ms a turn, a launch's 1 s and poll)", r.Success, r.Steps, r.SimMS, least)
	}
}
