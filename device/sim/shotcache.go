package sim

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"image"
	"slices"
	"sync"
)

// lastShot is a rendering and the key of what it drew.
type lastShot struct {
	key [sha256.Size]byte
	img *image.RGBA
	png []byte // nil until a PNG is asked for
}

// keptShots is how many renderings the process keeps. A 1080×2400 frame is
// 10 MB: one kept per phone held 200 MB for `serve` with 20 phones (issue
// 25), while phones showing the same screen draw the same pixels. So the
// renderings are kept once for all phones, the latest few.
const keptShots = 4

// shots are the renderings kept, the most recently used first.
var shots struct {
	mu   sync.Mutex
	kept []*lastShot
}

// keptShot is the kept rendering of key, or nil.
func keptShot(key [sha256.Size]byte) *lastShot {
	shots.mu.Lock()
	defer shots.mu.Unlock()
	for i, s := range shots.kept {
		if s.key == key {
			shots.kept = slices.Insert(slices.Delete(shots.kept, i, i+1), 0, s)
			return s
		}
	}
	return nil
}

// keepShot keeps s, dropping the least recently used beyond keptShots.
func keepShot(s *lastShot) {
	shots.mu.Lock()
	defer shots.mu.Unlock()
	shots.kept = slices.Insert(shots.kept, 0, s)
	if len(shots.kept) > keptShots {
		shots.kept[keptShots] = nil
		shots.kept = shots.kept[:keptShots]
	}
}

// pngOf is s encoded as PNG, encoded once.
func (s *lastShot) pngOf() []byte {
	shots.mu.Lock()
	png := s.png
	shots.mu.Unlock()
	if png == nil {
		png = encodePNG(s.img)
		shots.mu.Lock()
		s.png = png
		shots.mu.Unlock()
	}
	return png
}

// renderKey hashes everything the renderer reads from the windows: each
// node's attributes, bounds and look. Trees with a recents snapshot (drawn
// from a closure) are not cacheable.
func renderKey(g geo, ws []*node) (key [sha256.Size]byte, ok bool) {
	h := sha256.New()
	fmt.Fprintf(h, "%d×%d@%v|", g.W, g.H, g.scale)
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
