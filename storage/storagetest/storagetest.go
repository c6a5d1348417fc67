// Package storagetest is the conformance suite every storage.Store passes
// (storage/sqlite, storage/postgres): call Run from the backend's tests with
// a function that opens a fresh, empty store.
package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/tools"
)

// Run runs the suite. open must return a new, empty Store each call; the
// suite closes it.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"CreateAndGetTask", testCreateAndGet},
		{"TaskNotFound", testTaskNotFound},
		{"DuplicateTaskID", testDuplicateID},
		{"ListTasksPagedNewestFirst", testListPaged},
		{"ListTasksStatusFilter", testListFilter},
		{"ListTasksBadQuery", testListBadQuery},
		{"StatusLifecycle", testStatusLifecycle},
		{"StatusConflict", testStatusConflict},
		{"ConcurrentStatusChangesOneWins", testConcurrentStatus},
		{"MarkInterrupted", testMarkInterrupted},
		{"CauseAndFinalScene", testCauseAndFinalScene},
		{"ConfigReplacedAtTheEnd", testConfigReplacedAtTheEnd},
		{"WaitingStatusesStoredAndInterrupted", testWaitingStatuses},
		{"PendingSetWhileWaitingClearedAfter", testPending},
		{"FindTasksByPrefix", testFindTasks},
		{"StepsRoundTrip", testStepsRoundTrip},
		{"StepReplacedBySameNumber", testStepReplace},
		{"StepsOfMissingTask", testStepsMissingTask},
		{"EventsSequenced", testEventsSequenced},
		{"ConcurrentEventsNoGaps", testConcurrentEvents},
		{"ConcurrentTasksWriting", testConcurrentTasks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

var base = time.Date(2026, 11, 30, 12, 0, 0, 123456000, time.UTC)

func ctx(t *testing.T) context.Context { return t.Context() }

func mustCreate(t *testing.T, s storage.Store, task storage.Task) storage.Task {
	t.Helper()
	got, err := s.CreateTask(ctx(t), task)
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	return got
}

func sameJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: stored JSON does not parse: %v (%s)", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: bad want JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func testCreateAndGet(t *testing.T, s storage.Store) {
	cfg, err := storage.RedactConfig(map[string]any{
		"planner": "rule",
		"llm":     map[string]any{"api_key": "sk-secret-123", "model": "m"},
	})
	if err != nil {
		t.Fatal(err)
	}
	created := mustCreate(t, s, storage.Task{
		Goal: "open Taobao and search Mac mini", Device: "sim:a", Planner: "rule", MaxSteps: 20,
		Created: base, Config: cfg,
	})
	if created.ID == "" {
		t.Fatal("CreateTask gave no ID")
	}
	if created.Status != lifecycle.Queued {
		t.Errorf("new task status = %q, want queued", created.Status)
	}
	got, err := s.Task(ctx(t), created.ID)
	if err != nil {
		t.Fatalf("Task: %v", err)
	}
	if got.Goal != "open Taobao and search Mac mini" || got.Device != "sim:a" || got.Planner != "rule" || got.MaxSteps != 20 {
		t.Errorf("task fields not kept: %+v", got)
	}
	if !got.Created.Equal(base) {
		t.Errorf("created = %v, want %v", got.Created, base)
	}
	if got.Started != nil || got.Finished != nil {
		t.Errorf("a queued task has started/finished times: %v %v", got.Started, got.Finished)
	}
	sameJSON(t, "config", got.Config, json.RawMessage(`{"planner":"rule","llm":{"api_key":"[redacted]","model":"m"}}`))

	// Unicode goals survive.
	zh := mustCreate(t, s, storage.Task{Goal: "打开淘宝搜索Mac mini 🍎", Device: "sim", Planner: "rule"})
	got, err = s.Task(ctx(t), zh.ID)
	if err != nil || got.Goal != "打开淘宝搜索Mac mini 🍎" {
		t.Errorf("unicode goal = %q, %v", got.Goal, err)
	}
	if got.Created.IsZero() {
		t.Error("zero Created was not set to now")
	}
}

func testTaskNotFound(t *testing.T, s storage.Store) {
	_, err := s.Task(ctx(t), "nope")
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Task(missing) error = %v, want ErrNotFound", err)
	}
	_, err = s.UpdateStatus(ctx(t), "nope", storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Cancelled, At: base})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("UpdateStatus(missing) error = %v, want ErrNotFound", err)
	}
}

