package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// purchaseGoal is the goal that placed a ¥4155.7 order without
// asking anyone.
const purchaseGoal = "open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay"

// simOrders reads the Taobao orders from a simulator's state JSON.
func simOrders(t testing.TB, state []byte) []json.RawMessage {
	t.Helper()
	var st struct {
		Taobao *struct {
			Orders []json.RawMessage `json:"orders"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(state, &st); err != nil || st.Taobao == nil {
		t.Fatalf("device state %.200s has no taobao part (%v)", state, err)
	}
	return st.Taobao.Orders
}

// servedOrders is the Taobao orders of a served simulator, through
// GET /v1/devices/{id}/state.
func servedOrders(t testing.TB, base, dev string) []json.RawMessage {
	t.Helper()
	resp, err := http.Get(base + "/v1/devices/" + dev + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET state of %s = %d %s", dev, resp.StatusCode, body)
	}
	return simOrders(t, body)
}

// waitServed polls a served task until it has one of the statuses.
func waitServed(t testing.TB, base, id string, want ...lifecycle.Status) storage.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var task storage.Task
		getJSON(t, base+"/v1/tasks/"+id, &task)
		for _, w := range want {
			if task.Status == w {
				return task
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%s), want %v", id, task.Status, task.Reason, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func postDecision(t testing.TB, base, id, verb, body string) (int, storage.Task) {
	t.Helper()
	resp, err := postAsPerson(base, id, verb, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var task storage.Task
	_ = json.NewDecoder(resp.Body).Decode(&task)
	return resp.StatusCode, task
}

// Through the served API on the simulator, with the rule planner: the
// purchase stops before anything is bought, with its pending action; each
// approval lets exactly that action run, and the approved task places
// exactly one order. A denied task buys nothing and fails approval_denied.
func TestServedPurchaseWaitsForApproval(t *testing.T) {
	api := startServedAPI(t, openTestSQLite(t), "")
	task := postTask(t, api.url, purchaseGoal, "sim:x")

	var labels []string
	for {
		got := waitServed(t, api.url, task.ID, lifecycle.WaitingApproval, lifecycle.Completed, lifecycle.Failed)
		if got.Status != lifecycle.WaitingApproval {
			if got.Status != lifecycle.Completed {
				t.Fatalf("the approved purchase ended %s (%s): %s", got.Status, got.Cause, got.Reason)
			}
			break
		}
		p := got.Pending
		if p == nil || p.Kind != lifecycle.PendingApproval || p.Category != "payment" || p.Element == nil || p.Reason == "" || len(p.Scene) == 0 {
			t.Fatalf("waiting task's pending = %+v", p)
		}
		if n := len(servedOrders(t, api.url, "sim:x")); n != 0 {
			t.Fatalf("waiting for approval of %q, the phone already has %d orders", p.Element.Label, n)
		}
		labels = append(labels, p.Element.Label)
		if code, _ := postDecision(t, api.url, task.ID, "approve", `{"note":"test"}`); code != 200 {
			t.Fatalf("approve %q = %d", p.Element.Label, code)
		}
		if len(labels) > 5 {
			t.Fatalf("asked for approval %d times: %v", len(labels), labels)
		}
	}
	if len(labels) == 0 || labels[len(labels)-1] != "Pay now" {
		t.Errorf("approvals asked for %v, want the last to be Pay now", labels)
	}
	if n := len(servedOrders(t, api.url, "sim:x")); n != 1 {
		t.Errorf("approved purchase: %d orders, want exactly 1", n)
	}
	if code, _ := postDecision(t, api.url, task.ID, "approve", ""); code != http.StatusConflict {
		t.Errorf("approve a completed task = %d, want 409", code)
	}

	denied := postTask(t, api.url, purchaseGoal, "sim:y")
	got := waitServed(t, api.url, denied.ID, lifecycle.WaitingApproval)
	if code, _ := postDecision(t, api.url, denied.ID, "deny", `{"note":"not today"}`); code != 200 {
		t.Fatalf("deny = %d", code)
	}
	end := waitServed(t, api.url, denied.ID, lifecycle.Completed, lifecycle.Failed, lifecycle.Cancelled)
	if end.Status != lifecycle.Failed || end.Cause != lifecycle.CauseApprovalDenied {
		t.Errorf("denied purchase (at %q) ended %s (%s): %s", got.Pending.Element.Label, end.Status, end.Cause, end.Reason)
	}
	if n := len(servedOrders(t, api.url, "sim:y")); n != 0 {
		t.Errorf("denied purchase: %d orders", n)
	}
	evs, err := api.store.Events(t.Context(), denied.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var decided []storage.ApprovalDecidedEvent
	for _, e := range evs {
		if e.Type == lifecycle.EventApprovalDecided {
			var d storage.ApprovalDecidedEvent
			json.Unmarshal(e.Data, &d)
			decided = append(decided, d)
		}
	}
	if len(decided) != 1 || decided[0].Approved || decided[0].By != "web" || decided[0].Note != "not today" {
		t.Errorf("approval_decided of the denied task: %+v", decided)
	}
}

// purchaseDoc is what these tests read of run --json.
type purchaseDoc struct {
	Status      lifecycle.Status `json:"status"`
	Cause       lifecycle.Cause  `json:"cause"`
	Reason      string           `json:"reason"`
	DeviceState json.RawMessage  `json:"device_state"`
}

// runPurchase runs the purchase goal with `run --json` and stdin not a
// terminal (capture makes it an empty pipe), and returns the exit status, the document and stderr.
func runPurchase(t *testing.T, extra ...string) (int, purchaseDoc, string) {
	t.Helper()
	t.Setenv("PHONEPILOT_CONFIG", "")
	args := append([]string{"run", "--json", "--db", filepath.Join(t.TempDir(), "tasks.db"), "--device", "sim"}, extra...)
	code, out, stderr := capture(t, context.Background(), append(args, purchaseGoal)...)
	var doc purchaseDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout is not one JSON document: %v\n%s\nstderr %s", code, err, out, stderr)
	}
	return code, doc, stderr
}

// Without a terminal run refuses: the task fails approval_denied, exit 1,
// and the phone has no order.
func TestRunWithoutTerminalBuysNothing(t *testing.T) {
	code, doc, stderr := runPurchase(t)
	if code != exitFailed || doc.Status != lifecycle.Failed || doc.Cause != lifecycle.CauseApprovalDenied {
		t.Errorf("exit %d, %s (%s): %s", code, doc.Status, doc.Cause, doc.Reason)
	}
	if n := len(simOrders(t, doc.DeviceState)); n != 0 {
		t.Errorf("a run nobody watched placed %d orders", n)
	}
	// It says why and what to do, as "not approved" (nobody was asked,
	// so no person denied it), in the task's reason; stderr does not
	// repeat it (issue 23: it was said three times).
	if !strings.Contains(doc.Reason, "not approved: no terminal to ask") || !strings.Contains(doc.Reason, "--allow payment") ||
		strings.Contains(doc.Reason, "a person") {
		t.Errorf("reason %q does not say why or what to do", doc.Reason)
	}
	if strings.Contains(stderr, "no terminal to ask") {
		t.Errorf("stderr repeats the refusal:\n%s", stderr)
	}
}

// A person at the terminal answering y approves each gated action: one order.
func TestRunOnTerminalAsksAndApproves(t *testing.T) {
	old := askTerminal
	askTerminal = func(*cobra.Command) (io.Reader, bool) { return strings.NewReader("y\ny\ny\ny\n"), true }
	t.Cleanup(func() { askTerminal = old })
	code, doc, stderr := runPurchase(t)
	if code != 0 || doc.Status != lifecycle.Completed {
		t.Fatalf("exit %d, %s (%s): %s\n%s", code, doc.Status, doc.Cause, doc.Reason, stderr)
	}
	if n := len(simOrders(t, doc.DeviceState)); n != 1 {
		t.Errorf("approved at the terminal: %d orders, want 1", n)
	}
	for _, s := range []string{"Approve? [y/N]", `label:    "Buy now"`, `label:    "Pay now"`, "category: payment", "reason:"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("the terminal was not shown %q:\n%s", s, stderr)
		}
	}
}

// Without a task to wait in (--no-record) the terminal is asked directly.
func TestRunNoRecordAsksTheTerminal(t *testing.T) {
	old := askTerminal
	askTerminal = func(*cobra.Command) (io.Reader, bool) { return strings.NewReader("y\ny\n"), true }
	t.Cleanup(func() { askTerminal = old })
	code, doc, stderr := runPurchase(t, "--no-record")
	if code != 0 || doc.Status != lifecycle.Completed || len(simOrders(t, doc.DeviceState)) != 1 || !strings.Contains(stderr, "Approve? [y/N]") {
		t.Errorf("--no-record on a terminal answering y: exit %d, %s (%s): %s\n%s", code, doc.Status, doc.Cause, doc.Reason, stderr)
	}
	askTerminal = func(*cobra.Command) (io.Reader, bool) { return strings.NewReader("y\nn\n"), true }
	if code, doc, _ := runPurchase(t, "--no-record"); code != exitFailed || doc.Cause != lifecycle.CauseApprovalDenied || len(simOrders(t, doc.DeviceState)) != 0 {
		t.Errorf("--no-record, Pay denied: exit %d, %s (%s)", code, doc.Status, doc.Cause)
	}
}

// A person at the terminal answering n: nothing bought.
func TestRunOnTerminalDenied(t *testing.T) {
	old := askTerminal
	askTerminal = func(*cobra.Command) (io.Reader, bool) { return strings.NewReader("n\n"), true }
	t.Cleanup(func() { askTerminal = old })
	code, doc, stderr := runPurchase(t)
	if code != exitFailed || doc.Cause != lifecycle.CauseApprovalDenied {
		t.Errorf("exit %d, %s (%s): %s\n%s", code, doc.Status, doc.Cause, doc.Reason, stderr)
	}
	if n := len(simOrders(t, doc.DeviceState)); n != 0 {
		t.Errorf("denied at the terminal: %d orders", n)
	}
}

// --allow payment lets the purchase through without asking anyone.
func TestRunAllowPayment(t *testing.T) {
	code, doc, stderr := runPurchase(t, "--allow", "payment")
	if code != 0 || doc.Status != lifecycle.Completed {
		t.Fatalf("exit %d, %s (%s): %s\n%s", code, doc.Status, doc.Cause, doc.Reason, stderr)
	}
	if n := len(simOrders(t, doc.DeviceState)); n != 1 {
		t.Errorf("--allow payment: %d orders, want 1", n)
	}
	if strings.Contains(stderr, "Approve?") || strings.Contains(stderr, "refused") {
		t.Errorf("--allow payment still asked or refused:\n%s", stderr)
	}
	// The flag is the person's yes for this run: it overrides the file's
	// payment = "deny" too.
	deny := writeFile(t, "[safety]\npayment = \"deny\"\n")
	if code, doc, _ := runPurchase(t, "--config", deny, "--allow", "payment"); code != 0 || len(simOrders(t, doc.DeviceState)) != 1 {
		t.Errorf("--allow payment over payment = \"deny\": exit %d, %s (%s)", code, doc.Status, doc.Cause)
	}
	// Another category does not let a payment through; a wrong name is usage.
	if code, doc, _ := runPurchase(t, "--allow", "send"); code != exitFailed || len(simOrders(t, doc.DeviceState)) != 0 {
		t.Errorf("--allow send: exit %d, %s", code, doc.Cause)
	}
	t.Setenv("PHONEPILOT_CONFIG", "")
	if code, _, stderr := capture(t, context.Background(), "run", "--allow", "paymnt", "--device", "sim", purchaseGoal); code != 2 || !strings.Contains(stderr, `"paymnt"`) {
		t.Errorf("--allow paymnt: exit %d, %s", code, stderr)
	}
}
