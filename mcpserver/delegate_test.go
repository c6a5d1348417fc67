package mcpserver_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/lifecycle"
	"phonepilot/task"
)

type progress struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (p *progress) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, req.Params)
}

func (p *progress) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), p.notes...)
}

var taskIDRE = regexp.MustCompile(`task (\S+) `)

// run_task hands the goal to phonepilot's loop: one progress notification
// per step, the result with its status; get_task reads it back.
func TestRunTaskToCompletionWithProgress(t *testing.T) {
	h := newHarness(t)
	var p progress
	cs := h.connect(t, "delegates", &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	params := &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"goal": "open Settings and scroll down", "max_steps": 10}}
	params.SetProgressToken("run-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	out := text(res)
	t.Logf("run_task:\n%s", out)
	if res.IsError || !strings.Contains(out, " completed") || !strings.Contains(out, "step 1 succeeded") {
		t.Fatalf("run_task: %s", out)
	}
	// Notifications may trail the result by a moment.
	deadline := time.Now().Add(2 * time.Second)
	for len(p.all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	notes := p.all()
	if len(notes) < 2 {
		t.Fatalf("%d progress notifications; want one per step (2)", len(notes))
	}
	for i, n := range notes {
		if n.ProgressToken != "run-1" || n.Progress != float64(i+1) || n.Total != 10 || !strings.Contains(n.Message, "step") {
			t.Errorf("progress %d: %+v", i, n)
		}
	}
	id := taskIDRE.FindStringSubmatch(out)[1]
	if got := must(t, cs, "get_task", map[string]any{"task_id": id}); !strings.Contains(got, "task "+id+" completed") || !strings.Contains(got, "step 2 succeeded: scroll down") {
		t.Errorf("get_task: %s", got)
	}
	if out, isErr := call(t, cs, "get_task", map[string]any{"task_id": "no-such-task"}); !isErr {
		t.Errorf("get_task of no task: %s", out)
	}
	if out, isErr := call(t, cs, "run_task", map[string]any{"goal": "  "}); !isErr || !strings.Contains(out, `"goal"`) {
		t.Errorf("run_task without a goal: %s", out)
	}
	if out, isErr := call(t, cs, "run_task", map[string]any{"goal": "x", "planner": "psychic"}); !isErr || !strings.Contains(out, `"planner"`) {
		t.Errorf("run_task with an unknown planner: %s", out)
	}
	// Goals are checked as the API checks them (task.CheckGoal).
	for goal, want := range map[string]string{
		"open Settings\x00 and pay": "control character U+0000",
		strings.Repeat("a", 2001):   "longer than 2000",
	} {
		if out, isErr := call(t, cs, "run_task", map[string]any{"goal": goal}); !isErr || !strings.Contains(out, want) {
			t.Errorf("run_task with goal %.30q: %s, want %q", goal, out, want)
		}
	}
	// A key given twice in the arguments is refused, not the last taken.
	if out, isErr := call(t, cs, "run_task", json.RawMessage(`{"goal":"open Settings","GOAL":"open Taobao"}`)); !isErr || !strings.Contains(out, "given twice") {
		t.Errorf("run_task with goal and GOAL: %s", out)
	}
}

// The client cancels its run_task call (notifications/cancelled): the task
// is cancelled with it.
func TestRunTaskCancelledByTheClient(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "canceller", nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"goal": blockGoal}})
		done <- err
	}()
	// Wait for the task to run.
	var id string
	deadline := time.Now().Add(5 * time.Second)
	for id == "" {
		if time.Now().After(deadline) {
			t.Fatal("the task never started")
		}
		for dev, l := range h.svc.Load() {
			if dev == "sim" && l.Running != "" {
				id = l.Running
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error")
	}
	for {
		tk, err := h.svc.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status == lifecycle.Cancelled {
			break
		}
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("task %s is %s after the client cancelled; want cancelled", id, tk.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The device is free again for the session.
	must(t, cs, "observe", nil)
}

const buyGoal = "open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay"

// run_task on a goal that pays: without elicitation the tool answers the
// pending decision and how a person approves, and the task waits; with
// it, the user's yes (or no) decides.
func TestRunTaskApprovals(t *testing.T) {
	t.Run("without elicitation", func(t *testing.T) {
		h := newHarness(t)
		cs := h.connect(t, "plain", nil)
		out := must(t, cs, "run_task", map[string]any{"goal": buyGoal})
		t.Logf("run_task: %s", out)
		if !strings.Contains(out, "waiting_approval") || !strings.Contains(out, "payment") || !strings.Contains(out, "A person must decide") || !strings.Contains(out, "web page") ||
			strings.Contains(out, "/approve") || strings.Contains(out, "http") {
			t.Fatalf("run_task of a paying goal: %s", out)
		}
		id := taskIDRE.FindStringSubmatch(out)[1]
		if got := must(t, cs, "get_task", map[string]any{"task_id": id}); !strings.Contains(got, "pending: step") {
			t.Errorf("get_task while waiting: %s", got)
		}
		if n := orders(t, h); n != 0 {
			t.Errorf("%d orders while waiting for approval", n)
		}
		// Another front end (the API) may still decide; here: cancel.
		if got := must(t, cs, "cancel_task", map[string]any{"task_id": id}); !strings.Contains(got, "cancelled") {
			t.Errorf("cancel_task: %s", got)
		}
	})
	for _, yes := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[yes], func(t *testing.T) {
			h := newHarness(t)
			asks := 0
			cs := h.connect(t, "elicits", &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asks++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": yes}}, nil
				},
			})
			out := must(t, cs, "run_task", map[string]any{"goal": buyGoal})
			t.Logf("run_task: %s", out)
			n := orders(t, h)
			switch {
			case asks == 0:
				t.Errorf("never asked the user: %s", out)
			case yes && (!strings.Contains(out, " completed") || n != 1):
				t.Errorf("approved: %d orders; %s", n, out)
			case !yes && (!strings.Contains(out, "approval_denied") || n != 0):
				t.Errorf("denied: %d orders; %s", n, out)
			}
		})
	}
}