func testDuplicateID(t *testing.T, s storage.Store) {
	mustCreate(t, s, storage.Task{ID: "same", Goal: "a", Device: "sim", Planner: "rule"})
	if _, err := s.CreateTask(ctx(t), storage.Task{ID: "same", Goal: "b", Device: "sim", Planner: "rule"}); err == nil {
		t.Fatal("a second task with the same ID was accepted")
	}
	got, _ := s.Task(ctx(t), "same")
	if got.Goal != "a" {
		t.Errorf("first task overwritten: goal %q", got.Goal)
	}
}

func testListPaged(t *testing.T, s storage.Store) {
	var want []string
	for i := range 7 {
		task := mustCreate(t, s, storage.Task{Goal: fmt.Sprintf("goal %d", i), Device: "sim", Planner: "rule", Created: base.Add(time.Duration(i) * time.Second)})
		want = append([]string{task.ID}, want...) // newest first
	}
	var got []string
	cursor := ""
	pages := 0
	for {
		p, err := s.ListTasks(ctx(t), storage.Query{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatalf("ListTasks: %v", err)
		}
		pages++
		if len(p.Tasks) > 3 {
			t.Fatalf("page of %d tasks with limit 3", len(p.Tasks))
		}
		for _, task := range p.Tasks {
			got = append(got, task.ID)
		}
		if p.Next == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		cursor = p.Next
	}
	if pages != 3 {
		t.Errorf("7 tasks in pages of 3 took %d pages, want 3", pages)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paged IDs = %v, want newest first %v", got, want)
	}
	all, err := s.ListTasks(ctx(t), storage.Query{})
	if err != nil || len(all.Tasks) != 7 || all.Next != "" {
		t.Errorf("default page: %d tasks, next %q, err %v", len(all.Tasks), all.Next, err)
	}
}

func testListFilter(t *testing.T, s storage.Store) {
	a := mustCreate(t, s, storage.Task{Goal: "a", Device: "sim", Planner: "rule"})
	b := mustCreate(t, s, storage.Task{Goal: "b", Device: "sim", Planner: "rule"})
	mustCreate(t, s, storage.Task{Goal: "c", Device: "sim", Planner: "rule"})
	for _, id := range []string{a.ID, b.ID} {
		if _, err := s.UpdateStatus(ctx(t), id, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: base}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.ListTasks(ctx(t), storage.Query{Status: lifecycle.Running})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range p.Tasks {
		ids = append(ids, task.ID)
		if task.Status != lifecycle.Running {
			t.Errorf("filter running returned a %s task", task.Status)
		}
	}
	if !reflect.DeepEqual(ids, []string{b.ID, a.ID}) {
		t.Errorf("running tasks = %v, want %v", ids, []string{b.ID, a.ID})
	}
	p, err = s.ListTasks(ctx(t), storage.Query{Status: lifecycle.Failed})
	if err != nil || len(p.Tasks) != 0 || p.Tasks == nil {
		t.Errorf("no failed tasks: got %v (nil=%v), %v; want an empty, non-nil list", p.Tasks, p.Tasks == nil, err)
	}
}

func testListBadQuery(t *testing.T, s storage.Store) {
	for _, q := range []storage.Query{
		{Status: "sleeping"},
		{Limit: -1},
		{Limit: storage.MaxPage + 1},
		{Cursor: "not-a-cursor"},
	} {
		if _, err := s.ListTasks(ctx(t), q); err == nil {
			t.Errorf("ListTasks(%+v) accepted a bad query", q)
		}
	}
}

func testStatusLifecycle(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule", Created: base})
	start := base.Add(time.Second)
	run, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: start})
	if err != nil {
		t.Fatalf("queued→running: %v", err)
	}
	if run.Status != lifecycle.Running || run.Started == nil || !run.Started.Equal(start) || run.Finished != nil {
		t.Errorf("running task: status %s started %v finished %v", run.Status, run.Started, run.Finished)
	}
	end := start.Add(3 * time.Second)
	usage := plan.Usage{InputTokens: 1200, CacheReadTokens: 900, CacheWriteTokens: 150, OutputTokens: 80, Latency: 2 * time.Second}
	done, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, Reason: "search results shown", At: end, Usage: usage})
	if err != nil {
		t.Fatalf("running→completed: %v", err)
	}
	got, _ := s.Task(ctx(t), task.ID)
	for _, tk := range []storage.Task{done, got} {
		if tk.Status != lifecycle.Completed || tk.Reason != "search results shown" {
			t.Errorf("completed task: %s %q", tk.Status, tk.Reason)
		}
		if tk.Finished == nil || !tk.Finished.Equal(end) || tk.Started == nil || !tk.Started.Equal(start) {
			t.Errorf("times: started %v finished %v, want %v %v", tk.Started, tk.Finished, start, end)
		}
		if tk.Usage != usage {
			t.Errorf("usage = %+v, want %+v", tk.Usage, usage)
		}
	}
}

