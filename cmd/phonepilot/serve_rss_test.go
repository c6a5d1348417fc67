package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/plan/ai/aitest"
	"phonepilot/storage"
)

// searchModel is a stand-in model that needs no memory of the task: it
// goes home first, then reads the screen it is sent and searches Taobao
// for a Mac mini, and finishes on the results.
func searchModel(t aitest.Turn) (string, string) {
	tap := func(i int) (string, string) { return "tap", `{"element":` + strconv.Itoa(i) + `}` }
	if strings.Count(string(t.Body), `"type":"tool_use"`) == 0 && !strings.Contains(t.Listing, "launcher") {
		// A task's first turn starts from the home screen, so that every
		// task does the work, not only the first on each phone.
		return "press_key", `{"key":"home"}`
	}
	if i, ok := t.Find(`id=poplayer_close`); ok {
		return tap(i)
	}
	if _, ok := t.Find(`id=item_title|Mac mini.*¥`); ok && strings.Contains(t.Listing, "SearchResult") {
		return "finish_task", `{"success":true,"reason":"the results show Mac minis"}`
	}
	if i, ok := t.Find(`EditText`); ok {
		return "type_text", `{"text":"Mac mini","element":` + strconv.Itoa(i) + `,"submit":true}`
	}
	if i, ok := t.Find(`id=home_searchbar`); ok {
		return tap(i)
	}
	return "launch_app", `{"app":"Taobao"}`
}

// vmHWM is a process's peak resident set (VmHWM in /proc/PID/status).
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// Issue 25: `serve` running 200 AI tasks on 20 simulated phones, vision on
// (a 1080×2400 screenshot per turn, fitted to 460×1024 JPEG), peaked at
// 2.87 GiB of resident memory; it must stay under 300 MB. The server runs
// as its own process (its peak RSS is read from /proc) against a stand-in
// model server in this process. Linux only; set PHONEPILOT_SERVE_RSS=1
// (PHONEPILOT_INTEGRATION=1 runs it too).
func TestServeAIRunsTwoHundredTasksInLittleMemory(t *testing.T) {
	if os.Getenv("PHONEPILOT_SERVE_RSS") == "" && os.Getenv("PHONEPILOT_INTEGRATION") == "" {
		t.Skip("200 AI tasks through a serve process: set PHONEPILOT_SERVE_RSS=1")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc for the peak RSS")
	}
	const phones, tasks, limit = 20, 200, 300 << 20
	bin := buildPhonepilot(t)
	srv := aitest.NewModelServer(t, searchModel)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("PHONEPILOT_AI_BASE_URL", srv.URL)
	t.Setenv("PHONEPILOT_AI_VISION", "true")
	db := filepath.Join(t.TempDir(), "phonepilot.db")
	sp := startServeProcess(t, bin, db, "--planner", "ai", "--provider", "anthropic")

	start := time.Now()
	ids := make([]string, tasks)
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = postTask(t, sp.url, "open Taobao and search Mac mini", fmt.Sprintf("sim:p%d", i%phones)).ID
		}()
	}
	wg.Wait()
	posted := time.Since(start)
	counts := map[string]int{}
	waitFor(t, "every task to end", 10*time.Minute, func() bool {
		clear(counts)
		for _, id := range ids {
			var task storage.Task
			getJSON(t, sp.url+"/v1/tasks/"+id, &task)
			counts[string(task.Status)]++
		}
		return counts["completed"]+counts["failed"]+counts["cancelled"]+counts["interrupted"] == tasks
	})
	took := time.Since(start)
	peak, err := vmHWM(sp.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	turns := srv.Turns()
	images := 0
	for _, tr := range turns {
		images += tr.Images
	}
	t.Logf("%d tasks on %d phones: %v; posted in %v, all ended in %v; %d model turns, %d with a screenshot; peak RSS %.1f MB",
		tasks, phones, counts, posted.Round(time.Millisecond), took.Round(time.Millisecond), len(turns), images, float64(peak)/(1<<20))
	if counts["completed"] != tasks {
		t.Errorf("not every task completed: %v\nstderr (tail):\n%s", counts, tail(sp.stderr.String(), 2000))
	}
	if images < tasks {
		t.Errorf("%d of %d model turns carried a screenshot: vision was not on", images, len(turns))
	}
	if peak > limit {
		t.Errorf("peak RSS %.1f MB, want at most %d MB", float64(peak)/(1<<20), limit>>20)
	}
}
