package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/task"
)

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

func TestHealthz(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	var body map[string]string
	if resp := h.do("GET", "/healthz", "", &body); resp.StatusCode != 200 || body["status"] != "ok" {
		t.Errorf("healthz = %d %v", resp.StatusCode, body)
	}
}

func TestCreateTaskRunsToCompletion(t *testing.T) {
	h := newHarness(t, newFakeRunner(3), nil)
	var task storage.Task
	resp := h.do("POST", "/v1/tasks", `{"goal":"open Taobao and search Mac mini","device":"sim:a","planner":"rule","max_steps":12}`, &task)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/v1/tasks/"+task.ID {
		t.Errorf("Location = %q", loc)
	}
	if task.ID == "" || task.Goal != "open Taobao and search Mac mini" || task.Device != "sim:a" || task.Planner != "rule" || task.MaxSteps != 12 {
		t.Errorf("created task = %+v", task)
	}
	done := h.waitStatus(task.ID, lifecycle.Completed)
	if done.Reason != "done" || done.Started == nil || done.Finished == nil || done.Usage.InputTokens != 5 {
		t.Errorf("completed task = %+v", done)
	}
	// GET has the cause (none: it completed) and the final screen; the list
	// leaves the screen out.
	var raw map[string]json.RawMessage
	h.do("GET", "/v1/tasks/"+task.ID, "", &raw)
	var final struct {
		Package string `json:"package"`
	}
	if err := json.Unmarshal(raw["final_scene"], &final); err != nil || final.Package != "com.example" {
		t.Errorf("final_scene = %s (%v)", raw["final_scene"], err)
	}
	var page struct{ Tasks []map[string]json.RawMessage }
	h.do("GET", "/v1/tasks", "", &page)
	if len(page.Tasks) != 1 || page.Tasks[0]["final_scene"] != nil {
		t.Errorf("the list carries final_scene: %v", page.Tasks)
	}
	var steps struct{ Steps []storage.Step }
	if resp := h.do("GET", "/v1/tasks/"+task.ID+"/steps", "", &steps); resp.StatusCode != 200 {
		t.Fatalf("steps: %d", resp.StatusCode)
	}
	if len(steps.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(steps.Steps))
	}
	for i, st := range steps.Steps {
		if st.Number != i+1 || st.Call.Name != "tap" || len(st.Scene) == 0 {
			t.Errorf("step %d = %+v", i+1, st)
		}
		var sc struct {
			Width    int `json:"width"`
			Elements []struct {
				Bounds [4]int `json:"bounds"`
			} `json:"elements"`
		}
		if err := json.Unmarshal(st.Scene, &sc); err != nil || sc.Width != 1080 || len(sc.Elements) != 2 || sc.Elements[1].Bounds != [4]int{100, 200, 500, 300} {
			t.Errorf("step %d scene = %s (%v)", i+1, st.Scene, err)
		}
	}
}

func TestCreateTaskDefaults(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil, func(c *task.Config) {
		c.Snapshot = func(task.Request) json.RawMessage {
			return json.RawMessage(`{"planner":"rule","api_key":"[redacted]"}`)
		}
	})
	var task storage.Task
	h.do("POST", "/v1/tasks", `{"goal":"  打开设置  "}`, &task)
	if task.Goal != "打开设置" || task.Device != "sim" || task.Planner != "rule" || task.MaxSteps != 30 {
		t.Errorf("defaults: %+v", task)
	}
	var got storage.Task
	h.do("GET", "/v1/tasks/"+task.ID, "", &got)
	if !strings.Contains(string(got.Config), `"planner":"rule"`) {
		t.Errorf("task config snapshot = %s", got.Config)
	}
	var page storage.Page
	h.do("GET", "/v1/tasks", "", &page)
	if len(page.Tasks) != 1 || page.Tasks[0].Config != nil {
		t.Errorf("list carries config snapshots: %+v", page.Tasks)
	}
}

