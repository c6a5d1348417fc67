package tasks

import (
	"strconv"
	"strings"
	"unicode"
)

// Listed is one line of a Scene listing as a model reads it (TOOLS.md, "The
// Scene as a model sees it"): `[i] Class "label" id=name flags`.
type Listed struct {
	Index int    // the element's index in the full Scene
	Class string // the simple class name
	Label string // the label, unescaped ("" when the line has none)
	Line  string // the line as listed
}

// ParseListing reads the element lines of a listing (scene.Scene.Listing):
// the header and any line that is not an element are skipped.
func ParseListing(listing string) []Listed {
	var out []Listed
	for _, line := range strings.Split(listing, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		end := strings.IndexByte(line, ']')
		if end < 0 {
			continue
		}
		idx, err := strconv.Atoi(line[1:end])
		if err != nil {
			continue
		}
		rest := strings.TrimPrefix(line[end+1:], " ")
		cls, rest, _ := strings.Cut(rest, " ")
		l := Listed{Index: idx, Class: cls, Line: line}
		if strings.HasPrefix(rest, `"`) {
			l.Label = UnquoteLabel(rest[1:])
		}
		out = append(out, l)
	}
	return out
}

// UnquoteLabel reads a listing label up to its closing quote: \" is a
// quote, \\ a backslash, \n a newline (the harness's listing reader uses
// it too).
func UnquoteLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte(s[i])
			}
		case c == '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// FindTarget is how a Step's Target names an element, the one rule both the
// in-package test executor and the harness's scripted decision-maker use:
//
//  1. Only listing lines count (what a model sees); the label is the quoted
//     text of the line — the element's text, else its content-desc, else
//     the texts it absorbs from its children joined by " · " (scene.Listing).
//  2. Labels and Target are compared after normalising: trimmed, runs of
//     whitespace collapsed to one space, Unicode hyphens (U+2010, U+2011)
//     read as "-", and lower-cased rune by rune (unicode.ToLower).
//  3. An element whose whole label equals the Target wins; failing that, one
//     of whose " · "-separated parts equals it (a Settings row "Display ·
//     Dark theme, font size, brightness" is Target "Display").
//  4. Among equal matches the first listed (lowest index) wins.
//
// There is no fuzzy or substring match: a Target is the label as the phone
// shows it in that locale, so a script that names a wrong label fails
// instead of tapping something else.
func FindTarget(listing, target string) (Listed, bool) {
	want := normLabel(target)
	if want == "" {
		return Listed{}, false
	}
	lines := ParseListing(listing)
	for _, l := range lines {
		if normLabel(l.Label) == want {
			return l, true
		}
	}
	for _, l := range lines {
		for _, part := range strings.Split(l.Label, " · ") {
			if normLabel(part) == want {
				return l, true
			}
		}
	}
	return Listed{}, false
}

// IsListed reports whether an element labelled label is in the listing, by
// FindTarget's rule (for Step.Until).
func IsListed(listing, label string) bool {
	_, ok := FindTarget(listing, label)
	return ok
}

func normLabel(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) || r == '\u00a0' || r == '\u202f' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		if r == '\u2010' || r == '\u2011' {
			r = '-'
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
