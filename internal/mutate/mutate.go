// Mutate reads a kept list of realistic single-point bugs
// (scripts/mutations.txt), puts each in the source through the go
// command's -overlay (the tree is never written), runs the owning
// package's tests and says which bugs the tests caught. It is the engine
// of scripts/mutate.sh and not part of the default go test.
//
// A mutation in the list:
//
//	=== safety deny-field: a "deny" policy read from the wrong field
//	file: safety/policy.go
//	test: ./safety ./runtime        (optional; default: the file's package)
//	- old line
//	- old line
//	+ new line
//
// "- " lines are the text to find (one or more whole lines, compared
// without their leading and trailing blanks, found exactly once in the
// file), "+ " lines what replaces them (indented like the first line found;
// none deletes them). A further "- " after a "+ " starts another hunk in
// the same file. A mutation whose text is no longer in the file, or is
// there more than once, fails loudly: the list follows the code, never
// silently skips.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Mutation is one bug of the list.
type Mutation struct {
	Pkg, ID, Desc string
	File          string
	// Test are the package patterns whose tests must catch it.
	Test  []string
	Hunks []Hunk
	Line  int // where it starts in the list
}

// Hunk replaces Find (whole lines) with Replace.
type Hunk struct {
	Find, Replace []string
}

// Name is how the output names a mutation.
func (m Mutation) Name() string { return m.Pkg + "/" + m.ID }

// Parse reads a mutation list.
func Parse(r io.Reader) ([]Mutation, error) {
	var (
		out  []Mutation
		cur  *Mutation
		errs []error
		n    int
	)
	flush := func() {
		if cur == nil {
			return
		}
		switch {
		case cur.File == "":
			errs = append(errs, fmt.Errorf("line %d: %s has no file:", cur.Line, cur.Name()))
		case len(cur.Hunks) == 0:
			errs = append(errs, fmt.Errorf("line %d: %s has no - lines", cur.Line, cur.Name()))
		}
		if len(cur.Test) == 0 && cur.File != "" {
			cur.Test = []string{"./" + filepath.Dir(cur.File)}
		}
		out = append(out, *cur)
		cur = nil
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== "):
			flush()
			head, desc, _ := strings.Cut(strings.TrimPrefix(line, "=== "), ":")
			f := strings.Fields(head)
			if len(f) != 2 {
				errs = append(errs, fmt.Errorf("line %d: want \"=== PKG ID: what\", got %q", n, line))
				continue
			}
			cur = &Mutation{Pkg: f[0], ID: f[1], Desc: strings.TrimSpace(desc), Line: n}
			if at, dup := seen[cur.Name()]; dup {
				errs = append(errs, fmt.Errorf("line %d: %s already named at line %d", n, cur.Name(), at))
			}
			seen[cur.Name()] = n
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
			// blank lines and comments end nothing: hunks may be spaced out
		case cur == nil:
			errs = append(errs, fmt.Errorf("line %d: %q outside a mutation", n, line))
		case strings.HasPrefix(line, "file:"):
			cur.File = strings.TrimSpace(strings.TrimPrefix(line, "file:"))
		case strings.HasPrefix(line, "test:"):
			cur.Test = strings.Fields(strings.TrimPrefix(line, "test:"))
		case line == "-" || strings.HasPrefix(line, "- "):
			text := strings.TrimPrefix(strings.TrimPrefix(line, "-"), " ")
			if k := len(cur.Hunks); k == 0 || len(cur.Hunks[k-1].Replace) > 0 {
				cur.Hunks = append(cur.Hunks, Hunk{})
			}
			h := &cur.Hunks[len(cur.Hunks)-1]
			h.Find = append(h.Find, text)
		case line == "+" || strings.HasPrefix(line, "+ "):
			if len(cur.Hunks) == 0 {
				errs = append(errs, fmt.Errorf("line %d: + before any - in %s", n, cur.Name()))
				continue
			}
			h := &cur.Hunks[len(cur.Hunks)-1]
			h.Replace = append(h.Replace, strings.TrimPrefix(strings.TrimPrefix(line, "+"), " "))
		default:
			errs = append(errs, fmt.Errorf("line %d: %q: want file:, test:, \"- \" or \"+ \"", n, line))
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// ErrNoLongerApplies is wrapped by Apply's error when a hunk's text is not
// in the file exactly once.
var ErrNoLongerApplies = errors.New("mutation no longer applies")

// Apply returns src with m's hunks applied.
func Apply(m Mutation, src string) (string, error) {
	lines := strings.Split(src, "\n")
	for i, h := range m.Hunks {
		at := find(lines, h.Find)
		if len(at) != 1 {
			what := "is not in"
			if len(at) > 1 {
				what = fmt.Sprintf("is %d times in", len(at))
			}
			return "", fmt.Errorf("%s: %w: hunk %d (%q…) %s %s", m.Name(), ErrNoLongerApplies, i+1, strings.TrimSpace(h.Find[0]), what, m.File)
		}
		p := at[0]
		indent := lines[p][:len(lines[p])-len(strings.TrimLeft(lines[p], " \t"))]
		repl := make([]string, len(h.Replace))
		for j, r := range h.Replace {
			repl[j] = indent + r
		}
		lines = append(lines[:p], append(repl, lines[p+len(h.Find):]...)...)
	}
	out := strings.Join(lines, "\n")
	if out == src {
		return "", fmt.Errorf("%s: changes nothing", m.Name())
	}
	return out, nil
}

// find returns where the lines of want start in lines, compared trimmed.
func find(lines, want []string) []int {
	var at []int
	for i := 0; i+len(want) <= len(lines); i++ {
		ok := true
		for j, w := range want {
			if strings.TrimSpace(lines[i+j]) != strings.TrimSpace(w) {
				ok = false
				break
			}
		}
		if ok {
			at = append(at, i)
		}
	}
	return at
}

// Where is the file:line of m's first hunk in src ("" when it does not apply).
func Where(m Mutation, src string) string {
	if at := find(strings.Split(src, "\n"), m.Hunks[0].Find); len(at) == 1 {
		return fmt.Sprintf("%s:%d", m.File, at[0]+1)
	}
	return ""
}

// ReadFile parses the list at path.
func ReadFile(path string) ([]Mutation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}
