package main

import (
	"context"
	"testing"

	"phonepilot/perception/frame"
	"phonepilot/plan/ai"
	"phonepilot/plan/rule"
)

type noCamera struct{}

func (noCamera) Capture(ctx context.Context) (frame.Frame, error) {
	return frame.Frame{}, frame.ErrNoCamera
}

// An empty planner setting builds the rule planner, never the AI planner,
// even with AI settings that would work; "ai" builds the AI planner, and
// one it cannot use is refused before any task runs.
func TestNewPlannerFromTheSetting(t *testing.T) {
	good := ai.Defaults()
	good.Provider, good.APIKey, good.Model = "anthropic", "sk-test", "claude-test"
	for _, name := range []string{"", "rule"} {
		p, err := newPlanner(plannerSpec{Name: name, AI: good}, noCamera{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(*rule.Planner); !ok {
			t.Errorf("planner %q built %T, want the rule planner", name, p)
		}
	}
	p, err := newPlanner(plannerSpec{Name: "ai", AI: good}, noCamera{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*ai.Planner); !ok {
		t.Errorf("planner ai built %T", p)
	}
	bad := good
	bad.Provider = "no-such-provider"
	if _, err := newPlanner(plannerSpec{Name: "ai", AI: bad}, nil, nil, nil); err == nil {
		t.Error("an unusable AI configuration was accepted")
	}
	if _, err := newPlanner(plannerSpec{Name: "magic"}, nil, nil, nil); err == nil {
		t.Error("an unknown planner name was accepted")
	}
	// The configuration's default (no planner setting at all) is the rule planner.
	cfg, err := loadConfig("", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Planner = ""
	if p, err := newPlanner(cfg.plannerSpec(), nil, nil, nil); err != nil {
		t.Fatal(err)
	} else if _, ok := p.(*rule.Planner); !ok {
		t.Errorf("empty setting built %T", p)
	}
}
