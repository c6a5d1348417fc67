package flow

import (
	"strings"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/plan/ai/aitest"
	"phonepilot/task/lifecycle"
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
	if len(turns) != 1 || !strings.Contains(turns[0].Text, "Step 2 no longer fits") {
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