func TestCreateTaskBadInput(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	for _, tc := range []struct {
		body, field string
	}{
		{``, "body"},
		{`{"goal":`, "body"},
		{`[1,2]`, ""},
		{`{}`, "goal"},
		{`{"goal":"   "}`, "goal"},
		{`{"goal":42}`, "goal"},
		{`{"goal":"` + strings.Repeat("x", 2001) + `"}`, "goal"},
		{`{"goal":"g","colour":"red"}`, "colour"},
		{`{"goal":"g","device":"toaster"}`, "device"},
		{`{"goal":"g","planner":"magic"}`, "planner"},
		{`{"goal":"g","max_steps":-1}`, "max_steps"},
		{`{"goal":"g","max_steps":201}`, "max_steps"},
		{`{"goal":"g","max_steps":"ten"}`, "max_steps"},
		{`{"goal":"g","device":"sim","labels":{"locale":"zh"}}`, "labels"},
		{`{"goal":"g","device":"any","labels":{"":"x"}}`, "labels"},
		{`{"goal":"g","labels":"zh"}`, "labels"},
	} {
		var e apiError
		resp := h.do("POST", "/v1/tasks", tc.body, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Code != "bad_request" {
			t.Errorf("body %.40q: %d %+v, want 400 bad_request", tc.body, resp.StatusCode, e)
			continue
		}
		if tc.field != "" && e.Error.Field != tc.field {
			t.Errorf("body %.40q: field %q (%s), want %q", tc.body, e.Error.Field, e.Error.Message, tc.field)
		}
		if e.Error.Message == "" {
			t.Errorf("body %.40q: no message", tc.body)
		}
	}
	page, _ := h.store.ListTasks(t.Context(), storage.Query{})
	if len(page.Tasks) != 0 {
		t.Errorf("bad requests created %d tasks", len(page.Tasks))
	}
}

func TestBodyTooLarge(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	var e apiError
	resp := h.do("POST", "/v1/tasks", `{"goal":"`+strings.Repeat("a", 70<<10)+`"}`, &e)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Code != "too_large" || !strings.Contains(e.Error.Message, "65536") {
		t.Errorf("70 KiB body: %d %+v, want 413", resp.StatusCode, e)
	}
}

func TestListTasksPagedAndFiltered(t *testing.T) {
	r := newFakeRunner(0)
	h := newHarness(t, r, nil)
	var ids []string
	for i := range 5 {
		task := h.create(fmt.Sprintf("goal %d", i), "sim")
		ids = append(ids, task.ID)
		h.waitStatus(task.ID, lifecycle.Completed)
	}
	// One failed task, to filter on.
	broken := h.create("broken", "sim:broken")
	h.waitStatus(broken.ID, lifecycle.Failed)

	var got []string
	cursor := ""
	for range 10 {
		var page storage.Page
		resp := h.do("GET", "/v1/tasks?status=completed&limit=2&cursor="+cursor, "", &page)
		if resp.StatusCode != 200 {
			t.Fatalf("list: %d", resp.StatusCode)
		}
		for _, task := range page.Tasks {
			if task.Status != lifecycle.Completed {
				t.Errorf("status filter returned %s", task.Status)
			}
			got = append(got, task.ID)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	slices.Reverse(ids)
	if !slices.Equal(got, ids) {
		t.Errorf("completed tasks paged = %v, want newest first %v", got, ids)
	}
	var failed storage.Page
	h.do("GET", "/v1/tasks?status=failed", "", &failed)
	if len(failed.Tasks) != 1 || !strings.Contains(failed.Tasks[0].Reason, "device offline") {
		t.Errorf("failed tasks = %+v", failed.Tasks)
	}
	for query, field := range map[string]string{"status=asleep": "status", "limit=0": "limit", "limit=501": "limit", "limit=x": "limit", "cursor=abc": "cursor"} {
		var e apiError
		if resp := h.do("GET", "/v1/tasks?"+query, "", &e); resp.StatusCode != 400 || e.Error.Field != field {
			t.Errorf("?%s: %d field %q, want 400 naming %s", query, resp.StatusCode, e.Error.Field, field)
		}
	}
}

func TestNotFound(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/tasks/nope"},
		{"GET", "/v1/tasks/nope/steps"},
		{"GET", "/v1/tasks/nope/events"},
		{"POST", "/v1/tasks/nope/cancel"},
		{"GET", "/v1/nothing-here"},
		{"GET", "/assets/missing.js"},
	} {
		var e apiError
		resp := h.do(c.method, c.path, "", nil)
		if resp.StatusCode != 404 {
			t.Errorf("%s %s = %d, want 404", c.method, c.path, resp.StatusCode)
		}
		if strings.HasPrefix(c.path, "/v1/") {
			h.do(c.method, c.path, "", &e)
			if e.Error.Code != "not_found" {
				t.Errorf("%s %s error = %+v", c.method, c.path, e)
			}
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	for path, allow := range map[string]string{"/v1/tasks": "POST, GET", "/v1/tasks/x/cancel": "POST", "/v1/devices": "GET", "/healthz": "GET"} {
		var e apiError
		resp := h.do("DELETE", path, "", &e)
		if resp.StatusCode != 405 || e.Error.Code != "method_not_allowed" || resp.Header.Get("Allow") != allow {
			t.Errorf("DELETE %s = %d %+v Allow %q, want 405 Allow %q", path, resp.StatusCode, e, resp.Header.Get("Allow"), allow)
		}
	}
}

func TestCancelRunningQueuedAndFinished(t *testing.T) {
	r := newFakeRunner(5)
	r.gate = make(chan struct{})
	h := newHarness(t, r, nil)
	running := h.create("long task", "sim:a")
	<-r.started
	queued := h.create("behind it", "sim:a")
	if got := h.waitStatus(queued.ID, lifecycle.Queued); got.Started != nil {
		t.Errorf("queued task has a start time")
	}

	// Cancel the queued one: it never runs.
	var task storage.Task
	if resp := h.do("POST", "/v1/tasks/"+queued.ID+"/cancel", "", &task); resp.StatusCode != 200 || task.Status != lifecycle.Cancelled {
		t.Fatalf("cancel queued: %d %+v", resp.StatusCode, task)
	}
	// Let one step through, then cancel the running one.
	r.gate <- struct{}{}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if st, _ := h.store.Steps(t.Context(), running.ID); len(st) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("step 1 was not recorded")
		}
	}
	if resp := h.do("POST", "/v1/tasks/"+running.ID+"/cancel", "", &task); resp.StatusCode != 200 || task.Status != lifecycle.Cancelled {
		t.Fatalf("cancel running: %d %+v", resp.StatusCode, task)
	}
	if task.Reason != "cancelled by request" || task.Finished == nil {
		t.Errorf("cancelled task = %+v", task)
	}
	steps, _ := h.store.Steps(t.Context(), running.ID)
	if len(steps) != 1 {
		t.Errorf("cancelled task kept %d steps, want the 1 finished before the cancel", len(steps))
	}
	// Cancelling a finished task is a conflict.
	var e apiError
	if resp := h.do("POST", "/v1/tasks/"+running.ID+"/cancel", "", &e); resp.StatusCode != 409 || e.Error.Code != "conflict" || !strings.Contains(e.Error.Message, "cancelled") {
		t.Errorf("cancel again: %d %+v, want 409", resp.StatusCode, e)
	}
	// A task submitted after both runs next on the device (its queue is
	// first come, first served): had the cancelled one stayed queued, it
	// would have run before.
	after := h.create("after both", "sim:a")
	close(r.gate)
	h.waitStatus(after.ID, lifecycle.Completed)
	r.mu.Lock()
	defer r.mu.Unlock()
	if want := []string{"long task", "after both"}; !slices.Equal(r.order, want) {
		t.Errorf("tasks ran in the order %q, want %q: a task cancelled while queued still ran", r.order, want)
	}
}

func TestCancelCompletedIsConflict(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	task := h.create("quick", "sim")
	h.waitStatus(task.ID, lifecycle.Completed)
	var e apiError
	if resp := h.do("POST", "/v1/tasks/"+task.ID+"/cancel", "", &e); resp.StatusCode != 409 {
		t.Errorf("cancel completed = %d %+v", resp.StatusCode, e)
	}
	if got, _ := h.store.Task(t.Context(), task.ID); got.Status != lifecycle.Completed {
		t.Errorf("a refused cancel changed the task to %s", got.Status)
	}
}

// One task at a time per device, in arrival order; devices run at once.
func TestQueuePerDevice(t *testing.T) {
	r := newFakeRunner(2)
	r.gate = make(chan struct{})
	h := newHarness(t, r, nil)
	a1 := h.create("a1", "sim:a")
	a2 := h.create("a2", "sim:a")
	a3 := h.create("a3", "sim:a")
	b1 := h.create("b1", "sim:b")
	// a1 and b1 start without waiting for each other.
	got := []string{<-r.started, <-r.started}
	sort.Strings(got)
	want := []string{a1.ID, b1.ID}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("first to start: %v, want a1 and b1 %v", got, want)
	}
	if s := h.waitStatus(a2.ID, lifecycle.Queued); s.Status != lifecycle.Queued {
		t.Fatal("a2 not queued")
	}
	var devs struct {
		Devices []deviceStatus `json:"devices"`
	}
	h.do("GET", "/v1/devices", "", &devs)
	for _, d := range devs.Devices {
		if d.Name == "sim:a" && (d.Running != a1.ID || d.Queued != 2) {
			t.Errorf("device sim:a = %+v, want running a1 with 2 queued", d)
		}
	}
	go func() {
		for range 8 {
			r.gate <- struct{}{}
		}
	}()
	for _, task := range []storage.Task{a1, a2, a3, b1} {
		h.waitStatus(task.ID, lifecycle.Completed)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.maxSeen["sim:a"] != 1 || r.maxSeen["sim:b"] != 1 {
		t.Errorf("most tasks at once per device = %v, want 1", r.maxSeen)
	}
	var aOrder []string
	for _, g := range r.order {
		if strings.HasPrefix(g, "a") {
			aOrder = append(aOrder, g)
		}
	}
	if !slices.Equal(aOrder, []string{"a1", "a2", "a3"}) {
		t.Errorf("sim:a ran %v, want arrival order", aOrder)
	}
}

func TestDevices(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	var devs struct {
		Devices []deviceStatus `json:"devices"`
	}
	if resp := h.do("GET", "/v1/devices", "", &devs); resp.StatusCode != 200 || len(devs.Devices) != 2 || devs.Devices[0].Name != "sim" || devs.Devices[0].Kind != "sim" {
		t.Errorf("devices = %d %+v", resp.StatusCode, devs)
	}
}

// The route table, walked: every route marked auth refuses a request with
// no token, a wrong one, another scheme, the token with more or less, and
// (but for the event stream) the token in the query, with 401 before its
// handler runs: no task is created, cancelled or decided. With the token,
// no route answers 401; the open routes answer without one.
func TestTokenRequiredOnEveryRoute(t *testing.T) {
	const token = "s3cret-token-0123456789"
	r := newFakeRunner(1)
	r.ask = lifecycle.PendingApproval
	h := newHarness(t, r, func(c *Config) { c.Token = token })
	waiting := h.create("tap Pay", "sim:a")
	h.waitStatus(waiting.ID, lifecycle.WaitingApproval)
	bodies := map[string]string{
		"/v1/tasks":              `{"goal":"open Settings","device":"sim"}`,
		"/v1/flows/run":          `{"flow":"version: 1\nname: f\ngoal: open Settings\nsteps:\n  - intent: open Settings\n    tool: launch_app\n    args: {app: Settings}\n"}`,
		"/v1/tasks/{id}/approve": `{"note":"yes"}`,
		"/v1/tasks/{id}/deny":    `{"note":"no"}`,
		"/v1/tasks/{id}/answer":  `{"text":"yes"}`,
		"/v1/tasks/{id}/cancel":  ``,
		"/v1/devices/{id}/state": ``,
		"/v1/tasks/{id}/events":  ``,
	}
	send := func(rt route, auth, query string) (int, string) {
		t.Helper()
		path := routePath(rt, waiting.ID)
		if rt.pattern == "/v1/devices/{id}/state" {
			path = strings.ReplaceAll(rt.pattern, "{id}", "sim:a")
		}
		hdr := map[string]string{}
		if auth != "" {
			hdr["Authorization"] = auth
		}
		body := bodies[rt.pattern]
		if body != "" {
			hdr["Content-Type"] = "application/json"
		}
		return h.doorReq(rt.method, path+query, body, hdr)
	}
	authed := 0
	for _, rt := range h.srv.routeTable() {
		if !rt.auth {
			if status, _ := send(rt, "", ""); status != 200 {
				t.Errorf("%s %s without a token = %d, want 200 (an open route)", rt.method, rt.pattern, status)
			}
			continue
		}
		authed++
		for _, auth := range []string{"", "Bearer", "Bearer wrong-token-wrong-token", "Basic " + token, "Bearer " + token + "x", "Bearer " + token[:len(token)-1], "Token " + token} {
			if status, code := send(rt, auth, ""); status != 401 || code != "unauthorized" {
				t.Errorf("%s %s with Authorization %q = %d %s, want 401", rt.method, rt.pattern, auth, status, code)
			}
		}
		if rt.pattern != streamPattern {
			if status, _ := send(rt, "", "?access_token="+token); status != 401 {
				t.Errorf("%s %s with ?access_token= = %d, want 401 (only the event stream takes it)", rt.method, rt.pattern, status)
			}
		}
	}
	if authed < 12 {
		t.Fatalf("only %d routes need the token; the table has lost its auth marks", authed)
	}
	page, err := h.store.ListTasks(t.Context(), storage.Query{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("requests without the token created tasks: %d (%v)", len(page.Tasks), err)
	}
	if got := h.waitStatus(waiting.ID, lifecycle.WaitingApproval); got.Pending == nil || h.taps("sim:a") != 0 {
		t.Errorf("a request without the token decided: %+v", got)
	}
	// With the token every route is reached (the stream ends with the task,
	// so it is sent last, after the cancel).
	for _, rt := range h.srv.routeTable() {
		if rt.pattern == streamPattern {
			continue
		}
		if status, code := send(rt, "Bearer "+token, ""); status == 401 || status == 400 {
			t.Errorf("%s %s with the token = %d %s", rt.method, rt.pattern, status, code)
		}
	}
	if status, _ := send(route{method: "GET", pattern: streamPattern}, "", "?access_token="+token); status != 200 {
		t.Errorf("the event stream with ?access_token= = %d, want 200", status)
	}
}

// api.New refuses a token or an approval key that CheckBind would refuse,
// and an approval key equal to the token.
func TestNewRefusesWeakCredentials(t *testing.T) {
	for _, c := range []Config{
		{Token: "s3cret-token"},
		{Token: "0123456789abcde"},
		{Token: "0123456789abcdef 0"},
		{ApprovalKey: "short"},
		{Token: "0123456789abcdef-same", ApprovalKey: "0123456789abcdef-same"},
	} {
		cfg := Defaults()
		cfg.Token, cfg.ApprovalKey = c.Token, c.ApprovalKey
		if err := cfg.Validate(); err == nil {
			t.Errorf("Validate accepted token %q approval key %q", c.Token, c.ApprovalKey)
		}
	}
	cfg := Defaults()
	cfg.Token, cfg.ApprovalKey = "0123456789abcdef", "fedcba9876543210"
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate refused 16-character credentials: %v", err)
	}
}

func TestCheckBind(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"[::1]:8080", "", true},
		{"127.0.0.2:0", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.168.1.5:8080", "", false},
		{"[::]:8080", "", false},
		{"0.0.0.0:8080", "0123456789abcdef", true},
		{"nonsense", "", false},
	} {
		err := CheckBind(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckBind(%q, %q) = %v, want ok=%v", c.addr, c.token, err, c.ok)
		}
	}
}

func TestEventStreamLive(t *testing.T) {
	r := newFakeRunner(3)
	r.gate = make(chan struct{})
	h := newHarness(t, r, nil)
	task := h.create("stream me", "sim")
	<-r.started

	resp, err := http.Get(h.ts.URL + "/v1/tasks/" + task.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := make(chan sseEvent, 100)
	go readSSE(resp.Body, events)
	next := func(want string) sseEvent {
		t.Helper()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("stream ended waiting for %s", want)
				}
				if ev.Event == want {
					return ev
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no %s event", want)
			}
		}
	}
	// Steps arrive live: each one only after the runner was let through.
	for n := 1; n <= 3; n++ {
		r.gate <- struct{}{}
		ev := next("step_finished")
		var st storage.Step
		if err := json.Unmarshal([]byte(ev.Data), &st); err != nil {
			t.Fatal(err)
		}
		if st.Number != n || st.Call.Name != "tap" || len(st.Scene) == 0 {
			t.Errorf("live step %d = %+v", n, st)
		}
	}
	ev := next("status")
	if !strings.Contains(ev.Data, `"completed"`) {
		t.Errorf("final status event %s", ev.Data)
	}
	end := next("end")
	if !strings.Contains(end.Data, "completed") {
		t.Errorf("end = %s", end.Data)
	}
	if _, ok := <-events; ok {
		t.Error("stream went on after end")
	}

	// Resume: Last-Event-ID gets only what came after it.
	all, _ := h.store.Events(t.Context(), task.ID, 0, 0)
	req, _ := http.NewRequest("GET", h.ts.URL+"/v1/tasks/"+task.ID+"/events", nil)
	req.Header.Set("Last-Event-ID", fmt.Sprint(all[len(all)-3].Seq))
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	rest := make(chan sseEvent, 100)
	go readSSE(resp2.Body, rest)
	var ids []string
	for ev := range rest {
		if ev.ID != "" {
			ids = append(ids, ev.ID)
		}
	}
	want := []string{fmt.Sprint(all[len(all)-2].Seq), fmt.Sprint(all[len(all)-1].Seq)}
	if !slices.Equal(ids, want) {
		t.Errorf("resumed stream ids %v, want %v", ids, want)
	}
	var e apiError
	if resp := h.do("GET", "/v1/tasks/"+task.ID+"/events?after=-4", "", &e); resp.StatusCode != 400 || e.Error.Field != "after" {
		t.Errorf("after=-4: %d %+v", resp.StatusCode, e)
	}
}

