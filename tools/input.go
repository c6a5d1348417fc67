package tools

import (
	"context"
	"fmt"
	"time"

	"phonepilot/device"
	"phonepilot/scene"
)

// InputKind is one kind of input a call gives the phone.
type InputKind string

// The inputs a tool can give the phone. Every device method a tool calls is
// one of them, and only perform calls the device (a test in this package
// parses every tool's source and holds it to that).
const (
	InputTap       InputKind = "tap"
	InputLongPress InputKind = "long_press"
	InputSwipe     InputKind = "swipe"
	InputText      InputKind = "text"
	InputKey       InputKind = "key"
	InputLaunch    InputKind = "launch"
	// InputStop force-stops an app (launch_app's stop) on a device that can
	// (device.AppStopper); a device that cannot is ErrUnsupported.
	InputStop InputKind = "stop"
)

// Input is one input a call gives the phone, declared before it runs:
// what it is, where, and which element of the call's Scene it lands on.
// The safety gate classifies every Input with an element (On >= 0) with
// the rules of a tap, so no tool touches an element the gate did not see.
type Input struct {
	Kind InputKind
	// On is the index in the call's Scene of the element the input lands
	// on, -1 for none: the element under the finger (tap, long press); the
	// clickable element a swipe starts and ends on (Android clicks a view
	// whose touch never left it); the element that has focus when text or
	// a key arrives.
	On int
	// Hit is the clickable element on top under the point of a tap or long
	// press when it is not On (a button drawn over the middle of the row
	// that was named): Android hands the touch to it. -1: none other.
	Hit int
	// X, Y is the point touched (tap, long press, the start of a swipe);
	// X2, Y2 the end of a swipe; Hold how long the finger stays.
	X, Y, X2, Y2 int
	Hold         time.Duration
	Text         string     // InputText
	Key          device.Key // InputKey
	App          string     // InputLaunch, InputStop
	// what names the input in an error ("type_text: focus [3]").
	what string
}

// Activates reports an input that acts on the element it lands on as a
// tap does: a touch, a swipe that stays on one clickable element, or a key
// that clicks the focused element (Enter on a focused button when the phone
// is not in touch mode).
func (in Input) Activates() bool {
	switch in.Kind {
	case InputTap, InputLongPress:
		return in.On >= 0 || in.Hit >= 0
	case InputSwipe:
		return in.On >= 0
	case InputKey:
		return in.On >= 0 && KeyActivates(in.Key)
	}
	return false
}

// Aimed reports an input whose effect depends on what is on the screen
// where it lands: a touch, a swipe, text (it goes to the focused field) or
// a key that clicks the focused element. Back, home, app switch, delete
// and a launch do the same on any screen.
func (in Input) Aimed() bool {
	switch in.Kind {
	case InputTap, InputLongPress, InputSwipe, InputText:
		return true
	case InputKey:
		return KeyActivates(in.Key)
	}
	return false
}

// Aims reports whether c, planned on sc, lands on the screen: it names an
// element, or one of its inputs is Aimed. Such a call planned on a screen
// of the past is checked on a read of the screen of the moment before it
// runs; the others need no read.
func Aims(c Call, sc *scene.Scene) bool {
	if _, named := ElementArg(c); named {
		return true
	}
	for _, in := range Declare(c, sc).Inputs {
		if in.Aimed() {
			return true
		}
	}
	return false
}

// KeyActivates reports a key that clicks the focused view (Enter; DPAD
// center and space do too on Android, but press_key offers neither). Back,
// home and app switch act on the system; delete edits the focused field.
func KeyActivates(k device.Key) bool { return k == device.KeyEnter }

// Declare says what c does to the phone on sc: the tool's Act with the
// inputs it gives, in order, each with the element it lands on. It never
// fails: an element the call names that sc does not hold is declared as
// touched all the same (Run refuses it; a check must not read that as "no
// touch"). Prepare also checks the call.
func Declare(c Call, sc *scene.Scene) Act {
	t, ok := Lookup(c.Name)
	if !ok {
		return Act{}
	}
	a := t.Act(c)
	env := envFor(sc, c)
	if t.inputs != nil {
		a.Inputs = t.inputs(c, env)
	}
	return a
}

// Prepare checks c against sc, the Scene it was planned on, and declares
// it (Declare): a call Run would refuse (bad arguments, an element that is
// not on sc, text typed into an element that takes none) is refused here,
// before anything asks a person about it.
func Prepare(c Call, sc *scene.Scene) (Act, error) {
	t, env, err := prepare(c, sc)
	if err != nil {
		return Act{}, err
	}
	a := t.Act(c)
	if t.inputs != nil {
		a.Inputs = t.inputs(c, env)
	}
	return a, nil
}

// prepare validates c and resolves its element on sc.
func prepare(c Call, sc *scene.Scene) (*Tool, *runEnv, error) {
	if err := Validate(c); err != nil {
		return nil, nil, err
	}
	args, err := decodeArgs(c.Args)
	if err != nil { // unreachable after Validate; kept so a bug cannot act blindly
		return nil, nil, &ArgError{Tool: c.Name, Msg: err.Error()}
	}
	env := &runEnv{sc: sc}
	if v, given := args["element"]; given {
		idx, ok := elementIndex(v)
		if !ok { // passed the schema but does not fit an int (1e20)
			return nil, nil, &ArgError{Tool: c.Name, Arg: "element", Msg: "must be an element index from the listing"}
		}
		e, b, err := resolve(sc, idx)
		if err != nil {
			return nil, nil, err
		}
		env.el, env.target = &e, b
	}
	t, _ := Lookup(c.Name) // Validate accepted the name
	if t.check != nil {
		if err := t.check(c, env); err != nil {
			return nil, nil, err
		}
	}
	return t, env, nil
}

