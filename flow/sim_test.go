package flow

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/rule"
	"phonepilot/runtime"
	"phonepilot/storage"
)

// simRun runs planner toward goal on a fresh simulated phone on a fake
// clock (every latency and wait advances it: nothing sleeps for real) and
// returns the result, the steps as the task service records them (with
// the Scene each acted on) and Taobao's state.
func simRun(t *testing.T, cfg sim.Config, goal string, planner plan.Planner) (runtime.Result, []storage.Step, taobaoState) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	cfg.Clock = clk
	p, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var steps []storage.Step
	rc := runtime.Defaults()
	rc.Seed = cfg.Seed
	r, err := runtime.New(rc, p.Device(), planner, runtime.Options{Clock: clk, Logger: testlog.New(t), OnEvent: func(e runtime.Event) {
		if e.Type == lifecycle.EventStepFinished {
			sj, _ := json.Marshal(e.Scene)
			steps = append(steps, storage.Step{TaskID: "t1", StepRecord: *e.Record, Scene: sj})
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), goal)
	raw, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao taobaoState `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return res, steps, st.Taobao
}

type taobaoState struct {
	Screen     string   `json:"screen"`
	LastSearch string   `json:"last_search"`
	Searches   []string `json:"searches"`
	Cart       []struct {
		Title string `json:"title"`
	} `json:"cart"`
	Product struct {
		Title string `json:"title"`
	} `json:"product"`
}

// recordedFlow runs the rule planner on goal and exports its task.
func recordedFlow(t *testing.T, cfg sim.Config, goal string) *Flow {
	t.Helper()
	res, steps, _ := simRun(t, cfg, goal, rule.New())
	if res.Status != lifecycle.Completed {
		t.Fatalf("recording %q: %s (%s)", goal, res.Status, res.Reason)
	}
	f, err := Export(storage.Task{ID: "t1", Goal: goal, Planner: "rule", Device: "sim", Status: lifecycle.Completed}, steps)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRuleRunExportsAndReplays(t *testing.T) {
	f := recordedFlow(t, sim.Config{}, "open Taobao and search Mac mini")
	data, _ := Marshal(f)
	t.Logf("exported:\n%s", data)
	if f.Params["query"].Default != "Mac mini" {
		t.Errorf("params %+v, want query with default Mac mini", f.Params)
	}
	fp, err := NewPlanner(f, Options{Params: map[string]string{"query": "iPhone 16"}})
	if err != nil {
		t.Fatal(err)
	}
	res, _, st := simRun(t, sim.Config{}, fp.Goal(), fp)
	if res.Status != lifecycle.Completed || st.LastSearch != "iPhone 16" || len(st.Searches) != 1 {
		t.Fatalf("replay: %s (%s), searches %q", res.Status, res.Reason, st.Searches)
	}
}

// The hand-written flow of docs/flows.md ("Selectors") runs: the first
// result's product lands in the cart.
func TestHandWrittenFlowOfTheDocsRuns(t *testing.T) {
	var data []byte
	for name, b := range examples(t) {
		if strings.Contains(name, "docs/flows.md") && strings.Contains(string(b), "add the ${product} to the cart") {
			data = b
		}
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	fp, err := NewPlanner(f, Options{Params: map[string]string{"product": "Mac mini"}})
	if err != nil {
		t.Fatal(err)
	}
	res, _, st := simRun(t, sim.Config{}, fp.Goal(), fp)
	if res.Status != lifecycle.Completed || len(st.Cart) != 1 || !strings.HasPrefix(st.Cart[0].Title, "Mac mini") {
		t.Fatalf("%s (%s), cart %+v", res.Status, res.Reason, st.Cart)
	}
}

// A target picked among equals (nth) is waited for by the planner, which
// resolves the whole selector on each screen: while the results load, the
// Executor's wait by id would tap the first title as soon as any shows.
func TestPositionAmongEqualsWhileTheListLoads(t *testing.T) {
	const text = `version: 1
goal: open the result number ${n} of a search
params:
  n: {default: "1"}
steps:
  - tool: launch_app
    args: {app: Taobao}
    expect: {app: com.taobao.taobao}
  - tool: tap
    target: {id: home_searchbar}
  - tool: type_text
    target: {id: search_edit}
    args: {text: Mac mini, submit: true}
    expect: {changed: true}
  - tool: tap
    target: {id: item_title, nth: NTH}
    expect: {present: {id: buy_now}}
`
	opened := map[int]string{}
	for _, nth := range []int{0, 1, 2} {
		f, err := Parse([]byte(strings.Replace(text, "NTH", strconv.Itoa(nth), 1)))
		if err != nil {
			t.Fatal(err)
		}
		fp, err := NewPlanner(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.Config{Profile: "realistic", Seed: 3}
		res, _, st := simRun(t, cfg, fp.Goal(), fp)
		if res.Status != lifecycle.Completed || st.Product.Title == "" {
			t.Fatalf("nth %d: %s (%s) on %s", nth, res.Status, res.Reason, st.Screen)
		}
		opened[nth] = st.Product.Title
	}
	if opened[0] == opened[1] || opened[1] == opened[2] || opened[0] == opened[2] {
		t.Errorf("nth 0, 1, 2 opened %v", opened)
	}
}
