package tools

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"phonepilot/scene"
)

// Scroll is the name of the scroll tool.
const Scroll = "scroll"

// ScrollDuration is how long a scroll swipe takes: slow enough that the
// list does not fling far past what the model wanted to see (uiautomator's
// UiScrollable scrolls in 55 steps of about 5 ms, ≈275 ms, and flings in 5;
// docs/phonebench.md).
const ScrollDuration = 300 * time.Millisecond

// A scroll swipe starts and ends inside a margin of the scrolled area, as a
// fraction of its length along the scroll axis, so the finger stays on it.
//   - elementMargin, in a scrollable element: 10%, as uiautomator's
//     UiScrollable scrolls (DEFAULT_SWIPE_DEADZONE_PCT); a scroll brings
//     80% of the element's length into view and keeps a fifth of what it
//     showed (a row cut at its edge is whole after it).
//   - screenMargin, on the screen's middle (no element): 25%, clear of the
//     screen-edge gesture zones, the status and navigation bars, and short
//     of the length of a list that does not fill the screen (more would
//     carry rows past unseen).
const (
	elementMargin = 0.1
	screenMargin  = 0.25
)

// ScrollArgs are scroll's arguments.
type ScrollArgs struct {
	Direction string `json:"direction"`
	Element   *Index `json:"element,omitempty"`
}

var scrollTool = register(&Tool{
	name:        Scroll,
	description: "Scroll the screen, or one scrollable element, so that content further in `direction` comes into view: `down` shows what is below, `up` what is above. Use it to find something that is not in the current listing.",
	schemaText: `{
  "type": "object",
  "properties": {
    "direction": {"type": "string", "enum": ["up", "down", "left", "right"], "description": "Where the content you want to see is: down reveals content below, up content above, left/right content to that side."},
    "element": {"type": "integer", "minimum": 0, "description": "Optional: the [N] index of the scrollable element (a list, a carousel) in the CURRENT screen listing. Without it the middle of the screen is scrolled."}
  },
  "required": ["direction"],
  "additionalProperties": false
}`,
	example: Example{`{"direction":"down","element":12}`, `scrolled down in [12]`},
	// The swipe stays inside the scrolled area; when it starts and ends on
	// one clickable element, Android clicks that element, and the
	// declaration says so.
	inputs: func(c Call, env *runEnv) []Input {
		dir := args[ScrollArgs](c).Direction
		area, where, margin := env.target, "", elementMargin
		if env.el != nil {
			where = " in [" + strconv.Itoa(env.el.Index) + "]"
		} else {
			area, margin = screenArea(env.sc), screenMargin
		}
		x1, y1, x2, y2 := swipeFor(area, dir, margin)
		return []Input{{Kind: InputSwipe, On: swipeOn(env.sc, x1, y1, x2, y2), Hit: -1, X: x1, Y: y1, X2: x2, Y2: y2, Hold: ScrollDuration,
			what: "scroll " + dir + where}}
	},
	check: func(c Call, env *runEnv) error {
		if env.el == nil && screenArea(env.sc).Empty() {
			return fmt.Errorf("scroll: the screen size is unknown; give an element to scroll")
		}
		return nil
	},
	run: func(_ context.Context, env *runEnv, c Call) (Result, error) {
		res := Result{Element: env.el, Text: "scrolled " + args[ScrollArgs](c).Direction}
		if env.el != nil {
			res.Text += " in [" + strconv.Itoa(env.el.Index) + "]"
		}
		return res, nil
	},
	intent: func(c Call, target string) string {
		s := "scroll " + args[ScrollArgs](c).Direction
		if target != "" {
			s += " in " + target
		}
		return s
	},
	// A scroll expects nothing by itself: the list may be at its end
	// already, and the next Scene shows what came into view.
})

// screenArea is the whole screen, from the Scene's size or, when the driver
// did not report one, from the elements' extent.
func screenArea(sc *scene.Scene) scene.Bounds {
	if sc == nil {
		return scene.Bounds{}
	}
	if sc.Width > 0 && sc.Height > 0 {
		return scene.Bounds{Right: sc.Width, Bottom: sc.Height}
	}
	var area scene.Bounds
	for _, e := range sc.Elements {
		if e.Bounds.Empty() {
			continue
		}
		area.Right = max(area.Right, e.Bounds.Right)
		area.Bottom = max(area.Bottom, e.Bounds.Bottom)
	}
	return area
}

// swipeFor returns the swipe inside area, margin (a fraction of its length)
// from its ends, that brings content further in dir into view: the finger
// moves the opposite way (to see what is below, drag the content up).
func swipeFor(area scene.Bounds, dir string, margin float64) (x1, y1, x2, y2 int) {
	cx, cy := area.Center()
	along := func(lo, size int, f float64) int { return lo + int(math.Round(float64(size)*f)) }
	near, far := margin, 1-margin
	switch dir {
	case "down":
		return cx, along(area.Top, area.Height(), far), cx, along(area.Top, area.Height(), near)
	case "up":
		return cx, along(area.Top, area.Height(), near), cx, along(area.Top, area.Height(), far)
	case "right":
		return along(area.Left, area.Width(), far), cy, along(area.Left, area.Width(), near), cy
	default: // "left"
		return along(area.Left, area.Width(), near), cy, along(area.Left, area.Width(), far), cy
	}
}