func testStatusConflict(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	if _, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued, lifecycle.Running}, To: lifecycle.Failed, Reason: "x", At: base}); err != nil {
		t.Fatal(err)
	}
	_, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued, lifecycle.Running}, To: lifecycle.Cancelled, At: base})
	var ce *storage.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("cancelling a failed task: error %v, want *ConflictError", err)
	}
	if ce.Current != lifecycle.Failed || ce.To != lifecycle.Cancelled {
		t.Errorf("conflict = %+v", ce)
	}
	got, _ := s.Task(ctx(t), task.ID)
	if got.Status != lifecycle.Failed || got.Reason != "x" {
		t.Errorf("refused change still changed the task: %s %q", got.Status, got.Reason)
	}
	if _, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Failed}, To: "sleeping", At: base}); err == nil {
		t.Error("unknown target status accepted")
	}
}

func testConcurrentStatus(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	var wg sync.WaitGroup
	wins := make(chan lifecycle.Status, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := lifecycle.Cancelled
			if i%2 == 0 {
				to = lifecycle.Running
			}
			if _, err := s.UpdateStatus(context.Background(), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: to, At: base}); err == nil {
				wins <- to
			} else if !errors.As(err, new(*storage.ConflictError)) {
				t.Errorf("concurrent change: %v", err)
			}
		}()
	}
	wg.Wait()
	close(wins)
	var won []lifecycle.Status
	for w := range wins {
		won = append(won, w)
	}
	if len(won) != 1 {
		t.Fatalf("%d concurrent changes out of queued succeeded (%v), want exactly 1", len(won), won)
	}
	got, _ := s.Task(ctx(t), task.ID)
	if got.Status != won[0] {
		t.Errorf("status %s, winner %s", got.Status, won[0])
	}
}

func testMarkInterrupted(t *testing.T, s storage.Store) {
	// Three tasks of a dead process, one of a live one (another server
	// sharing the database), one queued, one done.
	var dead []string
	for i := range 3 {
		task := mustCreate(t, s, storage.Task{Goal: fmt.Sprint(i), Device: "sim", Planner: "rule"})
		got, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: base, Owner: "host-a:100"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Owner != "host-a:100" {
			t.Errorf("owner = %q after starting", got.Owner)
		}
		dead = append(dead, task.ID)
	}
	// A change conditional on an owner that is no longer the task's is refused.
	_, err := s.UpdateStatus(ctx(t), dead[0], storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, At: base, IfOwner: "host-z:1"})
	if !errors.As(err, new(*storage.ConflictError)) {
		t.Errorf("change for another owner: %v", err)
	}
	if got, _ := s.Task(ctx(t), dead[0]); got.Status != lifecycle.Running {
		t.Errorf("a change for another owner made the task %s", got.Status)
	}
	legacy := mustCreate(t, s, storage.Task{Goal: "no owner", Device: "sim", Planner: "rule", Status: lifecycle.Running})
	dead = append(dead, legacy.ID)
	live := mustCreate(t, s, storage.Task{Goal: "elsewhere", Device: "sim", Planner: "rule", Status: lifecycle.Running, Owner: "host-b:7"})
	if got, _ := s.Task(ctx(t), live.ID); got.Owner != "host-b:7" {
		t.Errorf("owner given at creation = %q", got.Owner)
	}
	queued := mustCreate(t, s, storage.Task{Goal: "q", Device: "sim", Planner: "rule", Owner: "host-a:100"})
	done := mustCreate(t, s, storage.Task{Goal: "d", Device: "sim", Planner: "rule", Status: lifecycle.Completed, Owner: "host-a:100"})
	at := base.Add(time.Hour)
	ids, err := s.MarkInterrupted(ctx(t), []string{"host-a:100", ""}, "phonepilot stopped while the task ran", at)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	sort.Strings(dead)
	if !reflect.DeepEqual(ids, dead) {
		t.Errorf("interrupted %v, want %v", ids, dead)
	}
	for _, id := range dead {
		got, _ := s.Task(ctx(t), id)
		if got.Status != lifecycle.Interrupted || got.Cause != lifecycle.CauseInterrupted || got.Reason != "phonepilot stopped while the task ran" || got.Finished == nil || !got.Finished.Equal(at) {
			t.Errorf("task %s after MarkInterrupted: %s (%s) %q %v", id, got.Status, got.Cause, got.Reason, got.Finished)
		}
	}
	for id, want := range map[string]lifecycle.Status{live.ID: lifecycle.Running, queued.ID: lifecycle.Queued, done.ID: lifecycle.Completed} {
		if got, _ := s.Task(ctx(t), id); got.Status != want {
			t.Errorf("MarkInterrupted changed a %s task to %s", want, got.Status)
		}
	}
	again, err := s.MarkInterrupted(ctx(t), []string{"host-a:100", ""}, "again", at)
	if err != nil || len(again) != 0 {
		t.Errorf("second MarkInterrupted changed %v (%v)", again, err)
	}
	none, err := s.MarkInterrupted(ctx(t), nil, "nobody", at)
	if err != nil || len(none) != 0 {
		t.Errorf("MarkInterrupted without owners changed %v (%v)", none, err)
	}
}

