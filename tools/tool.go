package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/scene"
)

// Tool is one capability tool's whole definition: its Spec (what a model is
// told), how it runs on a device, the intent line that names a call of it,
// the effect a call expects, how to tell that effect is already on the
// screen, and, for finish_task, how it ends the task. Everything that
// differs from one tool to another lives in the tool's own file here, so the
// Executor and the planners ask a Tool instead of switching on its name, and
// adding a tool touches only this package (and the generated docs/tools.md).
type Tool struct {
	name        string
	description string
	schemaText  string // the JSON Schema of the arguments, as sent to models
	example     Example

	// run performs a validated call; env holds the resolved element.
	run func(ctx context.Context, env *runEnv, c Call) (Result, error)
	// intent names a call in step lines and history; target is the element
	// as tool results name it ("" when the call has none).
	intent func(c Call, target string) string
	// effect is the call's expected effect (nil: EffectNone).
	effect func(c Call) Effect
	// changed judges EffectChange (nil: the fingerprints differ).
	changed func(c Call, o Outcome) (bool, string)
	// tookEffect tells that repeating the call would do it twice (nil: the
	// fingerprints differ).
	tookEffect func(c Call, o Outcome) bool
	// remainder is what is left to do of a call whose effect is partly on
	// the screen, and a note saying what was done already (nil: nothing).
	remainder func(c Call, o Outcome) (rest Call, done string, ok bool)
	// finish reads the end of the task a call declares (finish_task only).
	finish func(c Call) (Finish, error)
	// ask reads the question a call asks a person (ask_user only).
	ask func(c Call) (string, error)
	// press tools act with one discrete press (tap, press_key): when the
	// thing a press should close is still there, the press did not land.
	press bool
	// passive tools do not act on the screen (wait, finish_task): whether
	// the screen changed after them says nothing about them.
	passive bool
	// act says what a call does to the phone, for checks that judge the
	// action rather than the tool (the safety gate); nil: ActNone.
	act func(c Call) Act
	// inputs declares the inputs a call gives the phone on env's Scene,
	// each with the element it lands on (nil: none). Run performs exactly
	// these, before run words the result.
	inputs func(c Call, env *runEnv) []Input
	// check refuses a call its Scene cannot take (nil: any), before
	// anything touches the phone or asks a person.
	check func(c Call, env *runEnv) error

	spec   Spec
	schema *schema
}

// Example is a call of the tool and the result line Run answers, for the
// generated documentation (a test checks Run really answers it).
type Example struct {
	Args   string
	Result string
}

// Outcome is what a call's effect is judged on: Before is the screen right
// before the step's first action, After the screen now. Changed says whether
// their fingerprints differ; the caller computes it, since it caches
// fingerprints (one hashes every listed element).
type Outcome struct {
	Before, After *scene.Scene
	Changed       bool
}

// EffectKind is the kind of effect a call expects on the screen.
type EffectKind string

// The effects a tool can expect of a call.
const (
	// EffectNone: nothing to check (scroll may be at the end already; wait
	// and finish_task change nothing).
	EffectNone EffectKind = ""
	// EffectChange: the screen changes, as the tool's Changed judges it.
	EffectChange EffectKind = "change"
	// EffectFieldText: an editable field holds Text.
	EffectFieldText EffectKind = "field_text"
)

// Effect is what a call is expected to leave on the screen, for a planner
// that states no more specific expectation (the AIPlanner).
type Effect struct {
	Kind EffectKind
	Text string // EffectFieldText
}

// runEnv is what a tool's run gets besides the call: the Scene the call
// was planned on, the element it names (nil when none) and the part of
// that element that is on screen. It holds no device: a tool gives the
// phone only the inputs it declares (Tool.inputs), performed by Run.
type runEnv struct {
	sc     *scene.Scene
	el     *scene.Element
	target scene.Bounds
	clock  clock.Clock
}

// Name is the tool's name as calls spell it.
func (t *Tool) Name() string { return t.name }

// Spec is the tool as a model is told about it. The schema is a copy.
func (t *Tool) Spec() Spec {
	return Spec{Name: t.spec.Name, Description: t.spec.Description, Schema: append(json.RawMessage(nil), t.spec.Schema...)}
}

// Example is the documented example call and its result.
func (t *Tool) Example() Example { return t.example }

// Intent names the call for step lines and history, with el (the element
// the call acts on, nil when none) named as a model saw it:
// `tap [4] Button "Search"`, `type "Mac mini" into [3] and submit`.
func (t *Tool) Intent(c Call, el *scene.Element) string {
	target := ""
	if el != nil {
		target = Describe(*el)
	}
	if t.intent == nil {
		return c.String()
	}
	return t.intent(c, target)
}

// Effect is the effect the call expects.
func (t *Tool) Effect(c Call) Effect {
	if t.effect == nil {
		return Effect{}
	}
	return t.effect(c)
}

