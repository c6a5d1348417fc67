package farm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"phonepilot/device"
	"phonepilot/device/fake"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/task"
	"phonepilot/tools"
)

func TestQueueName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9]+([_|-]?[a-z0-9]+)*$`) // River's queue names
	seen := map[string]string{}
	for _, d := range []string{"sim:a", "sim:A", "adb:192.168.1.5:5555", "adb:R58M123ABC", "adb:emulator-5554", "sim:" + string(make([]byte, 64))} {
		q := QueueName(d)
		if !re.MatchString(q) || len(q) > 64 {
			t.Errorf("QueueName(%q) = %q: not a River queue name", d, q)
		}
		if other, dup := seen[q]; dup {
			t.Errorf("%q and %q share queue %q", d, other, q)
		}
		seen[q] = d
	}
}

func TestLabels(t *testing.T) {
	have := map[string]string{"locale": "zh", "model": "Pixel 8"}
	for _, c := range []struct {
		want map[string]string
		ok   bool
	}{{nil, true}, {map[string]string{"locale": "zh"}, true}, {map[string]string{"locale": "en"}, false},
		{map[string]string{"locale": "zh", "rack": "a"}, false}} {
		if Matches(c.want, have) != c.ok {
			t.Errorf("Matches(%v, %v) = %v", c.want, have, !c.ok)
		}
	}
	if err := CheckLabels(map[string]string{"": "x"}); !errors.Is(err, ErrBadLabels) {
		t.Errorf("empty key: %v", err)
	}
	if err := CheckLabels(map[string]string{"locale": "zh", "rack/row": "3"}); err != nil {
		t.Errorf("good labels: %v", err)
	}
}

// testDB is a fresh database on the test server.
func testDB(t *testing.T) string {
	t.Helper()
	base := os.Getenv("PHONEPILOT_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
			t.Fatal("PHONEPILOT_INTEGRATION=1 but PHONEPILOT_TEST_POSTGRES is unset (eval \"$(scripts/pg-start.sh)\")")
		}
		t.Skip("PHONEPILOT_TEST_POSTGRES not set (eval \"$(scripts/pg-start.sh)\")")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("pp_farmpkg_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
		admin.Close()
	})
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

type env struct {
	t     *testing.T
	dsn   string
	ctx   context.Context
	store *postgres.Store
	pool  *pgxpool.Pool
}

func newEnv(t *testing.T) *env {
	dsn := testDB(t)
	return connect(t, dsn)
}

func connect(t *testing.T, dsn string) *env {
	t.Helper()
	ctx := t.Context()
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pool, err := OpenPool(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &env{t: t, dsn: dsn, ctx: ctx, store: store, pool: pool}
}

// front is a Front with its task service, as serve builds them.
func (e *env) front() (*task.Service, func()) { return e.frontPolling(0) }

// frontPolling is front with the service's store poll every poll (its
// default when 0).
func (e *env) frontPolling(poll time.Duration) (*task.Service, func()) {
	e.t.Helper()
	f, err := NewFront(e.pool, e.store, testlog.New(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	svc, err := task.New(task.Config{Queue: f, Logger: testlog.New(e.t), PollInterval: poll}, e.store, anyDevices{}, task.RunnerFunc(
		func(context.Context, storage.Task, device.Device, func(runtime.Event), runtime.Person) runtime.Result {
			e.t.Error("a front ran a task")
			return runtime.Result{}
		}))
	if err != nil {
		e.t.Fatal(err)
	}
	f.SetNotify(svc.Notify)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	stop := func() { _ = svc.Close(context.Background()); cancel(); <-done }
	e.t.Cleanup(stop)
	return svc, stop
}

// anyDevices accepts every name (the farm's own Check is cmd's).
type anyDevices struct{}

func (anyDevices) Check(string) error { return nil }
func (anyDevices) Open(context.Context, string) (device.Device, func(), error) {
	return nil, nil, errors.New("fronts open no device")
}

// fakeDevices are a worker's devices.
type fakeDevices struct {
	mu     sync.Mutex
	offers []Offer
}

func (d *fakeDevices) Scan(context.Context) ([]Offer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Offer(nil), d.offers...), nil
}

func (d *fakeDevices) Open(context.Context, string) (device.Device, func(), error) {
	return fake.New(&scene.Scene{Width: 100, Height: 100, Package: "com.example"}), func() {}, nil
}

type worker struct {
	w    *Worker
	svc  *task.Service
	stop func()
}

// worker starts a worker of name on the devices with runner.
func (e *env) worker(name string, devs *fakeDevices, runner task.Runner, tweak func(*WorkerConfig)) *worker {
	e.t.Helper()
	svc, err := task.New(task.Config{Logger: testlog.New(e.t).With("worker", name), Owner: name + "-owner"}, e.store, nil, runner)
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := WorkerConfig{Name: name, Host: "test", Heartbeat: 100 * time.Millisecond, Lease: 600 * time.Millisecond, Logger: testlog.New(e.t).With("worker", name)}
	if tweak != nil {
		tweak(&cfg)
	}
	w, err := NewWorker(cfg, e.pool, e.store, svc, devs)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("worker %s: %v", name, err)
			}
			// A service whose store is cut off keeps its records until
			// Close gives up.
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = svc.Close(cctx)
		})
	}
	e.t.Cleanup(stop)
	return &worker{w: w, svc: svc, stop: stop}
}

func (e *env) waitTask(id string, limit time.Duration, ok func(storage.Task) bool) storage.Task {
	e.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		tk, err := e.store.Task(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if ok(tk) {
			return tk
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s: still %s (%s) after %s", id, tk.Status, tk.Reason, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func final(t storage.Task) bool { return t.Status.Terminal() }

// sleepy runs each task for d, counting how many run at once per device.
type sleepy struct {
	d       time.Duration
	mu      sync.Mutex
	now     map[string]int
	most    int
	started []string
}

func (s *sleepy) Run(ctx context.Context, t storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
	s.mu.Lock()
	if s.now == nil {
		s.now = map[string]int{}
	}
	s.now[t.Device]++
	s.most = max(s.most, s.now[t.Device])
	s.started = append(s.started, t.ID)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.now[t.Device]--; s.mu.Unlock() }()
	emit(runtime.Event{Type: lifecycle.EventTaskStarted, Reason: t.Goal})
	select {
	case <-time.After(s.d):
		return runtime.Result{Status: lifecycle.Completed, Reason: "done"}
	case <-ctx.Done():
		return runtime.Result{Status: lifecycle.Cancelled, Reason: "stopped"}
	}
}

// Two workers offer the same phone (a misconfiguration River cannot see:
// its worker limit is per client): the lease keeps its tasks one at a time.
func TestLeaseKeepsTwoWorkersOffOnePhone(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	run := &sleepy{d: 150 * time.Millisecond}
	shared := func() *fakeDevices {
		return &fakeDevices{offers: []Offer{{Name: "sim:shared", Labels: map[string]string{}}}}
	}
	e.worker("a", shared(), run, nil)
	e.worker("b", shared(), run, nil)
	var ids []string
	for range 8 {
		tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:shared"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	for _, id := range ids {
		if tk := e.waitTask(id, 20*time.Second, final); tk.Status != lifecycle.Completed {
			t.Errorf("task %s: %s (%s)", id, tk.Status, tk.Reason)
		}
	}
	if run.most != 1 {
		t.Errorf("%d tasks ran on sim:shared at once", run.most)
	}
}

// waitRegistered waits until the farm lists the named devices (a worker
// registers its devices when it starts, after e.worker returned).
// until waits for cond, checked every 20 ms, for at most 10 s.
func (e *env) until(what string, cond func() bool) {
	e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// waitBeats waits until the worker named has said it is alive n more
// times (its heartbeat row moved n times).
func (e *env) waitBeats(name string, n int) {
	e.t.Helper()
	var last time.Time
	seen := -1
	e.until(fmt.Sprintf("%d heartbeats of worker %s", n, name), func() bool {
		var hb time.Time
		if err := e.pool.QueryRow(e.ctx, "SELECT heartbeat FROM farm_workers WHERE name = $1", name).Scan(&hb); err != nil {
			return false
		}
		if !hb.Equal(last) {
			seen, last = seen+1, hb
		}
		return seen >= n
	})
}

func (e *env) waitRegistered(names ...string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := e.pool.QueryRow(e.ctx, "SELECT count(*) FROM farm_devices WHERE name = ANY($1)", names).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		if n == len(names) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the farm lists %d of the devices %v after 10 s", n, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Tasks for any device with labels go to a matching device only, in the
// order they were submitted; one whose labels no device of the farm has is
// refused at submit, saying what labels the farm has.
func TestAnyDeviceRoutesByLabels(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	run := &sleepy{d: 30 * time.Millisecond}
	// Each device has more labels than the tasks ask for: a device takes a
	// task whose labels are a subset of its own.
	e.worker("a", &fakeDevices{offers: []Offer{
		{Name: "sim:en", Labels: map[string]string{"locale": "en", "rack": "a"}},
		{Name: "sim:zh", Labels: map[string]string{"locale": "zh", "rack": "b"}},
	}}, run, nil)
	e.waitRegistered("sim:en", "sim:zh")
	var zh []string
	for range 5 {
		tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: AnyDevice, Labels: map[string]string{"locale": "zh"}})
		if err != nil {
			t.Fatal(err)
		}
		zh = append(zh, tk.ID)
	}
	_, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: AnyDevice, Labels: map[string]string{"locale": "fr", "rack": "b"}})
	if !errors.Is(err, task.ErrUnroutable) {
		t.Errorf("a task whose labels no device has: %v, want a refusal (task.ErrUnroutable)", err)
	} else if msg := err.Error(); !strings.Contains(msg, "locale=fr rack=b") || !strings.Contains(msg, "locale=en|zh") || !strings.Contains(msg, "rack=a|b") {
		t.Errorf("the refusal %q should name the labels asked for and those the farm's devices have", msg)
	}
	// Each label is some device's, but no device has both.
	if _, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: AnyDevice, Labels: map[string]string{"locale": "zh", "rack": "a"}}); !errors.Is(err, task.ErrUnroutable) {
		t.Errorf("labels no one device has together: %v, want a refusal", err)
	}
	for _, id := range zh {
		tk := e.waitTask(id, 10*time.Second, final)
		if tk.Status != lifecycle.Completed || tk.Device != "sim:zh" {
			t.Errorf("zh task %s: %s on %s (%s)", id, tk.Status, tk.Device, tk.Reason)
		}
	}
	run.mu.Lock()
	order := append([]string(nil), run.started...)
	run.mu.Unlock()
	if fmt.Sprint(order) != fmt.Sprint(zh) {
		t.Errorf("started in order %v, submitted %v", order, zh)
	}
	var n int
	if err := e.pool.QueryRow(e.ctx, "SELECT count(*) FROM tasks").Scan(&n); err != nil || n != len(zh) {
		t.Errorf("%d tasks stored (%v), want the %d accepted ones: a refused task leaves nothing behind", n, err, len(zh))
	}
	if _, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:en", Labels: map[string]string{"locale": "en"}}); !errors.Is(err, ErrBadLabels) {
		t.Errorf("labels on a named device: %v", err)
	}
}

// A task whose labels only an offline device has is accepted and waits;
// it runs when that device's worker comes back. In an empty farm an "any"
// task is refused.
func TestAnyDeviceWaitsForAnOfflineMatch(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	if _, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: AnyDevice}); !errors.Is(err, task.ErrUnroutable) {
		t.Errorf("an any task in a farm with no devices: %v, want a refusal", err)
	}
	run := &sleepy{d: 10 * time.Millisecond}
	ja := func() *fakeDevices {
		return &fakeDevices{offers: []Offer{{Name: "sim:ja", Labels: map[string]string{"locale": "ja"}}}}
	}
	w := e.worker("a", ja(), run, nil)
	e.waitRegistered("sim:ja")
	e.waitBeats("a", 1) // running: River started, the beats begun
	w.stop()            // its devices go offline
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: AnyDevice, Labels: map[string]string{"locale": "ja"}})
	if err != nil {
		t.Fatalf("a task whose labels an offline device has: %v, want it accepted", err)
	}
	// Another worker, whose device lacks the label, looks at the shared
	// queue (it takes a later task that it matches) and beats twice (its
	// reaper runs in each beat): the ja task still waits.
	e.worker("b", &fakeDevices{offers: []Offer{{Name: "sim:en", Labels: map[string]string{"locale": "en"}}}}, run, nil)
	e.waitRegistered("sim:en")
	later, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: AnyDevice, Labels: map[string]string{"locale": "en"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.waitTask(later.ID, 10*time.Second, final); got.Status != lifecycle.Completed || got.Device != "sim:en" {
		t.Fatalf("the later en task is %s on %s (%s), want completed on sim:en", got.Status, got.Device, got.Reason)
	}
	e.waitBeats("b", 2)
	if got, _ := e.store.Task(e.ctx, tk.ID); got.Status != lifecycle.Queued {
		t.Fatalf("with its only device offline the task is %s on %s (%s), want queued", got.Status, got.Device, got.Reason)
	}
	e.worker("a", ja(), run, nil)
	if got := e.waitTask(tk.ID, 10*time.Second, final); got.Status != lifecycle.Completed || got.Device != "sim:ja" {
		t.Errorf("once sim:ja is back the task is %s on %s (%s)", got.Status, got.Device, got.Reason)
	}
}

// held runs each task until the test lets its goal go.
type held struct {
	mu      sync.Mutex
	release map[string]chan struct{}
}

func newHeld(goals ...string) *held {
	h := &held{release: map[string]chan struct{}{}}
	for _, g := range goals {
		h.release[g] = make(chan struct{})
	}
	return h
}

func (h *held) Run(ctx context.Context, t storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
	h.mu.Lock()
	release := h.release[t.Goal]
	h.mu.Unlock()
	emit(runtime.Event{Type: lifecycle.EventTaskStarted, Reason: t.Goal})
	select {
	case <-release:
		return runtime.Result{Status: lifecycle.Completed, Reason: "done"}
	case <-ctx.Done():
		return runtime.Result{Status: lifecycle.Cancelled, Reason: "stopped"}
	}
}

func (h *held) let(goal string) { close(h.release[goal]) }

// An "any" task is not given to a phone whose own queue has a task
// waiting: it goes to a matching phone that is really free, and the task
// queued for sim:a keeps its turn there. Between sim:a's task and its next
// one, sim:a is free for a few milliseconds while its next task's job is
// being fetched; the test holds that moment open as a fetching River client
// does, by locking the job's row.
func TestAnyTaskSkipsAPhoneWithATaskWaiting(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	run := newHeld("first on a", "next on a", "any")
	run.let("any") // the any task itself ends at once
	en := map[string]string{"locale": "en"}
	e.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a", Labels: en}, {Name: "sim:b", Labels: en}}}, run, nil)
	e.waitRegistered("sim:a", "sim:b")
	submit := func(goal, dev string, labels map[string]string) string {
		t.Helper()
		tk, err := front.Submit(e.ctx, task.Request{Goal: goal, Device: dev, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		return tk.ID
	}
	jobState := func(id string) string {
		var state string
		if err := e.pool.QueryRow(e.ctx, "SELECT state FROM river_job WHERE args->>'task_id' = $1", id).Scan(&state); err != nil {
			t.Fatal(err)
		}
		return state
	}
	first := submit("first on a", "sim:a", nil)
	e.waitTask(first, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Running })
	next := submit("next on a", "sim:a", nil) // waits for sim:a

	fetching, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fetching.Rollback(e.ctx) }()
	if _, err := fetching.Exec(e.ctx, "SELECT id FROM river_job WHERE args->>'task_id' = $1 FOR UPDATE", next); err != nil {
		t.Fatal(err)
	}
	run.let("first on a")
	e.until("the first task's job to end (sim:a's worker let go of the phone)", func() bool { return jobState(first) == "completed" })

	anyID := submit("any", AnyDevice, en)
	got := e.waitTask(anyID, 10*time.Second, final)
	if got.Status != lifecycle.Completed || got.Device != "sim:b" {
		t.Errorf("the any task: %s on %s (%s); want completed on sim:b, the free phone, not on sim:a ahead of the task waiting there", got.Status, got.Device, got.Reason)
	}
	if nt, _ := e.store.Task(e.ctx, next); nt.Status != lifecycle.Queued || jobState(next) != "available" {
		t.Errorf("sim:a's next task is %s (job %s) while its job is being fetched, want queued", nt.Status, jobState(next))
	}
	if err := fetching.Rollback(e.ctx); err != nil {
		t.Fatal(err)
	}
	run.let("next on a")
	if nt := e.waitTask(next, 10*time.Second, final); nt.Status != lifecycle.Completed || nt.Device != "sim:a" {
		t.Errorf("sim:a's next task: %s on %s (%s)", nt.Status, nt.Device, nt.Reason)
	}
}

// gated asks a person to approve before it completes.
type gated struct{}

func (gated) Run(ctx context.Context, t storage.Task, _ device.Device, emit func(runtime.Event), p runtime.Person) runtime.Result {
	d, err := p.Approve(ctx, runtime.Approval{Step: 1})
	switch {
	case err != nil:
		return runtime.Result{Status: lifecycle.Cancelled, Reason: err.Error()}
	case !d.Approved:
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseApprovalDenied, Reason: "denied by " + d.By}
	}
	return runtime.Result{Status: lifecycle.Completed, Reason: "approved by " + d.By}
}

// A task waiting for approval outlives the front it was submitted through,
// and another front approves it; cancels from another front land at once.
func TestApproveAndCancelFromAnotherFront(t *testing.T) {
	e := newEnv(t)
	first, stopFirst := e.front()
	e.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a"}, {Name: "sim:b"}}}, gated{}, nil)
	waiting, err := first.Submit(e.ctx, task.Request{Goal: "pay", Device: "sim:a"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := first.Submit(e.ctx, task.Request{Goal: "pay", Device: "sim:b"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(waiting.ID, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.WaitingApproval })
	e.waitTask(other.ID, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.WaitingApproval })
	stopFirst() // serve restarts
	second, _ := e.front()
	got, err := second.Approve(e.ctx, waiting.ID, storage.ByAPI, "ok")
	if err != nil {
		t.Fatalf("approve from another front: %v", err)
	}
	if got.Status == lifecycle.WaitingApproval {
		t.Errorf("approve answered %s", got.Status)
	}
	if tk := e.waitTask(waiting.ID, 10*time.Second, final); tk.Status != lifecycle.Completed || tk.Reason != "approved by api" {
		t.Errorf("approved task: %s (%s)", tk.Status, tk.Reason)
	}
	if _, err := second.Approve(e.ctx, waiting.ID, storage.ByAPI, ""); !errors.Is(err, task.ErrConflict) {
		t.Errorf("approve of a finished task: %v", err)
	}
	start := time.Now()
	c, err := second.Cancel(e.ctx, other.ID)
	if err != nil || c.Status != lifecycle.Cancelled {
		t.Fatalf("cancel from another front: %v %s", err, c.Status)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %s", d)
	}
	if _, err := second.Cancel(e.ctx, other.ID); !errors.As(err, new(*storage.ConflictError)) {
		t.Errorf("second cancel: %v", err)
	}
}

// blocker runs until its context ends.
type blocker struct{ started, stopped atomic.Int32 }

func (b *blocker) Run(ctx context.Context, t storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
	b.started.Add(1)
	emit(runtime.Event{Type: lifecycle.EventTaskStarted})
	<-ctx.Done()
	b.stopped.Add(1)
	return runtime.Result{Status: lifecycle.Cancelled}
}

// proxy forwards TCP to PostgreSQL until cut.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
	// refused counts the connections refused while cut.
	refused int
}

func (p *proxy) refusals() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.cut {
				p.refused++
				p.mu.Unlock()
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// A worker that loses the database stops its task (its lease is gone and
// the farm ends the task interrupted), takes no work meanwhile, and takes
// work again when the database is back.
func TestWorkerLosesTheDatabase(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	u, _ := url.Parse(e.dsn)
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	cut := connect(t, u.String()) // the worker's view of the database, through the proxy
	run := &blocker{}
	cut.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a"}}}, run, nil)
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:a"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(tk.ID, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Running })
	p.setCut(true)
	got := e.waitTask(tk.ID, 10*time.Second, final)
	if got.Status != lifecycle.Interrupted || got.Cause != lifecycle.CauseInterrupted {
		t.Errorf("task of the cut-off worker: %s/%s (%s)", got.Status, got.Cause, got.Reason)
	}
	// Nothing of the cut-off worker's may still drive the phone. (When the
	// cut lands as the start was being written, the store says running but
	// the worker never got the answer and never ran the task: started 0.)
	deadline := time.Now().Add(5 * time.Second)
	for run.started.Load() != run.stopped.Load() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if started, stopped := run.started.Load(), run.stopped.Load(); started != stopped {
		t.Errorf("the cut-off worker kept driving the phone after its lease expired (%d runs started, %d stopped)", started, stopped)
	}
	waitingTask, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:a"})
	if err != nil {
		t.Fatal(err)
	}
	// The cut-off worker tries the database (its heartbeats, River's
	// fetches) three times after the task came, refused each time.
	from := p.refusals()
	e.until("the cut-off worker to try the database three more times", func() bool { return p.refusals() >= from+3 })
	if tk, _ := e.store.Task(e.ctx, waitingTask.ID); tk.Status != lifecycle.Queued {
		t.Errorf("a task started while its worker had no database: %s", tk.Status)
	}
	p.setCut(false)
	e.waitTask(waitingTask.ID, 20*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Running })
	if tk, _ := e.store.Task(e.ctx, tk.ID); tk.Status != lifecycle.Interrupted {
		t.Errorf("the interrupted task became %s when its worker came back", tk.Status)
	}
}

// With retry_interrupted, the tasks of a worker that died are queued again
// and run on the device once a worker has it.
func TestRetryInterrupted(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	u, _ := url.Parse(e.dsn)
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	cut := connect(t, u.String())
	dying := cut.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a"}}}, &blocker{}, func(c *WorkerConfig) { c.RetryInterrupted = true })
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:a"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(tk.ID, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Running })
	p.setCut(true) // as good as dead to the farm
	e.waitTask(tk.ID, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Queued })
	go dying.stop() // dead: it never comes back
	e.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a"}}}, &sleepy{d: 10 * time.Millisecond}, nil)
	if got := e.waitTask(tk.ID, 20*time.Second, final); got.Status != lifecycle.Completed {
		t.Errorf("re-queued task: %s (%s)", got.Status, got.Reason)
	}
}

// A phone plugged in after the worker started is offered; one unplugged is
// offline and its tasks wait for it; plugged back, it is offered again.
func TestHotPlug(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	f, err := NewFront(e.pool, e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	devs := &fakeDevices{offers: []Offer{{Name: "sim:a"}}}
	e.worker("a", devs, &sleepy{d: 10 * time.Millisecond}, nil)
	state := func(name string) DeviceState {
		d, ok, err := f.Device(e.ctx, name)
		if err != nil || !ok {
			return ""
		}
		return d.State
	}
	plug := func(on bool) {
		devs.mu.Lock()
		defer devs.mu.Unlock()
		devs.offers = []Offer{{Name: "sim:a"}}
		if on {
			devs.offers = append(devs.offers, Offer{Name: "sim:b", Labels: map[string]string{"usb": "hub-2"}})
		}
	}
	early, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:b"})
	if err != nil {
		t.Fatal(err)
	}
	plug(true)
	if got := e.waitTask(early.ID, 10*time.Second, final); got.Status != lifecycle.Completed {
		t.Fatalf("task for a phone plugged in later: %s (%s)", got.Status, got.Reason)
	}
	if d, _, _ := f.Device(e.ctx, "sim:b"); d.Labels["usb"] != "hub-2" || d.Host != "test" || d.Worker != "a" {
		t.Errorf("plugged-in device: %+v", d)
	}
	plug(false)
	deadline := time.Now().Add(5 * time.Second)
	for state("sim:b") != StateOffline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := state("sim:b"); s != StateOffline {
		t.Fatalf("unplugged device is %q", s)
	}
	late, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:b"})
	if err != nil {
		t.Fatal(err)
	}
	// The worker fetches the task's job and puts it off (snoozed) while
	// its phone is away.
	e.until("the worker to look at the task's job", func() bool {
		var looked bool
		err := e.pool.QueryRow(e.ctx, "SELECT attempted_at IS NOT NULL AND state <> 'running' FROM river_job WHERE args->>'task_id' = $1", late.ID).Scan(&looked)
		return err == nil && looked
	})
	if got, _ := e.store.Task(e.ctx, late.ID); got.Status != lifecycle.Queued {
		t.Errorf("task for an unplugged phone: %s (%s)", got.Status, got.Reason)
	}
	plug(true)
	if got := e.waitTask(late.ID, 10*time.Second, final); got.Status != lifecycle.Completed {
		t.Errorf("task for a phone plugged back: %s (%s)", got.Status, got.Reason)
	}
	deadline = time.Now().Add(5 * time.Second)
	for state("sim:b") != StateIdle && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // its lease goes just after the task's end
	}
	if s := state("sim:b"); s != StateIdle {
		t.Errorf("plugged-back device is %q", s)
	}
}

// A worker that dies after taking a device's lease but before its task
// started gives the job back: the task runs later, on a worker that has the
// device, instead of staying queued with no job.
func TestDeathBeforeStartGivesTheJobBack(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	u, _ := url.Parse(e.dsn)
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	cut := connect(t, u.String())
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	dying := cut.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:s"}}}, &sleepy{}, func(c *WorkerConfig) {
		c.Reset = func(ctx context.Context, _ device.Device, _ storage.Task, _ *storage.Task) error {
			select { // hangs before the task starts
			case <-stuck:
			case <-ctx.Done():
			}
			return errors.New("never reset")
		}
	})
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:s"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := e.pool.QueryRow(e.ctx, "SELECT count(*) FROM farm_leases WHERE task_id = $1", tk.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("worker a never took the lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.setCut(true) // a is as good as dead
	go dying.stop()
	e.worker("b", &fakeDevices{offers: []Offer{{Name: "sim:s"}}}, &sleepy{d: 10 * time.Millisecond}, nil)
	if got := e.waitTask(tk.ID, 20*time.Second, final); got.Status != lifecycle.Completed {
		t.Errorf("task whose worker died before starting it: %s (%s)", got.Status, got.Reason)
	}
}

// A front's event stream follows a task another process runs as it
// happens: LISTEN/NOTIFY wakes it, not its (here one-minute) poll.
func TestWatchFollowsAWorkerLive(t *testing.T) {
	e := newEnv(t)
	front, _ := e.frontPolling(time.Minute)
	e.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a"}}}, &sleepy{d: 200 * time.Millisecond}, nil)
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:a"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	var types []lifecycle.EventType
	start := time.Now()
	got, err := front.Watch(ctx, tk.ID, 0, func(ev storage.Event) error {
		types = append(types, ev.Type)
		return nil
	})
	if err != nil {
		t.Fatalf("watch: %v after %s (events %v)", err, time.Since(start), types)
	}
	if got.Status != lifecycle.Completed || len(types) < 4 || types[len(types)-1] != lifecycle.EventStatus {
		t.Errorf("watch ended with %s, events %v", got.Status, types)
	}
	if !slices.Contains(types, lifecycle.EventTaskStarted) {
		t.Errorf("the worker's task_started never reached the front: %v", types)
	}
}

// A job whose Work fails every attempt before its task starts (here the
// database refuses the device's lease) is discarded by River; its task
// must not stay queued forever: it fails, cause interrupted, saying why.
func TestDiscardedJobFailsItsTask(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	// A database error on every lease: Work returns it, River retries.
	_, err := e.pool.Exec(e.ctx, `CREATE FUNCTION refuse_lease() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'lease table on fire (test)'; END $$;
		CREATE TRIGGER refuse_lease BEFORE INSERT ON farm_leases FOR EACH ROW EXECUTE FUNCTION refuse_lease()`)
	if err != nil {
		t.Fatal(err)
	}
	run := &sleepy{d: time.Millisecond}
	e.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:x", Labels: map[string]string{}}}}, run, nil)
	e.waitRegistered("sim:x")
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:x"})
	if err != nil {
		t.Fatal(err)
	}
	// River waits attempt⁴ seconds between attempts; the test does not:
	// each retry is made due at once (the attempts and their errors stay
	// River's).
	deadline := time.Now().Add(30 * time.Second)
	var got storage.Task
	for {
		if _, err := e.pool.Exec(e.ctx, "UPDATE river_job SET state = 'available', scheduled_at = now() WHERE state = 'retryable'"); err != nil {
			t.Fatal(err)
		}
		if got, err = e.store.Task(e.ctx, tk.ID); err != nil {
			t.Fatal(err)
		}
		if got.Status.Terminal() || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var state string
	var attempts int
	if err := e.pool.QueryRow(e.ctx, "SELECT state, attempt FROM river_job WHERE args->>'task_id' = $1", tk.ID).Scan(&state, &attempts); err != nil {
		t.Fatal(err)
	}
	if got.Status != lifecycle.Failed || got.Cause != lifecycle.CauseInterrupted {
		t.Fatalf("task %s, cause %q (%s), its job %s after %d attempts; want failed, cause interrupted", got.Status, got.Cause, got.Reason, state, attempts)
	}
	if state != "discarded" || attempts != maxAttempts {
		t.Errorf("its job is %s after %d attempts, want discarded after %d", state, attempts, maxAttempts)
	}
	if !strings.Contains(got.Reason, fmt.Sprintf("failed %d times", maxAttempts)) || !strings.Contains(got.Reason, "lease table on fire") {
		t.Errorf("reason %q should say the job failed %d times and the last error", got.Reason, maxAttempts)
	}
	if len(run.started) != 0 {
		t.Errorf("the task ran: %v", run.started)
	}
	// The final status event follows the status change.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		evs, err := e.store.Events(e.ctx, tk.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		var d task.StatusData
		if last.Type == lifecycle.EventStatus && json.Unmarshal(last.Data, &d) == nil && d.Status == lifecycle.Failed && d.Cause == lifecycle.CauseInterrupted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("last event %s %s, want the failed status (a stream of the task ends)", last.Type, last.Data)
		}
	}
}

// Every rule of "can a device of the farm take this task" and its
// opposite, as submit asks it of the devices' labels (online or offline).
func TestRoutingRules(t *testing.T) {
	e := newEnv(t)
	e.front() // the schema
	add := func(name string, online bool, labels map[string]string) {
		if _, err := e.pool.Exec(e.ctx, `INSERT INTO farm_devices (name, worker, host, queue, labels, online, seen)
			VALUES ($1, 'w', 'h', $1, $2, $3, now())`, name, labelsJSON(labels), online); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(want map[string]string) error {
		var err error
		txErr := pgx.BeginFunc(e.ctx, e.pool, func(tx pgx.Tx) error { err = routable(e.ctx, tx, want); return nil })
		if txErr != nil {
			t.Fatal(txErr)
		}
		return err
	}
	if err := ask(nil); !errors.Is(err, task.ErrUnroutable) {
		t.Errorf("a farm with no devices takes an any task: %v", err)
	}
	add("sim:a", true, map[string]string{"locale": "zh", "rack": "a"})
	add("sim:b", false, map[string]string{"locale": "ja", "rack": "b"})
	for _, c := range []struct {
		rule string
		want map[string]string
		ok   bool
	}{
		{"no labels: any device takes it", nil, true},
		{"labels a device has exactly", map[string]string{"locale": "zh", "rack": "a"}, true},
		{"labels a subset of a device's", map[string]string{"locale": "zh"}, true},
		{"opposite: more labels than any device has", map[string]string{"locale": "zh", "rack": "a", "gpu": "yes"}, false},
		{"opposite: a value no device has", map[string]string{"locale": "fr"}, false},
		{"opposite: a key no device has", map[string]string{"os": "ios"}, false},
		{"opposite: each label some device's, no device both", map[string]string{"locale": "zh", "rack": "b"}, false},
		{"an offline device's labels: accepted, it waits for it", map[string]string{"locale": "ja"}, true},
	} {
		err := ask(c.want)
		if got := err == nil; got != c.ok {
			t.Errorf("%s: %v → %v, want accepted=%v", c.rule, c.want, err, c.ok)
		}
		if err != nil && !errors.Is(err, task.ErrUnroutable) {
			t.Errorf("%s: %v does not wrap task.ErrUnroutable", c.rule, err)
		}
	}
}

// A running task whose lease row is gone (the farm reaped it, or another
// worker took the phone over) is stopped at the worker's next heartbeat:
// two tasks must never drive one phone.
func TestRunningTaskWithoutItsLeaseIsStopped(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	run := &blocker{}
	e.worker("a", &fakeDevices{offers: []Offer{{Name: "sim:a"}}}, run, nil)
	tk, err := front.Submit(e.ctx, task.Request{Goal: "g", Device: "sim:a"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(tk.ID, 10*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Running })
	tag, err := e.pool.Exec(e.ctx, "DELETE FROM farm_leases WHERE task_id = $1", tk.ID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("delete the task's lease: %v (%d rows)", err, tag.RowsAffected())
	}
	got := e.waitTask(tk.ID, 10*time.Second, final)
	if got.Status == lifecycle.Completed || run.stopped.Load() != 1 {
		t.Errorf("the task whose lease is gone: %s (%s), runs stopped %d; want it stopped", got.Status, got.Reason, run.stopped.Load())
	}
	if !strings.Contains(got.Reason, "lease") {
		t.Errorf("the stopped task's reason %q does not say it lost its lease", got.Reason)
	}
}

// finisher runs a task to its end once released: one step on the phone,
// then completed. It does not look at its context: what it did on the
// phone is done.
type finisher struct {
	started atomic.Int32
	release chan struct{}
}

func (f *finisher) Run(ctx context.Context, t storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
	f.started.Add(1)
	<-f.release
	call := tools.NewCall(tools.Tap, map[string]int{"element": 1})
	rec := plan.StepRecord{Number: 1, Intent: "tap Pay", Call: call, Status: lifecycle.StepSucceeded,
		Attempts: []plan.Attempt{{Number: 1, Result: "tapped"}}}
	emit(runtime.Event{Type: lifecycle.EventStepFinished, Step: 1, Call: &call, Record: &rec})
	return runtime.Result{Status: lifecycle.Completed, Reason: "done"}
}

// The storage outage: ten tasks on ten phones of one worker finish
// every step while PostgreSQL is out of the worker's reach for longer than
// its lease; meanwhile the farm (a front that still reaches the database)
// reaps the lapsed leases and marks the ten interrupted. When the database
// is back the worker's records are written, and its final write wins: the
// ten end completed, each with its step, and their last status event says
// completed.
func TestStorageOutageKeepsFinishedTasksCompleted(t *testing.T) {
	e := newEnv(t)
	front, _ := e.front()
	u, _ := url.Parse(e.dsn)
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	cut := connect(t, u.String()) // the worker's view of the database, through the proxy
	run := &finisher{release: make(chan struct{})}
	var offers []Offer
	for i := range 10 {
		offers = append(offers, Offer{Name: fmt.Sprintf("sim:%d", i)})
	}
	cut.worker("a", &fakeDevices{offers: offers}, run, nil)
	var ids []string
	for _, o := range offers {
		tk, err := front.Submit(e.ctx, task.Request{Goal: "buy", Device: o.Name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	for _, id := range ids {
		e.waitTask(id, 20*time.Second, func(t storage.Task) bool { return t.Status == lifecycle.Running })
	}
	for run.started.Load() < 10 {
		time.Sleep(10 * time.Millisecond)
	}
	p.setCut(true)
	close(run.release) // every task finishes its steps on the phone, the database away
	for _, id := range ids {
		got := e.waitTask(id, 20*time.Second, final)
		if got.Status != lifecycle.Interrupted {
			t.Fatalf("while the worker was cut off, task %s became %s (%s); the outage did not outlast the lease", id, got.Status, got.Reason)
		}
	}
	// The reaper's status events are written too before the database is
	// back (the outage outlasts the whole reap).
	for _, id := range ids {
		for deadline := time.Now().Add(10 * time.Second); lastStatus(t, e, id) != lifecycle.Interrupted; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("task %s: no interrupted status event", id)
			}
		}
	}
	p.setCut(false)
	for _, id := range ids {
		got := e.waitTask(id, 30*time.Second, func(t storage.Task) bool { return t.Status != lifecycle.Interrupted })
		if got.Status != lifecycle.Completed || got.Cause != lifecycle.CauseNone {
			t.Errorf("task %s after the outage: %s/%s (%s), want completed", id, got.Status, got.Cause, got.Reason)
		}
		if steps, err := e.store.Steps(e.ctx, id); err != nil || len(steps) != 1 {
			t.Errorf("task %s: %d steps recorded (%v), want its one step", id, len(steps), err)
		}
		for deadline := time.Now().Add(10 * time.Second); lastStatus(t, e, id) != lifecycle.Completed; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("task %s: last status event %s, want completed", id, lastStatus(t, e, id))
				break
			}
		}
	}
}

// lastStatus is the status of a task's last status event.
func lastStatus(t *testing.T, e *env, id string) lifecycle.Status {
	t.Helper()
	evs, err := e.store.Events(e.ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var last task.StatusData
	for _, ev := range evs {
		if ev.Type == lifecycle.EventStatus {
			_ = json.Unmarshal(ev.Data, &last)
		}
	}
	return last.Status
}
