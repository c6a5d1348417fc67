package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"phonepilot/plan/ai/aitest"
)

// longTask is the 26-turn Taobao task of issue 25: launch, the promotion
// popup, search, scroll through the results, open a product and go back
// three times, scroll up, finish.
var longTask = strings.Fields("launch popup searchbar type down down down down down down open back down open back down open back up up up up up up up finish")

// longTaskModel plays the model of the long task: turn N does longTask[N-1]
// on the elements of the listing it is sent.
func longTaskModel(t aitest.Turn) (string, string) {
	tap := func(re string) (string, string) {
		if i, ok := t.Find(re); ok {
			return "tap", `{"element":` + strconv.Itoa(i) + `}`
		}
		return "wait", `{"seconds":0.5}`
	}
	if t.N > len(longTask) {
		return "finish_task", `{"success":false,"reason":"the scripted model ran out of steps"}`
	}
	switch longTask[t.N-1] {
	case "launch":
		return "launch_app", `{"app":"Taobao"}`
	case "popup":
		return tap(`id=poplayer_close`)
	case "searchbar":
		return tap(`id=home_searchbar`)
	case "type":
		if i, ok := t.Find(`EditText`); ok {
			return "type_text", `{"text":"Mac mini","element":` + strconv.Itoa(i) + `,"submit":true}`
		}
	case "down", "up":
		return "scroll", `{"direction":"` + longTask[t.N-1] + `"}`
	case "open":
		return tap(`id=item_title`)
	case "back":
		return "press_key", `{"key":"back"}`
	case "finish":
		return "finish_task", `{"success":true,"reason":"looked through the Mac mini results"}`
	}
	return "wait", `{"seconds":0.5}`
}

// Prices of input tokens relative to uncached input (docs: Anthropic
// "Prompt caching" pricing: 5-minute cache writes 1.25×, cache reads 0.1×;
// OpenAI GPT-5 family: cached input 0.1×, writes not charged).
var cachePrices = map[string]struct{ read, write float64 }{
	"anthropic": {0.1, 1.25},
	"openai":    {0.1, 1},
}

// billed is what a turn's input costs, in uncached-token equivalents.
func billed(provider string, u aitest.Usage) float64 {
	p := cachePrices[provider]
	return float64(u.Uncached()) + p.read*float64(u.CacheRead) + p.write*float64(u.CacheWrite)
}

// Billed input of the long task before issue 25, measured by this test and
// its stand-in servers on commit 51a4dba (no cache breakpoints, no
// prompt_cache_key, a history rewritten every turn, 705x1568 PNG
// screenshots): Anthropic 106,060 input tokens, none cached; OpenAI 103,900,
// 36,608 of them read from its automatic cache (the tools and system prompt).
var billedBefore = map[string]float64{"anthropic": 106060, "openai": 70953}

// The long task through the real CLI against stand-in servers that account
// usage like the real APIs: each request's cacheable part is the previous
// request's plus the new turn, and the prompt cache serves it.
func TestAILongTaskIsServedByThePromptCache(t *testing.T) {
	if os.Getenv("PHONEPILOT_INTEGRATION") == "" && os.Getenv("PHONEPILOT_COST_TABLE") == "" {
		t.Skip("26 model turns per provider on the simulator: set PHONEPILOT_INTEGRATION=1 (scripts/test.sh does)")
	}
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			hermetic(t)
			srv := aitest.NewModelServer(t, longTaskModel)
			base := srv.URL
			if provider == "openai" {
				base += "/v1"
			}
			t.Setenv(strings.ToUpper(provider)+"_API_KEY", "sk-test")
			code, stdout, stderr := runAI(t, "run", "--device", "sim", "--planner", "ai", "--provider", provider,
				"--base-url", base, "--json", "--max-steps", "40", "open Taobao, search Mac mini and look through the results")
			turns := srv.Turns()
			var doc struct {
				Status string `json:"status"`
				Usage  struct {
					InputTokens      int64 `json:"input_tokens"`
					CacheReadTokens  int64 `json:"cache_read_tokens"`
					CacheWriteTokens int64 `json:"cache_write_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 0 || doc.Status != "completed" {
				t.Fatalf("exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
			}
			if len(turns) != len(longTask) {
				t.Errorf("%d model turns, want %d", len(turns), len(longTask))
			}
			var table strings.Builder
			var total, late aitest.Usage
			var cost float64
			fmt.Fprintf(&table, "turn  input  cache_read  cache_write  uncached  read%%  billed\n")
			for i, tr := range turns {
				u := tr.Usage
				total.Input += u.Input
				total.CacheRead += u.CacheRead
				total.CacheWrite += u.CacheWrite
				cost += billed(provider, u)
				share := 100 * float64(u.CacheRead) / float64(u.Input)
				fmt.Fprintf(&table, "%4d  %5d  %10d  %11d  %8d  %4.0f%%  %6.0f\n", tr.N, u.Input, u.CacheRead, u.CacheWrite, u.Uncached(), share, billed(provider, u))
				if i >= 2 {
					late.Input += u.Input
					late.CacheRead += u.CacheRead
					// OpenAI caches in 128-token steps: up to 127 tokens
					// of a turn's shared prefix are paid again, so the
					// new part of a turn must stay small.
					if share < 60 {
						t.Errorf("turn %d: cache reads are %.1f%% of its input, want at least 60%% on every turn from turn 3 on", tr.N, share)
					}
				}
				if i > 0 {
					if err := aitest.ExtendsCachedPrefix(turns[i-1], tr); err != nil {
						t.Errorf("turn %d does not start with turn %d's cacheable prefix: %v", tr.N, tr.N-1, err)
					}
				}
			}
			fmt.Fprintf(&table, "total %5d  %10d  %11d  %8d  %4.0f%%  %6.0f\n", total.Input, total.CacheRead, total.CacheWrite, total.Uncached(),
				100*float64(total.CacheRead)/float64(total.Input), cost)
			t.Logf("%s, %d turns:\n%s", provider, len(turns), table.String())
			if f := os.Getenv("PHONEPILOT_COST_TABLE"); f != "" {
				_ = os.WriteFile(f+"."+provider, []byte(table.String()), 0o644)
			}
			if doc.Usage.InputTokens != int64(total.Input) || doc.Usage.CacheReadTokens != int64(total.CacheRead) || doc.Usage.CacheWriteTokens != int64(total.CacheWrite) {
				t.Errorf("run --json usage %+v, the server reported %+v", doc.Usage, total)
			}
			if share := 100 * float64(late.CacheRead) / float64(late.Input); share < 60 {
				t.Errorf("cache reads are %.0f%% of the input of turns 3 to %d, want at least 60%%", share, len(turns))
			}
			if before := billedBefore[provider]; cost > before/2 {
				t.Errorf("billed input %.0f, want at most half of %.0f (before)", cost, before)
			}
			t.Logf("billed input %.0f, %.0f%% of %.0f before", cost, 100*cost/billedBefore[provider], billedBefore[provider])
		})
	}
}
