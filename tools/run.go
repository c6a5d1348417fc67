package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/scene"
)

// RunOptions are what Run needs besides the call.
type RunOptions struct {
	// Clock times the wait tool. Nil means the real clock.
	Clock clock.Clock
}

// Result is what a tool did, for the planner and the step record.
type Result struct {
	// Text is one short line a model can read: `tapped [4] Button "Search"`.
	Text string
	// Element is the element acted on, as it was in the call's Scene.
	Element *scene.Element
	// Finish is set by finish_task only.
	Finish *Finish
}

// ElementError is an "element" argument that does not name an element the
// tool can act on in the call's Scene. Nothing touched the device.
type ElementError struct {
	Index int // the index asked for
	Count int // how many elements the Scene has (valid: 0..Count-1)
	// Bounds is set (with NoArea) when the element exists but has no area
	// on the screen a finger could touch.
	Bounds scene.Bounds
	NoArea bool
}

// Permanent marks the error as one another attempt cannot fix: the same
// call on the same Scene names the same missing element.
func (e *ElementError) Permanent() bool { return true }

func (e *ElementError) Error() string {
	switch {
	case e.NoArea:
		return fmt.Sprintf("element %d has no area on the screen (bounds %s); choose another element", e.Index, e.Bounds)
	case e.Count == 0:
		return fmt.Sprintf("no element %d; the screen has no elements", e.Index)
	default:
		return fmt.Sprintf("no element %d; valid 0..%d", e.Index, e.Count-1)
	}
}

// Run validates c and performs it on dev. An "element" argument is resolved
// against sc, the Scene the caller (model or planner) chose it from; an index
// not in sc, or an element with no area on screen, is an *ElementError. A
// bad call (an *ArgError or *ElementError) never touches the device. Device
// errors are wrapped with the tool and element, so errors.Is finds the
// driver's sentinels (device.ErrDisconnected, …).
func Run(ctx context.Context, dev device.Device, sc *scene.Scene, c Call, opt RunOptions) (Result, error) {
	t, env, err := prepare(c, sc)
	if err != nil {
		return Result{}, err
	}
	env.clock = opt.Clock
	if t.finish == nil {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	if t.inputs != nil {
		if err := perform(ctx, dev, t.inputs(c, env)); err != nil {
			return Result{Element: env.el}, err
		}
	}
	return t.run(ctx, env, c)
}

// resolve finds element idx in sc and the part of it that is on screen.
func resolve(sc *scene.Scene, idx int) (scene.Element, scene.Bounds, error) {
	e, ok := sc.Element(idx)
	if !ok {
		n := 0
		if sc != nil {
			n = len(sc.Elements)
		}
		return scene.Element{}, scene.Bounds{}, &ElementError{Index: idx, Count: n}
	}
	b := e.Bounds
	if sc.Width > 0 && sc.Height > 0 {
		// Act on the visible part: a list row half scrolled off the top
		// still has its visible half under the finger.
		b = intersect(b, scene.Bounds{Right: sc.Width, Bottom: sc.Height})
	}
	if b.Empty() {
		return scene.Element{}, scene.Bounds{}, &ElementError{Index: idx, Count: len(sc.Elements), Bounds: e.Bounds, NoArea: true}
	}
	return e, b, nil
}

func intersect(a, b scene.Bounds) scene.Bounds {
	return scene.Bounds{
		Left: max(a.Left, b.Left), Top: max(a.Top, b.Top),
		Right: min(a.Right, b.Right), Bottom: min(a.Bottom, b.Bottom),
	}
}

// Describe renders an element the way tool results name it:
// `[4] Button "Search"`, or `[9] ImageView id=cart_icon` when it has no label.
func Describe(e scene.Element) string {
	var b strings.Builder
	b.WriteString("[" + strconv.Itoa(e.Index) + "]")
	if cls := simpleClass(e.Class); cls != "" {
		b.WriteString(" " + cls)
	}
	if label := e.Label(); label != "" {
		b.WriteString(" " + strconv.Quote(oneLine(label, 40)))
	} else if e.ResourceID != "" {
		id := e.ResourceID
		if i := strings.Index(id, ":id/"); i >= 0 {
			id = id[i+len(":id/"):]
		}
		b.WriteString(" id=" + id)
	}
	return b.String()
}

func simpleClass(class string) string {
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		return class[i+1:]
	}
	return class
}

// oneLine flattens whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// ElementArg returns the call's "element" argument, if it has one that is an
// integer (4 or 4.0).
func ElementArg(c Call) (int, bool) {
	args, err := decodeArgs(c.Args)
	if err != nil {
		return 0, false
	}
	return elementIndex(args["element"])
}

// elementIndex reads a decoded "element" value: an integral JSON number.
func elementIndex(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return int(i), i == int64(int(i))
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// WithElement returns a copy of c with its "element" argument set to idx
// (the Executor uses it once it has resolved a selector). Other arguments are
// kept; c itself is not modified. Arguments that are not a JSON object are
// replaced by {"element": idx}.
func WithElement(c Call, idx int) Call {
	args := map[string]json.RawMessage{}
	if trimmed := strings.TrimSpace(string(c.Args)); trimmed != "" && trimmed != "null" {
		if err := json.Unmarshal(c.Args, &args); err != nil || args == nil {
			args = map[string]json.RawMessage{}
		}
	}
	args["element"] = json.RawMessage(strconv.Itoa(idx))
	b, _ := json.Marshal(args) // a map of valid raw messages always marshals
	return Call{Name: c.Name, Args: b}
}
