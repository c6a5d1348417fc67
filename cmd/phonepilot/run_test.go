package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// capture runs the CLI with args and returns its exit status and what it
// wrote to stdout and stderr.
func capture(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outW, errW
	outC, errC := make(chan string), make(chan string)
	go func() { b, _ := io.ReadAll(outR); outC <- string(b) }()
	go func() { b, _ := io.ReadAll(errR); errC <- string(b) }()
	code := run(ctx, args)
	os.Stdout, os.Stderr = oldOut, oldErr
	outW.Close()
	errW.Close()
	return code, <-outC, <-errC
}

func TestRunSearchOnSimJSON(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	for loc, goal := range map[string]string{"en": "open Taobao and search Mac mini", "zh": "打开淘宝搜索Mac mini"} {
		code, out, stderr := capture(t, context.Background(), "run", "--json", "--device", "sim", "--sim-locale", loc, goal)
		if code != 0 {
			t.Fatalf("%s: exit %d; stderr %s; stdout %s", loc, code, stderr, out)
		}
		var doc struct {
			Status string `json:"status"`
			Steps  []struct {
				Intent     string          `json:"intent"`
				Tool       string          `json:"tool"`
				Args       json.RawMessage `json:"args"`
				Status     string          `json:"status"`
				DurationMS *int64          `json:"duration_ms"`
				Attempts   []struct {
					Result string `json:"result"`
				} `json:"attempts"`
			} `json:"steps"`
			DeviceState struct {
				Taobao struct {
					LastSearch string `json:"last_search"`
				} `json:"taobao"`
			} `json:"device_state"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: output is not one JSON document: %v\n%s", loc, err, out)
		}
		if doc.Status != "completed" || doc.DeviceState.Taobao.LastSearch != "Mac mini" {
			t.Errorf("%s: status %s, device_state last_search %q", loc, doc.Status, doc.DeviceState.Taobao.LastSearch)
		}
		if len(doc.Steps) == 0 {
			t.Fatalf("%s: no steps", loc)
		}
		for _, s := range doc.Steps {
			if s.Tool == "" || s.Intent == "" || s.DurationMS == nil || len(s.Attempts) == 0 {
				t.Errorf("%s: step %+v lacks intent, tool, timing or attempts", loc, s)
			}
		}
	}
}

func TestRunPrintsALinePerStep(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	code, out, _ := capture(t, context.Background(), "run", "--device", "sim", "open Taobao and search Mac mini")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var steps []string
	for _, l := range lines {
		if strings.Contains(l, " ms") && strings.Contains(l, "{") {
			steps = append(steps, l)
		}
	}
	if len(steps) < 3 {
		t.Fatalf("want a line per step, got:\n%s", out)
	}
	if !strings.Contains(steps[0], "  1  launch Taobao") || !strings.Contains(steps[0], `launch_app {"app":"Taobao"}`) || !strings.Contains(steps[0], "ok") {
		t.Errorf("first step line %q: want number, intent, tool call, outcome, ms", steps[0])
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escape codes in output that is not a terminal")
	}
	if !strings.Contains(lines[len(lines)-1], "completed") {
		t.Errorf("last line %q, want the task's status", lines[len(lines)-1])
	}
}

func TestRunExitStatuses(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	ctx := context.Background()
	if code, out, _ := capture(t, ctx, "run", "--device", "sim", "open Taobao and tap Checkout now"); code != 1 || !strings.Contains(out, "Checkout now") {
		t.Errorf("unreachable target: exit %d, out %s; want 1 with a reason", code, out)
	}
	if code, out, _ := capture(t, ctx, "run", "--device", "sim", "make me a sandwich"); code != 1 || !strings.Contains(out, "--planner ai") {
		t.Errorf("unreadable goal: exit %d, out %s", code, out)
	}
	if code, _, errOut := capture(t, ctx, "run", "--device", "sim", "--sim-locale", "fr", "open Taobao"); code != 2 || !strings.Contains(errOut, "sim.locale") {
		t.Errorf("bad locale: exit %d, stderr %s; want 2 naming the setting", code, errOut)
	}
	if code, _, errOut := capture(t, ctx, "run", "--device", "phone", "open Taobao"); code != 2 || !strings.Contains(errOut, "--device") {
		t.Errorf("bad device: exit %d, stderr %s", code, errOut)
	}
	if code, _, _ := capture(t, ctx, "run", "--device", "sim"); code != 2 {
		t.Errorf("no goal: exit %d, want 2", code)
	}
	// The AI planner without a key is refused before any device opens.
	t.Setenv("ANTHROPIC_API_KEY", "")
	if code, _, errOut := capture(t, ctx, "run", "--planner", "ai", "--provider", "anthropic", "open Taobao"); code != 2 || !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
		t.Errorf("ai without key: exit %d, stderr %s", code, errOut)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if code, _, _ := capture(t, cancelled, "run", "--device", "sim", "open Taobao and search Mac mini"); code != 130 {
		t.Errorf("cancelled: exit %d, want 130", code)
	}
}

func TestRunConfigFileUnknownKeyRefused(t *testing.T) {
	path := writeFile(t, "[runtime]\nmax_step = 3\n")
	code, _, errOut := capture(t, context.Background(), "run", "--config", path, "--device", "sim", "open Taobao")
	if code != 2 || !strings.Contains(errOut, "runtime.max_step") {
		t.Errorf("exit %d, stderr %s; want 2 naming runtime.max_step", code, errOut)
	}
}

func TestBenchRealisticProfile(t *testing.T) {
	// 20 seeds per locale on the simulated clock: both modes are judged on
	// the simulator's own state; the settle mode must complete ≥ 19/20.
	rep, err := runBench(context.Background(), benchOptions{Seeds: 20, FirstSeed: 1, Profile: "realistic",
		Locales: []string{"en", "zh"}, FixedDelay: 1e9, Clock: "fake", MaxSteps: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	perLocale := map[string]int{}
	for _, r := range rep.Runs {
		if r.Mode == modeSettle && r.Success {
			perLocale[r.Locale]++
		}
	}
	for _, loc := range []string{"en", "zh"} {
		if perLocale[loc] < 19 {
			t.Errorf("%s: %d/20 completed with settle, want ≥ 19", loc, perLocale[loc])
		}
	}
	if len(rep.Modes) != 2 || rep.Modes[0].Runs != 40 || rep.Modes[1].Runs != 40 || rep.MeanRatio <= 0 {
		t.Errorf("report %+v", rep.Modes)
	}
	var b strings.Builder
	rep.print(&b)
	t.Log("\n" + b.String())
}
