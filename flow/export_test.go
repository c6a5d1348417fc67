package flow

import (
	"errors"
	"reflect"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/storage"
	"phonepilot/task/lifecycle"
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
