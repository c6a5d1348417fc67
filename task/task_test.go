package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/fake"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/tools"
)

// flakyStore is a store whose writes fail while down is set, as a stopped
// PostgreSQL or a full disk under SQLite would.
type flakyStore struct {
	storage.Store
	down    atomic.Bool
	refused atomic.Int64
}

var errDiskFull = errors.New("database or disk is full")

func (f *flakyStore) fail() error {
	if f.down.Load() {
		f.refused.Add(1)
		return errDiskFull
	}
	return nil
}

func (f *flakyStore) SaveStep(ctx context.Context, s storage.Step) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.SaveStep(ctx, s)
}

func (f *flakyStore) AppendEvent(ctx context.Context, e storage.Event) (storage.Event, error) {
	if err := f.fail(); err != nil {
		return storage.Event{}, err
	}
	return f.Store.AppendEvent(ctx, e)
}

func (f *flakyStore) UpdateStatus(ctx context.Context, id string, c storage.Change) (storage.Task, error) {
	if err := f.fail(); err != nil {
		return storage.Task{}, err
	}
	return f.Store.UpdateStatus(ctx, id, c)
}

// stepRunner emits steps steps; before step n it calls before(n) when set,
// and waits on gate when set (or for cancellation).
type stepRunner struct {
	steps  int
	gate   chan struct{}
	before func(n int)
	start  chan string
}

func (r *stepRunner) Run(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
	if r.start != nil {
		r.start <- t.ID
	}
	sc, _ := dev.Scene(ctx)
	emit(runtime.Event{Type: lifecycle.EventTaskStarted, Reason: t.Goal})
	for n := 1; n <= r.steps; n++ {
		if r.before != nil {
			r.before(n)
		}
		if r.gate != nil {
			select {
			case <-r.gate:
			case <-ctx.Done():
				return runtime.Result{Status: lifecycle.Cancelled, Cause: lifecycle.CauseCancelled, Reason: "cancelled"}
			}
		}
		call := tools.NewCall(tools.Tap, map[string]int{"element": 1})
		emit(runtime.Event{Type: lifecycle.EventStepStarted, Step: n, Call: &call})
		rec := plan.StepRecord{Number: n, Intent: fmt.Sprintf("step %d", n), Call: call, Status: lifecycle.StepSucceeded,
			Attempts: []plan.Attempt{{Number: 1, Result: "tapped"}}}
		emit(runtime.Event{Type: lifecycle.EventStepFinished, Step: n, Call: &call, Record: &rec, Scene: sc})
	}
	return runtime.Result{Status: lifecycle.Completed, Reason: "done", FinalScene: sc}
}

type oneDevice struct{}

func (oneDevice) Check(name string) error {
	if name != "sim" && name != "sim:b" {
		return fmt.Errorf("no device %q", name)
	}
	return nil
}

func (oneDevice) Open(ctx context.Context, name string) (device.Device, func(), error) {
	return fake.New(&scene.Scene{Width: 100, Height: 100, Package: "com.example"}), func() {}, nil
}

