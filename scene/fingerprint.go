package scene

import (
	"encoding/hex"
	"hash/fnv"
	"sort"
	"strconv"
)

// listed is a listed element with the label the listing shows for it.
type listed struct {
	Element
	label string
}

// significant returns the elements a user would call "the screen": the
// listed ones, which already leave out noise, each with its listed label.
// The label counts: a list row whose text lives in plain children shows
// their text (it absorbs them, so they are not listed themselves), and a
// list scrolled by a whole number of rows differs only there.
func (s *Scene) significant() []listed {
	if s == nil {
		return nil
	}
	ents := s.entries()
	out := make([]listed, len(ents))
	for k, le := range ents {
		out[k] = listed{s.Elements[le.index], le.label}
	}
	return out
}

// Fingerprint identifies what a user would call "the screen": the
// foreground app and every listed element's class, id, label (as listed,
// borrowed from its children included), place and state, leaving out noise (status bar clock, battery, signal and
// notification icons, navigation bar). Two dumps of the same screen minutes
// apart have equal fingerprints; a dialog, a typed character, a scrolled
// list or a toggled switch make them differ.
func (s *Scene) Fingerprint() string {
	h := fnv.New128a()
	if s == nil {
		return hex.EncodeToString(h.Sum(nil))
	}
	var buf []byte
	buf = append(buf, s.Package...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(s.Rotation), 10)
	h.Write(buf)
	for _, e := range s.significant() {
		buf = appendKey(buf[:0], e, true)
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// appendKey writes what makes an element the same element; with state it
// also writes what can change about it (label, bounds, flags).
func appendKey(buf []byte, l listed, state bool) []byte {
	e := l.Element
	buf = append(buf, 1)
	buf = append(buf, e.Package...)
	buf = append(buf, 0)
	buf = append(buf, e.Class...)
	buf = append(buf, 0)
	buf = append(buf, e.ResourceID...)
	buf = append(buf, 0)
	if !state {
		return buf
	}
	buf = append(buf, e.Text...)
	buf = append(buf, 0)
	buf = append(buf, e.Desc...)
	buf = append(buf, 0)
	buf = append(buf, l.label...)
	buf = append(buf, 0)
	for _, v := range [4]int{e.Bounds.Left, e.Bounds.Top, e.Bounds.Right, e.Bounds.Bottom} {
		buf = strconv.AppendInt(buf, int64(v), 10)
		buf = append(buf, ',')
	}
	var f uint16
	for k, on := range []bool{e.Clickable, e.LongClickable, e.Editable, e.Scrollable, e.Checkable,
		e.Checked, e.Selected, e.Focusable, e.Focused, e.Enabled, e.Password} {
		if on {
			f |= 1 << k
		}
	}
	return strconv.AppendUint(buf, uint64(f), 16)
}

// Change is what differs between two Scenes, noise left out. Appeared and
// Changed hold elements of the after Scene, Disappeared of the before one.
type Change struct {
	Appeared    []Element
	Disappeared []Element
	Changed     []Element
}

// Empty reports that nothing a user would notice changed.
func (c Change) Empty() bool {
	return len(c.Appeared) == 0 && len(c.Disappeared) == 0 && len(c.Changed) == 0
}

// Diff compares two Scenes element by element (listed elements only, noise
// left out, the same rules as Fingerprint). An element whose identity
// (package, class, id) and either its place or its label survive is
// "changed" when anything else about it differs; otherwise it appeared or
// disappeared.
func Diff(before, after *Scene) Change {
	var c Change
	b, a := before.significant(), after.significant()
	usedB := make([]bool, len(b))
	usedA := make([]bool, len(a))

	// Pass 1: identical elements.
	full := make(map[string][]int, len(b))
	var buf []byte
	for i, e := range b {
		buf = appendKey(buf[:0], e, true)
		full[string(buf)] = append(full[string(buf)], i)
	}
	for j, e := range a {
		buf = appendKey(buf[:0], e, true)
		if l := full[string(buf)]; len(l) > 0 {
			usedB[l[0]], usedA[j] = true, true
			full[string(buf)] = l[1:]
		}
	}
	// Pass 2 and 3: same identity at the same place, then with the same label.
	for pass := 0; pass < 2; pass++ {
		idx := make(map[string][]int)
		key := func(e listed) string {
			k := appendKey(buf[:0], e, false)
			if pass == 0 {
				k = append(k, e.Bounds.String()...)
			} else {
				k = append(k, e.Text...)
				k = append(k, 0)
				k = append(k, e.Desc...)
				k = append(k, 0)
				k = append(k, e.label...)
			}
			buf = k
			return string(k)
		}
		for i, e := range b {
			if !usedB[i] {
				k := key(e)
				idx[k] = append(idx[k], i)
			}
		}
		for j, e := range a {
			if usedA[j] {
				continue
			}
			k := key(e)
			if l := idx[k]; len(l) > 0 {
				usedB[l[0]], usedA[j] = true, true
				idx[k] = l[1:]
				c.Changed = append(c.Changed, e.Element)
			}
		}
	}
	sort.Slice(c.Changed, func(x, y int) bool { return c.Changed[x].Index < c.Changed[y].Index })
	for i, e := range b {
		if !usedB[i] {
			c.Disappeared = append(c.Disappeared, e.Element)
		}
	}
	for j, e := range a {
		if !usedA[j] {
			c.Appeared = append(c.Appeared, e.Element)
		}
	}
	return c
}