const sceneJSON = `{"w":1080,"h":2400,"pkg":"com.taobao.taobao","els":[{"i":0,"cls":"FrameLayout","b":[0,0,1080,2400]},{"i":3,"cls":"EditText","text":"搜索","b":[40,120,900,220],"edit":true}]}`

func sampleStep(taskID string, n int) storage.Step {
	return storage.Step{
		TaskID: taskID,
		StepRecord: plan.StepRecord{
			Number: n,
			Intent: "type the query",
			Call:   tools.NewCall(tools.TypeText, map[string]any{"element": 3, "text": "Mac mini", "submit": true}),
			Attempts: []plan.Attempt{
				{Number: 1, Result: "no visible change", Changed: false, Duration: 300 * time.Millisecond},
				{Number: 2, Result: "typed 8 characters into [3]", Changed: true, Duration: 250 * time.Millisecond},
			},
			Status:   lifecycle.StepSucceeded,
			Before:   "fp-before",
			After:    "fp-after",
			Changed:  true,
			Started:  base.Add(time.Duration(n) * time.Second),
			Duration: 900 * time.Millisecond,
			Usage:    plan.Usage{InputTokens: 10, CacheReadTokens: 6, CacheWriteTokens: 3, OutputTokens: 2, Latency: time.Second, Estimated: true},
		},
		Scene: json.RawMessage(sceneJSON),
	}
}

func testStepsRoundTrip(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	empty, err := s.Steps(ctx(t), task.ID)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("steps of a new task = %v (nil=%v), %v; want empty non-nil", empty, empty == nil, err)
	}
	// Saved out of order; read back in order.
	for _, n := range []int{2, 1, 3} {
		if err := s.SaveStep(ctx(t), sampleStep(task.ID, n)); err != nil {
			t.Fatalf("SaveStep %d: %v", n, err)
		}
	}
	failed := sampleStep(task.ID, 4)
	failed.Status, failed.Reason, failed.Scene, failed.Attempts = lifecycle.StepFailed, "element 57 not on screen", nil, nil
	if err := s.SaveStep(ctx(t), failed); err != nil {
		t.Fatal(err)
	}
	steps, err := s.Steps(ctx(t), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 4", len(steps))
	}
	for i, st := range steps[:3] {
		want := sampleStep(task.ID, i+1)
		if st.Number != i+1 {
			t.Errorf("step %d has number %d", i+1, st.Number)
		}
		sameJSON(t, "scene", st.Scene, want.Scene)
		sameJSON(t, "call args", st.Call.Args, want.Call.Args)
		gotRec, wantRec := st.StepRecord, want.StepRecord
		gotRec.Call.Args, wantRec.Call.Args = nil, nil
		if !reflect.DeepEqual(gotRec, wantRec) {
			t.Errorf("step %d = %+v\nwant %+v", i+1, gotRec, wantRec)
		}
		if st.TaskID != task.ID {
			t.Errorf("step task = %q", st.TaskID)
		}
	}
	if steps[3].Status != lifecycle.StepFailed || steps[3].Reason != "element 57 not on screen" || steps[3].Scene != nil || len(steps[3].Attempts) != 0 {
		t.Errorf("failed step = %+v", steps[3])
	}
	one, err := s.Step(ctx(t), task.ID, 2)
	if err != nil || one.Number != 2 || one.Intent != "type the query" {
		t.Errorf("Step(2) = %+v, %v", one, err)
	}
	if _, err := s.Step(ctx(t), task.ID, 9); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Step(9) error = %v, want ErrNotFound", err)
	}
	bad := sampleStep(task.ID, 5)
	bad.Scene = json.RawMessage("\x89PNG\r\n\x1a\n")
	if err := s.SaveStep(ctx(t), bad); err == nil {
		t.Error("a step whose scene is not JSON (image bytes) was stored")
	}
}

