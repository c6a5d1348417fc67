package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// platformHome is the package that holds the platform facts (which packages
// are the system's dialogs, decorations, launcher), beside the app table.
const platformHome = "apps"

// platformWords are parts of the Android system's package names. A string
// literal holding one, outside the platform home and the drivers under
// device/ (which make these packages' screens), is a second list of
// platform facts.
var platformWords = []string{"permissioncontroller", "packageinstaller", "systemui", "com.google.android.gms", "inputmethod", "launcher"}

// TestPlatformFactsHaveOneHome: outside apps (and the drivers under device/),
// no code lists the system's packages again: no literal naming a system
// package, no comparison with the system server's package "android". It
// asks apps.SystemDialog, PermissionPrompt, Decoration, Launcher, NotAnApp.
func TestPlatformFactsHaveOneHome(t *testing.T) {
	_, root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range platformLists(root) {
		t.Error(v)
	}
}

// TestPlatformCheckFinds: the check finds a literal list and a comparison,
// and leaves apps, device/ and tests alone.
func TestPlatformCheckFinds(t *testing.T) {
	root := t.TempDir()
	write := treeWriter(t, root)
	write("runtime/v.go", `package runtime

var dialogs = []string{"permissioncontroller", "com.google.android.gms"}

func f(pkg string) bool { return pkg == "android" || "android" != pkg }
`)
	write("runtime/v_test.go", "package runtime\n\nvar _ = \"com.android.systemui\"\n")
	write("apps/p.go", "package apps\n\nvar _ = []string{\"systemui\"}\n\nfunc g(p string) bool { return p == \"android\" }\n")
	write("device/sim/s.go", "package sim\n\nconst ui = \"com.android.systemui\"\n")
	got := platformLists(root)
	want := []string{
		`runtime/v.go:3: "permissioncontroller" names a system package: ask package apps (SystemDialog, PermissionPrompt, Decoration, Launcher, NotAnApp)`,
		`runtime/v.go:3: "com.google.android.gms" names a system package: ask package apps (SystemDialog, PermissionPrompt, Decoration, Launcher, NotAnApp)`,
		`runtime/v.go:5: a comparison with "android" (the system server's package): use apps.SystemServer or apps.SystemDialog`,
		`runtime/v.go:5: a comparison with "android" (the system server's package): use apps.SystemServer or apps.SystemDialog`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// platformLists finds the platform facts listed outside their home.
func platformLists(root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "device" || rel == platformHome) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		isServer := func(e ast.Expr) bool {
			lit, ok := e.(*ast.BasicLit)
			return ok && lit.Kind == token.STRING && lit.Value == `"android"`
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(n.Value)
				for _, w := range platformWords {
					if strings.Contains(strings.ToLower(s), w) {
						out = append(out, fmt.Sprintf("%s:%d: %q names a system package: ask package apps (SystemDialog, PermissionPrompt, Decoration, Launcher, NotAnApp)",
							rel, fset.Position(n.Pos()).Line, s))
						break
					}
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isServer(n.X) || isServer(n.Y)) {
					out = append(out, fmt.Sprintf(`%s:%d: a comparison with "android" (the system server's package): use apps.SystemServer or apps.SystemDialog`,
						rel, fset.Position(n.Pos()).Line))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		out = append(out, err.Error())
	}
	return out
}
