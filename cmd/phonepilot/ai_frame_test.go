package main

import (
	"os"
	"sync"
	"testing"
	"time"

	"phonepilot/plan/ai/aitest"
)

// The first turns of the long task through the real CLI on the simulator's
// realistic profile (a uiautomator dump 0.9–3.2 s, a screenshot 1.75–2.25
// s, inputs 0.23–0.4 s: docs/sim.md), vision on, against a stand-in model:
// the time from one model request to the next is the phone's time for the
// step and its observation. With the screenshot taken beside the dump (issue
// 25) a turn costs the longer of the two, not both. Real time (the
// simulator sleeps its costs): set PHONEPILOT_FRAME_TIMING=1.
func TestAITurnTimeWithTheFrameBesideTheDump(t *testing.T) {
	if os.Getenv("PHONEPILOT_FRAME_TIMING") == "" {
		t.Skip("about 25 s of simulated phone time in real time: set PHONEPILOT_FRAME_TIMING=1")
	}
	hermetic(t)
	const turns = 7
	var mu sync.Mutex
	var at []time.Time
	srv := aitest.NewModelServer(t, func(tr aitest.Turn) (string, string) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if tr.N >= turns {
			return "finish_task", `{"success":true,"reason":"timed"}`
		}
		return longTaskModel(tr)
	})
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	code, stdout, stderr := runAI(t, "run", "--device", "sim", "--sim-profile", "realistic", "--planner", "ai", "--provider", "anthropic",
		"--base-url", srv.URL, "--json", "--max-steps", "20", "open Taobao, search Mac mini and look through the results")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != turns {
		t.Fatalf("%d model turns, want %d", len(at), turns)
	}
	var total time.Duration
	for i := 1; i < len(at); i++ {
		d := at[i].Sub(at[i-1])
		total += d
		t.Logf("turn %d → %d: %v", i, i+1, d.Round(time.Millisecond))
	}
	t.Logf("phone time per turn: %v over %d turns", (total / time.Duration(len(at)-1)).Round(time.Millisecond), len(at)-1)
}