func testStepReplace(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	st := sampleStep(task.ID, 1)
	if err := s.SaveStep(ctx(t), st); err != nil {
		t.Fatal(err)
	}
	st.Intent, st.Status = "tap search", lifecycle.StepFailed
	if err := s.SaveStep(ctx(t), st); err != nil {
		t.Fatalf("saving step 1 again: %v", err)
	}
	steps, _ := s.Steps(ctx(t), task.ID)
	if len(steps) != 1 || steps[0].Intent != "tap search" || steps[0].Status != lifecycle.StepFailed {
		t.Errorf("after replace: %+v", steps)
	}
}

func testStepsMissingTask(t *testing.T, s storage.Store) {
	if err := s.SaveStep(ctx(t), sampleStep("missing", 1)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SaveStep for a missing task: %v, want ErrNotFound", err)
	}
	if _, err := s.Steps(ctx(t), "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Steps of a missing task: %v, want ErrNotFound", err)
	}
	if _, err := s.AppendEvent(ctx(t), storage.Event{TaskID: "missing", Type: lifecycle.EventStatus}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("AppendEvent for a missing task: %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx(t), "missing", 0, 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Events of a missing task: %v, want ErrNotFound", err)
	}
}

func testEventsSequenced(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	other := mustCreate(t, s, storage.Task{Goal: "h", Device: "sim", Planner: "rule"})
	types := []lifecycle.EventType{lifecycle.EventTaskStarted, lifecycle.EventStepStarted, lifecycle.EventAttempt, lifecycle.EventStepFinished, lifecycle.EventStatus}
	for i, typ := range types {
		e, err := s.AppendEvent(ctx(t), storage.Event{TaskID: task.ID, Type: typ, Step: 1, Time: base.Add(time.Duration(i) * time.Millisecond), Data: json.RawMessage(`{"n":` + fmt.Sprint(i) + `}`)})
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != int64(i+1) {
			t.Errorf("event %d got seq %d", i, e.Seq)
		}
	}
	if e, err := s.AppendEvent(ctx(t), storage.Event{TaskID: other.ID, Type: lifecycle.EventTaskStarted}); err != nil || e.Seq != 1 {
		t.Errorf("another task's first event: seq %d, %v (sequences are per task)", e.Seq, err)
	}
	all, err := s.Events(ctx(t), task.ID, 0, 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("Events = %d, %v", len(all), err)
	}
	for i, e := range all {
		if e.Type != types[i] || e.Seq != int64(i+1) || e.Step != 1 || !e.Time.Equal(base.Add(time.Duration(i)*time.Millisecond)) {
			t.Errorf("event %d = %+v", i, e)
		}
		sameJSON(t, "event data", e.Data, json.RawMessage(`{"n":`+fmt.Sprint(i)+`}`))
	}
	after, _ := s.Events(ctx(t), task.ID, 3, 0)
	if len(after) != 2 || after[0].Seq != 4 {
		t.Errorf("Events after 3 = %+v", after)
	}
	limited, _ := s.Events(ctx(t), task.ID, 0, 2)
	if len(limited) != 2 || limited[1].Seq != 2 {
		t.Errorf("Events limit 2 = %+v", limited)
	}
	if _, err := s.AppendEvent(ctx(t), storage.Event{TaskID: task.ID}); err == nil {
		t.Error("event without a type accepted")
	}
}

