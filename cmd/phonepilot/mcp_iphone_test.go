package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// An MCP session acting on the simulated iPhone (phonepilot mcp --device
// sim:ios, a child process): it observes WDA's tree, launches an app by
// name, is refused press_key back with what to do instead, taps a
// navigation bar's Back button, and runs a task to completion; the
// simulator's state (the API's /v1/devices/sim:ios/state) shows each
// effect. A purchase tapped by the client is stopped by the safety gate
// (no elicitation: a tool error) and nothing is ordered.
func TestMCPOnTheSimulatedIPhone(t *testing.T) {
	const token = "0123456789abcdef-ios"
	p := startMCPHTTP(t, token, "--device", "sim:ios")
	cs := p.connect(t, "ios-client")
	base := strings.TrimSuffix(p.url, "/mcp")
	state := func() (st struct {
		Foreground string
		Settings   struct{ Screen string }
		Taobao     struct {
			LastSearch string `json:"last_search"`
			Orders     []json.RawMessage
			Screen     string
		}
	}) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/devices/sim:ios/state", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/devices/sim:ios/state: %d %v", resp.StatusCode, err)
		}
		return st
	}
	// index finds the listed element whose line matches re.
	index := func(listing, re string) int {
		t.Helper()
		m := regexp.MustCompile(`(?m)^\[(\d+)\] ` + re).FindStringSubmatch(listing)
		if m == nil {
			t.Fatalf("no line matching %q in:\n%s", re, listing)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	act := func(tool string, args map[string]any) string {
		t.Helper()
		out, isErr := callText(t, cs, tool, args)
		if isErr {
			t.Fatalf("%s %v: %s", tool, args, out)
		}
		return out
	}

	if out := act("observe", nil); !strings.Contains(out, "app com.apple.springboard") || !strings.Contains(out, `XCUIElementTypeIcon "Settings"`) {
		t.Fatalf("observe on sim:ios: not an iPhone's home screen:\n%s", out)
	}
	out := act("launch_app", map[string]any{"app": "Settings"})
	if !strings.Contains(out, "the app in front is now com.apple.Preferences") || state().Foreground != "com.android.settings" {
		t.Fatalf("launch_app Settings:\n%s", out)
	}
	if out := act("press_key", map[string]any{"key": "back"}); !strings.Contains(out, "an iPhone has no back key: tap the screen's back button") || !strings.Contains(out, "the screen did not change") {
		t.Errorf("press_key back on sim:ios:\n%s", out)
	}
	out = act("tap", map[string]any{"element": index(out, `XCUIElementTypeCell "Network & internet`)})
	if state().Settings.Screen == "main" {
		t.Fatalf("tapping Network & internet left Settings on its main screen:\n%s", out)
	}
	act("tap", map[string]any{"element": index(out, `XCUIElementTypeButton [^\n]*id=Back\b`)})
	if s := state().Settings.Screen; s != "main" {
		t.Errorf("after tapping the navigation bar's Back, Settings shows %q, want main", s)
	}

	out = act("run_task", map[string]any{"goal": "open Taobao and search Mac mini"})
	if !strings.Contains(out, " completed") || state().Taobao.LastSearch != "Mac mini" {
		t.Fatalf("run_task on sim:ios: Taobao's last search %q:\n%s", state().Taobao.LastSearch, out)
	}
	out = act("run_task", map[string]any{"goal": "tap Mac mini Limited Edition Silver"})
	if st := state(); !strings.Contains(out, " completed") || st.Taobao.Screen != "detail" {
		t.Fatalf("run_task to the item: Taobao shows %q:\n%s", st.Taobao.Screen, out)
	}
	obs := act("observe", nil)
	buy, isErr := callText(t, cs, "tap", map[string]any{"element": index(obs, `XCUIElementTypeButton "Buy now"`)})
	if !isErr || !strings.Contains(buy, "NOT performed") || !strings.Contains(buy, "A person must approve") {
		t.Errorf("tap Buy now on the iPhone without elicitation: error=%v %s", isErr, buy)
	}
	if st := state(); len(st.Taobao.Orders) != 0 || st.Taobao.Screen != "detail" {
		t.Errorf("after the refused Buy now: %d orders, Taobao on %q; want none, still the item's detail", len(st.Taobao.Orders), st.Taobao.Screen)
	}
}
