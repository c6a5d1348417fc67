package flow

import (
	"strings"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/ai/aitest"
	"phonepilot/tools"
)

func TestChangedLayoutFailsAtTheRightStepWithoutHeal(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{}, aiGoals["en"])
	fp, err := NewPlanner(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, _, st, _ := run(t, sim.Config{Layout: sim.LayoutChanged}, fp.Goal(), fp)
	if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseStepFailed {
		t.Fatalf("on the changed layout: %s (%s) %s, want failed (step_failed)", res.Status, res.Cause, res.Reason)
	}
	// Step 2 is the tap on the home screen's search bar, which the
	// redesign replaced; the cause names it and what was missing.
	for _, want := range []string{"flow step 2 of 3", `id "home_searchbar"`, "no element matches its target", "com.taobao.taobao"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q does not say %q", res.Reason, want)
		}
	}
	if len(st.Searches) != 0 {
		t.Errorf("searched %q after the step that failed", st.Searches)
	}
}

func TestChangedLayoutHealsAndTheHealedFlowReplaysWithoutTheModel(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{}, aiGoals["en"])
	healer := aitest.NewModelServer(t, taobaoModel)
	fp, err := NewPlanner(f, Options{Healer: aiPlanner(t, healer)})
	if err != nil {
		t.Fatal(err)
	}
	changed := sim.Config{Layout: sim.LayoutChanged}
	res, _, st, fig := run(t, changed, fp.Goal(), fp)
	if res.Status != lifecycle.Completed || st.LastSearch != "Mac mini" || len(st.Searches) != 1 {
		t.Fatalf("healing run: %s (%s), searches %q", res.Status, res.Reason, st.Searches)
	}
	turns := healer.Turns()
	// The healer's instructions are the goal of its conversation, which
	// opens it (the goal is not said again after the screen).
	if len(turns) != 1 || !strings.Contains(string(turns[0].Body), "Step 2 no longer fits") {
		t.Errorf("%d model calls; want exactly one, for step 2", len(turns))
	}
	healed, ok := fp.Healed()
	if !ok {
		t.Fatal("no step marked healed")
	}
	data, err := Marshal(healed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("healed flow (%s):\n%s", fig, data)
	s := healed.Steps[1]
	if s.Healed == "" || s.Target == nil || s.Target.ID != "search_pill" || healed.Steps[0].Healed != "" || healed.Steps[2].Healed != "" {
		t.Errorf("healed steps: %+v; want only step 2 marked, now on search_pill", healed.Steps)
	}
	if healed.Steps[2].Args["text"] != "${query}" {
		t.Errorf("step 3 lost its parameter: %v", healed.Steps[2].Args)
	}
	// The healed file, read back, replays on the changed layout without a model.
	healer.Close()
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewPlanner(back, Options{Params: map[string]string{"query": "iPhone 16"}})
	if err != nil {
		t.Fatal(err)
	}
	res, _, st, fig = run(t, changed, rp.Goal(), rp)
	if res.Status != lifecycle.Completed || st.LastSearch != "iPhone 16" || fig.tokens != 0 {
		t.Fatalf("the healed flow: %s (%s), searches %q, %d tokens", res.Status, res.Reason, st.Searches, fig.tokens)
	}
	t.Logf("FIGURES healed flow replayed on the changed layout: %s", fig)
}

// A healer that only waits does not do the step: the task fails at it,
// after a bounded number of asks, and nothing is written as healed.
func TestAHealerThatOnlyWaitsDoesNotHeal(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{}, aiGoals["en"])
	waiter := aitest.NewModelServer(t, func(aitest.Turn) (string, string) { return "wait", `{"seconds":0.5}` })
	fp, err := NewPlanner(f, Options{Healer: aiPlanner(t, waiter)})
	if err != nil {
		t.Fatal(err)
	}
	res, _, st, _ := run(t, sim.Config{Layout: sim.LayoutChanged}, fp.Goal(), fp)
	if res.Status != lifecycle.Failed || !strings.Contains(res.Reason, "flow step 2 of 3") || len(st.Searches) != 0 {
		t.Fatalf("%s (%s), searches %q; want failed at step 2", res.Status, res.Reason, st.Searches)
	}
	if n := len(waiter.Turns()); n != maxHeals {
		t.Errorf("the healer was asked %d times, want %d", n, maxHeals)
	}
	if _, healed := fp.Healed(); healed {
		t.Error("a wait was kept as a healed step")
	}
}