// On start, a task a crash left running is interrupted and queued tasks run.
func TestStartRecovers(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	store := h.store
	ctx := t.Context()
	crashed, _ := store.CreateTask(ctx, storage.Task{Goal: "was running", Device: "sim", Planner: "rule"})
	store.UpdateStatus(ctx, crashed.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: time.Now()})
	waiting, _ := store.CreateTask(ctx, storage.Task{Goal: "was queued", Device: "sim:a", Planner: "rule"})

	h2 := newHarnessOn(t, store, newFakeRunner(1), nil)
	got := h2.waitStatus(crashed.ID, lifecycle.Interrupted)
	if !strings.Contains(got.Reason, "stopped") {
		t.Errorf("interrupted reason %q", got.Reason)
	}
	h2.waitStatus(waiting.ID, lifecycle.Completed)
}

// Closing the server interrupts running tasks.
func TestCloseInterruptsRunning(t *testing.T) {
	r := newFakeRunner(3)
	r.gate = make(chan struct{})
	h := newHarness(t, r, nil)
	task := h.create("long", "sim")
	<-r.started
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := h.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := h.store.Task(t.Context(), task.ID)
	if got.Status != lifecycle.Interrupted {
		t.Errorf("after Close the task is %s, want interrupted", got.Status)
	}
	var e apiError
	if resp := h.do("POST", "/v1/tasks", `{"goal":"late"}`, &e); resp.StatusCode != 409 {
		t.Errorf("create after Close = %d %+v", resp.StatusCode, e)
	}
}

