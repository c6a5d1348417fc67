// Package tools is the capability tool contract (docs/tools.md): the tools
// every planner acts through, one file per tool holding its whole
// definition and registering it (a *Tool: JSON Schema as sent to models,
// typed arguments, how it runs on a device.Device, its intent line, the
// effect it expects and how to tell it already happened), generic validation of a call's arguments
// against the schemas, and Run, which performs a validated call. An
// "element" argument is always the index of an element in the Scene given
// to the call; it is resolved to that element's bounds there, never guessed.
package tools

import (
	"encoding/json"

	"phonepilot/device"
)

// Spec describes one tool to a model: its name, what it does, and the JSON
// Schema (draft 2020-12 subset) of its arguments, sent as is.
//
// The descriptions and schemas in the tools' files are read by models: they
// say what the element index means, which way a scroll moves the content,
// and that finish_task is the only way to end. Changing a name or an
// argument breaks the contract (TOOLS.md); improving wording does not.
type Spec struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Specs returns every tool's Spec in the order of TOOLS.md. The slice is a
// copy; callers may keep or modify it.
func Specs() []Spec {
	out := make([]Spec, len(registry))
	for i, t := range registry {
		out[i] = t.Spec()
	}
	return out
}

// SpecsFor is Specs for a device with keys (device.KeysOf): press_key
// offers only those, so that a planner is never told of a key the phone
// lacks (an iPhone's back).
func SpecsFor(keys []device.Key) []Spec {
	out := Specs()
	for i := range out {
		if out[i].Name == PressKey {
			out[i] = pressKeySpec(keys)
		}
	}
	return out
}

// SpecFor returns the Spec of the named tool.
func SpecFor(name string) (Spec, bool) {
	if t, ok := Lookup(name); ok {
		return t.Spec(), true
	}
	return Spec{}, false
}
