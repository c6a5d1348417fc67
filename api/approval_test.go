package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// GET /v1/devices/{id}/state answers the phone's own JSON; an unknown
// device is 404 and a device that reports none is 409, each saying why.
func TestDeviceState(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	task := h.create("open Taobao", "sim:a")
	h.waitStatus(task.ID, lifecycle.Completed)

	var st struct {
		Taps *int `json:"taps"`
	}
	resp := h.do("GET", "/v1/devices/sim:a/state", "", &st)
	if resp.StatusCode != http.StatusOK || st.Taps == nil || *st.Taps != 1 {
		t.Fatalf("state of sim:a = %d %+v", resp.StatusCode, st)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	for _, tc := range []struct {
		path   string
		status int
		code   string
		says   string
	}{
		{"/v1/devices/sim:never/state", 404, "not_found", "no task opened it"},
		{"/v1/devices/pixel7/state", 404, "not_found", `unknown device "pixel7"`},
		{"/v1/devices/sim:nostate/state", 409, "conflict", "does not report its own state"},
	} {
		var e apiError
		resp := h.do("GET", tc.path, "", &e)
		if resp.StatusCode != tc.status || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.says) {
			t.Errorf("GET %s = %d %+v, want %d %s saying %q", tc.path, resp.StatusCode, e, tc.status, tc.code, tc.says)
		}
	}
	var e apiError
	if resp := h.do("POST", "/v1/devices/sim:a/state", "", &e); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST state = %d %+v", resp.StatusCode, e)
	}
}

// events returns a task's recorded events of one type, their data decoded.
func (h *harness) eventsOf(id string, typ lifecycle.EventType) []map[string]any {
	h.t.Helper()
	evs, err := h.store.Events(h.t.Context(), id, 0, 1000)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			h.t.Fatalf("%s data %s: %v", typ, e.Data, err)
		}
		out = append(out, d)
	}
	return out
}

// taps is how many taps reached the phone name (its state).
func (h *harness) taps(name string) int {
	h.t.Helper()
	var st struct {
		Taps int `json:"taps"`
	}
	if resp := h.do("GET", "/v1/devices/"+name+"/state", "", &st); resp.StatusCode != 200 {
		h.t.Fatalf("state of %s: %d", name, resp.StatusCode)
	}
	return st.Taps
}

// post sends a POST with extra headers and decodes the answer.
func (h *harness) post(path, body string, header map[string]string, out any) *http.Response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), "POST", h.ts.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			h.t.Fatalf("POST %s: %d, not JSON: %v", path, resp.StatusCode, err)
		}
	}
	return resp
}

// A task stopped by the gate waits with its pending action, which has not
// touched the phone; approving runs it once and the task completes; a
// second decision is a conflict.
func TestApproveRunsThePendingAction(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, nil)
	task := h.create("open Taobao, tap Pay", "sim:a")
	got := h.waitStatus(task.ID, lifecycle.WaitingApproval)
	p := got.Pending
	if p == nil || p.Kind != lifecycle.PendingApproval || p.Step != 1 || p.Category != "payment" || !strings.Contains(p.Reason, `"OK"`) ||
		p.Call.Name != "tap" || p.Element == nil || p.Element.Label != "OK" || p.Element.Index != 1 || len(p.Scene) == 0 || !p.Expires.After(p.Since) {
		t.Fatalf("GET of a waiting task: pending %+v", p)
	}
	if n := h.taps("sim:a"); n != 0 {
		t.Fatalf("the pending tap reached the phone before approval (%d taps)", n)
	}
	var dec storage.Task
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/approve", `{"note":"yes, buy it"}`, &dec); resp.StatusCode != 200 || dec.ID != task.ID || dec.Status != lifecycle.Running || dec.Pending != nil {
		t.Fatalf("approve = %d %+v", resp.StatusCode, dec)
	}
	done := h.waitStatus(task.ID, lifecycle.Completed)
	if done.Pending != nil {
		t.Errorf("a completed task still has pending %+v", done.Pending)
	}
	if n := h.taps("sim:a"); n != 1 {
		t.Errorf("approved once: %d taps reached the phone, want 1", n)
	}
	decided := h.eventsOf(task.ID, lifecycle.EventApprovalDecided)
	if len(decided) != 1 || decided[0]["approved"] != true || decided[0]["by"] != "api" || decided[0]["note"] != "yes, buy it" {
		t.Errorf("approval_decided events %v", decided)
	}
	var e apiError
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/approve", "", &e); resp.StatusCode != 409 || e.Error.Code != "conflict" || !strings.Contains(e.Error.Message, "completed") {
		t.Errorf("approve a completed task = %d %+v", resp.StatusCode, e)
	}
}

