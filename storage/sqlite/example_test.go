package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/tools"
)

// Recording a task as it runs, then reading it back.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "phonepilot-example-")
	defer os.RemoveAll(dir)

	store, err := sqlite.Open(ctx, filepath.Join(dir, "phonepilot.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	task, _ := store.CreateTask(ctx, storage.Task{Goal: "open Taobao and search Mac mini", Device: "sim", Planner: "rule"})
	store.UpdateStatus(ctx, task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: time.Now()})
	// Each step is saved the moment it finishes.
	store.SaveStep(ctx, storage.Step{TaskID: task.ID, StepRecord: plan.StepRecord{
		Number: 1, Intent: "launch Taobao", Call: tools.NewCall(tools.LaunchApp, map[string]string{"app": "Taobao"}),
		Status: lifecycle.StepSucceeded,
	}})
	store.UpdateStatus(ctx, task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Completed, Reason: "done", At: time.Now()})

	page, _ := store.ListTasks(ctx, storage.Query{Status: lifecycle.Completed})
	steps, _ := store.Steps(ctx, task.ID)
	fmt.Println(len(page.Tasks), page.Tasks[0].Status, page.Tasks[0].Goal)
	fmt.Println(steps[0].Number, steps[0].Call)
	// Output:
	// 1 completed open Taobao and search Mac mini
	// 1 launch_app {"app":"Taobao"}
}
