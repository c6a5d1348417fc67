package main

import (
	"fmt"
	"log/slog"
	"strings"

	"phonepilot/device"
	"phonepilot/perception/frame"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/rule"
	"phonepilot/tools"
)

// The planner names a task may ask for.
const (
	plannerRule = "rule"
	plannerAI   = "ai"
)

// plannerNames are the planners, the default first.
var plannerNames = []string{plannerRule, plannerAI}

// plannerSpec is which planner a task runs with and, for the AI planner,
// its settings (the Camera is added when the device is open).
type plannerSpec struct {
	Name string
	AI   ai.Config
}

// Validate checks the spec before any device opens.
func (p plannerSpec) Validate() error {
	switch p.Name {
	case "", plannerRule:
		return nil
	case plannerAI:
		if err := p.AI.Validate(); err != nil {
			return fmt.Errorf("ai planner: %w", err)
		}
		return nil
	}
	return fmt.Errorf("planner must be %q or %q, got %q", plannerRule, plannerAI, p.Name)
}

// newPlanner builds the planner a task runs with: the rule planner unless
// the spec names the AI planner. It is the one place the camera is wired:
// the AI planner, with vision on, gets the opened device's camera (nil for
// a device without one); nothing else ever sees it. The AI planner offers
// only the keys dev has (tools.SpecsFor(device.KeysOf); dev may be nil).
func newPlanner(spec plannerSpec, cam frame.Camera, dev device.Device, log *slog.Logger) (plan.Planner, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Name != plannerAI {
		return rule.New(), nil
	}
	cfg := spec.AI
	if log != nil {
		cfg.Logger = log
	}
	if cfg.Vision && cam != nil {
		cfg.Camera = cam
	}
	if dev != nil {
		cfg.Tools = tools.SpecsFor(device.KeysOf(dev))
	}
	p, err := ai.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("ai planner: %w", err)
	}
	return p, nil
}

// plannerSpec is the planner these settings ask for.
func (c appConfig) plannerSpec() plannerSpec {
	return plannerSpec{Name: strings.ToLower(strings.TrimSpace(c.Planner)), AI: c.aiConfig()}
}
