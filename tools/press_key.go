package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"phonepilot/device"
)

// PressKey is the name of the press_key tool.
const PressKey = "press_key"

// PressKeyArgs are press_key's arguments.
type PressKeyArgs struct {
	Key string `json:"key"`
}

// keyUse is what each key does, as press_key's description says it; a key
// without an entry is named alone.
var keyUse = map[device.Key]string{
	device.KeyBack:      "go back / close a dialog or the keyboard",
	device.KeyHome:      "the home screen",
	device.KeyAppSwitch: "recent apps",
	device.KeyDelete:    "delete one character before the cursor",
}

// pressKeyText is press_key's description and schema offering keys (in
// device.Keys' order).
func pressKeyText(keys []device.Key) (description, schema string) {
	var uses, names []string
	for _, k := range device.Keys {
		if !slices.Contains(keys, k) {
			continue
		}
		u := string(k)
		if keyUse[k] != "" {
			u += " (" + keyUse[k] + ")"
		}
		uses = append(uses, u)
		names = append(names, strconv.Quote(string(k)))
	}
	description = "Press a key: " + strings.Join(uses, ", ") + "."
	schema = `{
  "type": "object",
  "properties": {
    "key": {"type": "string", "enum": [` + strings.Join(names, ", ") + `], "description": "The key to press."}
  },
  "required": ["key"],
  "additionalProperties": false
}`
	return description, schema
}

// pressKeySpec is press_key's Spec offering only keys: what a device that
// declares its keys (device.KeysDeclarer) has.
func pressKeySpec(keys []device.Key) Spec {
	d, s := pressKeyText(keys)
	return Spec{Name: PressKey, Description: d, Schema: json.RawMessage(s)}
}

var pressKeyDescription, pressKeySchema = pressKeyText(device.Keys)

var pressKeyTool = register(&Tool{
	name:        PressKey,
	description: pressKeyDescription,
	schemaText:  pressKeySchema,
	example:     Example{`{"key":"back"}`, `pressed back`},
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
})

// homeReached: the call is the home key and the launcher is in front.
func homeReached(c Call, o Outcome) bool {
	return device.Key(args[PressKeyArgs](c).Key) == device.KeyHome && o.After.OnHomeScreen()
}
