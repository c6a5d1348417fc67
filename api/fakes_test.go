package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
	"phonepilot/tools"
)

// fakeDevice is a phone that shows one fixed screen and counts the taps
// that reached it (its state).
type fakeDevice struct {
	name string
	mu   sync.Mutex
	taps int
}

var _ device.Device = (*fakeDevice)(nil)

func (d *fakeDevice) Scene(ctx context.Context) (*scene.Scene, error) {
	return &scene.Scene{Width: 1080, Height: 2400, Package: "com.example", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}, Enabled: true},
		{Index: 1, Parent: 0, Depth: 1, Class: "Button", Text: "OK", Bounds: scene.Bounds{Left: 100, Top: 200, Right: 500, Bottom: 300}, Clickable: true, Enabled: true},
	}}, nil
}
func (d *fakeDevice) Tap(ctx context.Context, x, y int) error {
	d.mu.Lock()
	d.taps++
	d.mu.Unlock()
	return nil
}
func (d *fakeDevice) LongPress(ctx context.Context, x, y int, dur time.Duration) error {
	return nil
}
func (d *fakeDevice) Swipe(ctx context.Context, x1, y1, x2, y2 int, dur time.Duration) error {
	return nil
}
func (d *fakeDevice) TypeText(ctx context.Context, text string) error { return nil }
func (d *fakeDevice) Key(ctx context.Context, k device.Key) error     { return nil }
func (d *fakeDevice) LaunchApp(ctx context.Context, app string) error { return nil }

// fakeDevices accepts "sim" and "sim:NAME", and keeps one phone per name.
// sim:nostate is a phone that reports no state.
type fakeDevices struct {
	mu     sync.Mutex
	opened []string
	phones map[string]*fakeDevice
}

func (f *fakeDevices) Check(name string) error {
	if name == "sim" || strings.HasPrefix(name, "sim:") && len(name) > 4 {
		return nil
	}
	return fmt.Errorf("unknown device %q (want sim or sim:NAME)", name)
}

func (f *fakeDevices) Open(ctx context.Context, name string) (device.Device, func(), error) {
	f.mu.Lock()
	f.opened = append(f.opened, name)
	f.mu.Unlock()
	if name == "sim:broken" {
		return nil, nil, errors.New("device offline")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.phones == nil {
		f.phones = map[string]*fakeDevice{}
	}
	d, ok := f.phones[name]
	if !ok {
		d = &fakeDevice{name: name}
		f.phones[name] = d
	}
	return d, func() {}, nil
}

func (f *fakeDevices) State(ctx context.Context, name string) (json.RawMessage, error) {
	if err := f.Check(name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownDevice, err)
	}
	if name == "sim:nostate" {
		return nil, fmt.Errorf("%w: %s is a real phone", ErrNoState, name)
	}
	f.mu.Lock()
	d, ok := f.phones[name]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s: no task opened it yet", ErrUnknownDevice, name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return json.Marshal(map[string]any{"taps": d.taps})
}

func (f *fakeDevices) List(ctx context.Context) ([]DeviceInfo, error) {
	return []DeviceInfo{{Name: "sim", Kind: "sim", State: "device"}, {Name: "sim:a", Kind: "sim", State: "device"}}, nil
}

// fakeRunner records a fixed number of steps per task. When gate is set,
// each step waits for a value on it (or for cancellation), so tests control
// progress.
type fakeRunner struct {
	steps int
	gate  chan struct{}
	// ask, when set, makes every step wait for a person before its tap
	// reaches the phone: an approval (denied: the task fails
	// approval_denied, the tap never happens) or a question (the answer
	// ends up in the task's reason).
	ask lifecycle.PendingKind

	mu      sync.Mutex
	active  map[string]int // device → tasks running now
	maxSeen map[string]int
	order   []string // task goals in the order they started
	started chan string
}

func newFakeRunner(steps int) *fakeRunner {
	return &fakeRunner{steps: steps, active: map[string]int{}, maxSeen: map[string]int{}, started: make(chan string, 100)}
}

func (f *fakeRunner) Run(ctx context.Context, task storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
	f.mu.Lock()
	f.active[task.Device]++
	f.maxSeen[task.Device] = max(f.maxSeen[task.Device], f.active[task.Device])
	f.order = append(f.order, task.Goal)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.active[task.Device]--
		f.mu.Unlock()
	}()
	f.started <- task.ID
	emit(runtime.Event{Type: lifecycle.EventTaskStarted, Time: time.Now(), Reason: task.Goal})
	sc, _ := dev.Scene(ctx)
	reason := "done"
	for n := 1; n <= f.steps; n++ {
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				return runtime.Result{Status: lifecycle.Cancelled, Cause: lifecycle.CauseCancelled, Reason: "cancelled"}
			}
		}
		if err := ctx.Err(); err != nil {
			return runtime.Result{Status: lifecycle.Cancelled, Cause: lifecycle.CauseCancelled, Reason: "cancelled"}
		}
		call := tools.NewCall(tools.Tap, map[string]int{"element": 1})
		emit(runtime.Event{Type: lifecycle.EventStepStarted, Step: n, Call: &call, Scene: sc})
		if res, stop := f.askPerson(ctx, person, n, call, sc); stop {
			return res
		} else if res.Reason != "" {
			reason = res.Reason
		}
		if err := dev.Tap(ctx, 300, 250); err != nil {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseDeviceGone, Reason: err.Error()}
		}
		rec := plan.StepRecord{Number: n, Intent: fmt.Sprintf("step %d", n), Call: call,
			Attempts: []plan.Attempt{{Number: 1, Result: "tapped [1] Button \"OK\"", Changed: true}}, Status: lifecycle.StepSucceeded,
			Started: time.Now(), Duration: time.Millisecond}
		emit(runtime.Event{Type: lifecycle.EventStepFinished, Step: n, Call: &call, Record: &rec, Scene: sc})
	}
	return runtime.Result{Status: lifecycle.Completed, Reason: reason, Usage: plan.Usage{InputTokens: 5}, FinalScene: sc}
}