// envFor resolves c's element on sc as far as it can, for Declare: an
// element with no area keeps its bounds, an index sc does not hold is an
// element of that index alone.
func envFor(sc *scene.Scene, c Call) *runEnv {
	env := &runEnv{sc: sc}
	idx, ok := ElementArg(c)
	if !ok {
		return env
	}
	if e, b, err := resolve(sc, idx); err == nil {
		env.el, env.target = &e, b
		return env
	}
	if e, ok := sc.Element(idx); ok {
		env.el, env.target = &e, e.Bounds
		return env
	}
	env.el = &scene.Element{Index: idx, Parent: -1}
	return env
}

// perform gives the phone the declared inputs, in order. It is the only
// code in this package that drives a device.
func perform(ctx context.Context, dev device.Device, ins []Input) error {
	for _, in := range ins {
		var err error
		switch in.Kind {
		case InputTap:
			err = dev.Tap(ctx, in.X, in.Y)
		case InputLongPress:
			err = dev.LongPress(ctx, in.X, in.Y, in.Hold)
		case InputSwipe:
			err = dev.Swipe(ctx, in.X, in.Y, in.X2, in.Y2, in.Hold)
		case InputText:
			err = dev.TypeText(ctx, in.Text)
		case InputKey:
			err = dev.Key(ctx, in.Key)
		case InputLaunch:
			err = dev.LaunchApp(ctx, in.App)
		case InputStop:
			if s, ok := dev.(device.AppStopper); ok {
				err = s.StopApp(ctx, in.App)
			} else {
				err = fmt.Errorf("this phone cannot stop an app: %w", device.ErrUnsupported)
			}
		default:
			err = fmt.Errorf("unknown input %q", in.Kind)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.what, err)
		}
	}
	return nil
}

// focused is the index of the element that has focus on sc, -1 for none:
// the focused editable field first (the keyboard's target), else any
// focused element (a button reached with the keys).
func focused(sc *scene.Scene) int {
	if sc == nil {
		return -1
	}
	any := -1
	for _, e := range sc.Elements {
		if !e.Focused {
			continue
		}
		if e.Editable {
			return e.Index
		}
		if any < 0 {
			any = e.Index
		}
	}
	return any
}

// hitAt is the clickable element a touch at (x,y) goes to on sc, -1 for
// none: the last visible clickable element in dump order whose bounds hold
// the point. A dump lists a window's views in drawing order (children
// after their parent, later siblings over earlier ones) and the windows
// from the bottom up, so the last one holding the point is on top.
func hitAt(sc *scene.Scene, x, y int) int {
	if sc == nil {
		return -1
	}
	for i := len(sc.Elements) - 1; i >= 0; i-- {
		e := sc.Elements[i]
		if (e.Clickable || e.LongClickable) && sc.Visible(e) && e.Bounds.Contains(x, y) {
			return i
		}
	}
	return -1
}

// touch is a tap or long press on el at the centre of target.
func touch(kind InputKind, sc *scene.Scene, el *scene.Element, target scene.Bounds, what string) Input {
	x, y := target.Center()
	in := Input{Kind: kind, On: el.Index, Hit: -1, X: x, Y: y, what: what}
	if h := hitAt(sc, x, y); h >= 0 && h != el.Index {
		in.Hit = h
	}
	return in
}

// swipeOn is the element a swipe from (x1,y1) to (x2,y2) clicks on sc, -1
// for none: the clickable element the touch goes to at the start, when the
// end is inside it too. A parent that scrolls on the other axis does not
// intercept the touch, and the view clicks on release because the finger
// never left it.
func swipeOn(sc *scene.Scene, x1, y1, x2, y2 int) int {
	h := hitAt(sc, x1, y1)
	if h < 0 || !sc.Elements[h].Bounds.Contains(x2, y2) {
		return -1
	}
	return h
}

// TextTarget reports whether el can take typed text: an editable field,
// or an element holding one whose focusing tap (at its centre) lands on
// its field or on itself (a text box's frame), never on another button.
func TextTarget(sc *scene.Scene, el scene.Element) bool {
	if el.Editable {
		return true
	}
	if sc == nil || el.Index < 0 || el.Index >= len(sc.Elements) {
		return false
	}
	holds := false
	for j := el.Index + 1; j < len(sc.Elements); j++ {
		d := sc.Elements[j]
		if d.Window != el.Window || d.Depth <= el.Depth {
			break
		}
		holds = holds || d.Editable
	}
	if !holds {
		return false
	}
	x, y := el.Bounds.Center()
	h := hitAt(sc, x, y)
	return h == el.Index || h >= 0 && sc.Elements[h].Editable
}

// NotTextError is type_text on an element that takes no text: its
// focusing tap would press it (a Send button, Buy now). Nothing touched the
// phone.
type NotTextError struct{ Element scene.Element }

// Permanent: the same call on the same Scene names the same element.
func (e *NotTextError) Permanent() bool { return true }

func (e *NotTextError) Error() string {
	kind := "not a text field"
	if c := simpleClass(e.Element.Class); c != "" {
		kind = "a " + c
		if e.Element.Clickable {
			kind = "a button"
		}
	}
	return fmt.Sprintf("%s is %s; tap it or pick the text field", Describe(e.Element), kind)
}
