package main

// The AIPlanner's providers register themselves with plan/ai when imported;
// only the binary links their SDKs, never the rule path.
import (
	_ "phonepilot/plan/ai/anthropic"
	_ "phonepilot/plan/ai/openai"
)
