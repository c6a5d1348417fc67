package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

// shiftedClock is the real clock moved on by what a test adds: the task
// service's idea of now, so a person's two-minute wait takes no two
// minutes of the test.
type shiftedClock struct{ off atomic.Int64 }

func (c *shiftedClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

func (c *shiftedClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *shiftedClock) add(d time.Duration) { c.off.Add(int64(d)) }

// A served purchase whose payment a person approves two minutes after it
// was asked for: `tasks`, `show` and the page's list all show the task's
// real time, the wait included and said to be the person's (issue 23:
// it showed "took 0s"). While it waits, the page's devices panel shows the
// phone's task (waiting for approval) and the task queued behind it.
func TestServedPurchaseApprovedAfterTwoMinutesShowsItsTime(t *testing.T) {
	t.Parallel()
	log := testlog.New(t)
	path := filepath.Join(t.TempDir(), "pp.db")
	store, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clk := &shiftedClock{}
	devs := newServeDevices(deviceOptions{SimLocale: "en", SimSeed: 1, Logger: log, ADBServer: "127.0.0.1:1"})
	url := serveWith(t, store, devs, &runtimeRunner{base: runtime.Defaults(), log: log},
		task.Config{PollInterval: 200 * time.Millisecond, Logger: log, Clock: clk}, nil)
	ctx := newChromium(t, 150*time.Second)
	pageBoot(t, ctx, url+"/")

	const dev = "sim:waited"
	id := postTask(t, url, purchaseGoal, dev).ID
	var tk apiTask
	for deadline := time.Now().Add(60 * time.Second); tk.Status != lifecycle.WaitingApproval; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || tk.Status.Terminal() {
			t.Fatalf("the purchase never waited for approval: %+v", tk)
		}
		getJSON(t, url+"/v1/tasks/"+id, &tk)
	}
	next := postTask(t, url, "open Settings", dev)

	// The devices panel: the phone, the purchase on it waiting for the
	// person, and the task queued behind it.
	row, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
		const li = document.querySelector('#device-rows li[data-device=%q]');
		const on = li && li.querySelector('.device-task[data-id=%q] .badge');
		const queued = li && li.querySelector('.next-task[data-id=%q]');
		return on && queued ? on.textContent + " | " + li.textContent : ""; })()`, dev, id, next.ID),
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil || !strings.HasPrefix(row, string(lifecycle.WaitingApproval)+" | ") || !strings.Contains(row, purchaseGoal) || !strings.Contains(row, "1 queued: ") || !strings.Contains(row, "open Settings") {
		var devices any
		getJSON(t, url+"/v1/devices", &devices)
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("device-rows").innerHTML`))
		t.Errorf("devices panel row of %s: %q (%v); want the purchase waiting_approval and open Settings queued\nGET /v1/devices: %v\npanel: %s", dev, row, err, devices, html)
	}

	// Two minutes later the person approves, and approves what follows.
	clk.add(2 * time.Minute)
	for approvals := 0; ; approvals++ {
		getJSON(t, url+"/v1/tasks/"+id, &tk)
		if tk.Status.Terminal() {
			break
		}
		if tk.Status != lifecycle.WaitingApproval {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if approvals == 4 {
			t.Fatalf("a fifth approval asked for")
		}
		resp, err := postAsPerson(url, id, "approve", `{}`)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("approve: %v %v", resp, err)
		}
		resp.Body.Close()
		for asked := tk.Pending.Step; tk.Status == lifecycle.WaitingApproval && tk.Pending != nil && tk.Pending.Step == asked; {
			time.Sleep(20 * time.Millisecond)
			getJSON(t, url+"/v1/tasks/"+id, &tk)
		}
	}
	if tk.Status != lifecycle.Completed || len(servedOrders(t, url, dev)) != 1 {
		t.Fatalf("the approved purchase: %+v, %d orders", tk, len(servedOrders(t, url, dev)))
	}
	got, err := store.Task(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	took := got.Finished.Sub(*got.Started)
	if took < 2*time.Minute || got.Waited < 2*time.Minute || got.Waited >= took || took > 2*time.Minute+time.Minute {
		t.Fatalf("stored: took %s, waited %s; want over 2m0s, of it a wait over 2m0s", took, got.Waited)
	}
	t.Logf("took %s, waited %s", took, got.Waited)

	// tasks: TOOK and WAITED, as stored.
	out, _ := ppCLI(t, "tasks", "--db", path)
	d := `2m\d+(\.\d+)?s`
	if !regexp.MustCompile(`(?m)^` + id + `\s+completed\s.*\s` + d + `\s+` + d + `\s+open Taobao`).MatchString(out) {
		t.Errorf("tasks: want the purchase's row with its 2-minute took and wait:\n%s", out)
	}
	// show: took, and how much of it was the person's.
	out, _ = ppCLI(t, "show", "--db", path, id)
	if !regexp.MustCompile(`took ` + d + ` \(` + d + ` of it waiting for a person\)`).MatchString(out) {
		t.Errorf("show: want took 2m…s (2m…s of it waiting for a person):\n%s", out)
	}
	// The page's list says the same.
	line, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
		const li = document.querySelector('#task-list li[data-id=%q] .when');
		return li && li.textContent.includes("took") ? li.textContent : ""; })()`, id),
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil || !regexp.MustCompile(`took 2 min \d+ s \(2 min \d+ s of it waiting for a person\)`).MatchString(line) {
		t.Errorf("the page's list row: %q (%v); want took 2 min … (2 min … of it waiting for a person)", line, err)
	}
}
