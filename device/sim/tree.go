package sim

import (
	"image"
	"image/color"
)

// node is one view of the simulated UI tree. Screens build a fresh tree from
// the phone's model every time it is observed or touched; the uiautomator
// dump and the screenshot are both rendered from the same tree, so they
// always agree.
type node struct {
	class, text, id, desc, hint string
	pkg                         string          // set for every node of a window by its root
	r                           image.Rectangle // visible bounds (what the dump reports)
	full                        image.Rectangle // unclipped layout bounds when scrolled partly out of view

	clickable, longClickable, checkable, checked bool
	focusable, focused, scrollable, password     bool
	selected, disabled                           bool

	kids []*node

	look look

	// Behaviour. The closures mutate the phone's model; the caller rebuilds
	// the tree afterwards.
	tap       func()
	longPress func()
	scroll    func(dy int) bool // scrollables: move content by dy pixels (positive = toward the end)
	edit      *field            // editables
	blocks    bool              // a modal scrim: swallows touches that hit nothing else inside it
	plain     bool              // a pure layout container that `--compressed` drops
}

// field is an editable text field's binding into the model.
type field struct {
	value  *string
	submit func() // ENTER / IME action
}

// look is how the renderer paints a node. It never reaches the dump.
type look struct {
	bg     color.RGBA // zero alpha: transparent
	fg     color.RGBA
	border color.RGBA
	size   int // text size in pixels (already scaled)
	bold   bool
	center bool // centre the text horizontally
	radius int
	kind   paintKind
	accent color.RGBA // icon/switch colour
	glyph  string     // icon letter
	// snapshot, when set, draws another window scaled into the node (the
	// recents cards); it is only evaluated when rendering.
	snapshot func() *node
}

type paintKind int

const (
	paintNone paintKind = iota
	paintIcon           // rounded square app icon with a letter
	paintSwitch
	paintSpinner
	paintPicture // product photo placeholder
	paintDivider
	paintBattery
	paintGlyph // small symbol drawn from glyph ("back", "close", "plus", "search", "wifi", …)
	paintWallpaper
)

// windowRoot wraps content in the decor views a real activity window has
// (DecorView → LinearLayout → android:id/content), and stamps the package on
// every node.
func windowRoot(pkg string, full, content image.Rectangle, bg color.RGBA, kids ...*node) *node {
	c := &node{class: "android.widget.FrameLayout", id: "android:id/content", r: content, kids: kids}
	ll := &node{class: "android.widget.LinearLayout", r: full, kids: []*node{c}, plain: true}
	root := &node{class: "android.widget.FrameLayout", r: full, kids: []*node{ll}, look: look{bg: bg}}
	stampPackage(root, pkg)
	return root
}

func stampPackage(n *node, pkg string) {
	n.pkg = pkg
	for _, k := range n.kids {
		stampPackage(k, pkg)
	}
}

// Small constructors keep the screen builders readable.

func layout(class string, r image.Rectangle, kids ...*node) *node {
	return &node{class: class, r: r, kids: kids, plain: true}
}

func frameLayout(r image.Rectangle, kids ...*node) *node {
	return layout("android.widget.FrameLayout", r, kids...)
}

func vlayout(r image.Rectangle, kids ...*node) *node {
	return layout("android.widget.LinearLayout", r, kids...)
}

func label(id, s string, r image.Rectangle, size int, fg color.RGBA) *node {
	return &node{class: "android.widget.TextView", id: id, text: s, r: r, look: look{size: size, fg: fg}}
}

func button(id, s string, r image.Rectangle, size int, bg, fg color.RGBA, tap func()) *node {
	return &node{class: "android.widget.Button", id: id, text: s, r: r, clickable: true, focusable: true, tap: tap,
		look: look{size: size, fg: fg, bg: bg, center: true, radius: r.Dy() / 2, bold: true}}
}

func imageButton(id, desc string, r image.Rectangle, glyph string, fg color.RGBA, tap func()) *node {
	return &node{class: "android.widget.ImageButton", id: id, desc: desc, r: r, clickable: true, focusable: true, tap: tap,
		look: look{kind: paintGlyph, glyph: glyph, fg: fg}}
}

func (n *node) centered() *node { n.look.center = true; return n }

func (n *node) boldText() *node { n.look.bold = true; return n }

// walk visits n and its descendants depth-first, parents before children.
func walk(n *node, fn func(*node)) {
	if n == nil {
		return
	}
	fn(n)
	for _, k := range n.kids {
		walk(k, fn)
	}
}

// hit finds the topmost node under (x,y) satisfying want, in drawing order
// (later siblings are on top of earlier ones, children on top of parents).
// A blocking scrim stops the search from reaching what lies beneath it.
func hit(n *node, x, y int, want func(*node) bool) (found *node, blocked bool) {
	if n == nil || !(image.Point{x, y}.In(n.r)) {
		return nil, false
	}
	for i := len(n.kids) - 1; i >= 0; i-- {
		if f, b := hit(n.kids[i], x, y, want); f != nil || b {
			return f, b
		}
	}
	if want(n) {
		return n, false
	}
	return nil, n.blocks
}

// focusedEditable returns the editable node that has input focus.
func focusedEditable(roots ...*node) *node {
	var found *node
	for _, r := range roots {
		walk(r, func(n *node) {
			if found == nil && n.edit != nil && n.focused {
				found = n
			}
		})
	}
	return found
}

// clipTree limits a subtree to the visible area: rows that scroll partly out
// of view are reported with their visible part, as Android does, and keep
// their full layout for drawing. Nodes entirely outside are dropped.
func clipTree(n *node, visible image.Rectangle) *node {
	v := n.r.Intersect(visible)
	if v.Empty() {
		return nil
	}
	if v != n.r {
		if n.full.Empty() {
			n.full = n.r
		}
		n.r = v
	}
	kids := n.kids[:0]
	for _, k := range n.kids {
		if k = clipTree(k, visible); k != nil {
			kids = append(kids, k)
		}
	}
	n.kids = kids
	return n
}

// list builds a vertically scrolling container of count rows of height rowH
// inside r, scrolled by *off; only rows in view are built, as RecyclerView
// does.
func list(class, id string, r image.Rectangle, count, rowH int, off *int, row func(i int, rr image.Rectangle) *node) *node {
	total := count * rowH
	max := total - r.Dy()
	if max < 0 {
		max = 0
	}
	if *off > max {
		*off = max
	}
	n := &node{class: class, id: id, r: r, focusable: true}
	if max > 0 {
		n.scrollable = true
	}
	n.scroll = func(dy int) bool {
		v := *off + dy
		if v < 0 {
			v = 0
		}
		if v > max {
			v = max
		}
		moved := v != *off
		*off = v
		return moved
	}
	first := *off / rowH
	for i := first; i < count; i++ {
		top := r.Min.Y + i*rowH - *off
		if top >= r.Max.Y {
			break
		}
		if k := row(i, rect(r.Min.X, top, r.Max.X, top+rowH)); k != nil {
			if k = clipTree(k, r); k != nil {
				n.kids = append(n.kids, k)
			}
		}
	}
	return n
}

func rect(x0, y0, x1, y1 int) image.Rectangle { return image.Rect(x0, y0, x1, y1) }