func testConcurrentEvents(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	const writers, each = 8, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.AppendEvent(context.Background(), storage.Event{TaskID: task.ID, Type: lifecycle.EventAttempt}); err != nil {
					t.Errorf("AppendEvent: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	events, err := s.Events(ctx(t), task.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != writers*each {
		t.Fatalf("%d events, want %d", len(events), writers*each)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: gap or duplicate", i, e.Seq)
		}
	}
}

// testConcurrentTasks has many tasks record at once, as a server running
// tasks on many devices does: nothing may fail with "database is locked".
func testConcurrentTasks(t *testing.T, s storage.Store) {
	const tasks, steps = 12, 6
	var wg sync.WaitGroup
	ids := make([]string, tasks)
	for i := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := context.Background()
			task, err := s.CreateTask(c, storage.Task{Goal: "g", Device: fmt.Sprintf("sim:%d", i), Planner: "rule"})
			if err != nil {
				t.Errorf("create: %v", err)
				return
			}
			ids[i] = task.ID
			if _, err := s.UpdateStatus(c, task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: base}); err != nil {
				t.Errorf("start: %v", err)
				return
			}
			for n := 1; n <= steps; n++ {
				if _, err := s.AppendEvent(c, storage.Event{TaskID: task.ID, Type: lifecycle.EventStepStarted, Step: n}); err != nil {
					t.Errorf("event: %v", err)
					return
				}
				if err := s.SaveStep(c, sampleStep(task.ID, n)); err != nil {
					t.Errorf("step: %v", err)
					return
				}
				if _, err := s.ListTasks(c, storage.Query{Limit: 5}); err != nil {
					t.Errorf("list: %v", err)
					return
				}
			}
			if _, err := s.UpdateStatus(c, task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, At: base}); err != nil {
				t.Errorf("finish: %v", err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" {
			continue
		}
		st, err := s.Steps(ctx(t), id)
		if err != nil || len(st) != steps {
			t.Errorf("task %s: %d steps, %v", id, len(st), err)
		}
	}
	p, err := s.ListTasks(ctx(t), storage.Query{Status: lifecycle.Completed})
	if err != nil || len(p.Tasks) != tasks {
		t.Errorf("%d completed tasks, want %d (%v)", len(p.Tasks), tasks, err)
	}
}

// A task's end keeps its typed cause and the screen after its last action;
// a list leaves the (larger) screen out, a single task has it.
func testCauseAndFinalScene(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule", Status: lifecycle.Running})
	if task.Cause != lifecycle.CauseNone || task.FinalScene != nil {
		t.Errorf("new task: cause %q final scene %s", task.Cause, task.FinalScene)
	}
	final := json.RawMessage(`{"package":"com.taobao.taobao","width":1080,"height":2400,"elements":[{"index":0,"text":"Mac mini"}]}`)
	got, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Failed,
		Cause: lifecycle.CauseDeviceGone, Reason: "device disconnected", At: base, FinalScene: final})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Task(ctx(t), task.ID)
	for _, tk := range []storage.Task{got, again} {
		if tk.Cause != lifecycle.CauseDeviceGone || tk.Reason != "device disconnected" {
			t.Errorf("cause %q reason %q", tk.Cause, tk.Reason)
		}
		sameJSON(t, "final scene", tk.FinalScene, final)
	}
	page, err := s.ListTasks(ctx(t), storage.Query{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("list: %v %d", err, len(page.Tasks))
	}
	if page.Tasks[0].Cause != lifecycle.CauseDeviceGone || page.Tasks[0].FinalScene != nil {
		t.Errorf("listed: cause %q, final scene %d bytes (want none)", page.Tasks[0].Cause, len(page.Tasks[0].FinalScene))
	}
	if _, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Failed}, To: lifecycle.Failed, Cause: "bogus", At: base}); err == nil {
		t.Error("an unknown cause was stored")
	}
}