// testApprovalKey is the approval key of harnesses that set one.
const testApprovalKey = "approval-key-of-the-person-0123"

// Deny: the action never runs and the task fails approval_denied; the
// decisions of the approval key's holder (the page) are recorded as by web.
func TestDenyRefusesThePendingAction(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, func(c *Config) { c.ApprovalKey = testApprovalKey })
	task := h.create("open Taobao, tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	var e apiError
	if resp := h.post("/v1/tasks/"+task.ID+"/answer", `{"text":"hi"}`, map[string]string{approvalHeader: testApprovalKey}, &e); resp.StatusCode != 409 || !strings.Contains(e.Error.Message, "waits for no answer") {
		t.Errorf("answer to an approval = %d %+v", resp.StatusCode, e)
	}
	var dec storage.Task
	if resp := h.post("/v1/tasks/"+task.ID+"/deny", "", map[string]string{approvalHeader: testApprovalKey}, &dec); resp.StatusCode != 200 || dec.ID != task.ID {
		t.Fatalf("deny (no body) = %d %+v", resp.StatusCode, dec)
	}
	done := h.waitStatus(task.ID, lifecycle.Failed)
	if done.Cause != lifecycle.CauseApprovalDenied || !strings.Contains(done.Reason, "denied by web") {
		t.Errorf("denied task: cause %q reason %q", done.Cause, done.Reason)
	}
	if n := h.taps("sim:a"); n != 0 {
		t.Errorf("a denied tap reached the phone (%d taps)", n)
	}
	decided := h.eventsOf(task.ID, lifecycle.EventApprovalDecided)
	if len(decided) != 1 || decided[0]["approved"] != false || decided[0]["by"] != "web" {
		t.Errorf("approval_decided events %v", decided)
	}
	if resp := h.post("/v1/tasks/"+task.ID+"/deny", "", map[string]string{approvalHeader: testApprovalKey}, &e); resp.StatusCode != 409 {
		t.Errorf("deny a failed task = %d %+v", resp.StatusCode, e)
	}
}

// A question waits in waiting_user; the answer reaches the planner.
func TestAnswerTheQuestion(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingQuestion
	h := newHarness(t, r, nil)
	task := h.create("log in", "sim:a")
	got := h.waitStatus(task.ID, lifecycle.WaitingUser)
	if p := got.Pending; p == nil || p.Kind != lifecycle.PendingQuestion || p.Question != "What is the code?" {
		t.Fatalf("pending of a question: %+v", got.Pending)
	}
	var e apiError
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/approve", "", &e); resp.StatusCode != 409 || !strings.Contains(e.Error.Message, "waits for no approval") {
		t.Errorf("approve a question = %d %+v", resp.StatusCode, e)
	}
	for _, body := range []string{``, `{}`, `{"text":"   "}`, `{"text":42}`} {
		var e apiError
		if resp := h.do("POST", "/v1/tasks/"+task.ID+"/answer", body, &e); resp.StatusCode != 400 || (body != `` && e.Error.Field != "text") {
			t.Errorf("answer %s = %d %+v, want 400 naming text", body, resp.StatusCode, e)
		}
	}
	var dec storage.Task
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/answer", `{"text":" 493817 "}`, &dec); resp.StatusCode != 200 || dec.Status != lifecycle.Running {
		t.Fatalf("answer = %d %+v", resp.StatusCode, dec)
	}
	done := h.waitStatus(task.ID, lifecycle.Completed)
	if done.Reason != "answered by api: 493817" {
		t.Errorf("the planner got %q", done.Reason)
	}
	answered := h.eventsOf(task.ID, lifecycle.EventQuestionAnswered)
	if len(answered) != 1 || answered[0]["by"] != "api" || answered[0]["text"] != "493817" {
		t.Errorf("question_answered events %v", answered)
	}
}

