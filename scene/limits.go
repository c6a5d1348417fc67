package scene

import "errors"

// Limits on a screen's tree, for every source (a uiautomator dump, the
// helper's tree, WDA's source, Scene JSON): a deeper or larger tree is
// refused with ErrTooBig rather than walked. Real screens are far below
// both (the deepest dump among the fixtures nests 24 levels; a large one
// has a few thousand nodes), and with the depth bounded every walk from an
// element up to its window root is bounded too, so planning stays linear in
// the number of elements.
const (
	MaxDepth    = 200
	MaxElements = 50000
)

// ErrTooBig: the tree is deeper or larger than phonepilot reads.
var ErrTooBig = errors.New("the screen's tree is too deep or too large")
