package tools

import (
	"slices"
	"testing"
)

// TestDirect: the tools a direct caller gets are the registry's, less the
// ones that end a task or ask a person, so a new tool reaches MCP clients
// (mcpserver's action tools are tools.Direct) with no list to edit.
func TestDirect(t *testing.T) {
	got := Direct()
	for _, tl := range registry {
		want := tl.name != FinishTask && tl.name != AskUser
		if slices.Contains(got, tl.name) != want {
			t.Errorf("Direct() = %v: has %s = %v, want %v", got, tl.name, !want, want)
		}
	}
	if len(got) != len(registry)-2 {
		t.Errorf("Direct() = %v: %d of the registry's %d tools, want all but finish_task and ask_user", got, len(got), len(registry))
	}
}
