package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 25: the time of each direct MCP action on the simulator's
// realistic profile (a dump 0.9–3.2 s, an input 0.23–0.4 s: docs/sim.md)
// through the real TypeScript client (mcpserver/testdata/tsclient/bench.mjs),
// from request to settled answer. An action that names no element reads
// nothing before it acts, and home on the home screen answers at once.
// Real time (the simulator sleeps its costs): set PHONEPILOT_MCP_TIMING=1
// (and PHONEPILOT_MCP_TIMING_ROUNDS, default 2).
func TestMCPDirectActionTimesWithTheTypeScriptClient(t *testing.T) {
	if os.Getenv("PHONEPILOT_MCP_TIMING") == "" {
		t.Skip("about a minute of simulated phone time per round: set PHONEPILOT_MCP_TIMING=1 (needs node and npm)")
	}
	dir := tsClient(t)
	bin := buildPhonepilot(t)
	if b := os.Getenv("PHONEPILOT_MCP_TIMING_BIN"); b != "" {
		bin = b // another build to compare with
	}
	rounds := os.Getenv("PHONEPILOT_MCP_TIMING_ROUNDS")
	if rounds == "" {
		rounds = "2"
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "bench.mjs", rounds, bin, "mcp", "--device", "sim", "--sim-profile", "realistic",
		"--db", filepath.Join(t.TempDir(), "mcp.db"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PHONEPILOT_CONFIG=", "PHONEPILOT_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench.mjs: %v\n%s", err, out)
	}
	var times map[string]struct {
		Mean, Median, N int
	}
	var notConfirmed map[string]int
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "TIMES "); ok {
			if err := json.Unmarshal([]byte(rest), &times); err != nil {
				t.Fatal(err)
			}
		}
		if rest, ok := strings.CutPrefix(l, "NOTCONFIRMED "); ok {
			if err := json.Unmarshal([]byte(rest), &notConfirmed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if times == nil {
		t.Fatalf("no TIMES line:\n%s", out)
	}
	for _, k := range []string{"launch_app", "tap", "type_text", "scroll", "press_key back", "press_key home", "press_key home on home", "direct"} {
		t.Logf("%-24s mean %5d ms  median %5d ms  (n=%d, %d NOT confirmed)", k, times[k].Mean, times[k].Median, times[k].N, notConfirmed[k])
	}
	if n := notConfirmed["press_key home on home"]; n > 0 {
		t.Errorf("press_key home on the home screen was NOT confirmed %d times, want done at once", n)
	}
	// Home on the home screen changes nothing and is done: the key and one
	// read (at most 0.4 s + 3.2 s here), no second read, no retries
	// (before issue 25 it retried three times: 2.2 s on the default
	// profile; with two reads 4.8 s here).
	if h := times["press_key home on home"]; h.Median > 3800 {
		t.Errorf("press_key home on the home screen took %d ms (median), want the key and one read", h.Median)
	}
}