// Changed judges whether the screen changed the way this call changes it,
// and if not, says so in a short phrase. A submitting type_text must change
// more than the fields' text; launch_app is satisfied by its app in front.
func (t *Tool) Changed(c Call, o Outcome) (bool, string) {
	if t.changed != nil {
		return t.changed(c, o)
	}
	if o.Changed {
		return true, ""
	}
	return false, "the screen did not change"
}

// TookEffect reports whether the call's effect is already on o.After, so
// that repeating the call would do it twice (a query typed twice, an app
// launched twice, a toggle tapped back).
func (t *Tool) TookEffect(c Call, o Outcome) bool {
	if t.tookEffect != nil {
		return t.tookEffect(c, o)
	}
	return o.Changed
}

// Remainder is the part of a call still to do when its effect is partly on
// the screen, with a short note of the part done ("text already typed"): a
// submitting type_text whose text is in the field but whose submit did not
// land becomes the enter key alone.
func (t *Tool) Remainder(c Call, o Outcome) (rest Call, done string, ok bool) {
	if t.remainder == nil {
		return Call{}, "", false
	}
	return t.remainder(c, o)
}

// Passive reports a tool that does not act on the screen (wait,
// finish_task): "the screen did not change" is no news about it.
func (t *Tool) Passive() bool { return t.passive }

// Press reports a tool that acts with one discrete press (tap, press_key):
// when what the press should close is still on the screen, the press did
// not close it, and pressing again is safe.
func (t *Tool) Press() bool { return t.press }

// ActKind is what a call does to the phone, as a check of the action
// (the safety gate) must read it.
type ActKind string

// The kinds of action a call can be.
const (
	// ActNone: nothing a person could regret (scroll, wait, finish_task).
	ActNone ActKind = ""
	// ActTouch: a finger on an element (tap, long_press).
	ActTouch ActKind = "touch"
	// ActType: text into a field (type_text).
	ActType ActKind = "type"
	// ActKey: a hardware or keyboard key (press_key).
	ActKey ActKind = "key"
	// ActLaunch: an app started (launch_app).
	ActLaunch ActKind = "launch"
)

// Act is what a call does to the phone. Fields not of its Kind are zero.
type Act struct {
	Kind ActKind
	// Text is the text typed (ActType).
	Text string
	// Submit is set when the call presses Enter: a submitting type_text, or
	// press_key enter.
	Submit bool
	// Key is the key pressed (ActKey).
	Key device.Key
	// App is the app launched, as the call names it (ActLaunch).
	App string
	// Inputs are what the call gives the phone, in order, each with the
	// element it lands on. Only Declare and Prepare fill them in (they need
	// the call's Scene).
	Inputs []Input
}

// Act says what the call does to the phone.
func (t *Tool) Act(c Call) Act {
	if t.act == nil {
		return Act{}
	}
	return t.act(c)
}

// Ends reports whether calls of this tool end the task (finish_task).
func (t *Tool) Ends() bool { return t.finish != nil }

// Lookup returns the tool of that name.
func Lookup(name string) (*Tool, bool) {
	t, ok := byName[name]
	return t, ok
}

// All returns every tool in the order of TOOLS.md.
func All() []*Tool { return append([]*Tool(nil), registry...) }

// Asks reports whether calls of this tool ask a person (ask_user): the
// runtime hands the phone over and waits for the answer.
func (t *Tool) Asks() bool { return t.ask != nil }

// Direct returns the names of the tools a caller without a task may call on
// the phone itself (an MCP client's action tools): every tool of the
// registry that neither ends a task nor asks a person, in registry order.
func Direct() []string {
	var out []string
	for _, t := range registry {
		if !t.Ends() && !t.Asks() {
			out = append(out, t.name)
		}
	}
	return out
}

// Ending returns the end of the task c declares: nil for a call of a tool
// that does not end tasks, an error for a finish_task call whose arguments
// do not fit its schema.
func Ending(c Call) (*Finish, error) {
	t, ok := Lookup(c.Name)
	if !ok || t.finish == nil {
		return nil, nil
	}
	if err := Validate(c); err != nil {
		return nil, err
	}
	f, err := t.finish(c)
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// ArgsOf decodes a call's arguments into the tool's typed arguments (one of
// TapArgs, TypeTextArgs, …). Validate the call first: ArgsOf checks only
// that the JSON fits A.
func ArgsOf[A any](c Call) (A, error) {
	var a A
	if len(c.Args) == 0 || string(c.Args) == "null" {
		return a, nil
	}
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return a, &ArgError{Tool: c.Name, Msg: fmt.Sprintf("arguments do not fit %T: %v", a, err)}
	}
	return a, nil
}

// args decodes arguments that Validate accepted; a failure there is a bug
// in the tool's own schema, reported as a zero value.
func args[A any](c Call) A {
	a, _ := ArgsOf[A](c)
	return a
}
