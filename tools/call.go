package tools

import "encoding/json"

// The tool names of the contract (docs/tools.md; the team-wide TOOLS.md)
// are declared in each tool's file: Tap, LongPress, TypeText, Scroll,
// PressKey, LaunchApp, Wait, FinishTask.

// Call is one tool invocation: a name and its JSON arguments, exactly as a
// model or planner produced them.
type Call struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// NewCall builds a Call from a Go value for the arguments.
func NewCall(name string, args any) Call {
	b, err := json.Marshal(args)
	if err != nil {
		panic("tools.NewCall: arguments do not marshal: " + err.Error())
	}
	return Call{Name: name, Args: b}
}

// String renders the call compactly for logs and step lines: tap {"element":4}.
func (c Call) String() string {
	if len(c.Args) == 0 {
		return c.Name + " {}"
	}
	return c.Name + " " + string(c.Args)
}
