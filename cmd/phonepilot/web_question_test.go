package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/device"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/task"
	"phonepilot/tools"
)

// servedWithRunner is the serve wiring (its devices, the task service, the
// API and page) with the runner replaced, for page tests that need a task
// in a state the real planners reach only through other helpers' screens.
func servedWithRunner(t *testing.T, runner task.Runner) *servedAPI {
	t.Helper()
	log := testlog.New(t)
	store := openTestSQLite(t)
	devs := newServeDevices(deviceOptions{SimLocale: "en", SimSeed: 1, Logger: log, ADBServer: "127.0.0.1:1"})
	return &servedAPI{url: serveOver(t, store, devs, runner, 200*time.Millisecond, log), store: store}
}

// A question from the planner on the page: the card shows the question and
// the screen it was asked on, with an answer box and no Approve / Deny;
// the text typed on the page reaches the runner, said to come from the
// page. A second question, answered by another client through the API,
// leaves the page live, and the task completes.
func TestWebAnswerInChromium(t *testing.T) {
	t.Parallel()
	const question = "Which verification code did the bank text you?"
	release := make(chan struct{}) // the runner ends once the test has seen the page without a card
	runner := task.RunnerFunc(func(ctx context.Context, tk storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
		if err := dev.LaunchApp(ctx, "Taobao"); err != nil {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseDeviceGone, Reason: err.Error()}
		}
		sc, err := dev.Scene(ctx)
		if err != nil {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseDeviceGone, Reason: err.Error()}
		}
		a, err := person.Ask(ctx, runtime.Question{Step: 1, Call: tools.NewCall("ask_user", map[string]string{"question": question}), Text: question, Scene: sc})
		if err != nil {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseUserTimeout, Reason: err.Error()}
		}
		if a.Text != "424242" || a.By != "web" {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CausePlannerGaveUp, Reason: fmt.Sprintf("answer %q by %q", a.Text, a.By)}
		}
		b, err := person.Ask(ctx, runtime.Question{Step: 2, Call: tools.NewCall("ask_user", map[string]string{"question": "Anything else?"}), Text: "Anything else?", Scene: sc})
		if err != nil || b.By != "web" {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseUserTimeout, Reason: fmt.Sprintf("second answer %+v, %v", b, err)}
		}
		select {
		case <-release:
		case <-ctx.Done():
			return runtime.Result{Status: lifecycle.Cancelled, Cause: lifecycle.CauseCancelled}
		}
		return runtime.Result{Status: lifecycle.Completed, Reason: "the code was " + a.Text + "; " + b.Text}
	})
	a := servedWithRunner(t, runner)
	ctx := newChromium(t, 60*time.Second)
	pageBoot(t, ctx, a.url+"/")
	terminal := map[string]bool{}
	for _, s := range lifecycle.Statuses {
		terminal[string(s)] = s.Terminal()
	}
	id := startFromPage(t, ctx, "log in to the bank", "sim:ask")
	c := nextCard(t, ctx, id, "", terminal)
	if c.Key == "" || c.Task != id || c.Kind != string(lifecycle.PendingQuestion) {
		t.Fatalf("no question card: %+v", c)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[document.getElementById("pending-question").textContent,
		!document.getElementById("answer-form").hidden, !document.getElementById("approval-form").hidden].join("|")`))
	if err != nil || shown != question+"|true|false" {
		t.Errorf("question card shows %q (%v), want the question, the answer box and no Approve/Deny", shown, err)
	}
	if c.Boxes < 5 || len(c.Acted) != 0 {
		t.Errorf("the question's screen: %d boxes, %v highlighted; want the screen, nothing highlighted", c.Boxes, c.Acted)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("answer-text"), "424242"),
		chromedp.Click(chromedp.ID("answer")))
	if err != nil {
		t.Fatalf("browser: answer: %v", err)
	}
	second := nextCard(t, ctx, id, c.Key, terminal)
	if second.Key == "" || second.Title == c.Title {
		t.Fatalf("after the first answer the page shows %+v, want the second question", second)
	}
	// A client without the approval key cannot answer.
	resp, err := http.Post(a.url+"/v1/tasks/"+id+"/answer", "application/json", strings.NewReader(`{"text":"no"}`))
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("POST /answer without the approval key: %v %v, want 403", resp, err)
	}
	resp.Body.Close()
	// The person answers from elsewhere (curl with the key): the card goes.
	resp, err = postAsPerson(a.url, id, "answer", `{"text":"no"}`)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /answer from another client: %v %v", resp, err)
	}
	resp.Body.Close()
	// The task runs on; the page has dropped the card from the event alone.
	gone, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(`(() => { const c = JSON.parse(%s);
		return !c.key && c.status === %q ? JSON.stringify(c) : ""; })()`, strings.TrimSuffix(fmt.Sprintf(readCard, id), ";"), lifecycle.Running),
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		last, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(readCard, id)))
		badge, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("task-status").dataset.status + " current=" + JSON.stringify(current && {id: current.id, status: current.status})`))
		t.Errorf("the page did not drop the card answered elsewhere while the task ran on: %v; it shows %s, badge %s", err, last, badge)
	}
	live, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("task-live")))
	if !strings.Contains(live, "answered by web") {
		t.Errorf("live line %q (card %s), want who answered", live, gone)
	}
	close(release)
	end := nextCard(t, ctx, id, second.Key, terminal)
	var done apiTask
	getJSON(t, a.url+"/v1/tasks/"+id, &done)
	if end.Key != "" || end.Status != string(lifecycle.Completed) || done.Status != lifecycle.Completed || done.Pending != nil {
		t.Errorf("after answering the page shows %+v, the API %+v; want no card and the task completed", end, done)
	}
	reason, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("task-reason")))
	if !strings.Contains(reason, "424242") {
		t.Errorf("task reason on the page %q, want the answer the runner got", reason)
	}
}
