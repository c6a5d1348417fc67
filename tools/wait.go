package tools

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"phonepilot/internal/clock"
)

// Wait is the name of the wait tool.
const Wait = "wait"

// WaitArgs are wait's arguments.
type WaitArgs struct {
	Seconds float64 `json:"seconds"`
}

var waitTool = register(&Tool{
	name:        Wait,
	description: "Wait for the screen to finish changing (loading, an animation) before looking again. Between 0.1 and 10 seconds.",
	schemaText: `{
  "type": "object",
  "properties": {
    "seconds": {"type": "number", "minimum": 0.1, "maximum": 10, "description": "How long to wait, in seconds (0.1 to 10)."}
  },
  "required": ["seconds"],
  "additionalProperties": false
}`,
	example: Example{`{"seconds":1.5}`, `waited 1.5s`},
	run: func(ctx context.Context, env *runEnv, c Call) (Result, error) {
		secs := args[WaitArgs](c).Seconds
		clk := env.clock
		if clk == nil {
			clk = clock.Real{}
		}
		d := time.Duration(math.Round(secs * float64(time.Second)))
		if err := clk.Sleep(ctx, d); err != nil {
			return Result{}, fmt.Errorf("wait: %w", err)
		}
		return Result{Text: "waited " + strconv.FormatFloat(secs, 'f', -1, 64) + "s"}, nil
	},
	intent: func(c Call, _ string) string {
		return "wait " + strconv.FormatFloat(args[WaitArgs](c).Seconds, 'f', -1, 64) + "s"
	},
	// Waiting never took effect already: another wait is always a wait.
	tookEffect: func(Call, Outcome) bool { return false },
	passive:    true,
})