// askPerson waits for the person f.ask says; stop is set when the task
// ends there (denied, timed out, cancelled).
func (f *fakeRunner) askPerson(ctx context.Context, person runtime.Person, n int, call tools.Call, sc *scene.Scene) (res runtime.Result, stop bool) {
	ended := func(err error) (runtime.Result, bool) {
		if ctx.Err() != nil {
			return runtime.Result{Status: lifecycle.Cancelled, Cause: lifecycle.CauseCancelled, Reason: "cancelled"}, true
		}
		cause := lifecycle.CauseApprovalTimeout
		if errors.Is(err, runtime.ErrAnswerTimeout) {
			cause = lifecycle.CauseUserTimeout
		}
		return runtime.Result{Status: lifecycle.Failed, Cause: cause, Reason: err.Error()}, true
	}
	switch f.ask {
	case lifecycle.PendingApproval:
		el := sc.Elements[1]
		d, err := person.Approve(ctx, runtime.Approval{Step: n, Call: call, Element: &el, Scene: sc,
			Decision: safety.Decision{Verdict: safety.Confirm, Category: safety.Payment, Reason: `"OK" on [1] Button, in com.example`}})
		if err != nil {
			return ended(err)
		}
		if !d.Approved {
			return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseApprovalDenied, Reason: fmt.Sprintf("denied by %s: %s", d.By, d.Note)}, true
		}
	case lifecycle.PendingQuestion:
		a, err := person.Ask(ctx, runtime.Question{Step: n, Call: tools.NewCall("ask_user", map[string]string{"question": "What is the code?"}), Text: "What is the code?", Scene: sc})
		if err != nil {
			return ended(err)
		}
		return runtime.Result{Reason: fmt.Sprintf("answered by %s: %s", a.By, a.Text)}, false
	}
	return runtime.Result{}, false
}

type harness struct {
	t       testing.TB
	srv     *Server
	ts      *httptest.Server
	store   storage.Store
	runner  *fakeRunner
	devices *fakeDevices
	token   string
}

func newHarness(t testing.TB, runner *fakeRunner, mutate func(*Config), tmutate ...func(*task.Config)) *harness {
	t.Helper()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newHarnessOn(t, store, runner, mutate, tmutate...)
}

func newHarnessOn(t testing.TB, store storage.Store, runner *fakeRunner, mutate func(*Config), tmutate ...func(*task.Config)) *harness {
	t.Helper()
	cfg := Defaults()
	if mutate != nil {
		mutate(&cfg)
	}
	tcfg := task.Config{PollInterval: 50 * time.Millisecond}
	for _, m := range tmutate {
		m(&tcfg)
	}
	devs := &fakeDevices{}
	log := testlog.New(t)
	if _, bench := t.(*testing.B); bench {
		log = slog.New(slog.DiscardHandler)
	}
	tcfg.Logger = log
	svc, err := task.New(tcfg, store, devs, runner)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(cfg, svc, devs, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Served as phonepilot's listeners serve it: behind the door.
	ts := httptest.NewUnstartedServer(nil)
	door, err := Door(ts.Listener.Addr().String(), DoorConfig{}, srv.Handler())
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = door
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return &harness{t: t, srv: srv, ts: ts, store: store, runner: runner, devices: devs, token: cfg.Token}
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (h *harness) do(method, path, body string, out any) *http.Response {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.ts.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			h.t.Fatalf("%s %s: %d, body %q is not the expected JSON: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp
}

func (h *harness) create(goal, dev string) storage.Task {
	h.t.Helper()
	var task storage.Task
	body, _ := json.Marshal(map[string]any{"goal": goal, "device": dev})
	resp := h.do("POST", "/v1/tasks", string(body), &task)
	if resp.StatusCode != http.StatusAccepted {
		h.t.Fatalf("POST /v1/tasks = %d", resp.StatusCode)
	}
	return task
}

// waitStatus polls the task until it has one of the statuses.
func (h *harness) waitStatus(id string, want ...lifecycle.Status) storage.Task {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var task storage.Task
		h.do("GET", "/v1/tasks/"+id, "", &task)
		for _, w := range want {
			if task.Status == w {
				return task
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("task %s is %s, want %v", id, task.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	ID, Event string
	Data      string
}

// readSSE parses a stream until it ends, sending each event on out.
func readSSE(r io.Reader, out chan<- sseEvent) error {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" || ev.Data != "" {
				out <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.Data += line[6:]
		}
	}
	return sc.Err()
}
