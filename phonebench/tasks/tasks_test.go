package tasks

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan/rule"
	"phonepilot/runtime"
	"phonepilot/tools"
)

var placeholderRE = regexp.MustCompile(`\{[a-zA-Z0-9_]+\}`)

var nameRE = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`)

func TestTaskDefinitions(t *testing.T) {
	all := All()
	if len(all) < 40 {
		t.Errorf("%d tasks, want at least 40", len(all))
	}
	seen := map[string]bool{}
	kinds := map[Kind]int{}
	for _, tk := range all {
		if seen[tk.Name] {
			t.Errorf("task name %q used twice", tk.Name)
		}
		seen[tk.Name] = true
		kinds[tk.Kind]++
		if !nameRE.MatchString(tk.Name) {
			t.Errorf("%s: name is not app.what[.variant]", tk.Name)
		}
		if !slices.Contains(Kinds, tk.Kind) {
			t.Errorf("%s: unknown kind %q", tk.Name, tk.Kind)
		}
		if tk.Start == nil || tk.Script == nil || tk.Check == nil || len(tk.Apps) == 0 {
			t.Errorf("%s: Start, Script, Check and Apps are required", tk.Name)
			continue
		}
		if (tk.Kind == Impossible) != (tk.WantCause != lifecycle.CauseNone) {
			t.Errorf("%s: kind %s with WantCause %q (only Impossible tasks have one)", tk.Name, tk.Kind, tk.WantCause)
		}
		if !tk.WantCause.Valid() {
			t.Errorf("%s: WantCause %q is not a lifecycle cause", tk.Name, tk.WantCause)
		}
		for _, seed := range []int64{0, 1, 2, 7, 12345, -3} {
			params := tk.ParamsFor(seed)
			again := tk.ParamsFor(seed)
			if !mapsEqual(params, again) {
				t.Errorf("%s: params for seed %d differ between two calls: %v vs %v", tk.Name, seed, params, again)
			}
			for _, loc := range Locales {
				g, ok := tk.Goal[loc]
				if !ok || strings.TrimSpace(g) == "" {
					t.Errorf("%s: no %s goal", tk.Name, loc)
				}
				if left := placeholderRE.FindString(tk.GoalFor(loc, params)); left != "" {
					t.Errorf("%s: %s goal keeps %s after filling with %v", tk.Name, loc, left, params)
				}
				if r, ok := tk.RuleFor(loc, params); ok {
					if left := placeholderRE.FindString(r); left != "" {
						t.Errorf("%s: %s rule phrasing keeps %s", tk.Name, loc, left)
					}
				}
				if loc == "zh" && !hasHan(tk.GoalFor(loc, params)) {
					t.Errorf("%s: the zh goal %q has no Chinese in it", tk.Name, tk.GoalFor(loc, params))
				}
				steps := tk.Script(loc, params)
				if len(steps) == 0 {
					t.Errorf("%s/%s: empty script", tk.Name, loc)
					continue
				}
				for i, st := range steps {
					if !slices.Contains(toolNames, st.Tool) {
						t.Errorf("%s/%s step %d: tool %q is not a TOOLS.md tool", tk.Name, loc, i, st.Tool)
					}
					if st.Intent == "" {
						t.Errorf("%s/%s step %d: no intent", tk.Name, loc, i)
					}
					if st.IfMissing != "" && st.IfMissing != "skip" {
						t.Errorf("%s/%s step %d: IfMissing %q", tk.Name, loc, i, st.IfMissing)
					}
					if (st.Tool == ToolTap || st.Tool == ToolLongPress) && st.Target == "" {
						t.Errorf("%s/%s step %d: a %s without a Target", tk.Name, loc, i, st.Tool)
					}
				}
				last := steps[len(steps)-1]
				if last.Tool != ToolFinishTask {
					t.Errorf("%s/%s: the script does not end with finish_task", tk.Name, loc)
				}
				wantOK := tk.Kind != Impossible
				if ok, _ := last.Args["success"].(bool); ok != wantOK {
					t.Errorf("%s/%s: the script finishes with success=%v, want %v for a %s task", tk.Name, loc, ok, wantOK, tk.Kind)
				}
			}
		}
	}
	for _, k := range Kinds {
		if kinds[k] == 0 {
			t.Errorf("no %s task", k)
		}
	}
	t.Logf("%d tasks: %v", len(all), kinds)
}

func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x4e00 && r <= 0x9fff {
			return true
		}
	}
	return false
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

var toolNames = []string{ToolLaunchApp, ToolTap, ToolLongPress, ToolTypeText, ToolScroll, ToolPressKey, ToolWait, ToolFinishTask}

// The tool names here are the tools package's own.
func TestToolNamesAreTheToolsOnes(t *testing.T) {
	for _, n := range []string{tools.LaunchApp, tools.TypeText, tools.Scroll, tools.PressKey, tools.FinishTask} {
		if !slices.Contains(toolNames, n) {
			t.Errorf("tools.%s is not among phonebench's tool names", n)
		}
	}
}

// TestChecksFailOnTheStartState: a check that passes before anything was
// done judges nothing. Every task's Check fails on its fresh Start state,
// but an AlreadyDone task's, which must pass.
func TestChecksFailOnTheStartState(t *testing.T) {
	for _, tk := range All() {
		for _, loc := range Locales {
			for _, seed := range []int64{1, 2, 3, 4} {
				params := tk.ParamsFor(seed)
				p, err := sim.New(sim.Config{Locale: loc, Seed: seed, Start: tk.Start(params)})
				if err != nil {
					t.Fatalf("%s: %v", tk.Name, err)
				}
				state, err := p.State()
				if err != nil {
					t.Fatal(err)
				}
				err = tk.Check(state, params)
				switch {
				case tk.Kind == AlreadyDone && err != nil:
					t.Errorf("%s/%s/%d: already-done task's check fails on its start: %v", tk.Name, loc, seed, err)
				case tk.Kind != AlreadyDone && err == nil:
					t.Errorf("%s/%s/%d: check passes on the start state: it judges nothing", tk.Name, loc, seed)
				case err != nil && !errors.Is(err, ErrNotMet):
					t.Errorf("%s/%s/%d: check error %v does not wrap ErrNotMet", tk.Name, loc, seed, err)
				}
			}
		}
	}
}

// TestRulePhrasingsAreCovered: every phrasing a task offers the rule
// planner is one it carries out. Through the runtime with the rule planner
// on a clean phone (no profile), a Normal task completes with its Check
// passing and an Impossible one fails with WantCause, touching nothing. A
// phrasing the planner reads only in part ("open Settings and flip
// Wi-Fi" reads as launching an app called "Settings and flip Wi-Fi") fails
// here.
func TestRulePhrasingsAreCovered(t *testing.T) {
	n := 0
	for _, tk := range All() {
		for _, loc := range Locales {
			for _, seed := range []int64{1, 2} {
				params := tk.ParamsFor(seed)
				r, ok := tk.RuleFor(loc, params)
				if !ok {
					continue
				}
				n++
				if tk.Kind == Approval {
					t.Errorf("%s: a rule phrasing on a %s task (the rule planner has no approval path here)", tk.Name, tk.Kind)
					continue
				}
				clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
				phone, err := sim.New(sim.Config{Locale: loc, Seed: seed, Clock: clk, Start: tk.Start(params)})
				if err != nil {
					t.Fatal(err)
				}
				start, _ := phone.State()
				runner, err := runtime.New(runtime.Defaults(), phone.Device(), rule.New(), runtime.Options{Clock: clk})
				if err != nil {
					t.Fatal(err)
				}
				res := runner.Run(context.Background(), r)
				end, _ := phone.State()
				switch tk.Kind {
				case AlreadyDone:
					if res.Status != lifecycle.Completed {
						t.Errorf("%s/%s/%d: the rule planner on %q: %s %s: %s", tk.Name, loc, seed, r, res.Status, res.Cause, res.Reason)
					} else if err := tk.Check(end, params); err != nil {
						t.Errorf("%s/%s/%d: the rule planner completed %q but %v", tk.Name, loc, seed, r, err)
					}
					if err := Unchanged(start, end); err != nil {
						t.Errorf("%s/%s/%d: %v", tk.Name, loc, seed, err)
					}
				case Normal:
					if res.Status != lifecycle.Completed {
						t.Errorf("%s/%s/%d: the rule planner on %q: %s %s: %s", tk.Name, loc, seed, r, res.Status, res.Cause, res.Reason)
					} else if err := tk.Check(end, params); err != nil {
						t.Errorf("%s/%s/%d: the rule planner completed %q but %v", tk.Name, loc, seed, r, err)
					}
				case Impossible:
					refused := tk.Refusable && res.Cause == lifecycle.CauseGoalNotUnderstood && len(res.Steps) == 0
					if res.Status != lifecycle.Failed || res.Cause != tk.WantCause && !refused {
						t.Errorf("%s/%s/%d: the rule planner on %q: %s %s, want failed %s", tk.Name, loc, seed, r, res.Status, res.Cause, tk.WantCause)
					}
					if err := Unchanged(start, end); err != nil {
						t.Errorf("%s/%s/%d: %v", tk.Name, loc, seed, err)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("no task offers the rule planner a phrasing")
	}
}

func TestSelect(t *testing.T) {
	all := All()
	if got := Select(""); len(got) != len(all) {
		t.Errorf("Select(\"\") = %d tasks, want all %d", len(got), len(all))
	}
	for _, tk := range Select("settings.*") {
		if !strings.HasPrefix(tk.Name, "settings.") {
			t.Errorf("Select(settings.*) gave %s", tk.Name)
		}
	}
	if got := Select("bluetooth"); len(got) == 0 {
		t.Error("Select(bluetooth) found nothing")
	}
	for _, tk := range Select("bluetooth") {
		if !strings.Contains(tk.Name, "bluetooth") {
			t.Errorf("Select(bluetooth) gave %s", tk.Name)
		}
	}
	if got := Select("no-such-task"); len(got) != 0 {
		t.Errorf("Select(no-such-task) = %d tasks", len(got))
	}
	got := Select("contacts.open.scroll, taobao.cart.add_two")
	if len(got) != 2 {
		t.Errorf("Select of two names = %d tasks", len(got))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Errorf("All not sorted: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
}

func TestFill(t *testing.T) {
	if got := Fill("text {name} at {time}", map[string]string{"name": "Bob", "time": "7:05"}); got != "text Bob at 7:05" {
		t.Errorf("Fill = %q", got)
	}
	if got := Fill("keep {missing}", map[string]string{"x": "y"}); got != "keep {missing}" {
		t.Errorf("Fill of a missing param = %q", got)
	}
	// A value holding a placeholder is not filled again.
	if got := Fill("{a} {b}", map[string]string{"a": "{b}", "b": "B"}); got != "{b} B" {
		t.Errorf("Fill re-expanded a value: %q", got)
	}
}

func TestFindTarget(t *testing.T) {
	listing := "Screen 1080x2400 · app com.android.settings\n" +
		"[3] TextView \"Settings\" id=homepage_title\n" +
		"[7] LinearLayout \"Network & internet · Wi‑Fi, mobile, data usage\" clickable\n" +
		"[12] LinearLayout \"Display · Dark theme, font size, brightness\" clickable\n" +
		"[14] TextView \"Say \\\"hi\\\"\"\n" +
		"[15] LinearLayout \"Wi‑Fi\" clickable\n" +
		"[16] Switch id=switch_widget clickable unchecked\n" +
		"[20] Button \"  Save  \" clickable\n"
	cases := []struct {
		target string
		want   int
		ok     bool
	}{
		{"Settings", 3, true},
		{"settings", 3, true},
		{"Display", 12, true},
		{"Wi-Fi", 15, true},             // the whole label beats the part of [7]
		{"Network & internet", 7, true}, // a part
		{"Say \"hi\"", 14, true},        // unescaped
		{"Save", 20, true},              // trimmed
		{"Dark theme", 0, false},        // part of a part: no
		{"Network", 0, false},           // no substring match
		{"Dark theme, font size, brightness", 12, true},
		{"", 0, false},
	}
	for _, c := range cases {
		l, ok := FindTarget(listing, c.target)
		if ok != c.ok || (ok && l.Index != c.want) {
			t.Errorf("FindTarget(%q) = [%d] %v, want [%d] %v", c.target, l.Index, ok, c.want, c.ok)
		}
	}
}