// A task's end may replace its config snapshot (the service adds what it
// learned of the device); an end without one keeps it.
func testConfigReplacedAtTheEnd(t *testing.T, s storage.Store) {
	created := json.RawMessage(`{"device":"sim","sim":{"locale":"en"}}`)
	task := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule", Status: lifecycle.Running, Config: created})
	kept := mustCreate(t, s, storage.Task{Goal: "g", Device: "sim", Planner: "rule", Status: lifecycle.Running, Config: created})
	ended := json.RawMessage(`{"device":"sim","sim":{"locale":"en"},"device_info":{"locale":"en-US","apps":[{"package":"com.taobao.taobao","version":"10.40.10","version_code":1040100}]}}`)
	got, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, At: base, Config: ended})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Task(ctx(t), task.ID)
	for _, tk := range []storage.Task{got, again} {
		sameJSON(t, "config at the end", tk.Config, ended)
	}
	if _, err := s.UpdateStatus(ctx(t), kept.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, At: base}); err != nil {
		t.Fatal(err)
	}
	tk, _ := s.Task(ctx(t), kept.ID)
	sameJSON(t, "config kept", tk.Config, created)
	if _, err := s.UpdateStatus(ctx(t), kept.ID, storage.Change{From: []lifecycle.Status{lifecycle.Completed}, To: lifecycle.Completed, At: base, Config: json.RawMessage(`{"x":`)}); err == nil {
		t.Error("a config that is not JSON was stored")
	}
}

// waiting_approval and waiting_user are storable statuses, and a dead
// owner's waiting task is interrupted like a running one.
func testWaitingStatuses(t *testing.T, s storage.Store) {
	var ids []string
	for _, st := range []lifecycle.Status{lifecycle.WaitingApproval, lifecycle.WaitingUser} {
		task := mustCreate(t, s, storage.Task{Goal: string(st), Device: "sim", Planner: "rule", Status: st, Owner: "h:1"})
		page, err := s.ListTasks(ctx(t), storage.Query{Status: st})
		if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID {
			t.Errorf("list %s: %v %+v", st, err, page.Tasks)
		}
		ids = append(ids, task.ID)
	}
	got, err := s.MarkInterrupted(ctx(t), []string{"h:1"}, "gone", base)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	sort.Strings(ids)
	if !reflect.DeepEqual(got, ids) {
		t.Errorf("interrupted %v, want %v", got, ids)
	}
}

