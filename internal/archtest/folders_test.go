package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestFoldersShowTheImports: the folder tree is a map of the imports. A
// package inside another package's folder (x/y inside x) reads as a part of
// x, so a package that x imports (directly or through others) must not
// import x/y: the tree would show it importing upward into x, a cycle that
// is not there. A leaf many packages share (the task lifecycle's words)
// gets a folder of its own.
func TestFoldersShowTheImports(t *testing.T) {
	for _, v := range folderCycles(allowedImports) {
		t.Error(v)
	}
}

// TestFolderCheckFinds: the lifecycle words back inside task/, which imports
// storage, which imports them, is found; a driver below device/ imported by
// the backend table below device/ is not.
func TestFolderCheckFinds(t *testing.T) {
	table := map[string][]string{
		"task/lifecycle": nil,
		"storage":        {"task/lifecycle"},
		"task":           {"storage", "task/lifecycle"},
		"api":            {"task", "task/lifecycle", "internal/*"},
		"device":         nil,
		"device/adb":     {"device"},
		"device/backend": {"device", "device/adb"},
		"cmd":            {"*"},
		"internal/*":     nil,
	}
	got := folderCycles(table)
	want := []string{`storage imports task/lifecycle, which sits in task's folder, but task imports storage: move task/lifecycle to a folder of its own`}
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// folderCycles checks a table of allowed imports (keys and values relative
// to the module; "x/*" and "*" patterns are left out: internal/ is no
// package and cmd imports anything).
func folderCycles(table map[string][]string) []string {
	concrete := func(p string) bool { return !strings.Contains(p, "*") }
	// reach[a] = the packages a imports, directly or through others.
	reach := map[string]map[string]bool{}
	var walk func(a string, seen map[string]bool)
	walk = func(a string, seen map[string]bool) {
		for _, b := range table[a] {
			if concrete(b) && !seen[b] {
				seen[b] = true
				walk(b, seen)
			}
		}
	}
	var keys []string
	for k := range table {
		if concrete(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		reach[k] = map[string]bool{}
		walk(k, reach[k])
	}
	var out []string
	for _, a := range keys {
		for _, b := range table[a] {
			if !concrete(b) {
				continue
			}
			for p := b; strings.Contains(p, "/"); {
				p = p[:strings.LastIndex(p, "/")]
				if _, isPkg := table[p]; !isPkg || p == a || strings.HasPrefix(a, p+"/") {
					continue
				}
				if reach[p][a] {
					out = append(out, fmt.Sprintf("%s imports %s, which sits in %s's folder, but %s imports %s: move %s to a folder of its own", a, b, p, p, a, b))
				}
			}
		}
	}
	return out
}