func openStore(t *testing.T) storage.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newService(t *testing.T, store Store, r Runner, mutate ...func(*Config)) *Service {
	t.Helper()
	cfg := Config{Logger: testlog.New(t), PollInterval: 20 * time.Millisecond, RetryBase: 2 * time.Millisecond,
		RetryMax: 10 * time.Millisecond, FlushGrace: 50 * time.Millisecond}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := New(cfg, store, oneDevice{}, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A store that refuses writes in the middle of a task (the disk filled up
// after step 1) loses nothing: the device is freed when the task ends, a
// cancel says the task has ended (not "runs in another process"), and once
// the store takes writes again every step and event is written in order,
// the task reaches its final status and its watch ends.
func TestStoreDownMidTaskLosesNothing(t *testing.T) {
	flaky := &flakyStore{Store: openStore(t)}
	r := &stepRunner{steps: 3}
	r.before = func(n int) {
		if n == 2 {
			flaky.down.Store(true)
		}
	}
	s := newService(t, flaky, r)
	tk, err := s.Submit(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	watched := make(chan []storage.Event, 1)
	var final storage.Task
	go func() {
		var got []storage.Event
		var err error
		final, err = s.Watch(context.Background(), tk.ID, 0, func(e storage.Event) error { got = append(got, e); return nil })
		if err != nil {
			t.Errorf("watch: %v", err)
		}
		watched <- got
	}()

	// The runner has finished and the store is still down: the device is
	// free, and the task reads as ended.
	waitFor(t, "the device to be freed", func() bool { return flaky.refused.Load() > 0 && s.Load()["sim"].Running == "" })
	got, err := s.Get(t.Context(), tk.ID)
	if err != nil || got.Status != lifecycle.Completed {
		t.Fatalf("while the store is down the task reads %s (%v), want completed", got.Status, err)
	}
	if _, err := s.Cancel(t.Context(), tk.ID); !errors.As(err, new(*storage.ConflictError)) || strings.Contains(err.Error(), "another") {
		t.Errorf("cancel of the ended task: %v, want a conflict saying it is completed", err)
	}
	select {
	case <-watched:
		t.Fatal("the watch ended before the task's end was written")
	case <-time.After(50 * time.Millisecond):
	}

	flaky.down.Store(false)
	var events []storage.Event
	select {
	case events = <-watched:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end after the store came back")
	}
	if final.Status != lifecycle.Completed {
		t.Errorf("watch ended with %s", final.Status)
	}
	stored, _ := flaky.Task(t.Context(), tk.ID)
	if stored.Status != lifecycle.Completed || stored.Finished == nil || len(stored.FinalScene) == 0 {
		t.Errorf("stored task %s finished %v final scene %d bytes", stored.Status, stored.Finished, len(stored.FinalScene))
	}
	if !strings.Contains(string(stored.FinalScene), "com.example") {
		t.Errorf("stored final scene is not the phone's last screen: %s", stored.FinalScene)
	}
	steps, _ := flaky.Steps(t.Context(), tk.ID)
	if len(steps) != 3 {
		t.Fatalf("%d steps stored, want 3", len(steps))
	}
	// Each step as the runner reported it, in order, with its scene: the
	// ones recorded while the store was down are not blanks or repeats.
	for i, st := range steps {
		n := i + 1
		if st.TaskID != tk.ID || st.Number != n || st.Intent != fmt.Sprintf("step %d", n) || st.Status != lifecycle.StepSucceeded ||
			st.Call.Name != tools.Tap || len(st.Attempts) != 1 || st.Attempts[0].Result != "tapped" || !strings.Contains(string(st.Scene), "com.example") {
			t.Errorf("stored step %d: task %s number %d intent %q status %s call %s attempts %+v scene %s",
				n, st.TaskID, st.Number, st.Intent, st.Status, st.Call, st.Attempts, st.Scene)
		}
	}
	var types []string
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		types = append(types, string(e.Type))
	}
	want := "task_queued,status,status,task_started,step_started,step_finished,step_started,step_finished,step_started,step_finished,status"
	if strings.Join(types, ",") != want {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(types, ","), want)
	}
	var stepsOf []int
	for _, e := range events {
		if e.Type == lifecycle.EventStepFinished {
			stepsOf = append(stepsOf, e.Step)
		}
	}
	if fmt.Sprint(stepsOf) != "[1 2 3]" || !lastIsFinal(events) {
		t.Errorf("step_finished events of steps %v; final status event last: %v", stepsOf, lastIsFinal(events))
	}
}

// Twenty concurrent cancels of one running task: exactly one succeeds.
func TestCancelExactlyOnce(t *testing.T) {
	r := &stepRunner{steps: 1, gate: make(chan struct{}), start: make(chan string, 1)}
	s := newService(t, openStore(t), r)
	tk, err := s.Submit(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	<-r.start
	var (
		wg        sync.WaitGroup
		ok, confl atomic.Int32
	)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := s.Cancel(t.Context(), tk.ID)
			switch {
			case err == nil && got.Status == lifecycle.Cancelled:
				ok.Add(1)
			case errors.Is(err, ErrConflict), errors.As(err, new(*storage.ConflictError)):
				confl.Add(1)
			default:
				t.Errorf("cancel: %+v %v", got.Status, err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || confl.Load() != 19 {
		t.Errorf("%d cancels succeeded and %d conflicted, want 1 and 19", ok.Load(), confl.Load())
	}
	got, _ := s.Get(t.Context(), tk.ID)
	if got.Status != lifecycle.Cancelled || got.Cause != lifecycle.CauseCancelled {
		t.Errorf("task %s (%s), want cancelled", got.Status, got.Cause)
	}
}

// A queued task cancelled by many at once is cancelled once, and its
// device never runs it.
func TestCancelQueuedExactlyOnce(t *testing.T) {
	r := &stepRunner{steps: 1, gate: make(chan struct{}), start: make(chan string, 2)}
	s := newService(t, openStore(t), r)
	first, _ := s.Submit(t.Context(), Request{Goal: "first", Device: "sim", Planner: "rule"})
	<-r.start
	queued, _ := s.Submit(t.Context(), Request{Goal: "second", Device: "sim", Planner: "rule"})
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Cancel(t.Context(), queued.ID); err == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Errorf("%d cancels of a queued task succeeded, want 1", ok.Load())
	}
	close(r.gate)
	waitFor(t, "the first task to end", func() bool { got, _ := s.Get(t.Context(), first.ID); return got.Status.Terminal() })
	select {
	case id := <-r.start:
		t.Errorf("the cancelled task %s ran", id)
	case <-time.After(50 * time.Millisecond):
	}
}

// Close interrupts a running task, writes its end, and its watch gets the
// final status event and returns the interrupted task.
func TestCloseEndsWatchWithFinalStatus(t *testing.T) {
	r := &stepRunner{steps: 1, gate: make(chan struct{}), start: make(chan string, 1)}
	s := newService(t, openStore(t), r)
	tk, _ := s.Submit(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"})
	<-r.start
	type result struct {
		final storage.Task
		last  storage.Event
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var last storage.Event
		final, err := s.Watch(context.Background(), tk.ID, 0, func(e storage.Event) error { last = e; return nil })
		done <- result{final, last, err}
	}()
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.final.Status != lifecycle.Interrupted || res.final.Cause != lifecycle.CauseInterrupted {
		t.Fatalf("watch returned %s (%s), %v", res.final.Status, res.final.Cause, res.err)
	}
	var d StatusData
	if res.last.Type != lifecycle.EventStatus || json.Unmarshal(res.last.Data, &d) != nil || d.Status != lifecycle.Interrupted {
		t.Errorf("last event handed over: %s %s", res.last.Type, res.last.Data)
	}
	if _, err := s.Submit(t.Context(), Request{Goal: "late", Device: "sim"}); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after close: %v", err)
	}
}

// RunNow's context ending (Ctrl-C) cancels the task: cancelled, cause
// cancelled, recorded like any task.
func TestRunNowCancelledByContext(t *testing.T) {
	store := openStore(t)
	r := &stepRunner{steps: 2, gate: make(chan struct{}), start: make(chan string, 1)}
	s := newService(t, store, r)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-r.start; cancel() }()
	tk, res, err := s.RunNow(ctx, Request{Goal: "g", Device: "sim", Planner: "rule"}, fake.New(&scene.Scene{Package: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != lifecycle.Cancelled || res.Cause != lifecycle.CauseCancelled {
		t.Errorf("RunNow ended %s (%s)", tk.Status, res.Cause)
	}
	s.Close(t.Context())
	got, _ := store.Task(t.Context(), tk.ID)
	if got.Status != lifecycle.Cancelled || got.Cause != lifecycle.CauseCancelled || got.Owner != s.Owner() {
		t.Errorf("stored %s (%s) owner %q", got.Status, got.Cause, got.Owner)
	}
}

// Recover interrupts the running and waiting tasks of gone owners, with
// cause interrupted and a final status event, and leaves live ones alone.
func TestRecoverInterruptsDeadOwners(t *testing.T) {
	store := openStore(t)
	mk := func(st lifecycle.Status, owner string) storage.Task {
		tk, err := store.CreateTask(t.Context(), storage.Task{Goal: "g", Device: "sim", Planner: "rule", Status: st, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	// Each dead owner has one kind of task only, so that finding the owner
	// dead through one status cannot interrupt the others by the way.
	dead, deadWaiting, deadApproval := mk(lifecycle.Running, "h:1"), mk(lifecycle.WaitingUser, "h:4"), mk(lifecycle.WaitingApproval, "h:5")
	live, liveWaiting, self := mk(lifecycle.Running, "h:2"), mk(lifecycle.WaitingUser, "h:2"), mk(lifecycle.Running, "h:3")
	deadQueued, deadDone := mk(lifecycle.Queued, "h:6"), mk(lifecycle.Completed, "h:6")
	ids, err := Recover(t.Context(), store, "h:3", func(o string) bool { return o == "h:1" || o == "h:4" || o == "h:5" || o == "h:6" }, nil, nil)
	if err != nil || len(ids) != 3 {
		t.Fatalf("recovered %v, %v; want the 3 running or waiting tasks of dead owners", ids, err)
	}
	for _, tk := range []storage.Task{deadQueued, deadDone} {
		if got, _ := store.Task(t.Context(), tk.ID); got.Status != tk.Status {
			t.Errorf("a dead owner's %s task became %s: only running and waiting ones are interrupted", tk.Status, got.Status)
		}
	}
	if got, _ := store.Task(t.Context(), liveWaiting.ID); got.Status != lifecycle.WaitingUser {
		t.Errorf("a live owner's waiting task became %s", got.Status)
	}
	for _, tk := range []storage.Task{dead, deadWaiting, deadApproval} {
		got, _ := store.Task(t.Context(), tk.ID)
		events, _ := store.Events(t.Context(), tk.ID, 0, 0)
		if got.Status != lifecycle.Interrupted || got.Cause != lifecycle.CauseInterrupted || len(events) != 1 || !lastIsFinal(events) {
			t.Errorf("dead owner's task: %s (%s), events %v", got.Status, got.Cause, events)
		}
	}
	for _, tk := range []storage.Task{live, self} {
		if got, _ := store.Task(t.Context(), tk.ID); got.Status != lifecycle.Running {
			t.Errorf("a live owner's task became %s", got.Status)
		}
	}
}

// Find takes a whole id or a unique prefix; an ambiguous prefix names the
// candidates.
func TestFindPrefix(t *testing.T) {
	store := openStore(t)
	for _, id := range []string{"tabc1", "tabc2", "tzzz9"} {
		if _, err := store.CreateTask(t.Context(), storage.Task{ID: id, Goal: "g", Device: "sim", Planner: "rule"}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := Find(t.Context(), store, "tz"); err != nil || got.ID != "tzzz9" {
		t.Errorf("unique prefix: %v %v", got.ID, err)
	}
	if got, err := Find(t.Context(), store, "tabc1"); err != nil || got.ID != "tabc1" {
		t.Errorf("whole id: %v %v", got.ID, err)
	}
	_, err := Find(t.Context(), store, "tab")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "tabc1") || !strings.Contains(err.Error(), "tabc2") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := Find(t.Context(), store, "tq"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("no match: %v", err)
	}
}

// A task's life is told in events from its submission on: task_queued
// (what was asked), the queued status, then the run's own events, in order,
// with sequence numbers from 1 without gaps.
func TestEventsFromSubmissionOn(t *testing.T) {
	s := newService(t, openStore(t), &stepRunner{steps: 1})
	tk, err := s.Submit(t.Context(), Request{Goal: "open Settings", Device: "sim", Planner: "rule", MaxSteps: 7})
	if err != nil {
		t.Fatal(err)
	}
	var events []storage.Event
	final, err := s.Watch(t.Context(), tk.ID, 0, func(e storage.Event) error { events = append(events, e); return nil })
	if err != nil || final.Status != lifecycle.Completed {
		t.Fatalf("watch: %s, %v", final.Status, err)
	}
	var types []lifecycle.EventType
	for i, e := range events {
		types = append(types, e.Type)
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
	if len(events) < 4 || types[0] != lifecycle.EventTaskQueued || types[1] != lifecycle.EventStatus || types[len(types)-1] != lifecycle.EventStatus {
		t.Fatalf("events %v; want task_queued, status (queued), …, status (completed)", types)
	}
	var asked struct {
		Goal, Device, Planner string
		MaxSteps              int `json:"max_steps"`
	}
	if err := json.Unmarshal(events[0].Data, &asked); err != nil || asked.Goal != "open Settings" || asked.Device != "sim" || asked.MaxSteps != 7 {
		t.Errorf("task_queued data %s: %+v, %v", events[0].Data, asked, err)
	}
}

// lateEndStore holds back a task's final status event until the task's
// final status has been read three times (by the watch: nothing else reads
// a task that ended): the window in which a watch sees the task ended but
// its last event not yet written, made wider than the two quiet reads after
// which a watch of a task recorded elsewhere ends. No wall clock: the
// event is written once the watch has looked, however slow the machine.
type lateEndStore struct {
	storage.Store
	mu     sync.Mutex
	reads  int           // reads that found the task final
	looked chan struct{} // closed at the third
}

func newLateEndStore(s storage.Store) *lateEndStore {
	return &lateEndStore{Store: s, looked: make(chan struct{})}
}

func (l *lateEndStore) Task(ctx context.Context, id string) (storage.Task, error) {
	t, err := l.Store.Task(ctx, id)
	if err == nil && t.Status.Terminal() {
		l.mu.Lock()
		if l.reads++; l.reads == 3 {
			close(l.looked)
		}
		l.mu.Unlock()
	}
	return t, err
}

func (l *lateEndStore) AppendEvent(ctx context.Context, e storage.Event) (storage.Event, error) {
	var d StatusData
	if e.Type == lifecycle.EventStatus && json.Unmarshal(e.Data, &d) == nil && d.Status.Terminal() {
		select {
		case <-l.looked:
		case <-ctx.Done():
			return storage.Event{}, ctx.Err()
		}
	}
	return l.Store.AppendEvent(ctx, e)
}

// A watch of a task this process runs hands over the final status event
// even when it reads the task's final status well before that event is
// written: it waits for the task's recorder, not for a quiet spell.
func TestWatchWaitsForTheFinalEventOfItsOwnTask(t *testing.T) {
	s := newService(t, newLateEndStore(openStore(t)), &stepRunner{steps: 1})
	tk, err := s.Submit(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	var last storage.Event
	final, err := s.Watch(t.Context(), tk.ID, 0, func(e storage.Event) error { last = e; return nil })
	if err != nil || final.Status != lifecycle.Completed {
		t.Fatalf("watch: %s, %v", final.Status, err)
	}
	if !lastIsFinal([]storage.Event{last}) {
		t.Errorf("the watch ended on %s %s, before the final status event", last.Type, last.Data)
	}
}

// startGateStore holds a task's start (queued → running) after it is
// written, until gate closes: the moment its device queue has taken the
// task but has not marked it running in this process yet.
type startGateStore struct {
	storage.Store
	started chan string
	gate    chan struct{}
}

func (g *startGateStore) UpdateStatus(ctx context.Context, id string, c storage.Change) (storage.Task, error) {
	t, err := g.Store.UpdateStatus(ctx, id, c)
	if c.To == lifecycle.Running {
		g.started <- id
		<-g.gate
	}
	return t, err
}

// A cancel that arrives while the task's queue is starting it cancels it:
// it is not refused as "running in another process".
func TestCancelWhileStarting(t *testing.T) {
	g := &startGateStore{Store: openStore(t), started: make(chan string, 1), gate: make(chan struct{})}
	s := newService(t, g, &stepRunner{steps: 3, gate: make(chan struct{})})
	tk, err := s.Submit(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	<-g.started
	type result struct {
		t   storage.Task
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := s.Cancel(t.Context(), tk.ID)
		done <- result{got, err}
	}()
	waitFor(t, "the cancel to be taken or answered", func() bool {
		if len(done) > 0 {
			return true
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		e := s.entries[tk.ID]
		return e != nil && e.cancelled
	})
	close(g.gate)
	r := <-done
	if r.err != nil || r.t.Status != lifecycle.Cancelled {
		t.Fatalf("cancel while starting = %s, %v; want the task cancelled", r.t.Status, r.err)
	}
	if got, _ := s.Get(t.Context(), tk.ID); got.Status != lifecycle.Cancelled || got.Cause != lifecycle.CauseCancelled {
		t.Errorf("the task is %s (%s); want cancelled (cancelled)", got.Status, got.Cause)
	}
}

// At start the queued tasks of a dead owner (and this one's) are queued
// again and run oldest first; a live owner's queued tasks are left to it.
func TestStartRequeuesDeadOwnersQueuedTasksOldestFirst(t *testing.T) {
	store := openStore(t)
	base := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	mk := func(goal, owner string, age int) storage.Task {
		tk, err := store.CreateTask(t.Context(), storage.Task{Goal: goal, Device: "sim", Planner: "rule", Status: lifecycle.Queued,
			Owner: owner, Created: base.Add(time.Duration(age) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	first, second, third := mk("first", "h:1", 1), mk("second", "h:1", 2), mk("third", "h:1", 3)
	other := mk("live owner's", "h:2", 4)
	var mu sync.Mutex
	var ran []string
	r := RunnerFunc(func(ctx context.Context, tk storage.Task, dev device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
		mu.Lock()
		ran = append(ran, tk.Goal)
		mu.Unlock()
		return runtime.Result{Status: lifecycle.Completed, Reason: "done"}
	})
	s := newService(t, store, r, func(c *Config) {
		c.Owner = "h:3"
		c.OwnerGone = func(o string) bool { return o == "h:1" }
	})
	for _, tk := range []storage.Task{first, second, third} {
		if final, err := s.Watch(t.Context(), tk.ID, 0, func(storage.Event) error { return nil }); err != nil || final.Status != lifecycle.Completed {
			t.Fatalf("the dead owner's queued task %q: %s, %v", tk.Goal, final.Status, err)
		}
	}
	mu.Lock()
	got := strings.Join(ran, ", ")
	mu.Unlock()
	if got != "first, second, third" {
		t.Errorf("ran %s; want the dead owner's queued tasks, oldest first", got)
	}
	if tk, _ := store.Task(t.Context(), other.ID); tk.Status != lifecycle.Queued {
		t.Errorf("a live owner's queued task became %s", tk.Status)
	}
}

// A watch of a task that ended in another process (its final status
// stored, nothing more to come) ends with the task, without a final
// status event of this process to wait for.
func TestWatchOfATaskEndedElsewhere(t *testing.T) {
	store := openStore(t)
	s := newService(t, store, &stepRunner{steps: 1})
	for _, withEvent := range []bool{false, true} {
		tk, err := store.CreateTask(t.Context(), storage.Task{Goal: "g", Device: "sim", Planner: "rule", Status: lifecycle.Completed, Owner: "elsewhere:1"})
		if err != nil {
			t.Fatal(err)
		}
		if withEvent {
			if _, err := store.AppendEvent(t.Context(), statusEvent(tk.ID, lifecycle.Completed, "", "done", time.Now())); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		final, err := s.Watch(ctx, tk.ID, 0, func(storage.Event) error { return nil })
		cancel()
		if err != nil || final.Status != lifecycle.Completed {
			t.Errorf("final status event stored %v: watch of a task ended elsewhere = %s, %v; want it to end, completed", withEvent, final.Status, err)
		}
	}
}

// A cancel of a task this process does not run: one that ended elsewhere
// is a conflict naming its status and stays as it ended; a queued one is
// cancelled with its final status event, so watches of it end on it.
func TestCancelOfStoredTasks(t *testing.T) {
	store := openStore(t)
	s := newService(t, store, &stepRunner{steps: 1}, func(c *Config) {
		c.Owner = "h:1"
		c.OwnerGone = func(string) bool { return false }
	})
	ended, err := store.CreateTask(t.Context(), storage.Task{Goal: "g", Device: "sim", Planner: "rule", Status: lifecycle.Completed, Owner: "h:2"})
	if err != nil {
		t.Fatal(err)
	}
	var ce *storage.ConflictError
	if _, err := s.Cancel(t.Context(), ended.ID); !errors.As(err, &ce) || ce.Current != lifecycle.Completed {
		t.Errorf("cancel of a task completed elsewhere: %v; want a conflict, it is completed", err)
	}
	if got, _ := store.Task(t.Context(), ended.ID); got.Status != lifecycle.Completed {
		t.Errorf("the completed task became %s", got.Status)
	}
	// Queued by a live process sharing the store: this one cancels it.
	queued, err := store.CreateTask(t.Context(), storage.Task{Goal: "g", Device: "sim:b", Planner: "rule", Status: lifecycle.Queued, Owner: "h:2"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Cancel(t.Context(), queued.ID)
	if err != nil || got.Status != lifecycle.Cancelled || got.Cause != lifecycle.CauseCancelled {
		t.Fatalf("cancel of a stored queued task: %s (%s), %v", got.Status, got.Cause, err)
	}
	events, _ := store.Events(t.Context(), queued.ID, 0, 0)
	if !lastIsFinal(events) {
		t.Errorf("the cancelled queued task's events end with %v, not its final status event", events)
	}
}

// Only a status event of a final status is the final one.
func TestLastIsFinal(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	status := func(st lifecycle.Status) storage.Event { return statusEvent("t", st, "", "", at) }
	step := storage.Event{TaskID: "t", Type: lifecycle.EventStepFinished, Step: 1, Data: json.RawMessage(`{"status":"completed"}`)}
	for _, c := range []struct {
		events []storage.Event
		want   bool
	}{
		{nil, false},
		{[]storage.Event{status(lifecycle.Running)}, false},
		{[]storage.Event{status(lifecycle.WaitingApproval)}, false},
		{[]storage.Event{status(lifecycle.Running), status(lifecycle.Completed)}, true},
		{[]storage.Event{status(lifecycle.Failed)}, true},
		{[]storage.Event{status(lifecycle.Cancelled)}, true},
		{[]storage.Event{status(lifecycle.Interrupted)}, true},
		{[]storage.Event{status(lifecycle.Completed), step}, false},
	} {
		if got := lastIsFinal(c.events); got != c.want {
			t.Errorf("lastIsFinal(%v) = %v, want %v", c.events, got, c.want)
		}
	}
}

// A queued task cancelled leaves its device's queue at once (the device's
// load no longer counts it) and never runs; the task behind it does.
func TestCancelledQueuedTaskLeavesTheQueue(t *testing.T) {
	r := &stepRunner{steps: 1, gate: make(chan struct{}), start: make(chan string, 3)}
	s := newService(t, openStore(t), r)
	var ids []string
	for _, goal := range []string{"first", "second", "third"} {
		tk, err := s.Submit(t.Context(), Request{Goal: goal, Device: "sim", Planner: "rule"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	if got := <-r.start; got != ids[0] {
		t.Fatalf("started %s first, want %s", got, ids[0])
	}
	if l := s.Load()["sim"]; l.Running != ids[0] || l.Queued != 2 {
		t.Fatalf("load %+v; want the first running, two queued", l)
	}
	if got, err := s.Cancel(t.Context(), ids[1]); err != nil || got.Status != lifecycle.Cancelled {
		t.Fatalf("cancel the queued second: %s, %v", got.Status, err)
	}
	if l := s.Load()["sim"]; l.Queued != 1 {
		t.Errorf("load %+v after cancelling a queued task; want one queued", l)
	}
	close(r.gate)
	if got := <-r.start; got != ids[2] {
		t.Errorf("started %s after the first, want the third (%s); the second was cancelled", got, ids[2])
	}
}

// deafRunner never looks at its context (a planner grinding through the
// issue's 650k-deep screen): it returns only when the test lets it.
type deafRunner struct {
	start   chan string
	release chan struct{}
	// returned: Run returned (its late step emitted, its result handed
	// back to nobody).
	returned chan struct{}
}

func (r *deafRunner) Run(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
	r.start <- t.ID
	<-r.release
	defer func() { r.returned <- struct{}{} }()
	call := tools.NewCall(tools.Tap, map[string]int{"element": 1})
	rec := plan.StepRecord{Number: 1, Intent: "late", Call: call, Status: lifecycle.StepSucceeded}
	emit(runtime.Event{Type: lifecycle.EventStepFinished, Step: 1, Call: &call, Record: &rec}) // after its task ended: must not be recorded
	return runtime.Result{Status: lifecycle.Completed, Reason: "finished late"}
}

// A cancel, and the process's stop (serve's SIGTERM is Close), end a task
// whose runner ignores its context within StopGrace: the cancel returns
// the task cancelled, Close returns with the task interrupted, and what the
// runner does when it finally returns is not recorded.
func TestCancelAndStopEndADeafRunner(t *testing.T) {
	r := &deafRunner{start: make(chan string, 2), release: make(chan struct{}), returned: make(chan struct{}, 2)}
	defer close(r.release)
	store := openStore(t)
	var logs lockedBuffer
	s := newService(t, store, r, func(c *Config) {
		c.StopGrace = 100 * time.Millisecond
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	tk, err := s.Submit(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	<-r.start
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got, err := s.Cancel(ctx, tk.ID)
	if err != nil || got.Status != lifecycle.Cancelled || got.Cause != lifecycle.CauseCancelled {
		t.Fatalf("cancel of a deaf runner's task: %s (%s) %v, want cancelled", got.Status, got.Cause, err)
	}
	// Let the runner return now: its late step is not recorded, and the
	// cancelled task stays cancelled.
	r.release <- struct{}{}
	<-r.returned
	if steps, _ := store.Steps(t.Context(), tk.ID); len(steps) != 0 {
		t.Errorf("%d steps recorded after the task ended", len(steps))
	}
	if !strings.Contains(logs.String(), "an event after the task's end is not recorded") {
		t.Errorf("the late step was not refused by the recorder; log:\n%s", logs.String())
	}
	// The next task on the device runs; the process stops while it does.
	tk2, err := s.Submit(t.Context(), Request{Goal: "g2", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	<-r.start
	if err := s.Close(ctx); err != nil {
		t.Fatalf("close with a deaf runner: %v", err)
	}
	got2, err := store.Task(t.Context(), tk2.ID)
	if err != nil || got2.Status != lifecycle.Interrupted {
		t.Fatalf("second task after close: %s (%s) %v, want interrupted", got2.Status, got2.Cause, err)
	}
	r.release <- struct{}{}
	<-r.returned
	for _, id := range []string{tk.ID, tk2.ID} {
		if steps, _ := store.Steps(t.Context(), id); len(steps) != 0 {
			t.Errorf("task %s: %d steps recorded after it ended", id, len(steps))
		}
		if tk, _ := store.Task(t.Context(), id); tk.Status == lifecycle.Completed {
			t.Errorf("task %s became completed when its runner returned late", id)
		}
	}
}

// lockedBuffer is a log destination written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
