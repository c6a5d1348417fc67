package main

import (
	"strings"
	"testing"

	"phonepilot/plan/ai"
)

// A provider registered by this test binary only: the help of --provider
// must name it with no edit in cmd (help built from the registry).
func init() {
	ai.Register("flaghelp-probe", ai.ProviderInfo{New: func(ai.Config) (ai.Provider, error) { return nil, nil }})
}

// TestPlannerFlagsFromOneHelper: every command that runs tasks has the
// planner flags, whose help names every planner and every registered
// provider; bench has the provider flags for its ai policy.
func TestPlannerFlagsFromOneHelper(t *testing.T) {
	root := newRootCmd()
	for _, path := range [][]string{{"run"}, {"serve"}, {"mcp"}, {"worker"}, {"flow", "run"}, {"bench"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		name := strings.Join(path, " ")
		flags := []string{"provider", "model", "base-url"}
		if name != "bench" {
			flags = append(flags, "planner")
		}
		for _, fl := range flags {
			if cmd.Flags().Lookup(fl) == nil {
				t.Errorf("%s has no --%s", name, fl)
			}
		}
		if f := cmd.Flags().Lookup("provider"); f != nil {
			for _, p := range ai.Providers() {
				if !strings.Contains(f.Usage, p) {
					t.Errorf("%s --provider help %q does not name the provider %s", name, f.Usage, p)
				}
			}
		}
		if f := cmd.Flags().Lookup("planner"); f != nil {
			for _, p := range plannerNames {
				if !strings.Contains(f.Usage, p) {
					t.Errorf("%s --planner help %q does not name the planner %s", name, f.Usage, p)
				}
			}
		}
	}
}
