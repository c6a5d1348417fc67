package flow

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"phonepilot/scene"
)

// Resolve finds the element sel names on sc. The rules (docs/flows.md,
// "How a target is found"):
//
//   - An id that some visible element has must match; among several such
//     elements the label (text or content-desc) picks, exact before
//     contained, unless only one has the id: then a changed label is fine.
//   - An id that no element has any more (an app update renamed it), or no
//     id: the label must match (equal, or one contains the other, "Search"
//     and "Search products"), and so must the class when the selector has
//     one: a renamed element of the same kind is the same element, a Button
//     in place of a FrameLayout is not.
//   - The container's labels narrow the rest when they can.
//   - Nth picks among what is left, in reading order (top to bottom, left
//     to right).
func Resolve(sc *scene.Scene, sel Selector) (scene.Element, bool) {
	c := candidates(sc, sel)
	if sel.Nth < len(c) {
		return c[sel.Nth], true
	}
	return scene.Element{}, false
}

func candidates(sc *scene.Scene, sel Selector) []scene.Element {
	if sc == nil {
		return nil
	}
	var visible []scene.Element
	for _, e := range sc.Elements {
		if sc.Visible(e) {
			visible = append(visible, e)
		}
	}
	labels := wantedLabels(sel)
	var out []scene.Element
	if sel.ID != "" {
		out = filter(visible, func(e scene.Element) bool { return sameID(e.ResourceID, sel.ID) })
	}
	if len(out) > 0 {
		if len(out) > 1 && len(labels) > 0 {
			out = byLabel(out, labels)
		}
	} else {
		if len(labels) == 0 && (sel.ID != "" || sel.Class == "") {
			// An id gone and no label to know the element by.
			return nil
		}
		out = visible
		if sel.Class != "" {
			out = filter(out, func(e scene.Element) bool { return sameClass(e.Class, sel.Class) })
		}
		if len(labels) > 0 {
			out = byLabel(out, labels)
		}
	}
	if len(sel.Container) > 0 && len(out) > 1 {
		if in := filter(out, func(e scene.Element) bool { return overlaps(ContainerLabels(sc, e), sel.Container) }); len(in) > 0 {
			out = in
		}
	}
	sortReading(out)
	return out
}

