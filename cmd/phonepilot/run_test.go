package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/runtime"
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
	// stdin is an empty pipe, never the terminal go test may run in: run
	// would otherwise ask there (tests play the person through askTerminal).
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	inW.Close()
	defer inR.Close()
	oldOut, oldErr, oldIn := os.Stdout, os.Stderr, os.Stdin
	os.Stdout, os.Stderr, os.Stdin = outW, errW, inR
	outC, errC := make(chan string), make(chan string)
	go func() { b, _ := io.ReadAll(outR); outC <- string(b) }()
	go func() { b, _ := io.ReadAll(errR); errC <- string(b) }()
	code := run(ctx, args)
	os.Stdout, os.Stderr, os.Stdin = oldOut, oldErr, oldIn
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
			ID     *string `json:"id"`
			Cause  *string `json:"cause"`
			Status string  `json:"status"`
			Steps  []struct {
				Intent     string          `json:"intent"`
				Tool       string          `json:"tool"`
				Args       json.RawMessage `json:"args"`
				Status     string          `json:"status"`
				DurationNS *int64          `json:"duration_ns"`
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
		if doc.ID == nil || len(*doc.ID) != 21 || doc.Cause != nil {
			t.Errorf("%s: --json id %v cause %v, want the task id and no cause (the API leaves it out)", loc, doc.ID, doc.Cause)
		}
		// The API's units: nanoseconds named *_ns, everywhere a time is.
		for _, key := range []string{`"duration_ms"`, `"latency_ms"`} {
			if strings.Contains(out, key) {
				t.Errorf("%s: --json has %s; the API (and --json) give times as *_ns", loc, key)
			}
		}
		for _, key := range []string{`"duration_ns"`, `"latency_ns"`} {
			if !strings.Contains(out, key) {
				t.Errorf("%s: --json lacks %s", loc, key)
			}
		}
		if doc.Status != "completed" || doc.DeviceState.Taobao.LastSearch != "Mac mini" {
			t.Errorf("%s: status %s, device_state last_search %q", loc, doc.Status, doc.DeviceState.Taobao.LastSearch)
		}
		if len(doc.Steps) == 0 {
			t.Fatalf("%s: no steps", loc)
		}
		for _, s := range doc.Steps {
			if s.Tool == "" || s.Intent == "" || s.DurationNS == nil || len(s.Attempts) == 0 {
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

// Ctrl-C during a step prints that step as cancelled (not FAILED … context
// canceled), records it so, and exits 130; the task id is printed first and
// `show` finds the task by a prefix of it, with its cause.
func TestRunCtrlCShowsTheStepCancelled(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	db := filepath.Join(t.TempDir(), "tasks.db")
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(1500*time.Millisecond, cancel)
	defer timer.Stop()
	code, out, errOut := capture(t, ctx, "run", "--db", db, "--device", "sim", "--sim-profile", "slow", "--observer", "helper", "open Taobao and search Mac mini")
	if code != exitCancelled {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "FAILED") || strings.Contains(out, "context canceled") {
		t.Errorf("the cancelled step is shown as failed:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var id string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "task "); ok {
			id = rest
			break
		}
	}
	if len(id) != 21 {
		t.Fatalf("no task id line in:\n%s", out)
	}
	var inFlight string
	for _, l := range lines {
		if strings.Contains(l, " ms") && strings.Contains(l, "{") && strings.Contains(l, "cancelled") {
			inFlight = l
		}
	}
	if inFlight == "" {
		t.Errorf("no step line marked cancelled:\n%s", out)
	}
	code, shown, _ := capture(t, context.Background(), "show", "--db", db, id[:8])
	if code != 0 || !strings.Contains(shown, id) || !strings.Contains(shown, "cancelled (cancelled)") {
		t.Errorf("show %s: exit %d\n%s", id[:8], code, shown)
	}
	if inFlight != "" && !strings.Contains(shown, "cancelled ") {
		t.Errorf("show does not list the cancelled step:\n%s", shown)
	}
}

// A vanished device has an exit status of its own, documented in the help.
func TestExitStatusOfAVanishedDevice(t *testing.T) {
	cases := map[int]runtime.Result{
		0:   {Status: lifecycle.Completed},
		1:   {Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed},
		3:   {Status: lifecycle.Failed, Cause: lifecycle.CauseDeviceGone},
		130: {Status: lifecycle.Cancelled, Cause: lifecycle.CauseCancelled},
	}
	for want, res := range cases {
		if got := exitFor(res); got != want {
			t.Errorf("exitFor(%s, %s) = %d, want %d", res.Status, res.Cause, got, want)
		}
	}
	code, out, _ := capture(t, context.Background(), "run", "--help")
	if code != 0 || !strings.Contains(out, "3 the device vanished") {
		t.Errorf("run --help does not document exit 3:\n%s", out)
	}
}
