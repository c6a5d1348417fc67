package ai_test

import (
	"context"
	"encoding/json"
	"fmt"

	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
)

// scriptedModel stands in for a provider: it always taps element 2.
type scriptedModel struct{}

func (scriptedModel) Complete(ctx context.Context, req ai.Request) (ai.Reply, error) {
	return ai.Reply{
		Stop:      ai.StopToolUse,
		ToolCalls: []ai.ToolUse{{ID: "toolu_1", Name: "tap", Args: json.RawMessage(`{"element": 2}`)}},
		Usage:     ai.TokenUsage{Input: 812, Output: 21, Reported: true},
	}, nil
}

// A decision is one tool call of the model, checked against the Scene it
// was shown. In a program the provider comes from the configuration:
//
//	cfg := ai.Defaults()
//	cfg.Provider, cfg.APIKey = "anthropic", os.Getenv("ANTHROPIC_API_KEY")
//	planner, err := ai.New(cfg) // with plan/ai/anthropic imported
func ExampleNewWithProvider() {
	planner := ai.NewWithProvider(ai.Defaults(), scriptedModel{})
	d, err := planner.Plan(context.Background(), plan.Input{
		Goal:  "open Taobao and search Mac mini",
		Scene: aitest.TaobaoHome(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	st := d.Steps[0]
	fmt.Println(st.Call)
	fmt.Println(st.Intent)
	fmt.Println(d.Usage.InputTokens, d.Usage.OutputTokens)
	// Output:
	// tap {"element":2}
	// tap [2] EditText "Search products"
	// 812 21
}
