package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan/rule"
)

// runOnSim runs goal with the rule planner on a simulated phone of config
// sc, on a fake clock the phone and the runtime share (nothing sleeps for
// real); cfg's Seed is the phone's. It returns the result and the phone.
func runOnSim(t *testing.T, sc sim.Config, goal string, cfg Config) (Result, *sim.Phone) {
	t.Helper()
	sc.Clock = clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = sc.Seed
	r, err := New(cfg, p.Device(), rule.New(), Options{Clock: sc.Clock, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), goal), p
}

// simRun runs goal on an in-process simulated phone on a fake clock (the
// phone's latencies and the runtime's waits all advance it, so nothing
// sleeps for real) and returns the result and the phone's last search.
func simRun(t *testing.T, locale, profile string, seed int64, goal string, cfg Config) (Result, string) {
	t.Helper()
	res, p := runOnSim(t, sim.Config{Locale: locale, Profile: profile, Seed: seed}, goal, cfg)
	raw, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao struct {
			LastSearch string   `json:"last_search"`
			Searches   []string `json:"searches"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("sim state: %v", err)
	}
	if n := len(st.Taobao.Searches); n > 1 {
		t.Errorf("%s seed %d: searched %d times %q; the query must be submitted once", locale, seed, n, st.Taobao.Searches)
	}
	return res, st.Taobao.LastSearch
}

var simGoals = map[string]string{"en": "open Taobao and search Mac mini", "zh": "打开淘宝搜索Mac mini"}

func TestSimSearchCompletesInBothLocales(t *testing.T) {
	for _, loc := range []string{"en", "zh"} {
		res, last := simRun(t, loc, "", 1, simGoals[loc], Defaults())
		if res.Status != lifecycle.Completed || last != "Mac mini" {
			t.Errorf("%s: %s (%s), last_search %q; steps %v", loc, res.Status, res.Reason, last, intents(res))
		}
	}
}

// TestSimRealisticProfileSeeds is the CI bar: under the realistic profile
// (popups, transitions, idle-state dump errors, dropped taps, a spinner)
// the task completes in at least 19 of 20 seeds, in both locales.
func TestSimRealisticProfileSeeds(t *testing.T) {
	for _, loc := range []string{"en", "zh"} {
		ok := 0
		var failures []string
		for seed := int64(1); seed <= 20; seed++ {
			res, last := simRun(t, loc, "realistic", seed, simGoals[loc], Defaults())
			if res.Status == lifecycle.Completed && last == "Mac mini" {
				ok++
				continue
			}
			failures = append(failures, fmt.Sprintf("seed %d: %s (%s) last_search %q", seed, res.Status, res.Reason, last))
		}
		t.Logf("%s: %d/20 completed", loc, ok)
		if ok < 19 {
			t.Errorf("%s: %d/20 completed, want at least 19:\n%s", loc, ok, strings.Join(failures, "\n"))
		}
	}
}

func TestSimPopupAfterLaunchIsDismissed(t *testing.T) {
	// The simulated Taobao shows a promotion over its home page on the
	// first launch; the Planner closes it and carries on.
	for _, loc := range []string{"en", "zh"} {
		res, last := simRun(t, loc, "", 1, simGoals[loc], Defaults())
		found := false
		for _, s := range res.Steps {
			if strings.HasPrefix(s.Intent, "dismiss the popup") && s.Status == "succeeded" {
				found = true
			}
		}
		if !found || last != "Mac mini" {
			t.Errorf("%s: popup dismissed %v, last search %q; steps %v", loc, found, last, intents(res))
		}
	}
}

func TestSimTargetThatNeverAppearsFailsWithinMaxSteps(t *testing.T) {
	cfg := Defaults()
	res, _ := simRun(t, "en", "", 1, "open Taobao and tap Checkout now", cfg)
	if res.Status != lifecycle.Failed || !strings.Contains(res.Reason, "Checkout now") || len(res.Steps) > cfg.MaxSteps {
		t.Errorf("%s (%s) in %d steps", res.Status, res.Reason, len(res.Steps))
	}
}

// cancelOnType cancels the task the moment the query is being typed.
type cancelOnType struct {
	*timedDevice
	cancel context.CancelFunc
}

func (c cancelOnType) TypeText(ctx context.Context, s string) error {
	c.cancel()
	return c.timedDevice.TypeText(ctx, s)
}

func TestSimCancelWhileTypingLeavesNoText(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Locale: "en", Seed: 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := new(time.Time)
	dev := cancelOnType{&timedDevice{d: p.Device()}, func() { *cancelled = clk.Now(); cancel() }}
	r, err := New(Defaults(), dev, rule.New(), Options{Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(ctx, "open Taobao and search Mac mini")
	// Promptly on the phone's clock: the run waited for nothing more (no
	// settling, no retry) once cancelled while typing.
	if took := clk.Now().Sub(*cancelled); res.Status != lifecycle.Cancelled || took > time.Second {
		t.Fatalf("%s (%s) %s of simulated time after the cancel, want cancelled within 1 s", res.Status, res.Reason, took)
	}
	raw, _ := p.State()
	var st struct {
		Taobao struct {
			Query      string `json:"query"`
			LastSearch string `json:"last_search"`
		} `json:"taobao"`
	}
	_ = json.Unmarshal(raw, &st)
	if st.Taobao.Query != "" || st.Taobao.LastSearch != "" {
		t.Errorf("after cancel the phone holds query %q, last search %q; want nothing typed", st.Taobao.Query, st.Taobao.LastSearch)
	}
}

// TestSimPartlyReadableGoalTouchesNothing: the rule planner refuses "open
// Settings and turn on NFC" (a switch the phone does not have) before the
// phone is touched (issue 12: it used to launch first and fail halfway).
func TestSimPartlyReadableGoalTouchesNothing(t *testing.T) {
	for loc, goal := range map[string]string{"en": "open Settings and turn on NFC", "zh": "打开设置并开启NFC"} {
		clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
		p, err := sim.New(sim.Config{Locale: loc, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(Defaults(), p.Device(), rule.New(), Options{Clock: clk, Logger: testlog.New(t)})
		if err != nil {
			t.Fatal(err)
		}
		res := r.Run(context.Background(), goal)
		var st struct {
			Foreground string   `json:"foreground"`
			Recents    []string `json:"recents"`
		}
		raw, _ := p.State()
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseGoalNotUnderstood || len(res.Steps) != 0 || len(st.Recents) != 0 {
			t.Errorf("%q: %s/%s (%s) after %d steps, apps started %v; want goal_not_understood with the phone untouched",
				goal, res.Status, res.Cause, res.Reason, len(res.Steps), st.Recents)
		}
	}
}

// TestSimGoalInAnotherLanguageSaysSo: a Chinese goal on an English phone
// (and the reverse) that cannot find its target says the languages differ
// and what the screen shows; a target missing in the phone's own language
// does not.
func TestSimGoalInAnotherLanguageSaysSo(t *testing.T) {
	cases := []struct {
		locale, goal string
		want         []string // in the reason
	}{
		{"en", "点击设置", []string{`"设置"`, "the goal is in Chinese but the phone's screen is in English", `"Settings"`, "(en)"}},
		{"en", "打开设置，点击系统", []string{`"系统"`, "the goal is in Chinese but the phone's screen is in English", `"Search settings"`}},
		{"zh", "tap Settings", []string{"the goal is in English but the phone's screen is in Chinese", `"设置"`, "(zh)"}},
	}
	for _, c := range cases {
		res, _ := simRun(t, c.locale, "", 1, c.goal, Defaults())
		if res.Status != lifecycle.Failed {
			t.Errorf("%s %q: %s (%s), want failed", c.locale, c.goal, res.Status, res.Reason)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(res.Reason, w) {
				t.Errorf("%s %q: reason %q lacks %q", c.locale, c.goal, res.Reason, w)
			}
		}
	}
	res, _ := simRun(t, "en", "", 1, "open Settings and tap Teleport", Defaults())
	if res.Status != lifecycle.Failed || strings.Contains(res.Reason, "the goal is in") {
		t.Errorf("same language: %s (%s); no language note expected", res.Status, res.Reason)
	}
}

// TestSimHostileProfileSeeds: under the hostile profile (slower, varied
// transitions, permission dialogs, App isn't responding, a system update,
// the network error page on the first results) the rule planner's search
// ends with the results really showing, not the error page nor the search
// page caught mid-transition (issue 12), in at least 19 of 20 seeds per
// locale; and it never allows, closes an app or restarts the phone.
func TestSimHostileProfileSeeds(t *testing.T) {
	retried := 0
	for _, loc := range []string{"en", "zh"} {
		ok := 0
		var failures []string
		for seed := int64(1); seed <= 20; seed++ {
			res, p := runOnSim(t, sim.Config{Locale: loc, Profile: "hostile", Seed: seed}, simGoals[loc], Defaults())
			var st struct {
				NetworkError  string `json:"network_error"`
				Interruptions []struct {
					Kind, Outcome string
				} `json:"interruptions"`
				Granted []any `json:"granted"`
				Taobao  struct {
					Screen     string `json:"screen"`
					LastSearch string `json:"last_search"`
				} `json:"taobao"`
			}
			raw, _ := p.State()
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			for _, in := range st.Interruptions {
				switch in.Outcome {
				case "retried":
					retried++
				case "allowed", "allowed_foreground", "allowed_once", "closed_app", "restarted":
					t.Errorf("%s seed %d: %s ended %q: a careful agent never agrees", loc, seed, in.Kind, in.Outcome)
				}
			}
			if res.Status == lifecycle.Completed && st.NetworkError == "" && st.Taobao.Screen == "results" && st.Taobao.LastSearch == "Mac mini" && len(st.Granted) == 0 {
				ok++
				continue
			}
			failures = append(failures, fmt.Sprintf("seed %d: %s (%s), network_error %q, taobao %s, steps %v",
				seed, res.Status, res.Reason, st.NetworkError, st.Taobao.Screen, intents(res)))
		}
		t.Logf("hostile %s: %d/20 completed", loc, ok)
		if ok < 19 {
			t.Errorf("hostile %s: %d/20, want at least 19:\n%s", loc, ok, strings.Join(failures, "\n"))
		}
	}
	if retried == 0 {
		t.Error("no run met the network error page (fixture: hostile's first results fail half the time)")
	}
}

// TestSimSearchEndsOnTheResults: a completed search's last screen is the
// results, under realistic as under hostile. Issue 12: a submit was judged
// on the activity the driver reads apart from the dump, so the task ended on
// the search page still on screen mid-transition, the results unseen.
func TestSimSearchEndsOnTheResults(t *testing.T) {
	for _, prof := range []string{"realistic", "hostile"} {
		for _, loc := range []string{"en", "zh"} {
			early := 0
			for seed := int64(1); seed <= 20; seed++ {
				res, _ := simRun(t, loc, prof, seed, simGoals[loc], Defaults())
				if res.Status != lifecycle.Completed {
					continue // the seeds bars above judge success
				}
				list := false
				if sc := res.FinalScene; sc != nil {
					for _, el := range sc.Elements {
						if strings.HasSuffix(el.ResourceID, ":id/search_result_list") {
							list = true
						}
					}
				}
				if !list {
					early++
				}
			}
			if early > 0 {
				t.Errorf("%s %s: %d of 20 completed searches ended on a screen without the results list", prof, loc, early)
			}
		}
	}
}

// TestSimTapLostUnderASystemDialogIsNotDone: under flaky a tap is dropped
// and a permission dialog comes up in its place; the dialog's arrival is
// not the tap's effect (issue 12: "tap About phone" succeeded with Settings
// still on its main page and the task completed). The step fails at once,
// without tapping the dialog, the planner dismisses it and taps again: every
// run ends on the page asked for.
func TestSimTapLostUnderASystemDialogIsNotDone(t *testing.T) {
	interrupted := 0
	for _, row := range []struct{ en, page string }{{"About phone", "about"}, {"Tips & support", "tips"}, {"Display", "display"}} {
		for seed := int64(1); seed <= 12; seed++ {
			res, p := runOnSim(t, sim.Config{Profile: "flaky", Seed: seed}, "open Settings, tap "+row.en, Defaults())
			for _, s := range res.Steps {
				if strings.Contains(s.Reason, "system dialog") {
					interrupted++
				}
			}
			var st struct {
				Settings struct{ Screen string } `json:"settings"`
				Granted  []any                   `json:"granted"`
			}
			raw, _ := p.State()
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			if res.Status != lifecycle.Completed || st.Settings.Screen != row.page || len(st.Granted) != 0 {
				t.Errorf("%s seed %d: %s (%s), Settings on %q, granted %v; want the %s page; steps %v",
					row.en, seed, res.Status, res.Reason, st.Settings.Screen, st.Granted, row.page, intents(res))
			}
		}
	}
	if interrupted == 0 {
		t.Error("no step was interrupted by a dialog (fixture: flaky's dropped taps and popups)")
	}
}

// TestSimLaunchUnderASystemDialog: a permission dialog that comes up over
// an app just launched does not make the launch fail ("Clock is not in
// front (foreground: permissioncontroller)" three times, then the task):
// the app is in front under it, and the planner dismisses it.
func TestSimLaunchUnderASystemDialog(t *testing.T) {
	goal := "open Settings, tap Display, tap Dark theme, then open Clock, tap Add alarm, type 6 into Hour, type 15 into Minute, tap OK"
	for seed := int64(1); seed <= 12; seed++ {
		res, p := runOnSim(t, sim.Config{Profile: "flaky", Seed: seed}, goal, Defaults())
		var st struct {
			Settings struct {
				Dark bool `json:"dark_theme"`
			} `json:"settings"`
			Clock struct {
				Alarms []struct {
					Hour, Minute int
					Enabled      bool
				} `json:"alarms"`
			} `json:"clock"`
		}
		raw, _ := p.State()
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		alarm := false
		for _, a := range st.Clock.Alarms {
			alarm = alarm || (a.Hour == 6 && a.Minute == 15)
		}
		if res.Status != lifecycle.Completed || !st.Settings.Dark || !alarm {
			t.Errorf("seed %d: %s (%s), dark %t, alarm 6:15 %t; steps %v", seed, res.Status, res.Reason, st.Settings.Dark, alarm, intents(res))
		}
	}
}
