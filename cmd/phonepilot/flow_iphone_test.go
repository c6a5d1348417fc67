package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/flow"
)

// A flow recorded on the simulated iPhone: `run --device sim:ios` (rule
// planner), `flow export`, then `flow run` with no planner. The exported
// selectors are what survives on an iPhone: WDA's name (id) and element
// type (class), with the label as text. Replayed with `flow run --device
// sim:ios` on a fresh iPhone it searches again; on a Chinese iPhone, where
// the labels differ ("搜索" for "Search"), the name still finds the
// elements, with a parameter changed.
func TestFlowOnTheSimulatedIPhone(t *testing.T) {
	hermetic(t)
	db := filepath.Join(t.TempDir(), "tasks.db")
	code, stdout, stderr := runAI(t, "run", "--device", "sim:ios", "--db", db, "--json", "open Taobao and search Mac mini")
	rec := runDocOf(t, code, stdout, stderr)
	if code != 0 || rec.Status != "completed" {
		t.Fatalf("recording run: exit %d %s (%s)\n%s", code, rec.Status, rec.Reason, stderr)
	}
	file := filepath.Join(t.TempDir(), "ios-search.yaml")
	if code, stdout, stderr := runAI(t, "flow", "export", rec.ID, "-o", file, "--db", db); code != 0 {
		t.Fatalf("flow export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := flow.Parse(data)
	if err != nil || f.Recorded.Device != "sim:ios" || f.Params["query"].Default != "Mac mini" {
		t.Fatalf("exported flow (%v):\n%s", err, data)
	}
	targets := 0
	for _, s := range f.Steps {
		if s.Target == nil {
			continue
		}
		targets++
		if s.Target.ID == "" || !strings.HasPrefix(s.Target.Class, "XCUIElementType") || strings.Contains(s.Target.ID, ":id/") {
			t.Errorf("step %q selects %+v: want an iPhone's name and element type", s.Intent, *s.Target)
		}
	}
	if targets == 0 {
		t.Fatalf("no step names an element:\n%s", data)
	}

	for _, tc := range []struct {
		args  []string
		query string
	}{
		{nil, "Mac mini"},
		{[]string{"--sim-locale", "zh", "--set", "query=机械键盘"}, "机械键盘"},
	} {
		code, stdout, stderr := runAI(t, append([]string{"flow", "run", file, "--device", "sim:ios", "--db", db, "--json"}, tc.args...)...)
		d := runDocOf(t, code, stdout, stderr)
		if code != 0 || d.Status != "completed" || d.Planner != flow.PlannerName || d.DeviceState.Taobao.LastSearch != tc.query {
			t.Errorf("flow run %v on sim:ios: exit %d, %s (%s), planner %s, last search %q\n%s", tc.args, code, d.Status, d.Reason, d.Planner, d.DeviceState.Taobao.LastSearch, stderr)
		}
	}
}
