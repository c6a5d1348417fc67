package flow

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/tools"
)

// Failed attempts, refused and cancelled steps leave no trace in the flow;
// a task that did not complete is no flow.
func TestExportLeavesOutWhatDidNotSucceed(t *testing.T) {
	srv := aitestServer(t)
	_, steps, _, _ := run(t, sim.Config{}, aiGoals["en"], aiPlanner(t, srv))
	tk := storage.Task{ID: "t1", Goal: aiGoals["en"], Planner: "ai", Status: lifecycle.Completed}
	clean, err := Export(tk, steps)
	if err != nil {
		t.Fatal(err)
	}
	var noisy []storage.Step
	for _, st := range steps {
		for _, bad := range []lifecycle.StepStatus{lifecycle.StepFailed, lifecycle.StepCancelled} {
			b := st
			b.Status, b.Reason = bad, "refused: a person denied it"
			noisy = append(noisy, b)
		}
		noisy = append(noisy, st)
	}
	got, err := Export(tk, noisy)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Steps, clean.Steps) {
		t.Errorf("with failed and cancelled steps the flow has %d steps, want the %d of the clean run", len(got.Steps), len(clean.Steps))
	}
	tk.Status, tk.Reason = lifecycle.Failed, "gave up"
	if _, err := Export(tk, steps); !errors.Is(err, ErrNotExportable) {
		t.Errorf("exporting a failed task: %v", err)
	}
}

// Typed texts become parameters named after their field where that is
// clear, else text1, text2, …
func TestExportNamesTheParameters(t *testing.T) {
	b := scene.Bounds{Left: 0, Top: 100, Right: 1000, Bottom: 200}
	form := &scene.Scene{Width: 1080, Height: 2400, Package: "app", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}},
		{Index: 1, Parent: 0, Depth: 1, Class: "android.widget.EditText", ResourceID: "app:id/phone_input", Editable: true, Bounds: b},
		{Index: 2, Parent: 0, Depth: 1, Class: "android.widget.EditText", Editable: true, Bounds: shifted(b, 200)},
		{Index: 3, Parent: 0, Depth: 1, Class: "android.widget.EditText", Editable: true, Bounds: shifted(b, 400)},
		{Index: 4, Parent: 0, Depth: 1, Class: "android.widget.EditText", ResourceID: "app:id/kw", Text: "Search products", Editable: true, Bounds: shifted(b, 600)},
	}}
	sj, _ := json.Marshal(form)
	var steps []storage.Step
	for i, typed := range []string{"13800138000", "Li Lei", "Beijing", "Mac mini"} {
		call := tools.NewCall(tools.TypeText, tools.TypeTextArgs{Text: typed, Element: ptr(i + 1)})
		steps = append(steps, storage.Step{StepRecord: plan.StepRecord{Number: i + 1, Call: call, Status: lifecycle.StepSucceeded}, Scene: sj})
	}
	f, err := Export(storage.Task{ID: "t", Goal: "sign up as Li Lei and look for Mac mini", Status: lifecycle.Completed}, steps)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"phone": "13800138000", "text1": "Li Lei", "text2": "Beijing", "query": "Mac mini"}
	for name, v := range want {
		if f.Params[name].Default != v {
			t.Errorf("param %s = %+v, want default %q (all: %+v)", name, f.Params[name], v, f.Params)
		}
	}
	if f.Goal != "sign up as ${text1} and look for ${query}" {
		t.Errorf("goal %q", f.Goal)
	}
	if got := f.Steps[3].Args["text"]; got != "${query}" {
		t.Errorf("step 4 types %v", got)
	}
}

func ptr(i int) *tools.Index { x := tools.Index(i); return &x }

func shifted(b scene.Bounds, dy int) scene.Bounds {
	b.Top, b.Bottom = b.Top+dy, b.Bottom+dy
	return b
}
