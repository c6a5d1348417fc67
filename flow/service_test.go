package flow

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

// oneSim is the task service's Devices: one simulated phone named "sim".
type oneSim struct{ p *sim.Phone }

func (d oneSim) Check(name string) error {
	if name != "sim" {
		return os.ErrNotExist
	}
	return nil
}

func (d oneSim) Open(ctx context.Context, name string) (device.Device, func(), error) {
	return d.p.Device(), func() {}, nil
}

// flowRunner is what `serve` does with a flow task: the flow it carries,
// replayed by the runtime (on the phone's fake clock).
func flowRunner(t *testing.T, clk clock.Clock) task.Runner {
	return task.RunnerFunc(func(ctx context.Context, tk storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
		run, err := FromTask(tk)
		if err != nil {
			return runtime.Result{Status: lifecycle.Failed, Reason: err.Error()}
		}
		fp, err := NewPlanner(run.Flow, Options{Params: run.Params})
		if err != nil {
			return runtime.Result{Status: lifecycle.Failed, Reason: err.Error()}
		}
		r, err := runtime.New(runtime.Defaults(), dev, fp, runtime.Options{Clock: clk, Logger: testlog.New(t), OnEvent: emit, Person: person})
		if err != nil {
			return runtime.Result{Status: lifecycle.Failed, Reason: err.Error()}
		}
		return r.Run(ctx, tk.Goal)
	})
}

func TestAFlowThatReachesAPaymentWaitsForApproval(t *testing.T) {
	data, err := os.ReadFile("testdata/taobao_buy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	phone, err := sim.New(sim.Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := task.New(task.Config{Logger: testlog.New(t)}, store, oneSim{phone}, flowRunner(t, clk))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)

	tk, err := Submit(ctx, svc, f, map[string]string{"query": "Mac mini M4"}, "sim")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Planner != PlannerName || tk.Goal != "open Taobao, search Mac mini M4 and buy the first result" {
		t.Errorf("task %q planner %q", tk.Goal, tk.Planner)
	}
	got := waitFor(t, svc, tk.ID, func(s lifecycle.Status) bool { return s.Waiting() || s.Terminal() })
	if got.Status != lifecycle.WaitingApproval || got.Pending == nil || got.Pending.Category != "payment" {
		t.Fatalf("task is %s (%s) pending %+v; want waiting_approval for a payment", got.Status, got.Reason, got.Pending)
	}
	if orders := taobaoOrders(t, phone); orders != 0 {
		t.Fatalf("%d orders while waiting for approval", orders)
	}
	if _, err := svc.Deny(ctx, tk.ID, storage.ByAPI, "not today"); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, svc, tk.ID, lifecycle.Status.Terminal)
	if end.Status != lifecycle.Failed || end.Cause != lifecycle.CauseApprovalDenied || taobaoOrders(t, phone) != 0 {
		t.Errorf("after deny: %s (%s) %s, %d orders; want failed (approval_denied) and nothing bought", end.Status, end.Cause, end.Reason, taobaoOrders(t, phone))
	}
	// The task carries the flow it ran, for readers (show, the web page).
	if run, err := FromTask(end); err != nil || run.Params["query"] != "Mac mini M4" || len(run.Flow.Steps) != 6 {
		t.Errorf("the stored flow: %+v, %v", run, err)
	}
}

func waitFor(t *testing.T, svc *task.Service, id string, done func(lifecycle.Status) bool) storage.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tk, err := svc.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if done(tk.Status) || time.Now().After(deadline) {
			return tk
		}
		time.Sleep(5 * time.Millisecond) // the service runs the task in its own goroutine, on real time
	}
}

func taobaoOrders(t *testing.T, p *sim.Phone) int {
	raw, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao struct {
			Orders []json.RawMessage `json:"orders"`
		} `json:"taobao"`
	}
	_ = json.Unmarshal(raw, &st)
	return len(st.Taobao.Orders)
}

// A policy that forbids payments refuses the flow's payment step outright:
// the flow ends with the refusal's cause, not as a step that failed.
func TestAFlowAgainstAPolicyThatDeniesPayments(t *testing.T) {
	data, err := os.ReadFile("testdata/taobao_buy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := safety.New(safety.Policy{Rules: safety.Rules{Payment: safety.Deny}})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := NewPlanner(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runtime.New(runtime.Defaults(), p.Device(), fp, runtime.Options{Clock: clk, Logger: testlog.New(t), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), fp.Goal())
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CausePolicyDenied || taobaoOrders(t, p) != 0 {
		t.Errorf("%s (%s) %s, %d orders; want failed with policy_denied and nothing bought", res.Status, res.Cause, res.Reason, taobaoOrders(t, p))
	}
}
