package scene

import (
	"sort"
	"strconv"
	"strings"
	"unicode"

	"phonepilot/internal/editdist"
)

// Scores of the three matching strengths. Within a strength, a closer
// match (a contained value covering more of the label, a fuzzy match with
// fewer edits) scores higher, but never reaches the next strength.
const (
	scoreExact    = 3.0
	scoreContains = 2.0
	scoreFuzzy    = 1.0
	// fuzzyMin is the least similarity (0..1) a fuzzy match needs.
	fuzzyMin = 0.6
)

// norm folds case and collapses whitespace so "  Sign\nIn " equals "sign in".
func norm(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Find returns the elements sel names, best first. Invisible and zero-area
// elements never match. With sel.Clickable (or sel.Editable) a match that is
// not itself clickable (editable) resolves to its nearest such ancestor, or
// is dropped.
func (s *Scene) Find(sel Selector) []Match {
	if s == nil || len(s.Elements) == 0 {
		return nil
	}
	want := norm(sel.Value)
	if want == "" && sel.Field != FieldIndex {
		return nil
	}
	best := make(map[int]float64)
	add := func(i int, score float64) {
		i, ok := s.narrow(i, sel)
		if !ok {
			return
		}
		if score > best[i] {
			best[i] = score
		}
	}
	if sel.Field == FieldIndex {
		i, err := strconv.Atoi(strings.TrimSpace(sel.Value))
		if err == nil && i >= 0 && i < len(s.Elements) && s.Visible(s.Elements[i]) {
			add(i, scoreExact)
		}
	} else {
		for i, e := range s.Elements {
			if !s.Visible(e) {
				continue
			}
			score := 0.0
			for _, cand := range candidates(e, sel.Field) {
				if sc := matchScore(norm(cand), want, sel.Mode); sc > score {
					score = sc
				}
			}
			if score > 0 {
				add(i, score)
			}
		}
	}
	out := make([]Match, 0, len(best))
	for i, sc := range best {
		e := s.Elements[i]
		// Ties between equally good matches go to what a finger can use.
		if e.Clickable || e.Editable || e.LongClickable {
			sc += 0.01
		}
		out = append(out, Match{Element: e, Score: sc})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].Element.Index < out[b].Element.Index
	})
	return out
}

// Resolve returns the best match for sel.
func (s *Scene) Resolve(sel Selector) (Element, bool) {
	m := s.Find(sel)
	if len(m) == 0 {
		return Element{}, false
	}
	return m[0].Element, true
}

// narrow applies sel.Clickable / sel.Editable: the element itself or its
// nearest qualifying visible ancestor.
func (s *Scene) narrow(i int, sel Selector) (int, bool) {
	ok := func(e Element) bool {
		if sel.Editable && !e.Editable {
			return false
		}
		if sel.Clickable && !(e.Clickable || e.LongClickable || e.Editable) {
			return false
		}
		return s.Visible(e)
	}
	for j := i; j >= 0 && j < len(s.Elements); j = s.Elements[j].Parent {
		if ok(s.Elements[j]) {
			return j, true
		}
		if !sel.Clickable && !sel.Editable {
			return 0, false
		}
	}
	return 0, false
}

// candidates are the strings of e a field compares against.
func candidates(e Element, f Field) []string {
	switch f {
	case FieldLabel:
		return []string{e.Text, e.Desc}
	case FieldText:
		return []string{e.Text}
	case FieldDesc:
		return []string{e.Desc}
	case FieldID:
		if e.ResourceID == "" {
			return nil
		}
		return []string{e.ResourceID, IDName(e.ResourceID)}
	case FieldClass:
		return []string{e.Class, SimpleClass(e.Class)}
	}
	return nil
}

// matchScore compares a normalised field value with a normalised wanted
// value under mode; 0 means no match.
func matchScore(have, want string, mode Mode) float64 {
	if have == "" {
		return 0
	}
	if have == want {
		return scoreExact
	}
	if mode == ModeExact {
		return 0
	}
	if strings.Contains(have, want) {
		// The more of the label the value covers, the better.
		return scoreContains + 0.5*float64(len(want))/float64(len(have))
	}
	if mode == ModeContains {
		return 0
	}
	if sim := similarity(have, want); sim >= fuzzyMin {
		return scoreFuzzy + 0.5*sim
	}
	return 0
}

// similarity is 1 - editDistance/longer length, over runes, so one wrong
// Chinese character costs as much as one wrong Latin letter. The value may
// also match a same-length window of a longer label ("serch" in "serch
// settings" style typos).
func similarity(have, want string) float64 {
	h, w := []rune(have), []rune(want)
	if len(w) == 0 || len(h) == 0 {
		return 0
	}
	best := 1 - float64(editDistance(h, w))/float64(max(len(h), len(w)))
	if len(h) > len(w) && len(w) >= 3 {
		// Best window of the label, lightly penalised for the rest of it.
		for i := 0; i+len(w) <= len(h); i++ {
			sim := 1 - float64(editDistance(h[i:i+len(w)], w))/float64(len(w))
			sim *= 0.9
			if sim > best {
				best = sim
			}
		}
	}
	return best
}

func editDistance(a, b []rune) int {
	if len(a) > 64 || len(b) > 64 {
		// Long texts are not what anyone names fuzzily; keep it cheap.
		if len(a) > len(b) {
			return len(a)
		}
		return len(b)
	}
	return editdist.Runes(a, b)
}
