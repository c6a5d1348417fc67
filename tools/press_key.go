package tools

import (
	"context"
	"fmt"

	"phonepilot/device"
)

// PressKey is the name of the press_key tool.
const PressKey = "press_key"

// PressKeyArgs are press_key's arguments.
type PressKeyArgs struct {
	Key string `json:"key"`
}

var pressKeyTool = &Tool{
	name:        PressKey,
	description: "Press a key: back (go back / close a dialog or the keyboard), home (the home screen), enter, app_switch (recent apps), delete (delete one character before the cursor).",
	schemaText: `{
  "type": "object",
  "properties": {
    "key": {"type": "string", "enum": ["back", "home", "enter", "app_switch", "delete"], "description": "The key to press."}
  },
  "required": ["key"],
  "additionalProperties": false
}`,
	example: Example{`{"key":"back"}`, `pressed back`},
	run: func(ctx context.Context, env *runEnv, c Call) (Result, error) {
		key := args[PressKeyArgs](c).Key
		if err := env.dev.Key(ctx, device.Key(key)); err != nil {
			return Result{}, fmt.Errorf("press_key %s: %w", key, err)
		}
		return Result{Text: "pressed " + key}, nil
	},
	intent: func(c Call, _ string) string { return "press " + args[PressKeyArgs](c).Key },
	act: func(c Call) Act {
		key := device.Key(args[PressKeyArgs](c).Key)
		return Act{Kind: ActKey, Key: key, Submit: key == device.KeyEnter}
	},
	press:  true,
	effect: func(Call) Effect { return Effect{Kind: EffectChange} },
}
