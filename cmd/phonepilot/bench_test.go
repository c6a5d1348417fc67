package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"phonepilot/device/sim"
	"strings"
	"testing"
	"time"
)

// README's speed claim (settling beats a fixed sleep after every action) is
// guarded here, in plain `go test`, on simulated time. The baseline must
// really sleep its FixedDelay after every action (a non-default one, so a
// hard-coded 1 s fails too): each of its runs takes at least steps ×
// FixedDelay. Settling must stay faster by a clear margin, per seed on the
// fault-free phone (where a dump costs no simulated time, so settling costs
// none) and by mean on the realistic profile.
func TestBenchBaselineSleepsAndSettleIsFaster(t *testing.T) {
	const delay = 1500 * time.Millisecond
	for _, profile := range []string{"", "realistic"} {
		rep, err := runBench(context.Background(), benchOptions{Seeds: 3, FirstSeed: 1, Profile: profile,
			Locales: []string{"en", "zh"}, FixedDelay: delay, Clock: "fake", MaxSteps: 30, Observer: sim.ObserverHelper}, nil)
		if err != nil {
			t.Fatal(err)
		}
		settle := map[[2]any]benchRun{}
		for _, r := range rep.Runs {
			if !r.Success {
				t.Errorf("profile %q: %s seed %d %s failed: %s", profile, r.Locale, r.Seed, r.Mode, r.Reason)
			}
			if r.Mode == modeSettle {
				settle[[2]any{r.Locale, r.Seed}] = r
			}
		}
		for _, r := range rep.Runs {
			if r.Mode != modeFixed {
				continue
			}
			if min := time.Duration(r.Steps) * delay; r.Duration < min {
				t.Errorf("profile %q: %s seed %d: the fixed baseline took %s for %d steps; it must sleep %s after each action (≥ %s)",
					profile, r.Locale, r.Seed, r.Duration, r.Steps, delay, min)
			}
			s := settle[[2]any{r.Locale, r.Seed}]
			if profile == "" && 2*s.Duration > r.Duration {
				t.Errorf("%s seed %d, fault-free: settle %s vs fixed %s; want settle at least 2× faster", r.Locale, r.Seed, s.Duration, r.Duration)
			}
		}
		if profile == "realistic" && rep.MeanRatio < 1.5 {
			t.Errorf("profile %q: fixed/settle = %.2f by mean; want ≥ 1.5 on the helper's reads (README claims about 2.3×)", profile, rep.MeanRatio)
		}
		t.Logf("profile %q: fixed/settle %.2fx by mean, %.2fx by median", profile, rep.MeanRatio, rep.MedianRatio)
	}
}

// `phonepilot bench` runs phonebench by default: the selected tasks under
// each policy, the table on stdout, the JSON and HTML reports in files.
func TestBenchPhonebenchWritesTheReports(t *testing.T) {
	dir := t.TempDir()
	js, page := filepath.Join(dir, "runs.json"), filepath.Join(dir, "report.html")
	code, out, errOut := capture(t, context.Background(), "bench", "--tasks", "settings.wifi.on", "--profile", "realistic",
		"--locale", "zh", "--seeds", "2", "--policy", "reference,peer-loop", "--json", js, "--html", page)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "realistic  zh     reference") || !strings.Contains(out, "unapproved irreversible actions: 0") {
		t.Errorf("table:\n%s", out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Records []struct {
			Task, Locale, Profile, Policy string
			Seed                          int64
			Success                       bool
			FloorMS                       int64 `json:"floor_ms"`
		}
		Summary []struct{ Policy, Profile, Locale string }
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != 4 || len(rep.Summary) != 2 {
		t.Fatalf("%d records, %d summaries; want 4 (2 seeds × 2 policies) and 2", len(rep.Records), len(rep.Summary))
	}
	for _, r := range rep.Records {
		if r.Task != "settings.wifi.on" || r.Locale != "zh" || r.Profile != "realistic" || r.FloorMS <= 0 {
			t.Errorf("record %+v", r)
		}
	}
	if h, err := os.ReadFile(page); err != nil || !strings.Contains(string(h), "<svg") {
		t.Errorf("HTML report: %v", err)
	}
}

func TestBenchFlagsAreChecked(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--suite", "fast"}, "--suite must be phonebench or settle"},
		{[]string{"--locale", "fr"}, "--locale must be en, zh or both"},
		{[]string{"--policy", "magic"}, `unknown policy "magic"`},
		{[]string{"--profile", "moonlit"}, `unknown profile "moonlit"`},
		{[]string{"--tasks", "no.such.task"}, "selects no task"},
		{[]string{"--seeds", "0"}, "--seeds must be at least 1"},
		{[]string{"--suite", "settle", "--profile", "slow,flaky"}, "runs one profile"},
	} {
		code, _, errOut := capture(t, context.Background(), append([]string{"bench"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	code, out, _ := capture(t, context.Background(), "bench", "--list", "--tasks", "settings.*")
	if code != 0 || !strings.Contains(out, "settings.bluetooth.on") || strings.Contains(out, "taobao.") {
		t.Errorf("--list --tasks settings.*: exit %d\n%s", code, out)
	}
}