// The OpenAPI document lists exactly the routes the server has.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if resp := h.do("GET", "/v1/openapi.json", "", &doc); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, rt := range h.srv.routeTable() {
		served = append(served, rt.method+" "+rt.pattern)
	}
	sort.Strings(documented)
	sort.Strings(served)
	if !slices.Equal(documented, served) {
		t.Errorf("OpenAPI documents\n%v\nserver has\n%v", documented, served)
	}
}

func TestPageServed(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	for path, want := range map[string]string{"/": "<html", "/tasks/abc": "<html", "/assets/app.js": "EventSource", "/assets/style.css": "{"} {
		resp, err := http.Get(h.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
}

// With a database shared by several servers, a server starting up leaves
// the tasks of live processes alone and takes over those of dead ones.
func TestStartLeavesLiveOwnersAlone(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	ctx := t.Context()
	mk := func(goal string, status lifecycle.Status, owner string) storage.Task {
		task, err := h.store.CreateTask(ctx, storage.Task{Goal: goal, Device: "sim:" + goal, Planner: "rule", Status: status, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	liveRunning := mk("lr", lifecycle.Running, "hostb:11")
	liveQueued := mk("lq", lifecycle.Queued, "hostb:11")
	deadRunning := mk("dr", lifecycle.Running, "hosta:99")
	deadQueued := mk("dq", lifecycle.Queued, "hosta:99")

	var asked []string
	h2 := newHarnessOn(t, h.store, newFakeRunner(1), nil, func(c *task.Config) {
		c.Owner = "hosta:100"
		c.OwnerGone = func(owner string) bool {
			asked = append(asked, owner)
			return owner == "hosta:99"
		}
	})
	h2.waitStatus(deadRunning.ID, lifecycle.Interrupted)
	done := h2.waitStatus(deadQueued.ID, lifecycle.Completed)
	if done.Owner != "hosta:100" {
		t.Errorf("taken-over task owner %q", done.Owner)
	}
	// What the start queued runs before a task submitted after it on the
	// same device: once this one has run, the live process's queued task
	// would have run too, had the start taken it.
	h2.waitStatus(h2.create("after the start", liveQueued.Device).ID, lifecycle.Completed)
	for _, task := range []storage.Task{liveRunning, liveQueued} {
		if got, _ := h.store.Task(ctx, task.ID); got.Status != task.Status {
			t.Errorf("a live process's %s task became %s", task.Status, got.Status)
		}
	}
	sort.Strings(asked)
	if !slices.Equal(slices.Compact(asked), []string{"hosta:99", "hostb:11"}) {
		t.Errorf("asked about owners %v", asked)
	}
	// Cancelling the other process's running task is a conflict with a reason.
	var e apiError
	if resp := h2.do("POST", "/v1/tasks/"+liveRunning.ID+"/cancel", "", &e); resp.StatusCode != 409 || !strings.Contains(e.Error.Message, "another phonepilot process") {
		t.Errorf("cancel a task running elsewhere: %d %+v", resp.StatusCode, e)
	}
}

// A task the device cannot open fails with cause device_gone, and GET says
// so in its own field.
func TestCauseReturned(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	task := h.create("open Taobao", "sim:broken")
	got := h.waitStatus(task.ID, lifecycle.Failed)
	if got.Cause != lifecycle.CauseDeviceGone || !strings.Contains(got.Reason, "device offline") {
		t.Errorf("failed task: cause %q reason %q", got.Cause, got.Reason)
	}
	var raw map[string]any
	h.do("GET", "/v1/tasks/"+task.ID, "", &raw)
	if raw["cause"] != string(lifecycle.CauseDeviceGone) {
		t.Errorf("GET cause = %v", raw["cause"])
	}
}

// GET /v1/lifecycle lists the words of lifecycle, and the OpenAPI document's
// enums are the same lists: nobody has to spell them.
func TestLifecycleVocabulary(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	var doc struct {
		Statuses     []string          `json:"statuses"`
		Terminal     []string          `json:"terminal"`
		Causes       []string          `json:"causes"`
		EventTypes   []string          `json:"event_types"`
		StepStatuses []string          `json:"step_statuses"`
		PendingKinds []string          `json:"pending_kinds"`
		StreamEnd    string            `json:"stream_end"`
		Tones        map[string]string `json:"tones"`
	}
	if resp := h.do("GET", "/v1/lifecycle", "", &doc); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	// A task waiting for a person looks different from one that runs.
	if w := doc.Tones["waiting_approval"]; w == "" || w == doc.Tones["running"] || doc.Tones["waiting_user"] != w {
		t.Errorf("tones = %v: waiting tasks need their own tone", doc.Tones)
	}
	if doc.StreamEnd != "end" || doc.Tones["failed"] != "bad" || doc.Tones["completed"] != "ok" {
		t.Errorf("stream_end = %q, tones = %v", doc.StreamEnd, doc.Tones)
	}
	strs := func(v any) []string {
		b, _ := json.Marshal(v)
		var out []string
		json.Unmarshal(b, &out)
		return out
	}
	if !slices.Equal(doc.Statuses, strs(lifecycle.Statuses)) || !slices.Equal(doc.Causes, strs(lifecycle.Causes)) ||
		!slices.Equal(doc.EventTypes, strs(lifecycle.EventTypes)) || !slices.Equal(doc.StepStatuses, strs(lifecycle.StepStatuses)) ||
		!slices.Equal(doc.PendingKinds, strs(lifecycle.PendingKinds)) {
		t.Errorf("GET /v1/lifecycle = %+v", doc)
	}
	if !slices.Equal(doc.Terminal, []string{"completed", "failed", "cancelled", "interrupted"}) {
		t.Errorf("terminal = %v", doc.Terminal)
	}
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `json:"enum"`
			} `json:"schemas"`
		} `json:"components"`
	}
	h.do("GET", "/v1/openapi.json", "", &spec)
	sc := spec.Components.Schemas
	if !slices.Equal(sc["Status"].Enum, doc.Statuses) || !slices.Equal(sc["Cause"].Enum, append([]string{""}, doc.Causes...)) ||
		!slices.Equal(sc["EventType"].Enum, doc.EventTypes) || !slices.Equal(sc["StepStatus"].Enum, doc.StepStatuses) {
		t.Errorf("the OpenAPI enums differ from lifecycle's lists: %+v", sc)
	}
}

// A server's default max_steps and the most a task may ask for are two
// settings: with the default at 30 a task may still ask for 150 (it got
// "must be 1..30"), never more than the ceiling, and a ceiling below the
// default is refused.
func TestMaxStepsDefaultAndCeilingAreSeparate(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), func(c *Config) { c.MaxSteps, c.MaxStepsCeiling = 30, 200 })
	var got storage.Task
	h.do("POST", "/v1/tasks", `{"goal":"open Settings"}`, &got)
	if got.MaxSteps != 30 {
		t.Errorf("no max_steps asked: %d, want the default 30", got.MaxSteps)
	}
	got = storage.Task{}
	if resp := h.do("POST", "/v1/tasks", `{"goal":"open Settings","max_steps":150}`, &got); resp.StatusCode != http.StatusAccepted || got.MaxSteps != 150 {
		t.Errorf("max_steps 150 under a ceiling of 200: %d, %d; want 202 and 150", resp.StatusCode, got.MaxSteps)
	}
	var e apiError
	if resp := h.do("POST", "/v1/tasks", `{"goal":"open Settings","max_steps":201}`, &e); resp.StatusCode != http.StatusBadRequest || e.Error.Field != "max_steps" || !strings.Contains(e.Error.Message, "1..200") {
		t.Errorf("max_steps 201: %d %+v; want 400 on max_steps, 1..200", resp.StatusCode, e)
	}
	c := Defaults()
	c.MaxSteps, c.MaxStepsCeiling = 50, 40
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ceiling") {
		t.Errorf("ceiling 40 below default 50: %v; want refused", err)
	}
}