func wantedLabels(sel Selector) []string {
	var out []string
	for _, v := range []string{sel.Text, sel.Desc} {
		if n := norm(v); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// byLabel keeps the elements whose text or content-desc matches one of the
// wanted labels: the exact matches when there are any, else the ones where
// one contains the other.
func byLabel(els []scene.Element, want []string) []scene.Element {
	var exact, near []scene.Element
	for _, e := range els {
		best := 0
		for _, have := range []string{norm(e.Text), norm(e.Desc)} {
			for _, w := range want {
				best = max(best, labelMatch(have, w))
			}
		}
		switch best {
		case 2:
			exact = append(exact, e)
		case 1:
			near = append(near, e)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return near
}

// labelMatch is 2 for equal labels, 1 when one contains the other (and the
// shorter is at least two characters, so "x" is in nothing), else 0.
func labelMatch(have, want string) int {
	switch {
	case have == "":
		return 0
	case have == want:
		return 2
	case len([]rune(want)) >= 2 && strings.Contains(have, want), len([]rune(have)) >= 2 && strings.Contains(want, have):
		return 1
	}
	return 0
}

func filter(els []scene.Element, keep func(scene.Element) bool) []scene.Element {
	var out []scene.Element
	for _, e := range els {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func sortReading(els []scene.Element) {
	sort.SliceStable(els, func(i, j int) bool {
		a, b := els[i].Bounds, els[j].Bounds
		if a.Top != b.Top {
			return a.Top < b.Top
		}
		if a.Left != b.Left {
			return a.Left < b.Left
		}
		return els[i].Index < els[j].Index
	})
}

func sameID(have, want string) bool {
	return have != "" && strings.EqualFold(scene.IDName(have), scene.IDName(want))
}

func sameClass(have, want string) bool {
	return strings.EqualFold(scene.SimpleClass(have), scene.SimpleClass(want))
}

func overlaps(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if labelMatch(norm(h), norm(w)) == 2 {
				return true
			}
		}
	}
	return false
}

// norm folds case and collapses whitespace.
func norm(s string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "))
}

// maxContainerLabels bounds the labels a selector keeps of its container.
const maxContainerLabels = 3

// ContainerLabels are the labels shown around e in its container: the
// nearest ancestor (up to three levels up, smaller than the screen) whose
// other descendants carry text, in tree order.
func ContainerLabels(sc *scene.Scene, e scene.Element) []string {
	for depth, p := 0, e.Parent; depth < 3 && p >= 0 && p < len(sc.Elements); depth, p = depth+1, sc.Elements[p].Parent {
		anc := sc.Elements[p]
		if anc.Parent < 0 || wholeScreen(sc, anc) {
			return nil // the window, or a layout as large as it, is not a container
		}
		var out []string
		for _, d := range sc.Elements {
			if d.Index == e.Index || !descends(sc, d, p) || descends(sc, d, e.Index) || !sc.Visible(d) {
				continue
			}
			if l := strings.TrimSpace(d.Label()); l != "" && !contains(out, l) {
				out = append(out, l)
				if len(out) == maxContainerLabels {
					break
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// wholeScreen: e covers most of the screen (the app's root layout).
func wholeScreen(sc *scene.Scene, e scene.Element) bool {
	if sc.Width <= 0 || sc.Height <= 0 {
		return false
	}
	return e.Bounds.Width()*e.Bounds.Height()*10 >= sc.Width*sc.Height*9
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// descends reports whether d lies below the element with index anc.
func descends(sc *scene.Scene, d scene.Element, anc int) bool {
	for i, n := d.Parent, 0; i >= 0 && i < len(sc.Elements) && n < 64; i, n = sc.Elements[i].Parent, n+1 {
		if i == anc {
			return true
		}
	}
	return false
}

// SelectorFor names el of sc so that Resolve finds it again: its id, its
// text (not for an editable field: that is its content), its desc, its
// class, its container's labels, and its position among the elements that
// match all of that.
func SelectorFor(sc *scene.Scene, el scene.Element) Selector {
	sel := Selector{ID: scene.IDName(el.ResourceID), Desc: el.Desc, Class: scene.SimpleClass(el.Class)}
	if !el.Editable {
		sel.Text = el.Text
	}
	if sel.ID == "" && sel.Text == "" && sel.Desc == "" {
		// Nothing of its own to name it by: the labels inside it (a
		// clickable row's title).
		for _, d := range sc.Elements {
			if descends(sc, d, el.Index) && sc.Visible(d) && strings.TrimSpace(d.Text) != "" && !d.Editable {
				sel.Text = d.Text
				break
			}
		}
	}
	if sel.ID == "" && sel.Text == "" && sel.Desc == "" || needsContainer(sc, sel, el) {
		sel.Container = ContainerLabels(sc, el)
	}
	for i, c := range candidates(sc, sel) {
		if c.Index == el.Index {
			sel.Nth = i
			break
		}
	}
	return sel
}

// needsContainer: other elements match the selector as it is.
func needsContainer(sc *scene.Scene, sel Selector, el scene.Element) bool {
	return len(candidates(sc, sel)) > 1
}

// executorSelector is the scene.Selector the Executor is handed for el,
// resolved on sc: the first of its id, text and desc that finds exactly
// el, else its index in sc (good for the Scene the step is planned on).
func executorSelector(sc *scene.Scene, el scene.Element) scene.Selector {
	for _, s := range []scene.Selector{
		{Field: scene.FieldID, Value: el.ResourceID, Mode: scene.ModeExact},
		{Field: scene.FieldText, Value: el.Text, Mode: scene.ModeExact},
		{Field: scene.FieldDesc, Value: el.Desc, Mode: scene.ModeExact},
	} {
		if s.Value == "" {
			continue
		}
		if m := sc.Find(s); len(m) == 1 && m[0].Element.Index == el.Index {
			return s
		}
	}
	return scene.Selector{Field: scene.FieldIndex, Value: strconv.Itoa(el.Index)}
}

// waitSelector is what the Executor waits for when sel is not on the
// screen yet: the element's id, else its exact label. The flow planner
// checks the whole selector again on the next screen.
func waitSelector(sel Selector) scene.Selector {
	switch {
	case sel.ID != "":
		return scene.Selector{Field: scene.FieldID, Value: sel.ID, Mode: scene.ModeExact}
	case sel.Text != "":
		return scene.Selector{Field: scene.FieldText, Value: sel.Text, Mode: scene.ModeExact}
	case sel.Desc != "":
		return scene.Selector{Field: scene.FieldDesc, Value: sel.Desc, Mode: scene.ModeExact}
	}
	// A class only: wait for one of them.
	return scene.Selector{Field: scene.FieldClass, Value: sel.Class, Mode: scene.ModeExact}
}

// String describes the selector for a person: `id "search_button", text
// "Search", Button`.
func (s Selector) String() string {
	var parts []string
	for _, kv := range [][2]string{{"id", s.ID}, {"text", s.Text}, {"desc", s.Desc}} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s %q", kv[0], kv[1]))
		}
	}
	if s.Class != "" {
		parts = append(parts, s.Class)
	}
	if len(s.Container) > 0 {
		parts = append(parts, fmt.Sprintf("in %q", strings.Join(s.Container, " · ")))
	}
	if s.Nth > 0 {
		parts = append(parts, fmt.Sprintf("#%d among equals", s.Nth+1))
	}
	return strings.Join(parts, ", ")
}
