package scene

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxLabelRunes caps a label in the listing; longer text is cut with "…".
// Long article text is rarely what a model acts on and is paid for every step.
const maxLabelRunes = 80

// maxBorrowed is how many descendant labels a clickable element without a
// label of its own may take over. A clickable area holding more text than
// that is a container: its texts are listed on their own lines.
const maxBorrowed = 3

// listEntry is one line of the listing.
type listEntry struct {
	index int
	label string
}

func interactive(e Element) bool {
	return e.Clickable || e.LongClickable || e.Editable || e.Scrollable || e.Checkable
}

// absorbs reports elements that take over the labels of plain text inside
// them (a list row, a button drawn as an icon plus a TextView).
func absorbs(e Element) bool {
	return (e.Clickable || e.LongClickable || e.Checkable) && !e.Scrollable && !e.Editable
}

// subtreeEnds returns, for every element, the index just past its
// descendants (elements are in document order, so a subtree is contiguous).
// One pass with a stack: linear even for pathological nesting.
func (s *Scene) subtreeEnds() []int {
	n := len(s.Elements)
	ends := make([]int, n)
	stack := make([]int, 0, 32)
	for i, e := range s.Elements {
		for len(stack) > 0 {
			top := s.Elements[stack[len(stack)-1]]
			if top.Depth < e.Depth && top.Window == e.Window {
				break
			}
			ends[stack[len(stack)-1]] = i
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, i)
	}
	for _, i := range stack {
		ends[i] = n
	}
	return ends
}

// entries computes the listing: visible elements that are interactive or
// carry text, with clickable elements taking the label of the plain text
// inside them instead of listing it twice.
func (s *Scene) entries() []listEntry {
	if s == nil {
		return nil
	}
	n := len(s.Elements)
	vis := make([]bool, n)
	for i, e := range s.Elements {
		vis[i] = s.Visible(e)
	}
	// Status bar, navigation bar and their icons are not what a model acts
	// on (press_key covers back and home); they cost tokens every step.
	noise := s.noise()
	for i := range vis {
		vis[i] = vis[i] && !noise[i]
	}
	ends := s.subtreeEnds()
	absorbed := make([]bool, n)
	borrowed := make(map[int]string)
	for i, e := range s.Elements {
		if !vis[i] || !absorbs(e) || absorbed[i] {
			continue
		}
		own := norm(e.Label())
		end := ends[i]
		var labels []int
		tooMany := false
		for j := i + 1; j < end; j++ {
			c := s.Elements[j]
			if interactive(c) {
				j = ends[j] - 1 // its texts belong to it
				continue
			}
			if !vis[j] || c.Label() == "" {
				continue
			}
			if own != "" {
				if norm(c.Label()) == own {
					absorbed[j] = true
				}
				continue
			}
			if len(labels) == maxBorrowed {
				tooMany = true
				break
			}
			labels = append(labels, j)
		}
		if own != "" || tooMany || len(labels) == 0 {
			continue
		}
		parts := make([]string, 0, len(labels))
	next:
		for _, j := range labels {
			absorbed[j] = true
			l := s.Elements[j].Label()
			for _, p := range parts {
				if norm(p) == norm(l) {
					continue next // a title repeated inside a card
				}
			}
			parts = append(parts, l)
		}
		borrowed[i] = strings.Join(parts, " · ")
	}
	out := make([]listEntry, 0, n/4+1)
	for i, e := range s.Elements {
		if !vis[i] || absorbed[i] {
			continue
		}
		label := e.Label()
		if label == "" {
			label = borrowed[i]
		}
		if label == "" && !interactive(e) {
			continue
		}
		out = append(out, listEntry{index: i, label: label})
	}
	return out
}

// Listed returns the elements the prompt listing shows, in index order.
func (s *Scene) Listed() []Element {
	ents := s.entries()
	out := make([]Element, len(ents))
	for k, le := range ents {
		out[k] = s.Elements[le.index]
	}
	return out
}

