package tools

import (
	"context"
	"fmt"
)

// Tap is the name of the tap tool.
const Tap = "tap"

// TapArgs are tap's arguments.
type TapArgs struct {
	Element Index `json:"element"`
}

var tapTool = &Tool{
	name:        Tap,
	description: "Tap an element of the current screen. `element` is the [N] index shown in the CURRENT screen listing.",
	schemaText:  elementOnlySchema,
	example:     Example{`{"element":4}`, `tapped [4] Button "Search"`},
	run: func(ctx context.Context, env *runEnv, c Call) (Result, error) {
		res := Result{Element: env.el}
		x, y := env.target.Center()
		if err := env.dev.Tap(ctx, x, y); err != nil {
			return res, fmt.Errorf("tap [%d]: %w", env.el.Index, err)
		}
		res.Text = "tapped " + Describe(*env.el)
		return res, nil
	},
	intent: func(c Call, target string) string { return "tap " + target },
	press:  true,
	act:    func(Call) Act { return Act{Kind: ActTouch} },
	effect: func(Call) Effect { return Effect{Kind: EffectChange} },
}
