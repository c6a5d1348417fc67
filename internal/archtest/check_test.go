package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// listedPackage is the part of `go list -json` output the check reads.
type listedPackage struct {
	ImportPath   string
	Dir          string
	ForTest      string
	Standard     bool
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	// IgnoredGoFiles are the files the build leaves out on this platform.
	IgnoredGoFiles []string
	Imports        []string
	TestImports    []string
	XTestImports   []string
	Error          *packageError
	DepsErrors     []*packageError
}

type packageError struct {
	Pos string
	Err string
}

// violation is one broken rule, printed as "where: message".
type violation struct {
	Where string // file:line of the import, or the package directory
	Msg   string
}

func (v violation) String() string { return v.Where + ": " + v.Msg }

// goList runs `go list -e -deps -test -json ./...` in the module root and
// decodes its stream of package objects. -e keeps going past packages that
// do not build, reporting them in their Error fields instead.
func goList(root string) ([]listedPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-deps", "-test", "-json", "./...")
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list -e -deps -test -json ./... in %s: %v\n%s", root, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// moduleRoot returns the module's path and directory as the go command sees it.
func moduleRoot() (path, dir string, err error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Path}}\t{{.Dir}}").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", "", fmt.Errorf("go list -m: %v\n%s", err, ee.Stderr)
		}
		return "", "", fmt.Errorf("go list -m: %v", err)
	}
	path, dir, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !ok {
		return "", "", fmt.Errorf("go list -m: unexpected output %q", out)
	}
	return path, dir, nil
}

// checker applies the rules of rules_test.go to go list output.
type checker struct {
	module string // "phonepilot"
	root   string // the module's directory, for file names in messages
}

// check returns every violation in pkgs, sorted, and the module packages it
// looked at (so a caller can tell an empty listing from a clean one).
func (c checker) check(pkgs []listedPackage) (vs []violation, seen []string) {
	seenErr := map[string]bool{}
	for _, p := range pkgs {
		rel, ours := c.rel(p.ImportPath)
		if !ours || p.ForTest != "" || strings.HasSuffix(p.ImportPath, ".test") || strings.Contains(p.ImportPath, " [") {
			continue
		}
		seen = append(seen, p.ImportPath)
		where := c.relPath(p.Dir)
		for _, e := range append([]*packageError{p.Error}, p.DepsErrors...) {
			if e == nil || seenErr[e.Err] {
				continue
			}
			seenErr[e.Err] = true
			vs = append(vs, violation{where, fmt.Sprintf("go list reports an error for %s: %s", p.ImportPath, strings.TrimSpace(e.Err))})
		}

		for _, f := range p.IgnoredGoFiles {
			// A name ending in _ios, _windows, _arm… (or a build
			// constraint) leaves the file out on the platform CI runs:
			// its tests never run and nothing says so.
			vs = append(vs, violation{where + "/" + f, "never compiled here (its name ends in a GOOS or GOARCH, or a build constraint leaves it out), so its code and tests never run: rename it"})
		}

		rules, known := lookup(rel)
		if !known {
			vs = append(vs, violation{where, fmt.Sprintf("%s is not in the architecture table: add it, with the packages it may import, to allowedImports in internal/archtest/rules_test.go and to the table in docs/ARCHITECTURE.md", p.ImportPath)})
		}

		kinds := []struct {
			test    bool
			imports []string
			files   []string
		}{
			{false, p.Imports, append(slices.Clone(p.GoFiles), p.CgoFiles...)},
			{true, p.TestImports, p.TestGoFiles},
			{true, p.XTestImports, p.XTestGoFiles},
		}
		for _, k := range kinds {
			for _, imp := range k.imports {
				irel, importsOurs := c.rel(imp)
				at := func() string { return c.findImport(p.Dir, k.files, imp, where) }
				who := p.ImportPath
				if k.test {
					who += " (test)"
				}
				switch {
				case importsOurs && irel == framePkg:
					if !matchAny(rel, frameImporters) {
						vs = append(vs, violation{at(), fmt.Sprintf("Perception Boundary: %s imports %s; only %s may import it, test files included (screenshot bytes must not reach any other package)",
							who, imp, c.list(frameImporters))})
					}
					if !k.test && known && !allows(rules, irel) {
						vs = append(vs, c.tableViolation(at(), p.ImportPath, imp, rules))
					}
				case importsOurs:
					// Test files may import any phonepilot package (frame aside).
					if !k.test && known && !allows(rules, irel) {
						vs = append(vs, c.tableViolation(at(), p.ImportPath, imp, rules))
					}
				default:
					if rel == "cmd/phonepilot" {
						continue
					}
					for _, r := range restrictedModules {
						if (imp == r.module || strings.HasPrefix(imp, r.module+"/")) && !matchAny(rel, r.only) {
							vs = append(vs, violation{at(), fmt.Sprintf("%s imports %s; only %s may import %s", who, imp, c.list(r.only), r.module)})
						}
					}
				}
			}
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].String() < vs[j].String() })
	return slices.Compact(vs), seen
}

func (c checker) tableViolation(where, pkg, imp string, rules []string) violation {
	may := "no phonepilot package"
	if len(rules) > 0 {
		may = "only " + c.list(rules)
	}
	return violation{where, fmt.Sprintf("%s imports %s; %s may import %s", pkg, imp, pkg, may)}
}

// list renders relative patterns as full import paths.
func (c checker) list(patterns []string) string {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = c.module + "/" + p
		if p == "*" {
			out[i] = "any " + c.module + " package"
		}
	}
	return strings.Join(out, ", ")
}

// rel returns the path of a module package relative to the module.
func (c checker) rel(importPath string) (string, bool) {
	if importPath == c.module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(importPath, c.module+"/")
	return rest, ok
}

func (c checker) relPath(dir string) string {
	if r, err := filepath.Rel(c.root, dir); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return dir
}

// findImport names the file and line that import imp, for a message the
// author can jump to; fallback when the files cannot be read.
func (c checker) findImport(dir string, files []string, imp, fallback string) string {
	fset := token.NewFileSet()
	for _, name := range files {
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, s := range f.Imports {
			if p, _ := strconv.Unquote(s.Path.Value); p == imp {
				return c.relPath(path) + ":" + strconv.Itoa(fset.Position(s.Pos()).Line)
			}
		}
	}
	return fallback
}

// lookup finds a package's rules: an exact key, else a "x/*" key above it.
func lookup(rel string) ([]string, bool) {
	if r, ok := allowedImports[rel]; ok {
		return r, true
	}
	for key, r := range allowedImports {
		if prefix, ok := strings.CutSuffix(key, "/*"); ok && strings.HasPrefix(rel, prefix+"/") {
			return r, true
		}
	}
	return nil, false
}

func allows(rules []string, rel string) bool { return matchAny(rel, rules) }

// matchAny reports whether rel matches one of the patterns: exact, "x/*"
// (anything below x), or "*".
func matchAny(rel string, patterns []string) bool {
	for _, p := range patterns {
		if p == "*" || p == rel {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "/*"); ok && strings.HasPrefix(rel, prefix+"/") {
			return true
		}
	}
	return false
}

// trackSources lists every directory of the module and stats every Go file
// and go.mod in it, from the test's own process. go test records the files
// and directories a test opens or stats and keys its cached result on them
// (a directory by its listing, a file by its size and time), so a new
// package, a new file or an edited import makes the next `go test` run the
// check again instead of answering "ok (cached)". The go list the check
// runs is a child process: go test cannot see what it reads.
func trackSources(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") || d.Name() == "go.mod" {
			_, err = os.Stat(path)
		}
		return err
	})
}
