package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/lifecycle"
)

// newChromium starts a headless Chromium for one test; the returned context
// ends the browser when the test ends or after limit.
// extra are further browser options (flags).
func newChromium(t *testing.T, limit time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	chromium := chromiumPath(t)
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 860)}, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(ctx, limit)
	t.Cleanup(cancel)
	return ctx
}

// pageBoot opens the page (the first time through its approval link, as
// the person does; the page keeps the key, and a second navigation with
// only a fragment would not load the page again) and waits until it has
// loaded the vocabulary.
func pageBoot(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	hasKey, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { try { return !!localStorage.getItem("phonepilot.approval"); } catch (_) { return false; } })()`))
	if !hasKey && !strings.Contains(url, "#") {
		url += "#approval=" + testApprovalKey
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("browser: %v", err)
	}
	boot, err := chromedp.Run(ctx, chromedp.Poll[string](`document.body.dataset.boot || ""`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil || boot != "ready" {
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("detail-empty")))
		t.Fatalf("the page did not start (%q, %v): %s", boot, err, msg)
	}
}

// startFromPage starts a task from the page's form and returns its id.
func startFromPage(t *testing.T, ctx context.Context, goal, dev string) string {
	t.Helper()
	before, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("goal").value = ""`),
		chromedp.SendKeys(chromedp.ID("goal"), goal),
		chromedp.SetValue(chromedp.ID("device"), dev),
		chromedp.Click(chromedp.ID("start")),
	)
	if err != nil {
		t.Fatalf("browser: start %q: %v", goal, err)
	}
	path, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(
		`location.pathname.startsWith("/tasks/") && location.pathname !== %q ? location.pathname : ""`, before),
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("browser: the page did not open the task it started: %v", err)
	}
	return strings.TrimPrefix(path, "/tasks/")
}

// cardOnPage is what the page shows of a pending decision (or, with Key
// empty, that it shows none and the task's status).
type cardOnPage struct {
	Key      string `json:"key"`
	Task     string `json:"task"`
	Kind     string `json:"kind"`
	Status   string `json:"status"`
	Title    string `json:"title"`
	Category string `json:"category"`
	Element  string `json:"element"`
	Reason   string `json:"reason"`
	Acted    []int  `json:"acted"` // data-index of the highlighted boxes in the card's wireframe
	Boxes    int    `json:"boxes"`
	Approve  bool   `json:"approve"` // the Approve and Deny buttons are shown
}

// readCard reads the card of task %q; the status is the badge's once the
// page shows that task (current is the page's task).
const readCard = `(() => {
  const p = document.getElementById("pending");
  const st = current && current.id === %[1]q && current.status ? document.getElementById("task-status").dataset.status : "";
  if (p.hidden) return JSON.stringify({status: st});
  const shown = (id) => { const n = document.getElementById(id); return !!n && !n.hidden && n.offsetParent !== null; };
  return JSON.stringify({
    key: p.dataset.key || "", task: p.dataset.task || "", kind: p.dataset.kind || "", status: st,
    title: document.getElementById("pending-title").textContent,
    category: document.getElementById("pending-category").textContent,
    element: document.getElementById("pending-element").textContent,
    reason: document.getElementById("pending-reason").textContent,
    acted: [...p.querySelectorAll("svg.wireframe rect.acted")].map((r) => Number(r.dataset.index)),
    boxes: p.querySelectorAll("svg.wireframe rect.el").length,
    approve: shown("approve") && shown("deny"),
  });
})()`

// nextCard waits until the page shows a pending card of task id other
// than the one with key prev, or the task has ended.
func nextCard(t *testing.T, ctx context.Context, id, prev string, terminal map[string]bool) cardOnPage {
	t.Helper()
	var c cardOnPage
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		js, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(readCard, id)))
		if err != nil {
			t.Fatalf("browser: read the pending card: %v", err)
		}
		c = cardOnPage{}
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			t.Fatalf("card %s: %v", js, err)
		}
		if (c.Key != "" && c.Key != prev && c.Task == id) || terminal[c.Status] {
			return c
		}
		chromedp.Do(ctx, chromedp.Sleep(50*time.Millisecond))
	}
	t.Fatalf("no new pending card and no end within 60 s; last seen %+v", c)
	return c
}

// apiTask is the part of GET /v1/tasks/{id} the test reads.
type apiTask struct {
	Status  lifecycle.Status `json:"status"`
	Cause   lifecycle.Cause  `json:"cause"`
	Pending *struct {
		Kind     string `json:"kind"`
		Step     int    `json:"step"`
		Category string `json:"category"`
		Reason   string `json:"reason"`
		Element  *struct {
			Index int    `json:"index"`
			Label string `json:"label"`
		} `json:"element"`
	} `json:"pending"`
}

