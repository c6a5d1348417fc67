package sim

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"image"
)

// lastShot is the most recent rendering and the key of what it drew.
type lastShot struct {
	key [sha256.Size]byte
	img *image.RGBA
	png []byte // nil until a PNG is asked for
}

// renderKey hashes everything the renderer reads from the windows: each
// node's attributes, bounds and look. Trees with a recents snapshot (drawn
// from a closure) are not cacheable.
func renderKey(ws []*node) (key [sha256.Size]byte, ok bool) {
	h := sha256.New()
	for _, w := range ws {
		if !hashNode(h, w) {
			return key, false
		}
		h.Write([]byte{0})
	}
	copy(key[:], h.Sum(nil))
	return key, true
}

func hashNode(h hash.Hash, n *node) bool {
	if n.look.snapshot != nil {
		return false
	}
	l := n.look
	fmt.Fprintf(h, "%q|%q|%q|%q|%q|%q|%v|%v|%t%t%t%t%t%t%t%t%t%t|%v|%v|%v|%d|%t|%t|%d|%d|%v|%q|%d(",
		n.class, n.text, n.id, n.desc, n.hint, n.pkg, n.r, n.full,
		n.clickable, n.longClickable, n.checkable, n.checked, n.focusable, n.focused,
		n.scrollable, n.password, n.selected, n.disabled,
		l.bg, l.fg, l.border, l.size, l.bold, l.center, l.radius, l.kind, l.accent, l.glyph, len(n.kids))
	for _, k := range n.kids {
		if !hashNode(h, k) {
			return false
		}
	}
	h.Write([]byte{')'})
	return true
}