// Focused returns the editable element that has input focus, if any.
func (s *Scene) Focused() (Element, bool) {
	if s == nil {
		return Element{}, false
	}
	for _, e := range s.Elements {
		if e.Focused && e.Editable && s.Visible(e) {
			return e, true
		}
	}
	return Element{}, false
}

// Header is the listing's first line: screen size, foreground app and
// activity, each omitted when unknown.
func (s *Scene) Header() string {
	var b strings.Builder
	b.WriteString("Screen")
	if s.Width > 0 && s.Height > 0 {
		b.WriteString(" ")
		b.WriteString(strconv.Itoa(s.Width))
		b.WriteString("x")
		b.WriteString(strconv.Itoa(s.Height))
	}
	sep := " "
	if s.Width > 0 && s.Height > 0 {
		sep = " · "
	}
	if s.Package != "" {
		b.WriteString(sep)
		b.WriteString("app ")
		b.WriteString(s.Package)
		sep = " · "
	}
	if s.Activity != "" {
		b.WriteString(sep)
		b.WriteString("activity ")
		b.WriteString(s.Activity)
	}
	return b.String()
}

// Listing is the Scene as a model reads it (TOOLS.md): the header line, then
// one line per listed element: `[i] Class "label" id=name flags`. The index
// is the element's index in the full Scene, so a tool call maps back exactly.
func (s *Scene) Listing() string {
	if s == nil {
		return ""
	}
	ents := s.entries()
	var b strings.Builder
	b.Grow(64 + len(ents)*48)
	b.WriteString(s.Header())
	b.WriteByte('\n')
	for _, le := range ents {
		writeLine(&b, s.Elements[le.index], le.label)
	}
	return b.String()
}

func writeLine(b *strings.Builder, e Element, label string) {
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(e.Index))
	b.WriteString("] ")
	cls := SimpleClass(e.Class)
	if cls == "" {
		cls = "View"
	}
	b.WriteString(cls)
	if label != "" {
		b.WriteString(" \"")
		writeLabel(b, label)
		b.WriteByte('"')
	}
	if id := IDName(e.ResourceID); id != "" {
		b.WriteString(" id=")
		b.WriteString(id)
	}
	if e.Focused {
		b.WriteString(" focused")
	}
	if e.Clickable {
		b.WriteString(" clickable")
	}
	if e.LongClickable {
		b.WriteString(" long-clickable")
	}
	if e.Editable {
		b.WriteString(" editable")
	}
	if e.Scrollable {
		b.WriteString(" scrollable")
	}
	if e.Checkable {
		if e.Checked {
			b.WriteString(" checked")
		} else {
			b.WriteString(" unchecked")
		}
	}
	if e.Selected {
		b.WriteString(" selected")
	}
	if !e.Enabled {
		b.WriteString(" disabled")
	}
	if e.Password {
		b.WriteString(" password")
	}
	b.WriteByte('\n')
}

// writeLabel writes text on one line: newlines as \n, quotes escaped,
// whitespace runs collapsed, cut at maxLabelRunes.
func writeLabel(b *strings.Builder, s string) {
	runes := 0
	space := false
	for _, r := range strings.TrimSpace(s) {
		if runes == maxLabelRunes {
			b.WriteString("…")
			return
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
			space = false
			runes++
			continue
		case '\r':
			continue
		case '"':
			b.WriteString(`\"`)
			space = false
			runes++
			continue
		case '\\':
			b.WriteString(`\\`)
			space = false
			runes++
			continue
		}
		if r == ' ' || r == '\t' || r == '\u00a0' || r == '\u202f' {
			if space {
				continue
			}
			space = true
			b.WriteByte(' ')
			runes++
			continue
		}
		space = false
		if r == utf8.RuneError || r < 0x20 {
			r = '.'
		}
		b.WriteRune(r)
		runes++
	}
}
