package task

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/tools"
)

// A shop whose only button is "Pay"; tapping it pays and shows "Paid".
func payScenes() (*scene.Scene, *scene.Scene) {
	pay := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.Button", Text: "Pay", Clickable: true, Enabled: true, Bounds: scene.Bounds{Left: 100, Top: 2000, Right: 980, Bottom: 2200}},
	}}
	paid := &scene.Scene{Width: 1080, Height: 2400, Package: "com.example.shop", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.TextView", Text: "Paid", Bounds: scene.Bounds{Left: 100, Top: 1000, Right: 980, Bottom: 1100}},
	}}
	return pay, paid
}

// payPlanner taps Pay while it is there and finishes once "Paid" shows.
type payPlanner struct{}

func (payPlanner) Plan(_ context.Context, in plan.Input) (plan.Decision, error) {
	for _, e := range in.Scene.Elements {
		if e.Text == "Paid" {
			return plan.Decision{Finish: &plan.Finish{Success: true, Reason: "paid"}}, nil
		}
	}
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "tap Pay", Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 0}),
		Expect: plan.Expectation{Kind: plan.ExpectChanged}}}}, nil
}

// shop opens one fake phone per task and counts the taps on it.
type shop struct {
	mu   sync.Mutex
	devs []*fake.Device
}

func (*shop) Check(string) error { return nil }

func (s *shop) Open(context.Context, string) (device.Device, func(), error) {
	d := fake.New(payScenes())
	s.mu.Lock()
	s.devs = append(s.devs, d)
	s.mu.Unlock()
	return d, func() {}, nil
}

func (s *shop) taps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.devs {
		for _, c := range d.Actions() {
			if c.Method == fake.MethodTap {
				n++
			}
		}
	}
	return n
}

// realRunner runs tasks with the runtime, the default safety gate and the
// service's person.
var realRunner = RunnerFunc(func(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
	cfg := runtime.Defaults()
	cfg.PollInterval, cfg.SettleTimeout, cfg.WaitTimeout = 2*time.Millisecond, 50*time.Millisecond, 200*time.Millisecond
	r, err := runtime.New(cfg, dev, payPlanner{}, runtime.Options{OnEvent: emit, Person: person})
	if err != nil {
		return runtime.Result{Status: lifecycle.Failed, Reason: err.Error()}
	}
	return r.Run(ctx, t.Goal)
})

