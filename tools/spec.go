// Package tools is the capability tool contract (docs/tools.md): the eight
// tools every planner acts through, their JSON Schemas as sent to models,
// generic validation of a call's arguments against those schemas, and Run,
// which performs a validated call on a device.Device. An "element" argument
// is always the index of an element in the Scene given to the call; it is
// resolved to that element's bounds there, never guessed.
package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Spec describes one tool to a model: its name, what it does, and the JSON
// Schema (draft 2020-12 subset) of its arguments, sent as is.
type Spec struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// The descriptions and schemas below are read by models: they say what the
// element index means, which way a scroll moves the content, and that
// finish_task is the only way to end. Changing a name or an argument breaks
// the contract (TOOLS.md); improving wording does not.
var specSources = []struct {
	name, description, schema string
}{
	{Tap,
		"Tap an element of the current screen. `element` is the [N] index shown in the CURRENT screen listing.",
		`{
  "type": "object",
  "properties": {
    "element": {"type": "integer", "minimum": 0, "description": "The [N] index of the element in the CURRENT screen listing."}
  },
  "required": ["element"],
  "additionalProperties": false
}`},
	{LongPress,
		"Press and hold an element of the current screen for about 800 ms (opens context menus, starts selection). `element` is the [N] index shown in the CURRENT screen listing.",
		`{
  "type": "object",
  "properties": {
    "element": {"type": "integer", "minimum": 0, "description": "The [N] index of the element in the CURRENT screen listing."}
  },
  "required": ["element"],
  "additionalProperties": false
}`},
	{TypeText,
		"Type text into a text field, replacing what the field holds. If `element` is given, that field is tapped first to focus it; otherwise the text goes to the field that has focus now. Any Unicode is fine (Chinese, emoji). Set `submit` to press Enter afterwards (for example to run a search).",
		`{
  "type": "object",
  "properties": {
    "text": {"type": "string", "description": "The text the field should hold afterwards; it replaces the current content. An empty string clears the field."},
    "element": {"type": "integer", "minimum": 0, "description": "Optional: the [N] index of the text field in the CURRENT screen listing; it is tapped to focus it before typing."},
    "submit": {"type": "boolean", "description": "Optional: press Enter after typing (default false)."}
  },
  "required": ["text"],
  "additionalProperties": false
}`},
	{Scroll,
		"Scroll the screen, or one scrollable element, so that content further in `direction` comes into view: `down` shows what is below, `up` what is above. Use it to find something that is not in the current listing.",
		`{
  "type": "object",
  "properties": {
    "direction": {"type": "string", "enum": ["up", "down", "left", "right"], "description": "Where the content you want to see is: down reveals content below, up content above, left/right content to that side."},
    "element": {"type": "integer", "minimum": 0, "description": "Optional: the [N] index of the scrollable element (a list, a carousel) in the CURRENT screen listing. Without it the middle of the screen is scrolled."}
  },
  "required": ["direction"],
  "additionalProperties": false
}`},
	{PressKey,
		"Press a key: back (go back / close a dialog or the keyboard), home (the home screen), enter, app_switch (recent apps), delete (delete one character before the cursor).",
		`{
  "type": "object",
  "properties": {
    "key": {"type": "string", "enum": ["back", "home", "enter", "app_switch", "delete"], "description": "The key to press."}
  },
  "required": ["key"],
  "additionalProperties": false
}`},
	{LaunchApp,
		"Start an app, or bring it to the front, by the name a user knows it by (\"Taobao\", \"淘宝\", \"Settings\", \"设置\") or by its package name (\"com.taobao.taobao\").",
		`{
  "type": "object",
  "properties": {
    "app": {"type": "string", "minLength": 1, "description": "The app's name as shown to users, or its Android package name."}
  },
  "required": ["app"],
  "additionalProperties": false
}`},
	{Wait,
		"Wait for the screen to finish changing (loading, an animation) before looking again. Between 0.1 and 10 seconds.",
		`{
  "type": "object",
  "properties": {
    "seconds": {"type": "number", "minimum": 0.1, "maximum": 10, "description": "How long to wait, in seconds (0.1 to 10)."}
  },
  "required": ["seconds"],
  "additionalProperties": false
}`},
	{FinishTask,
		"End the task. This is the only way to finish: call it with success=true once the goal is visibly achieved on the screen, or success=false with the reason when the goal cannot be achieved. Replying without a tool call does not end the task.",
		`{
  "type": "object",
  "properties": {
    "success": {"type": "boolean", "description": "true if the goal was achieved, false if it cannot be."},
    "reason": {"type": "string", "description": "A short explanation: what shows the goal is achieved, or why it cannot be."}
  },
  "required": ["success", "reason"],
  "additionalProperties": false
}`},
}

// specs and schemas are built once from specSources; a malformed literal
// above is a programming error caught by any test of this package.
var (
	specs   []Spec
	schemas = map[string]*schema{}
	names   []string
)

func init() {
	for _, src := range specSources {
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(src.schema)); err != nil {
			panic(fmt.Sprintf("tools: schema of %s is not JSON: %v", src.name, err))
		}
		sch, err := parseSchema(compact.Bytes())
		if err != nil {
			panic(fmt.Sprintf("tools: schema of %s: %v", src.name, err))
		}
		specs = append(specs, Spec{Name: src.name, Description: src.description, Schema: json.RawMessage(compact.Bytes())})
		schemas[src.name] = sch
		names = append(names, src.name)
	}
}

// Specs returns every tool's Spec in the order of TOOLS.md. The slice is a
// copy; callers may keep or modify it.
func Specs() []Spec {
	out := make([]Spec, len(specs))
	for i, s := range specs {
		out[i] = Spec{Name: s.Name, Description: s.Description, Schema: append(json.RawMessage(nil), s.Schema...)}
	}
	return out
}

// SpecFor returns the Spec of the named tool.
func SpecFor(name string) (Spec, bool) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}
