// Package ai is the AIPlanner: a Planner that asks a language model, through
// native tool calling, for exactly one grounded action per turn. Vendors sit
// behind the one-method Provider interface (plan/ai/anthropic,
// plan/ai/openai), registered by name so that this package imports no SDK
// and the rule path pulls none in.
//
// The AIPlanner is the only consumer besides the device drivers allowed to
// touch screenshot bytes (the Perception Boundary's narrow exception): it
// asks its Camera for the current frame and sends it beside the Scene.
package ai

import (
	"context"
	"fmt"

	"phonepilot/plan"
)

// Planner is the AIPlanner.
type Planner struct {
	cfg      Config
	provider Provider
}

var _ plan.Planner = (*Planner)(nil)

// New validates cfg and builds the AIPlanner with the configured provider.
func New(cfg Config) (*Planner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	f, _ := lookup(cfg.Provider)
	p, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("ai: provider %s: %w", cfg.Provider, err)
	}
	return NewWithProvider(cfg, p), nil
}

// NewWithProvider builds the AIPlanner around an already constructed
// Provider (tests, or callers with their own client). cfg is not validated
// for provider name or key.
func NewWithProvider(cfg Config, p Provider) *Planner {
	return &Planner{cfg: cfg.withDefaults(), provider: p}
}

// Plan asks the model for the next step.
func (p *Planner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	return plan.Decision{}, fmt.Errorf("ai: not implemented yet")
}
