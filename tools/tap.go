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

var tapTool = register(&Tool{
	name:        Tap,
	description: "Tap an element of the current screen. `element` is the [N] index shown in the CURRENT screen listing.",
	schemaText:  elementOnlySchema,
	example:     Example{`{"element":4}`, `tapped [4] Button "Search"`},
	inputs: func(c Call, env *runEnv) []Input {
		if env.el == nil { // not a valid call: Run refuses it
			return []Input{{Kind: InputTap, On: -1, Hit: -1}}
		}
		in := touch(InputTap, env.sc, env.el, env.target, fmt.Sprintf("tap [%d]", env.el.Index))
		return []Input{in}
	},
	run: func(_ context.Context, env *runEnv, c Call) (Result, error) {
		return Result{Element: env.el, Text: "tapped " + Describe(*env.el)}, nil
	},
	intent: func(c Call, target string) string { return "tap " + target },
	press:  true,
	act:    func(Call) Act { return Act{Kind: ActTouch} },
	effect: func(Call) Effect { return Effect{Kind: EffectChange} },
})