// decisions reads a finished task's event stream and returns its
// approval_decided events' data.
func decisions(t *testing.T, base, id string) []map[string]any {
	t.Helper()
	events, stop := followEvents(t, base, id)
	defer stop()
	var out []map[string]any
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return out
			}
			if ev.event == string(lifecycle.EventApprovalDecided) {
				var d struct {
					Data map[string]any `json:"data"`
				}
				if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
					t.Fatalf("approval_decided %s: %v", ev.data, err)
				}
				out = append(out, d.Data)
			}
		case <-timeout:
			t.Fatal("the event stream of a finished task did not end")
		}
	}
}

// The page in Chromium holds the purchase for a person: through the
// real serve wiring on the simulator, each action the gate holds shows up
// as a card with its screen's wireframe and the element highlighted (the
// one the API's pending names), its category and reason, before any order
// exists; Approve on each places exactly one order and the task completes.
// A second task, denied at its first card, fails approval_denied with no
// order; a third, cancelled while it waits, drops its card and buys
// nothing. The task list marks the waiting task in its own tone.
func TestWebApproveAndDenyInChromium(t *testing.T) {
	t.Parallel() // mostly waiting on the simulated phone or the browser
	a := startServedAPI(t, openTestSQLite(t), "")
	ctx := newChromium(t, 150*time.Second)
	pageBoot(t, ctx, a.url+"/")
	var vocab struct {
		Terminal []string          `json:"terminal"`
		Tones    map[string]string `json:"tones"`
	}
	getJSON(t, a.url+"/v1/lifecycle", &vocab)
	terminal := map[string]bool{}
	for _, s := range vocab.Terminal {
		terminal[s] = true
	}
	waitTone := vocab.Tones[string(lifecycle.WaitingApproval)]
	if waitTone == "" || waitTone == vocab.Tones[string(lifecycle.Running)] {
		t.Errorf("tones: waiting_approval %q, running %q: a waiting task must look different", waitTone, vocab.Tones[string(lifecycle.Running)])
	}

	// Approve every card.
	const approveDev = "sim:web-approve"
	id := startFromPage(t, ctx, purchaseGoal, approveDev)
	var png []byte
	var seen []cardOnPage
	prev := ""
	for {
		c := nextCard(t, ctx, id, prev, terminal)
		if c.Key == "" {
			break
		}
		if len(seen) == 4 {
			t.Fatalf("a fifth approval asked for (%+v); the goal has two gated taps", c)
		}
		seen = append(seen, c)
		prev = c.Key
		var task apiTask
		getJSON(t, a.url+"/v1/tasks/"+id, &task)
		if task.Status != lifecycle.WaitingApproval || task.Pending == nil || task.Pending.Element == nil {
			t.Fatalf("the page shows a card but the API has the task %+v", task)
		}
		p := task.Pending
		if c.Task != id || c.Kind != p.Kind || c.Category != p.Category || c.Reason != p.Reason || c.Category == "" || c.Reason == "" {
			t.Errorf("card %+v, pending %+v", c, p)
		}
		if len(c.Acted) != 1 || c.Acted[0] != p.Element.Index || c.Boxes < 5 {
			t.Errorf("card wireframe: %d boxes, highlighted %v; the pending element is [%d] %q", c.Boxes, c.Acted, p.Element.Index, p.Element.Label)
		}
		if !strings.Contains(c.Element, p.Element.Label) || !c.Approve {
			t.Errorf("card names the element %q (pending %q), buttons shown %v", c.Element, p.Element.Label, c.Approve)
		}
		if n := len(servedOrders(t, a.url, approveDev)); n != 0 {
			t.Fatalf("%d orders on the phone while the task waits for approval %d", n, len(seen))
		}
		if len(seen) == 1 {
			// The list marks the waiting task (it refreshes every 2 s).
			row, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
				const li = document.querySelector('#task-list li[data-id=%q]');
				return li && li.dataset.pending ? li.className + " | " + li.textContent : ""; })()`, id),
				chromedp.WithPollingTimeout(5*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
			if err != nil || !strings.Contains(row, "tone-"+waitTone) || !strings.Contains(row, p.Category) {
				t.Errorf("task list row of the waiting task: %q (%v), want tone-%s and %q", row, err, waitTone, p.Category)
			}
			if png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
				t.Fatalf("browser: screenshot: %v", err)
			}
		}
		if len(seen) == 2 {
			// Opened afresh on the waiting task (a reload, a link), the
			// page shows the same card, once, from the task and its replay.
			pageBoot(t, ctx, a.url+"/tasks/"+id)
			again := nextCard(t, ctx, id, "", terminal)
			cards, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#pending:not([hidden]) svg.wireframe").length`))
			if again.Key != c.Key || len(again.Acted) != 1 || again.Acted[0] != p.Element.Index || cards != 1 {
				t.Errorf("reloaded on the waiting task the page shows %+v (%d wireframes), want the card %s", again, cards, c.Key)
			}
		}
		err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("approval-note"), fmt.Sprintf("ok %d", len(seen))),
			chromedp.Click(chromedp.ID("approve")))
		if err != nil {
			t.Fatalf("browser: approve: %v", err)
		}
	}
	var done apiTask
	getJSON(t, a.url+"/v1/tasks/"+id, &done)
	status, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("task-status")))
	t.Logf("approved %d cards: %+v", len(seen), seen)
	if len(seen) == 0 || done.Status != lifecycle.Completed || status != string(lifecycle.Completed) {
		t.Fatalf("after %d approvals the task is %s (%s), the page says %q", len(seen), done.Status, done.Cause, status)
	}
	if n := len(servedOrders(t, a.url, approveDev)); n != 1 {
		t.Errorf("%d orders on the phone after approving, want exactly 1", n)
	}
	ds := decisions(t, a.url, id)
	if len(ds) != len(seen) {
		t.Errorf("%d approval_decided events for %d approvals: %v", len(ds), len(seen), ds)
	}
	for i, d := range ds {
		if d["approved"] != true || d["by"] != "web" || d["note"] != fmt.Sprintf("ok %d", i+1) {
			t.Errorf("decision %d: %v, want approved by web with its note", i+1, d)
		}
	}

	// Deny the first card of a second purchase.
	const denyDev = "sim:web-deny"
	id2 := startFromPage(t, ctx, purchaseGoal, denyDev)
	c := nextCard(t, ctx, id2, "", terminal)
	if c.Key == "" || c.Task != id2 {
		t.Fatalf("the second purchase shows no card: %+v", c)
	}
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("approval-note"), "not today"),
		chromedp.Click(chromedp.ID("deny")))
	if err != nil {
		t.Fatalf("browser: deny: %v", err)
	}
	end := nextCard(t, ctx, id2, c.Key, terminal)
	if end.Key != "" || end.Status != string(lifecycle.Failed) {
		t.Fatalf("after Deny the page shows %+v, want no card and the task failed", end)
	}
	reason, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("task-reason")))
	var denied apiTask
	getJSON(t, a.url+"/v1/tasks/"+id2, &denied)
	if denied.Status != lifecycle.Failed || denied.Cause != lifecycle.CauseApprovalDenied || !strings.HasPrefix(reason, string(lifecycle.CauseApprovalDenied)) {
		t.Errorf("denied task %s (%s), the page says %q; want failed with approval_denied", denied.Status, denied.Cause, reason)
	}
	if n := len(servedOrders(t, a.url, denyDev)); n != 0 {
		t.Errorf("%d orders on the phone after denying, want none", n)
	}
	// The list shows why the failed task failed, not only that it did.
	row, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
		const c = document.querySelector('#task-list li[data-id=%q] .cause');
		return c ? c.textContent : ""; })()`, id2),
		chromedp.WithPollingTimeout(5*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil || !strings.HasPrefix(row, string(lifecycle.CauseApprovalDenied)) {
		t.Errorf("task list row of the denied task shows cause %q (%v); want approval_denied and its reason", row, err)
	}
	if ds := decisions(t, a.url, id2); len(ds) != 1 || ds[0]["approved"] != false || ds[0]["by"] != "web" || ds[0]["note"] != "not today" {
		t.Errorf("decisions of the denied task: %v", ds)
	}

	// Cancel while a third purchase waits: the card goes, the task is
	// cancelled, and the held action never runs.
	const cancelDev = "sim:web-cancel"
	id3 := startFromPage(t, ctx, purchaseGoal, cancelDev)
	c3 := nextCard(t, ctx, id3, "", terminal)
	if c3.Key == "" {
		t.Fatalf("the third purchase shows no card: %+v", c3)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("cancel"))); err != nil {
		t.Fatalf("browser: cancel: %v", err)
	}
	if end := nextCard(t, ctx, id3, c3.Key, terminal); end.Key != "" || end.Status != string(lifecycle.Cancelled) {
		t.Errorf("after Cancel the page shows %+v, want no card and the task cancelled", end)
	}
	if n := len(servedOrders(t, a.url, cancelDev)); n != 0 {
		t.Errorf("%d orders after cancelling while waiting, want none", n)
	}

	out := filepath.Join(t.TempDir(), "web-ui-approval.png")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		out = filepath.Join("..", "..", "docs", "web-ui-approval.png")
	}
	if len(png) > 200<<10 {
		t.Errorf("screenshot is %d KB, want < 200 KB", len(png)>>10)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the pending card (%d KB) saved to %s", len(png)>>10, out)
}