// Bad bodies are 400 naming the field; unknown tasks 404; nothing pending
// (a task that never waited) 409; of concurrent approvals exactly one wins.
func TestDecisionErrors(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, nil)
	task := h.create("tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	for _, tc := range []struct{ body, field string }{
		{`{"note":5}`, "note"},
		{`{"reason":"x"}`, "reason"},
		{`[1]`, "body"},
		{`{"note":"a"} {}`, "body"},
		{`{"note":"` + strings.Repeat("x", 2001) + `"}`, "note"},
	} {
		for _, verb := range []string{"approve", "deny"} {
			var e apiError
			if resp := h.do("POST", "/v1/tasks/"+task.ID+"/"+verb, tc.body, &e); resp.StatusCode != 400 || e.Error.Field != tc.field {
				t.Errorf("%s %.30s = %d %+v, want 400 naming %s", verb, tc.body, resp.StatusCode, e, tc.field)
			}
		}
	}
	if got := h.waitStatus(task.ID, lifecycle.WaitingApproval); got.Pending == nil {
		t.Fatal("bad bodies changed the pending decision")
	}
	for verb, body := range map[string]string{"approve": `{"note":"x"}`, "deny": ``, "answer": `{"text":"x"}`} {
		var e apiError
		if resp := h.do("POST", "/v1/tasks/nosuchtask/"+verb, body, &e); resp.StatusCode != 404 || e.Error.Code != "not_found" {
			t.Errorf("%s an unknown task = %d %+v", verb, resp.StatusCode, e)
		}
	}
	// Concurrent approvals: exactly one 200.
	codes := make(chan int, 8)
	for range 8 {
		go func() {
			resp := h.do("POST", "/v1/tasks/"+task.ID+"/approve", "", nil)
			codes <- resp.StatusCode
		}()
	}
	ok := 0
	for range 8 {
		switch c := <-codes; c {
		case 200:
			ok++
		case 409:
		default:
			t.Errorf("concurrent approve: %d", c)
		}
	}
	if ok != 1 {
		t.Errorf("%d concurrent approvals won, want 1", ok)
	}
	h.waitStatus(task.ID, lifecycle.Completed)
	if n := h.taps("sim:a"); n != 1 {
		t.Errorf("%d taps after one approval, want 1", n)
	}

	// A task that never waited: 409.
	h2 := newHarness(t, newFakeRunner(1), nil)
	plain := h2.create("open Settings", "sim:b")
	h2.waitStatus(plain.ID, lifecycle.Completed)
	var e apiError
	if resp := h2.do("POST", "/v1/tasks/"+plain.ID+"/deny", `{"note":"no"}`, &e); resp.StatusCode != 409 || e.Error.Code != "conflict" {
		t.Errorf("deny a task that never waited = %d %+v", resp.StatusCode, e)
	}
}