func newShop(t *testing.T, mutate ...func(*Config)) (*Service, *shop) {
	t.Helper()
	sh := &shop{}
	cfg := Config{Logger: testlog.New(t), PollInterval: 20 * time.Millisecond, RetryBase: 2 * time.Millisecond,
		RetryMax: 10 * time.Millisecond, FlushGrace: 500 * time.Millisecond}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := New(cfg, openStore(t), sh, realRunner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s, sh
}

// submitWaiting submits the pay task and waits until it waits for approval,
// in the service and in the store.
func submitWaiting(t *testing.T, s *Service) storage.Task {
	t.Helper()
	tk, err := s.Submit(t.Context(), Request{Goal: "pay", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	var got storage.Task
	waitFor(t, "waiting_approval", func() bool {
		got, err = s.Get(t.Context(), tk.ID)
		return err == nil && got.Status == lifecycle.WaitingApproval
	})
	waitFor(t, "waiting_approval stored", func() bool {
		st, err := s.store.Task(t.Context(), tk.ID)
		return err == nil && st.Status == lifecycle.WaitingApproval && st.Pending != nil
	})
	return got
}

func finalOf(t *testing.T, s *Service, id string) storage.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	final, err := s.Watch(ctx, id, 0, func(storage.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return final
}

func eventsOf(t *testing.T, s *Service, id string) []storage.Event {
	t.Helper()
	evs, err := s.store.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestApproveRunsThePendingActionOnce(t *testing.T) {
	s, sh := newShop(t)
	w := submitWaiting(t, s)
	p := w.Pending
	if p == nil || p.Kind != lifecycle.PendingApproval || p.Category != "payment" || p.Element == nil || p.Element.Label != "Pay" ||
		p.Call.Name != tools.Tap || len(p.Scene) == 0 || p.Reason == "" || !p.Expires.Equal(p.Since.Add(DefaultWaitTimeout)) {
		t.Fatalf("pending = %+v; want the Pay tap, payment, its reason, its screen, 10 minutes to decide", p)
	}
	if n := sh.taps(); n != 0 {
		t.Fatalf("%d taps while waiting for approval; want none", n)
	}
	if _, err := s.Answer(t.Context(), w.ID, storage.ByAPI, "hello"); !errors.Is(err, ErrConflict) {
		t.Errorf("Answer to an approval: %v; want ErrConflict", err)
	}
	got, err := s.Approve(t.Context(), w.ID, storage.ByAPI, "go ahead")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != lifecycle.Running || got.Pending != nil {
		t.Errorf("after Approve: %s, pending %v; want running, nothing pending", got.Status, got.Pending)
	}
	final := finalOf(t, s, w.ID)
	if final.Status != lifecycle.Completed || final.Pending != nil {
		t.Errorf("final %s (%s), pending %v; want completed, nothing pending", final.Status, final.Reason, final.Pending)
	}
	if n := sh.taps(); n != 1 {
		t.Errorf("%d taps on Pay; want exactly 1", n)
	}
	if _, err := s.Approve(t.Context(), w.ID, storage.ByAPI, ""); !errors.Is(err, ErrConflict) {
		t.Errorf("second Approve: %v; want ErrConflict", err)
	}
	var types []lifecycle.EventType
	var decided storage.ApprovalDecidedEvent
	var statuses []lifecycle.Status
	for _, e := range eventsOf(t, s, w.ID) {
		types = append(types, e.Type)
		switch e.Type {
		case lifecycle.EventApprovalDecided:
			_ = json.Unmarshal(e.Data, &decided)
		case lifecycle.EventStatus:
			var sd StatusData
			_ = json.Unmarshal(e.Data, &sd)
			statuses = append(statuses, sd.Status)
		}
	}
	if !slices.Contains(types, lifecycle.EventApprovalRequested) || !decided.Approved || decided.By != "api" || decided.Note != "go ahead" {
		t.Errorf("events %v, decided %+v; want approval_requested and approval_decided by api with the note", types, decided)
	}
	want := []lifecycle.Status{lifecycle.Queued, lifecycle.Running, lifecycle.WaitingApproval, lifecycle.Running, lifecycle.Completed}
	if !slices.Equal(statuses, want) {
		t.Errorf("status events %v; want %v", statuses, want)
	}
}

func TestDenyRefusesAndTheTaskFailsApprovalDenied(t *testing.T) {
	s, sh := newShop(t)
	w := submitWaiting(t, s)
	if _, err := s.Deny(t.Context(), w.ID, storage.ByWeb, "too expensive"); err != nil {
		t.Fatal(err)
	}
	final := finalOf(t, s, w.ID)
	if final.Status != lifecycle.Failed || final.Cause != lifecycle.CauseApprovalDenied || sh.taps() != 0 {
		t.Errorf("final %s (%s: %s), %d taps; want failed approval_denied, no tap", final.Status, final.Cause, final.Reason, sh.taps())
	}
}

func TestConcurrentDecisionsExactlyOneWins(t *testing.T) {
	s, sh := newShop(t)
	w := submitWaiting(t, s)
	var wins, conflicts atomic.Int64
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			decide := s.Approve
			if i%2 == 1 {
				decide = s.Deny
			}
			_, err := decide(context.Background(), w.ID, storage.ByAPI, "")
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, ErrConflict):
				conflicts.Add(1)
			default:
				t.Errorf("decision: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != 15 {
		t.Errorf("%d wins, %d conflicts; want exactly one win", wins.Load(), conflicts.Load())
	}
	final := finalOf(t, s, w.ID)
	if taps := sh.taps(); taps > 1 || (final.Status == lifecycle.Completed) != (taps == 1) {
		t.Errorf("%d taps, final %s; the one decision ran the action at most once", taps, final.Status)
	}
}

func TestDecisionErrors(t *testing.T) {
	s, _ := newShop(t)
	if _, err := s.Approve(t.Context(), "tnosuchtask000000000", storage.ByAPI, ""); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Approve of no task: %v; want ErrNotFound", err)
	}
	w := submitWaiting(t, s)
	if _, err := s.Approve(t.Context(), w.ID, "", ""); err == nil {
		t.Errorf("a decision without who made it was taken")
	}
	if _, err := s.Cancel(t.Context(), w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(t.Context(), w.ID, storage.ByAPI, ""); !errors.Is(err, ErrConflict) {
		t.Errorf("Deny of a cancelled task: %v; want ErrConflict", err)
	}
}

func TestCancelWhileWaitingNeverRunsTheAction(t *testing.T) {
	s, sh := newShop(t)
	w := submitWaiting(t, s)
	got, err := s.Cancel(t.Context(), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != lifecycle.Cancelled || got.Pending != nil {
		t.Errorf("cancelled while waiting: %s, pending %v; want cancelled, nothing pending", got.Status, got.Pending)
	}
	final := finalOf(t, s, w.ID)
	if final.Status != lifecycle.Cancelled || final.Pending != nil || sh.taps() != 0 {
		t.Errorf("final %s, pending %v, %d taps; want cancelled, no tap", final.Status, final.Pending, sh.taps())
	}
}

func TestApprovalTimeout(t *testing.T) {
	// The fake clock passes the 10 minutes at once.
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	s, sh := newShop(t, func(c *Config) { c.Clock = clk })
	tk, err := s.Submit(t.Context(), Request{Goal: "pay", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	final := finalOf(t, s, tk.ID)
	if final.Status != lifecycle.Failed || final.Cause != lifecycle.CauseApprovalTimeout || sh.taps() != 0 {
		t.Errorf("final %s (%s: %s), %d taps; want failed approval_timeout, no tap", final.Status, final.Cause, final.Reason, sh.taps())
	}
	if !slices.Contains(clk.Sleeps(), DefaultWaitTimeout) {
		t.Errorf("sleeps %v; want the default 10 minute wait", clk.Sleeps())
	}
}

// askRunner asks a question and completes with the answer as its reason.
var askRunner = RunnerFunc(func(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
	sc, _ := dev.Scene(ctx)
	a, err := person.Ask(ctx, runtime.Question{Step: 1, Call: tools.NewCall(tools.AskUser, tools.AskUserArgs{Question: "Code?"}), Text: "Code?", Scene: sc})
	switch {
	case errors.Is(err, runtime.ErrAnswerTimeout):
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseUserTimeout, Reason: err.Error()}
	case err != nil:
		return runtime.Result{Status: lifecycle.Failed, Reason: err.Error()}
	}
	return runtime.Result{Status: lifecycle.Completed, Reason: a.By + " said " + a.Text}
})

func TestAnswerResumesWithTheText(t *testing.T) {
	sh := &shop{}
	s, err := New(Config{Logger: testlog.New(t), PollInterval: 20 * time.Millisecond}, openStore(t), sh, askRunner)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	tk, err := s.Submit(t.Context(), Request{Goal: "log in", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	var w storage.Task
	waitFor(t, "waiting_user", func() bool {
		w, err = s.Get(t.Context(), tk.ID)
		return err == nil && w.Status == lifecycle.WaitingUser
	})
	if w.Pending == nil || w.Pending.Kind != lifecycle.PendingQuestion || w.Pending.Question != "Code?" {
		t.Fatalf("pending %+v; want the question", w.Pending)
	}
	if _, err := s.Approve(t.Context(), tk.ID, storage.ByAPI, ""); !errors.Is(err, ErrConflict) {
		t.Errorf("Approve of a question: %v; want ErrConflict", err)
	}
	if _, err := s.Answer(t.Context(), tk.ID, storage.ByAPI, "482913"); err != nil {
		t.Fatal(err)
	}
	final := finalOf(t, s, tk.ID)
	if final.Status != lifecycle.Completed || final.Reason != "api said 482913" {
		t.Errorf("final %s (%s); want completed with the answer", final.Status, final.Reason)
	}
	var answered storage.QuestionAnsweredEvent
	for _, e := range eventsOf(t, s, tk.ID) {
		if e.Type == lifecycle.EventQuestionAnswered {
			_ = json.Unmarshal(e.Data, &answered)
		}
	}
	if answered.By != "api" || answered.Text != "482913" {
		t.Errorf("question_answered %+v; want by api with the text", answered)
	}
}

func TestAnswerTimeout(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	s, err := New(Config{Logger: testlog.New(t), PollInterval: 20 * time.Millisecond, Clock: clk, AnswerTimeout: time.Minute}, openStore(t), &shop{}, askRunner)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	tk, err := s.Submit(t.Context(), Request{Goal: "log in", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	final := finalOf(t, s, tk.ID)
	if final.Status != lifecycle.Failed || final.Cause != lifecycle.CauseUserTimeout || !slices.Contains(clk.Sleeps(), time.Minute) {
		t.Errorf("final %s (%s: %s), sleeps %v; want failed user_timeout after the configured minute", final.Status, final.Cause, final.Reason, clk.Sleeps())
	}
}
