package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// frameFree are the packages whose whole dependency closure (non-test code,
// `go list -deps`) must not contain perception/frame: not by importing it,
// nor through anything they import. The runtime takes its Planner from the
// caller, so the AIPlanner (and its camera) stays out of it and of
// everything above it.
var frameFree = []string{"runtime", "task", "tools", "storage", "api"}

// TestPerceptionBoundaryIsTransitive: perception/frame is in the
// dependency closure of none of frameFree.
func TestPerceptionBoundaryIsTransitive(t *testing.T) {
	module, root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range frameFree {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/"+p)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %v: an empty closure cannot pass", p, deps)
		}
		for _, d := range deps {
			if d == module+"/"+framePkg {
				t.Errorf("%s depends on %s (through its imports); the Perception Boundary keeps pixels out of it", p, framePkg)
			}
		}
	}
}
