// Package flow is a run that worked, kept as a repeatable script: the flow
// file (YAML, docs/flows.md), its parser and validator, the export of a
// recorded task into a flow, and the replay Planner that resolves each
// step's selector against the Scene of the moment and hands the runtime an
// ordinary PlannedStep, so waiting, settling, verifying, retries and the
// safety gate apply exactly as in a live run. No model is called unless a
// step no longer fits and healing was asked for.
package flow

import (
	"errors"
	"time"
)

// Version is the flow file format this package reads and writes.
const Version = 1

// Flow is one flow file.
type Flow struct {
	Version int    `yaml:"version" json:"version"`
	Name    string `yaml:"name,omitempty" json:"name,omitempty"`
	// Goal is the task's goal; it may name parameters (${query}).
	Goal     string    `yaml:"goal" json:"goal"`
	Recorded *Recorded `yaml:"recorded,omitempty" json:"recorded,omitempty"`
	// Params are the inputs a run may set (--set query=…), each with the
	// value used when it is not set.
	Params map[string]Param `yaml:"params,omitempty" json:"params,omitempty"`
	Steps  []Step           `yaml:"steps" json:"steps"`
}

// Recorded says where and how a flow was recorded.
type Recorded struct {
	Task    string `yaml:"task,omitempty" json:"task,omitempty"`
	Planner string `yaml:"planner,omitempty" json:"planner,omitempty"`
	Device  string `yaml:"device,omitempty" json:"device,omitempty"`
	// Locale is the device's language ("en", "zh") when known.
	Locale string `yaml:"locale,omitempty" json:"locale,omitempty"`
	// Screen is the screen size, "1080x2400".
	Screen string `yaml:"screen,omitempty" json:"screen,omitempty"`
	// Apps are the apps the steps acted in, with their versions when the
	// driver reported them.
	Apps []App     `yaml:"apps,omitempty" json:"apps,omitempty"`
	At   time.Time `yaml:"at,omitempty" json:"at,omitzero"`
}

// App is an app a flow was recorded on.
type App struct {
	Package string `yaml:"package" json:"package"`
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
}

// Param is one input of a flow.
type Param struct {
	Default     string `yaml:"default,omitempty" json:"default,omitempty"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// Step is one action of a flow.
type Step struct {
	Intent string `yaml:"intent,omitempty" json:"intent,omitempty"`
	// Tool is a capability tool's name (docs/tools.md); finish_task is not
	// a step: a flow completes after its last step.
	Tool string `yaml:"tool" json:"tool"`
	// Args are the tool's arguments without "element": the element is
	// named by Target.
	Args   map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
	Target *Selector      `yaml:"target,omitempty" json:"target,omitempty"`
	// Expect is what the Executor checks after the step; nil is the tool's
	// own effect (a change, the text in the field).
	Expect *Expect `yaml:"expect,omitempty" json:"expect,omitempty"`
	// Optional steps are skipped when their target is not on the screen
	// (a popup that may or may not show).
	Optional bool `yaml:"optional,omitempty" json:"optional,omitempty"`
	// Healed marks a step the AI planner wrote in place of one that no
	// longer fit, with why the old one did not.
	Healed string `yaml:"healed,omitempty" json:"healed,omitempty"`

	line int // in the file it was parsed from; 0 when built in code
}

// Selector names an element by what survives a layout change: its
// resource-id, text, content-desc, class, the labels of the row or card it
// sits in, and its position among elements that match all of that. Never an
// index or coordinates.
type Selector struct {
	ID    string `yaml:"id,omitempty" json:"id,omitempty"`
	Text  string `yaml:"text,omitempty" json:"text,omitempty"`
	Desc  string `yaml:"desc,omitempty" json:"desc,omitempty"`
	Class string `yaml:"class,omitempty" json:"class,omitempty"`
	// Container are labels shown in the element's container (the product
	// title beside an "Add to cart").
	Container []string `yaml:"container,omitempty" json:"container,omitempty"`
	// Nth is the element's position, 0 first, in reading order among the
	// elements that match everything else.
	Nth int `yaml:"nth,omitempty" json:"nth,omitempty"`
}

// Expect is what a step expects of the screen after it; at most one field
// is set.
type Expect struct {
	Changed   bool      `yaml:"changed,omitempty" json:"changed,omitempty"`
	App       string    `yaml:"app,omitempty" json:"app,omitempty"`
	FieldText string    `yaml:"field_text,omitempty" json:"field_text,omitempty"`
	Present   *Selector `yaml:"present,omitempty" json:"present,omitempty"`
	Gone      *Selector `yaml:"gone,omitempty" json:"gone,omitempty"`
	None      bool      `yaml:"none,omitempty" json:"none,omitempty"`
}

// Line is the step's line in the file it was parsed from (0 when unknown).
func (s Step) Line() int { return s.line }

// Errors a caller can tell apart.
var (
	// ErrInvalid wraps every error about the content of a flow file.
	ErrInvalid = errors.New("invalid flow")
	// ErrParams wraps errors about the parameters a run sets.
	ErrParams = errors.New("flow parameters")
)
