// Package scene is the structured screen every part of phonepilot reasons
// about: size, foreground app, and a flat list of elements built from a
// uiautomator dump. It never holds pixels (the Perception Boundary).
package scene

import "fmt"

// Bounds is an element's rectangle in screen pixels, as uiautomator reports
// it: [Left,Top][Right,Bottom], right and bottom exclusive.
type Bounds struct {
	Left, Top, Right, Bottom int
}

// Width is Right-Left (negative for malformed bounds).
func (b Bounds) Width() int { return b.Right - b.Left }

// Height is Bottom-Top (negative for malformed bounds).
func (b Bounds) Height() int { return b.Bottom - b.Top }

// Empty reports a zero-area (or inverted) rectangle: nothing a finger can hit.
func (b Bounds) Empty() bool { return b.Width() <= 0 || b.Height() <= 0 }

// Center is the point a tap on the element aims at.
func (b Bounds) Center() (x, y int) { return (b.Left + b.Right) / 2, (b.Top + b.Bottom) / 2 }

// Contains reports whether the point lies inside the rectangle.
func (b Bounds) Contains(x, y int) bool {
	return x >= b.Left && x < b.Right && y >= b.Top && y < b.Bottom
}

// String prints the bounds in uiautomator's own notation.
func (b Bounds) String() string {
	return fmt.Sprintf("[%d,%d][%d,%d]", b.Left, b.Top, b.Right, b.Bottom)
}

// Element is one node of the UI tree, flattened. Index is its position in
// Scene.Elements and the number a model uses to name it.
type Element struct {
	Index      int
	Parent     int // index of the parent element, -1 for a window root
	Depth      int // 0 for a window root
	Window     int // which top-level window (0-based, in dump order)
	Class      string
	Text       string
	Desc       string // content-desc
	ResourceID string
	Package    string
	Bounds     Bounds

	Clickable     bool
	LongClickable bool
	Editable      bool
	Scrollable    bool
	Checkable     bool
	Checked       bool
	Selected      bool
	Focusable     bool
	Focused       bool
	Enabled       bool
	Password      bool

	// Hint is an editable field's hint (the dump's hint attribute). An
	// empty field reports its hint as its text too: Text == Hint means
	// empty.
	Hint string
}

// Label is what a person would read on the element: its text, else its
// content-desc.
func (e Element) Label() string {
	if e.Text != "" {
		return e.Text
	}
	return e.Desc
}

// Scene is the screen at one moment.
type Scene struct {
	Width, Height int
	Rotation      int    // 0..3 as uiautomator reports it
	Package       string // the foreground app
	Activity      string // the foreground activity, when the driver knows it
	// Secure is set when the driver reports the foreground window as secure
	// (FLAG_SECURE: no screenshot allowed), which payment and password
	// screens use. The safety gate reads it.
	Secure   bool
	Elements []Element
}

// Element returns the element with index i, if the Scene has one.
func (s *Scene) Element(i int) (Element, bool) {
	if s == nil || i < 0 || i >= len(s.Elements) {
		return Element{}, false
	}
	return s.Elements[i], true
}
