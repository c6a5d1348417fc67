package mcpserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/flow"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/mcpserver"
	"phonepilot/plan"
	"phonepilot/plan/rule"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

// simDevices are in-process simulated phones, one per name (sim, sim:NAME).
type simDevices struct {
	mu     sync.Mutex
	phones map[string]*sim.Phone
}

func newSimDevices() *simDevices { return &simDevices{phones: map[string]*sim.Phone{}} }

func (d *simDevices) Check(name string) error {
	if name == "sim" || strings.HasPrefix(name, "sim:") && len(name) > 4 {
		return nil
	}
	return fmt.Errorf("%q is not a device: use sim or sim:NAME", name)
}

func (d *simDevices) phone(name string) (*sim.Phone, error) {
	if err := d.Check(name); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.phones[name]
	if !ok {
		var err error
		if p, err = sim.New(sim.Config{}); err != nil {
			return nil, err
		}
		d.phones[name] = p
	}
	return p, nil
}

func (d *simDevices) List(context.Context) ([]mcpserver.DeviceInfo, error) {
	return []mcpserver.DeviceInfo{{Name: "sim", Kind: "sim", State: "device"}}, nil
}

func (d *simDevices) Open(_ context.Context, name string) (mcpserver.Opened, error) {
	p, err := d.phone(name)
	if err != nil {
		return mcpserver.Opened{}, err
	}
	dev := p.Device()
	return mcpserver.Opened{Device: dev, Camera: dev, Release: func() {}}, nil
}

// taskDevices opens the same phones for the task service.
type taskDevices struct{ d *simDevices }

func (t taskDevices) Check(name string) error { return t.d.Check(name) }
func (t taskDevices) Open(_ context.Context, name string) (device.Device, func(), error) {
	p, err := t.d.phone(name)
	if err != nil {
		return nil, nil, err
	}
	return p.Device(), func() {}, nil
}

type harness struct {
	// logs has the server's lines: a test waits on the server's own
	// account of an event, not on a guessed real-time sleep.
	logs *testlog.Buffer
	// heldLooks counts the task service's looks at the lease table.
	heldLooks atomic.Int64
	srv       *mcpserver.Server
	devs      *simDevices
	svc       *task.Service
	clock     *clock.Fake
}

// blockGoal is a goal whose task runs until it is cancelled.
const blockGoal = "wait until cancelled"

func fastRuntime() runtime.Config {
	rc := runtime.Defaults()
	rc.PollInterval = 5 * time.Millisecond
	return rc
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, safety.Policy{})
}

// newHarnessWith is a harness whose gate applies policy.
func newHarnessWith(t *testing.T, policy safety.Policy) *harness {
	t.Helper()
	h := &harness{logs: &testlog.Buffer{}, devs: newSimDevices(), clock: clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))}
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	gate, err := safety.New(policy)
	if err != nil {
		t.Fatal(err)
	}
	runner := task.RunnerFunc(func(ctx context.Context, tk storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
		if tk.Goal == blockGoal {
			<-ctx.Done()
			return runtime.Result{Status: "cancelled", Cause: "cancelled", Reason: "cancelled"}
		}
		cfg := fastRuntime()
		cfg.MaxSteps = tk.MaxSteps
		var planner plan.Planner = rule.New()
		if tk.Planner == flow.PlannerName {
			run, err := flow.FromTask(tk)
			if err == nil {
				planner, err = flow.NewPlanner(run.Flow, flow.Options{Params: run.Params})
			}
			if err != nil {
				return runtime.Result{Status: "failed", Cause: "step_failed", Reason: err.Error()}
			}
		}
		r, err := runtime.New(cfg, dev, planner, runtime.Options{OnEvent: emit, Person: person, Gate: gate})
		if err != nil {
			return runtime.Result{Status: "failed", Cause: "step_failed", Reason: err.Error()}
		}
		return r.Run(ctx, tk.Goal)
	})
	leases := mcpserver.NewLeases(h.clock, mcpserver.DefaultLeaseIdle)
	h.svc, err = task.New(task.Config{PollInterval: 20 * time.Millisecond, Held: func(dev, id string) bool {
		h.heldLooks.Add(1)
		return leases.HeldAgainst(dev, id)
	}}, store, taskDevices{h.devs}, runner)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.svc.Close(ctx)
	})
	h.srv, err = mcpserver.New(mcpserver.Config{
		Devices: h.devs, Tasks: h.svc, Planners: []string{"rule", "ai"}, MaxSteps: 30,
		Runtime: fastRuntime(), Gate: gate, Clock: h.clock, Leases: leases, Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
		ApproveHint: "a person approves or denies it on phonepilot's web page, through the approval link phonepilot showed them",
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sessionsEnded waits until the server has ended n sessions (released
// their leases and devices).
func (h *harness) sessionsEnded(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); strings.Count(h.logs.String(), "mcp session ended") < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not end %d sessions:\n%s", n, h.logs.String())
		}
	}
}

// connect opens an MCP session with the SDK's own client, in process.
func (h *harness) connect(t *testing.T, name string, opt *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := h.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, opt)
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text and whether it was a tool error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text(res), res.IsError
}

// must calls a tool that must succeed.
func must(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	out, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: tool error: %s", name, args, out)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// index finds the [N] of the first listing line matching re.
func index(t *testing.T, listing, re string) int {
	t.Helper()
	rx := regexp.MustCompile(`(?m)^\[(\d+)\] .*` + re)
	m := rx.FindStringSubmatch(listing)
	if m == nil {
		t.Fatalf("no line matching %q in:\n%s", re, listing)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// afterListing is the part of an answer from its listing on.
func afterListing(answer string) string {
	if i := strings.Index(answer, "\nScreen "); i >= 0 {
		return answer[i+1:]
	}
	if strings.HasPrefix(answer, "Screen ") {
		return answer
	}
	i := strings.Index(answer, "Screen ")
	if i < 0 {
		return ""
	}
	return answer[i:]
}

// toSearchResults drives the sim to Taobao's results for "Mac mini"
// through the tools, returning the last answer.
func toSearchResults(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	must(t, cs, "observe", nil)
	out := must(t, cs, "launch_app", map[string]any{"app": "Taobao"})
	if strings.Contains(out, "poplayer_close") {
		out = must(t, cs, "tap", map[string]any{"element": index(t, afterListing(out), `id=poplayer_close`)})
	}
	out = must(t, cs, "tap", map[string]any{"element": index(t, afterListing(out), `id=home_searchbar`)})
	field := index(t, afterListing(out), `EditText`)
	return must(t, cs, "type_text", map[string]any{"text": "Mac mini", "element": field, "submit": true})
}
