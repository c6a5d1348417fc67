package ai_test

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"phonepilot/perception/frame"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// goList runs `go list` in the module; the test skips without a go tool
// and under -short, but never under PHONEPILOT_INTEGRATION=1 (it fails
// without a go tool there, and -short does not shorten it).
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	integration := os.Getenv("PHONEPILOT_INTEGRATION") == "1"
	if testing.Short() && !integration {
		t.Skip("go list over the module is skipped in -short mode")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		if integration {
			t.Fatal("PHONEPILOT_INTEGRATION=1 but there is no go tool in PATH")
		}
		t.Skip("no go tool in PATH")
	}
	out, err := exec.Command(gobin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", args, err, msg)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

const framePkg = "phonepilot/perception/frame"

// framePkgAllowed: the device drivers make frames, perception/shot fits
// them to a model's limits, the AIPlanner and its providers send them to a
// model, the MCP server sends one to a client that
// plans and asks for it (a planner too), cmd wires a driver in as the Camera.
func framePkgAllowed(pkg string) bool {
	for _, p := range []string{"phonepilot/device/adb", "phonepilot/device/wda", "phonepilot/device/sim", "phonepilot/device/backend", "phonepilot/perception/shot", "phonepilot/plan/ai", "phonepilot/mcpserver", "phonepilot/cmd/"} {
		if pkg == p || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return pkg == framePkg
}

func TestNoOtherConsumerReceivesRawScreenshotBytes(t *testing.T) {
	// 1. No package outside the allowed few imports perception/frame, so no
	// api, tools, perception, storage or runtime code can hold a Frame.
	lines := goList(t, "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "phonepilot/...")
	checked := 0
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, imports := fields[0], fields[1:]
		checked++
		for _, imp := range imports {
			if imp == framePkg && !framePkgAllowed(pkg) {
				t.Errorf("%s imports %s: only device drivers, perception/shot, plan/ai, mcpserver and cmd may touch screenshot bytes", pkg, framePkg)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("go list saw only %d packages", checked)
	}

	// 2. What the Planner hands back and what the runtime keeps carries
	// the Scene only: no Frame anywhere in these types.
	frameType := reflect.TypeOf(frame.Frame{})
	for _, v := range []any{plan.Input{}, plan.Decision{}, plan.StepRecord{}, plan.SceneRecord{}, plan.PlannedStep{}, scene.Scene{}, tools.Call{}} {
		if path, found := holds(reflect.TypeOf(v), frameType, map[reflect.Type]bool{}); found {
			t.Errorf("%T holds a screenshot at %s", v, path)
		}
	}
}

// holds reports whether t contains want anywhere in its structure.
func holds(t, want reflect.Type, seen map[reflect.Type]bool) (string, bool) {
	if t == want || t.PkgPath() == framePkg {
		return t.String(), true
	}
	if seen[t] {
		return "", false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return holds(t.Elem(), want, seen)
	case reflect.Map:
		if p, ok := holds(t.Key(), want, seen); ok {
			return p, true
		}
		return holds(t.Elem(), want, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if p, ok := holds(f.Type, want, seen); ok {
				return t.Name() + "." + f.Name + " → " + p, true
			}
		}
	}
	return "", false
}

func TestRulePathPullsInNoProviderSDK(t *testing.T) {
	// The AIPlanner's package and everything that builds it without the
	// providers (runtime, the rule Planner) link no vendor SDK; only the
	// provider packages, blank-imported by cmd, do.
	pkgs := []string{"phonepilot/plan/ai", "phonepilot/plan/rule", "phonepilot/runtime"}
	for _, dep := range goList(t, append([]string{"-e", "-deps"}, pkgs...)...) {
		if strings.HasPrefix(dep, "github.com/anthropics/") || strings.HasPrefix(dep, "github.com/openai/") {
			t.Errorf("%v depend on %s", pkgs, dep)
		}
	}
	deps := strings.Join(goList(t, "-deps", "phonepilot/plan/ai/anthropic", "phonepilot/plan/ai/openai"), "\n")
	for _, sdk := range []string{"github.com/anthropics/anthropic-sdk-go/v2", "github.com/openai/openai-go/v3"} {
		if !strings.Contains(deps, sdk+"\n") {
			t.Errorf("the providers do not use %s", sdk)
		}
	}
}