// A healed flow is written only after a run that completed: steps healed
// in a run that then failed (or was cancelled) are not proven, and nothing
// is written; a run with nothing healed writes nothing either.
func TestHealedFlowOnlyAfterACompletedRun(t *testing.T) {
	f, err := Parse([]byte(searchFlow))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := NewPlanner(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := fp.HealedAfter(lifecycle.Completed); got != nil || ok || err != nil {
		t.Errorf("nothing healed: %v %v %v; want nothing to write, no error", got, ok, err)
	}
	fp.healed = map[int]*Step{1: {Tool: "tap", Target: &Selector{ID: "search_pill"}, Healed: "home_searchbar is gone"}}
	for _, st := range []lifecycle.Status{lifecycle.Failed, lifecycle.Cancelled, lifecycle.Interrupted} {
		if got, ok, err := fp.HealedAfter(st); got != nil || ok || err == nil || !strings.Contains(err.Error(), "no healed flow written") {
			t.Errorf("healed, run %s: %v %v %v; want nothing to write and an error saying so", st, got, ok, err)
		}
	}
	got, ok, err := fp.HealedAfter(lifecycle.Completed)
	if err != nil || !ok || got == nil || got.Steps[1].Target.ID != "search_pill" || got.Steps[1].Healed == "" || got.Steps[0].Healed != "" {
		t.Fatalf("healed, run completed: %+v %v %v; want the flow with step 2 healed", got, ok, err)
	}
}

// A healed step that types a parameter's value is written with ${name},
// not the value of this run: the healed flow keeps its parameter.
func TestHealedStepKeepsTheParameter(t *testing.T) {
	f, err := Parse([]byte(searchFlow))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := NewPlanner(f, Options{Params: map[string]string{"query": "iPad Air"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := screen()
	idx := tools.Index(1)
	s := fp.stepFrom(&handed{ps: plan.PlannedStep{Intent: `type "iPad Air" into the search bar`,
		Call: tools.NewCall(tools.TypeText, tools.TypeTextArgs{Text: "iPad Air", Element: &idx, Submit: true})}, sc: sc, why: "the field moved"})
	if s.Args["text"] != "${query}" || s.Healed != "the field moved" || s.Target == nil || s.Target.ID != "searchbar" {
		t.Errorf("healed step %+v (target %+v); want text ${query} on the search bar, marked healed", s, s.Target)
	}
	// A literal that is no parameter's value stays as typed.
	s = fp.stepFrom(&handed{ps: plan.PlannedStep{Intent: "type", Call: tools.NewCall(tools.TypeText, tools.TypeTextArgs{Text: "hello", Element: &idx})}, sc: sc, why: "w"})
	if s.Args["text"] != "hello" {
		t.Errorf("a literal that is no parameter: %v", s.Args["text"])
	}
}

const searchFlow = `version: 1
goal: open Taobao and search ${query}
params:
  query:
    default: Mac mini
steps:
  - tool: launch_app
    args:
      app: Taobao
    expect:
      app: Taobao
  - tool: tap
    target:
      id: home_searchbar
    expect:
      changed: true
  - tool: type_text
    args:
      submit: true
      text: ${query}
    target:
      id: search_edit
    expect:
      changed: true
`

// Every kind of a step's expect: maps onto the executor's check of that
// kind, with its target; none written is the tool's own effect.
func TestExpectationOfEveryKind(t *testing.T) {
	tap := tools.NewCall(tools.Tap, tools.TapArgs{Element: 1})
	sel := &Selector{ID: "result_list"}
	for _, c := range []struct {
		x    *Expect
		kind plan.ExpectKind
		id   string
	}{
		{&Expect{Changed: true}, plan.ExpectChanged, ""},
		{&Expect{App: "Taobao"}, plan.ExpectApp, ""},
		{&Expect{FieldText: "Mac mini"}, plan.ExpectFieldText, ""},
		{&Expect{Present: sel}, plan.ExpectPresent, "result_list"},
		{&Expect{Gone: sel}, plan.ExpectGone, "result_list"},
		{&Expect{None: true}, plan.ExpectNothing, ""},
		{nil, plan.ExpectationOf(tap).Kind, ""},
	} {
		got := expectation(Step{Tool: "tap", Expect: c.x}, tap)
		if got.Kind != c.kind || (c.id != "" && got.Target.Value != c.id) {
			t.Errorf("expect %+v: %+v; want kind %q on %q", c.x, got, c.kind, c.id)
		}
	}
}

// expect: present is checked on the phone: a step whose element never
// appears fails, although the tap itself changed the screen.
func TestExpectPresentIsChecked(t *testing.T) {
	text := strings.Replace(searchFlow, "    target:\n      id: home_searchbar\n    expect:\n      changed: true\n",
		"    target:\n      id: home_searchbar\n    expect:\n      present:\n        id: no_such_element\n", 1)
	f, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := NewPlanner(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, _, _, _ := run(t, sim.Config{}, fp.Goal(), fp)
	if res.Status != lifecycle.Failed || !strings.Contains(res.Reason, "flow step 2 of 3") {
		t.Fatalf("%s (%s); want failed at step 2, whose expected element never appears", res.Status, res.Reason)
	}
	// Its opposite: present on an element that does appear.
	text = strings.Replace(text, "id: no_such_element", "id: search_edit", 1)
	if f, err = Parse([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if fp, err = NewPlanner(f, Options{}); err != nil {
		t.Fatal(err)
	}
	if res, _, _, _ := run(t, sim.Config{}, fp.Goal(), fp); res.Status != lifecycle.Completed {
		t.Errorf("present on the search field that appears: %s (%s)", res.Status, res.Reason)
	}
}