// A task left waiting for a person keeps its device leased after the
// session that started it closed; cancelling it frees the device.
func TestLeaseOutlivesSessionWhileItsTaskWaits(t *testing.T) {
	h := newHarness(t)
	a := h.connect(t, "starter", nil)
	b := h.connect(t, "other", nil)
	out := must(t, a, "run_task", map[string]any{"goal": buyGoal})
	id := taskIDRE.FindStringSubmatch(out)[1]
	a.Close()
	h.sessionsEnded(t, 1)
	// The lease itself outlives the session (not only the task service's
	// record of the running task): list_devices reads the lease table.
	if out := must(t, b, "list_devices", nil); !strings.Contains(out, "sim (sim, device) busy, held by session-1 (starter 1.0)") {
		t.Fatalf("list_devices after the session whose task waits closed: %s", out)
	}
	h.clock.Advance(time.Hour) // far past the idle time: the waiting task holds it
	if out := must(t, b, "list_devices", nil); !strings.Contains(out, "busy, held by session-1") {
		t.Fatalf("list_devices an hour on, the task still waiting: %s", out)
	}
	if out, isErr := call(t, b, "observe", nil); !isErr || !strings.Contains(out, "task "+id+" runs on it") {
		t.Fatalf("observe while a's task waits for approval: error=%v %s", isErr, out)
	}
	must(t, b, "cancel_task", map[string]any{"task_id": id})
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, isErr := call(t, b, "observe", nil)
		if !isErr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the device stayed leased after the task ended: %s", out)
		}
		h.clock.Advance(6 * time.Minute) // past the idle time after the hold ended
		time.Sleep(10 * time.Millisecond)
	}
}

// A task another front end started (the API shares the service) makes the
// device busy for direct actions while it runs.
func TestDeviceBusyWithATaskFromElsewhere(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "direct", nil)
	tk, err := h.svc.Submit(t.Context(), task.Request{Goal: blockGoal, Device: "sim", Planner: "rule", MaxSteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.svc.Load()["sim"].Running != tk.ID {
		if time.Now().After(deadline) {
			t.Fatal("the task never ran")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if out, isErr := call(t, cs, "observe", nil); !isErr || !strings.Contains(out, "task "+tk.ID+" runs on it") {
		t.Errorf("observe while an API task runs: error=%v %s", isErr, out)
	}
	if _, err := h.svc.Cancel(t.Context(), tk.ID); err != nil {
		t.Fatal(err)
	}
	for h.svc.Load()["sim"].Running != "" {
		if time.Now().After(deadline) {
			t.Fatal("the task never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	must(t, cs, "observe", nil)
}

// A task started elsewhere (the page, the API) on a device a session holds
// for its direct actions waits, queued, until the session lets it go; the
// session's own run_task is not held up by its lease.
func TestTaskFromElsewhereWaitsForTheSessionsLease(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "direct", nil)
	must(t, cs, "observe", nil) // leases sim to this session
	tk, err := h.svc.Submit(t.Context(), task.Request{Goal: "open Settings", Device: "sim", Planner: "rule", MaxSteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Four looks of the queue at the lease, counted, not guessed from time.
	for looks, deadline := h.heldLooks.Load(), time.Now().Add(5*time.Second); h.heldLooks.Load() < looks+4; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the task service did not look at the lease")
		}
	}
	if got, err := h.svc.Get(t.Context(), tk.ID); err != nil || got.Status != lifecycle.Queued {
		t.Fatalf("task from elsewhere while a session holds the device: %s %v; want queued", got.Status, err)
	}
	if out := must(t, cs, "run_task", map[string]any{"goal": "open Settings and scroll down", "max_steps": 5}); !strings.Contains(out, " completed") {
		t.Errorf("the session's own run_task: %s", out)
	}
	if got, _ := h.svc.Get(t.Context(), tk.ID); got.Status != lifecycle.Queued {
		t.Errorf("after the session's run_task the lease is still the session's: the other task is %s, want queued", got.Status)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := h.svc.Get(t.Context(), tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == lifecycle.Completed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session closed, the task is still %s", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