// With a token, deciding needs it like every /v1 endpoint.
func TestDecisionsNeedTheToken(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, func(c *Config) { c.Token = "s3cret-token-0123456789" })
	task := h.create("tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	for _, path := range []string{"/approve", "/deny", "/answer"} {
		resp, err := http.Post(h.ts.URL+"/v1/tasks/"+task.ID+path, "application/json", strings.NewReader(`{"text":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("POST %s without the token = %d", path, resp.StatusCode)
		}
	}
	if got := h.waitStatus(task.ID, lifecycle.WaitingApproval); got.Pending == nil || h.taps("sim:a") != 0 {
		t.Errorf("an unauthorized request decided: %+v", got)
	}
	var e apiError
	if resp := h.do("GET", "/v1/devices/sim:a/state", "", &e); resp.StatusCode != 200 {
		t.Errorf("state with the token = %d %+v", resp.StatusCode, e)
	}
	if resp, err := http.Get(h.ts.URL + "/v1/devices/sim:a/state"); err != nil || resp.StatusCode != 401 {
		t.Errorf("state without the token = %v %v", resp.StatusCode, err)
	}
}

// Cancel while waiting: the task ends cancelled and the pending action
// never runs.
func TestCancelWhileWaiting(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, nil)
	task := h.create("tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	var got storage.Task
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/cancel", "", &got); resp.StatusCode != 200 || got.Status != lifecycle.Cancelled || got.Pending != nil {
		t.Fatalf("cancel a waiting task = %d %+v", resp.StatusCode, got)
	}
	var e apiError
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/approve", "", &e); resp.StatusCode != 409 {
		t.Errorf("approve after cancel = %d %+v", resp.StatusCode, e)
	}
	if n := h.taps("sim:a"); n != 0 {
		t.Errorf("the pending tap of a cancelled task ran (%d taps)", n)
	}
}

// The event stream carries the request (with its pending decision) and the
// decision, with who made it, before the end.
func TestStreamShowsApproval(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, func(c *Config) { c.ApprovalKey = testApprovalKey })
	task := h.create("tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	req, _ := http.NewRequestWithContext(t.Context(), "GET", h.ts.URL+"/v1/tasks/"+task.ID+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := make(chan sseEvent, 100)
	go readSSE(resp.Body, evs)
	var seen []string
	for ev := range evs {
		seen = append(seen, ev.Event)
		switch ev.Event {
		case string(lifecycle.EventApprovalRequested):
			var d struct {
				Data storage.PendingEvent `json:"data"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil || d.Data.Pending.Category != "payment" || d.Data.Pending.Element == nil {
				t.Errorf("approval_requested data %s (%v)", ev.Data, err)
			}
			h.post("/v1/tasks/"+task.ID+"/approve", `{"note":"go"}`, map[string]string{approvalHeader: testApprovalKey}, nil)
		case string(lifecycle.EventApprovalDecided):
			var d struct {
				Data storage.ApprovalDecidedEvent `json:"data"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil || !d.Data.Approved || d.Data.By != "web" || d.Data.Note != "go" {
				t.Errorf("approval_decided data %s (%v)", ev.Data, err)
			}
		}
	}
	joined := strings.Join(seen, " ")
	if !strings.Contains(joined, "approval_requested status") || !strings.Contains(joined, "approval_decided") || !strings.HasSuffix(joined, "end") {
		t.Errorf("stream events: %s", joined)
	}
}

// With an approval key, the bearer token alone decides nothing: an MCP
// client (which holds the token) posting /approve, /deny or /answer with
// no key, a wrong one, or claiming to be the page gets 403, and the pending
// action never runs; only the key's holder decides, and is recorded by the
// server as web whatever the request says it is.
func TestDecisionsNeedTheApprovalKey(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	const token = "bearer-token-of-every-client-0123"
	h := newHarness(t, r, func(c *Config) { c.Token, c.ApprovalKey = token, testApprovalKey })
	task := h.create("tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	for _, hdr := range []map[string]string{
		nil,
		{"X-Phonepilot-Client": "web"},
		{approvalHeader: "wrong-key-wrong-key-wrong-key"},
		{approvalHeader: token},
		{approvalHeader: testApprovalKey + "x"},
	} {
		for _, verb := range []string{"approve", "deny", "answer"} {
			var e apiError
			resp := h.post("/v1/tasks/"+task.ID+"/"+verb, `{"text":"yes"}`, hdr, &e)
			if resp.StatusCode != http.StatusForbidden || e.Error.Code != "approval_key_required" {
				t.Errorf("POST %s with %v = %d %+v, want 403 approval_key_required", verb, hdr, resp.StatusCode, e)
			}
		}
	}
	if got := h.waitStatus(task.ID, lifecycle.WaitingApproval); got.Pending == nil || h.taps("sim:a") != 0 {
		t.Fatalf("a request without the approval key decided: %+v, %d taps", got, h.taps("sim:a"))
	}
	var dec storage.Task
	if resp := h.post("/v1/tasks/"+task.ID+"/approve", "", map[string]string{approvalHeader: testApprovalKey, "X-Phonepilot-Client": "api"}, &dec); resp.StatusCode != 200 {
		t.Fatalf("approve with the key = %d", resp.StatusCode)
	}
	h.waitStatus(task.ID, lifecycle.Completed)
	if d := h.eventsOf(task.ID, lifecycle.EventApprovalDecided); len(d) != 1 || d[0]["by"] != "web" || h.taps("sim:a") != 1 {
		t.Errorf("approval_decided %v, %d taps; want one decision by web and one tap", d, h.taps("sim:a"))
	}
}

// Without an approval key, the token decides as the API: a header claiming
// to be the page changes nothing (by is the server's, not the client's).
func TestDecisionByIsTheServers(t *testing.T) {
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, nil)
	task := h.create("tap Pay", "sim:a")
	h.waitStatus(task.ID, lifecycle.WaitingApproval)
	h.post("/v1/tasks/"+task.ID+"/deny", "", map[string]string{"X-Phonepilot-Client": "web"}, nil)
	h.waitStatus(task.ID, lifecycle.Failed)
	if d := h.eventsOf(task.ID, lifecycle.EventApprovalDecided); len(d) != 1 || d[0]["by"] != "api" {
		t.Errorf("approval_decided %v, want by api", d)
	}
}