// FindTasks finds tasks by a prefix of their ID, and nothing for an empty
// prefix or one with characters no ID has (no LIKE pattern gets through).
func testFindTasks(t *testing.T, s storage.Store) {
	a := mustCreate(t, s, storage.Task{ID: "tabc001", Goal: "a", Device: "sim", Planner: "rule"})
	b := mustCreate(t, s, storage.Task{ID: "tabc002", Goal: "b", Device: "sim", Planner: "rule"})
	mustCreate(t, s, storage.Task{ID: "txyz003", Goal: "c", Device: "sim", Planner: "rule"})
	ids := func(prefix string) []string {
		t.Helper()
		ts, err := s.FindTasks(ctx(t), prefix, 10)
		if err != nil {
			t.Fatalf("FindTasks(%q): %v", prefix, err)
		}
		out := []string{}
		for _, tk := range ts {
			out = append(out, tk.ID)
		}
		return out
	}
	for prefix, want := range map[string][]string{
		"tabc":    {b.ID, a.ID},
		"tabc001": {a.ID},
		"tx":      {"txyz003"},
		"tq":      {},
		"":        {},
		"t%":      {},
		"t_bc001": {},
		"TABC":    {},
	} {
		if got := ids(prefix); !reflect.DeepEqual(got, want) {
			t.Errorf("FindTasks(%q) = %v, want %v", prefix, got, want)
		}
	}
	if _, err := s.FindTasks(ctx(t), "t", 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

// A waiting task carries its pending decision, whole, in Task and in lists;
// leaving the waiting status clears it, and so does MarkInterrupted. A
// waiting status without a pending decision (or a decision of the other
// kind) is refused.
func testPending(t *testing.T, s storage.Store) {
	task := mustCreate(t, s, storage.Task{Goal: "pay", Device: "sim", Planner: "rule", Owner: "h:2"})
	if _, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: base}); err != nil {
		t.Fatal(err)
	}
	since := base.Add(time.Second)
	p := &storage.Pending{
		Kind: lifecycle.PendingApproval, Step: 7, Call: tools.NewCall("tap", map[string]int{"element": 11}),
		Element:  &storage.PendingElement{Index: 11, Class: "android.widget.Button", Label: "Pay now", ID: "pay_btn", Bounds: scene.Bounds{Left: 1, Top: 2, Right: 300, Bottom: 400}},
		Category: "payment", Reason: `the label of [11] "Pay now" says "pay"`,
		Scene: json.RawMessage(`{"w":1080,"h":2400,"pkg":"com.taobao.taobao"}`), Since: since, Expires: since.Add(10 * time.Minute),
	}
	for _, bad := range []storage.Change{
		{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.WaitingApproval, At: since},
		{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.WaitingUser, At: since, Pending: p},
		{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, At: since, Pending: p},
	} {
		if _, err := s.UpdateStatus(ctx(t), task.ID, bad); err == nil {
			t.Errorf("change to %s with pending %v was taken", bad.To, bad.Pending != nil)
		}
	}
	got, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.WaitingApproval, At: since, Pending: p})
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, got *storage.Pending) {
		t.Helper()
		if got == nil {
			t.Fatalf("%s: no pending decision", where)
		}
		sameJSON(t, where+" scene", got.Scene, p.Scene)
		g, w := *got, *p
		g.Scene, w.Scene = nil, nil
		if !g.Since.Equal(w.Since) || !g.Expires.Equal(w.Expires) {
			t.Errorf("%s: since/expires %s/%s, want %s/%s", where, g.Since, g.Expires, w.Since, w.Expires)
		}
		g.Since, g.Expires, w.Since, w.Expires = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		sameJSON(t, where+" call args", g.Call.Args, w.Call.Args)
		g.Call.Args, w.Call.Args = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: pending %+v\nwant %+v", where, g, w)
		}
	}
	check("UpdateStatus", got.Pending)
	one, err := s.Task(ctx(t), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("Task", one.Pending)
	page, err := s.ListTasks(ctx(t), storage.Query{Status: lifecycle.WaitingApproval})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("list waiting: %v %+v", err, page.Tasks)
	}
	check("ListTasks", page.Tasks[0].Pending)
	if w := page.Tasks[0].WaitedAt(since.Add(30 * time.Second)); w != 30*time.Second {
		t.Errorf("waiting since %s: WaitedAt 30s later = %s, want 30s", since, w)
	}

	back, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.WaitingApproval}, To: lifecycle.Running, At: since.Add(time.Minute)})
	if err != nil || back.Pending != nil {
		t.Errorf("back to running: %v, pending %+v; want none", err, back.Pending)
	}
	// The resume keeps the task's start: its run took the wait too
	// (issue 23: "took 0s" after an approval).
	if back.Started == nil || !back.Started.Equal(base) {
		t.Errorf("back to running: started %v, want the first start %s", back.Started, base)
	}
	// The wait is kept: how much of the task's time was a person's
	// (issue 23: shown by tasks, show and the page).
	if back.Waited != time.Minute || back.WaitedAt(since.Add(time.Hour)) != time.Minute {
		t.Errorf("back to running after a 1m wait: waited %s (at an hour: %s), want 1m0s", back.Waited, back.WaitedAt(since.Add(time.Hour)))
	}
	if page, err := s.ListTasks(ctx(t), storage.Query{}); err != nil || len(page.Tasks) != 1 || page.Tasks[0].Waited != time.Minute {
		t.Errorf("listed after the wait: %v %+v; want waited 1m0s", err, page.Tasks)
	}
	q := &storage.Pending{Kind: lifecycle.PendingQuestion, Step: 8, Call: tools.NewCall("ask_user", map[string]string{"question": "Code?"}), Question: "Code?", Since: since, Expires: since.Add(time.Minute)}
	if _, err := s.UpdateStatus(ctx(t), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.WaitingUser, At: since, Pending: q}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkInterrupted(ctx(t), []string{"h:2"}, "gone", since.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if end, err := s.Task(ctx(t), task.ID); err != nil || end.Status != lifecycle.Interrupted || end.Pending != nil || end.Waited != 3*time.Minute {
		t.Errorf("interrupted while waiting: %v, %s, pending %+v, waited %s; want interrupted, none, 3m0s (1m, then 2m until the end)", err, end.Status, end.Pending, end.Waited)
	}
}
