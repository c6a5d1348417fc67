package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

// A task run from the CLI is recorded as it runs, so `tasks` and `show` find
// it afterwards with every step and the Scene each step acted on.
func TestRunIsRecordedForTasksAndShow(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	const secret = "sk-ant-test-never-recorded"
	t.Setenv("ANTHROPIC_API_KEY", secret)
	db := filepath.Join(t.TempDir(), "tasks.db")
	ctx := context.Background()
	if code, _, stderr := capture(t, ctx, "run", "--db", db, "--device", "sim", "open Taobao and search Mac mini"); code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}

	code, out, stderr := capture(t, ctx, "tasks", "--db", db, "--json")
	if code != 0 {
		t.Fatalf("tasks exited %d: %s", code, stderr)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("the API key was recorded with the task:\n%s", out)
	}
	var list struct {
		Tasks []storage.Task `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, out)
	}
	tasks := list.Tasks
	if len(tasks) != 1 || tasks[0].Status != lifecycle.Completed || tasks[0].Goal != "open Taobao and search Mac mini" || tasks[0].Device != "sim" {
		t.Fatalf("recorded tasks = %+v, want one completed Taobao task on sim", tasks)
	}

	code, out, stderr = capture(t, ctx, "show", "--db", db, "--json", tasks[0].ID)
	if code != 0 {
		t.Fatalf("show exited %d: %s", code, stderr)
	}
	var shown struct {
		Task  storage.Task   `json:"task"`
		Steps []storage.Step `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	// The stored configuration is in the API's style and names the planner
	// that ran: no Go field names, durations as text, no AI settings for a
	// rule task.
	var snap map[string]any
	if err := json.Unmarshal(shown.Task.Config, &snap); err != nil {
		t.Fatalf("task config %s: %v", shown.Task.Config, err)
	}
	if rt, _ := snap["runtime"].(map[string]any); snap["planner"] != "rule" || rt["poll_interval"] != "100ms" || snap["ai"] != nil {
		t.Errorf("task config = %s; want planner rule, runtime.poll_interval \"100ms\", no ai section", shown.Task.Config)
	}
	if len(shown.Steps) < 3 {
		t.Fatalf("show lists %d steps, want at least 3 (launch, tap, type)", len(shown.Steps))
	}
	for _, s := range shown.Steps {
		if s.Status == "" || len(s.Scene) == 0 {
			t.Errorf("step %d recorded without status or scene: %+v", s.Number, s)
		}
	}
}

// --no-record leaves the database untouched.
func TestRunNoRecord(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	db := filepath.Join(t.TempDir(), "tasks.db")
	ctx := context.Background()
	if code, _, stderr := capture(t, ctx, "run", "--no-record", "--db", db, "--device", "sim", "go home"); code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	_, out, _ := capture(t, ctx, "tasks", "--db", db, "--json")
	var list struct {
		Tasks []storage.Task `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Tasks) != 0 {
		t.Fatalf("tasks after --no-record = %s (%v), want none", out, err)
	}
}

// A `run` killed with -9 leaves its task running; the next command that
// opens the database (here `tasks`, then `show`) sees the owner is gone and
// ends the task as interrupted, with its cause.
func TestKilledRunIsInterruptedByTheNextCommand(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	db := filepath.Join(t.TempDir(), "tasks.db")
	store, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	// A process that has exited stands for the killed run: this test
	// binary, asked to run no test (it can always start: it is running).
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal("cannot start a process:", err)
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s:%d", host, dead.Process.Pid)
	killed, err := store.CreateTask(t.Context(), storage.Task{Goal: "open Taobao", Device: "sim", Planner: "rule", Status: lifecycle.Running, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	alive, _ := store.CreateTask(t.Context(), storage.Task{Goal: "still going", Device: "sim", Planner: "rule", Status: lifecycle.Running, Owner: task.DefaultOwner()})
	store.Close()

	code, out, stderr := capture(t, context.Background(), "tasks", "--db", db)
	if code != 0 {
		t.Fatalf("tasks exited %d: %s", code, stderr)
	}
	var killedLine, aliveLine string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, killed.ID):
			killedLine = l
		case strings.HasPrefix(l, alive.ID):
			aliveLine = l
		}
	}
	if f := strings.Fields(killedLine); len(f) < 3 || f[1] != string(lifecycle.Interrupted) || f[2] != string(lifecycle.CauseInterrupted) {
		t.Errorf("the killed run's task: %q, want interrupted", killedLine)
	}
	if !strings.Contains(aliveLine, "running") {
		t.Errorf("a live process's task: %q, want running", aliveLine)
	}
	code, out, _ = capture(t, context.Background(), "show", "--db", db, killed.ID)
	if code != 0 || !strings.Contains(out, "interrupted (interrupted)") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
}
