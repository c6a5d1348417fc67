package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docRef is a pointer at a page of docs/ in prose, help texts and comments.
var docRef = regexp.MustCompile(`docs/[A-Za-z0-9_.-]+\.md`)

// The docs point only at files in the repository (issue 23: pages named
// ../shared/design/…, ../shared/fixtures/…, a cli page and an upper-case
// TOOLS page, none of which a clone has).
func TestDocsPointAtFilesInTheRepo(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		md := strings.HasSuffix(path, ".md")
		if d.IsDir() || !md {
			return nil // the pages; a comment in code may name a page on its way
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.Contains(string(b), "../shared/") {
			t.Errorf("%s points at ../shared/, which is not in the repository", rel)
		}
		for _, ref := range docRef.FindAllString(string(b), -1) {
			if _, err := os.Stat(filepath.Join(root, ref)); err != nil {
				t.Errorf("%s points at %s, which is not in the repository", rel, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// repoRoot is the directory of go.mod above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = up
	}
}
