package tools

import (
	"context"
	"fmt"
	"time"
)

// LongPress is the name of the long_press tool.
const LongPress = "long_press"

// LongPressDuration is how long a long press holds: it must outlast
// Android's long-press timeout (500 ms by default) with margin.
const LongPressDuration = 800 * time.Millisecond

// LongPressArgs are long_press's arguments.
type LongPressArgs struct {
	Element Index `json:"element"`
}

var longPressTool = register(&Tool{
	name:        LongPress,
	description: "Press and hold an element of the current screen for about 800 ms (opens context menus, starts selection). `element` is the [N] index shown in the CURRENT screen listing.",
	schemaText:  elementOnlySchema,
	example:     Example{`{"element":7}`, `long-pressed [7] TextView "Mac mini M4 16GB"`},
	inputs: func(c Call, env *runEnv) []Input {
		if env.el == nil { // not a valid call: Run refuses it
			return []Input{{Kind: InputLongPress, On: -1, Hit: -1}}
		}
		in := touch(InputLongPress, env.sc, env.el, env.target, fmt.Sprintf("long_press [%d]", env.el.Index))
		in.Hold = LongPressDuration
		return []Input{in}
	},
	run: func(_ context.Context, env *runEnv, c Call) (Result, error) {
		return Result{Element: env.el, Text: "long-pressed " + Describe(*env.el)}, nil
	},
	intent: func(c Call, target string) string { return "long-press " + target },
	act:    func(Call) Act { return Act{Kind: ActTouch} },
	effect: func(Call) Effect { return Effect{Kind: EffectChange} },
})
