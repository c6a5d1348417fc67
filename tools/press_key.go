package tools

import (
	"context"

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
	// A key goes to what has focus: Enter clicks a focused button when the
	// phone is not in touch mode, and submits a focused field.
	inputs: func(c Call, env *runEnv) []Input {
		key := args[PressKeyArgs](c).Key
		return []Input{{Kind: InputKey, On: focused(env.sc), Hit: -1, Key: device.Key(key), what: "press_key " + key}}
	},
	run: func(_ context.Context, _ *runEnv, c Call) (Result, error) {
		return Result{Text: "pressed " + args[PressKeyArgs](c).Key}, nil
	},
	intent: func(c Call, _ string) string { return "press " + args[PressKeyArgs](c).Key },
	act: func(c Call) Act {
		key := device.Key(args[PressKeyArgs](c).Key)
		return Act{Kind: ActKey, Key: key, Submit: key == device.KeyEnter}
	},
	press:  true,
	effect: func(Call) Effect { return Effect{Kind: EffectChange} },
	// Home on the home screen changes nothing and needs nothing more: its
	// effect, the launcher in front, is there.
	changed: func(c Call, o Outcome) (bool, string) {
		if o.Changed || homeReached(c, o) {
			return true, ""
		}
		return false, "the screen did not change"
	},
	tookEffect: func(c Call, o Outcome) bool { return o.Changed || homeReached(c, o) },
}

// homeReached: the call is the home key and the launcher is in front.
func homeReached(c Call, o Outcome) bool {
	return device.Key(args[PressKeyArgs](c).Key) == device.KeyHome && o.After.OnHomeScreen()
}
