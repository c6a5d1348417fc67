package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// backendDir is the package that holds the table of device backends; the
// drivers live beside it under device/.
const backendDir = "device/backend"

// TestNoDeviceNameSwitches: outside device/ (the drivers and the backend
// table), no code tells backends apart by a device name's prefix
// (strings.HasPrefix(name, "adb:") and the like, for every Kind in the
// table) or by a driver's concrete type (x.(*sim.Device), case *adb.Device):
// it asks the table (device/backend) or a capability of package device.
// Test files are left out: a test's fake device set names its own phones.
func TestNoDeviceNameSwitches(t *testing.T) {
	_, root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := backendKinds(filepath.Join(root, backendDir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kinds, "sim") || !slices.Contains(kinds, "adb") {
		t.Fatalf("the backend table's kinds are %v; want sim and adb among them", kinds)
	}
	vs, err := nameSwitches(root, kinds)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// TestNameSwitchCheckFinds: the check finds each kind of switch it names.
func TestNameSwitchCheckFinds(t *testing.T) {
	root := t.TempDir()
	write := treeWriter(t, root)
	write("device/backend/b.go", "package backend\n\nvar x = &Backend{Kind: \"adb\"}\nvar y = &Backend{\n\tKind: \"ios\",\n}\n")
	write("cmd/x/x.go", `package main

import (
	"strings"

	"phonepilot/device"
	"phonepilot/device/adb"
	simdrv "phonepilot/device/sim"
)

func f(name string, d device.Device) {
	_ = strings.HasPrefix(name, "adb:")
	_ = strings.HasPrefix(name, "ios")
	_, _ = strings.CutPrefix(name, "sim:")
	_ = strings.HasPrefix(name, "simulated")
	_, _ = d.(*simdrv.Device)
	switch d.(type) {
	case *adb.Device:
	}
	_, _ = d.(device.Facts)
}
`)
	write("cmd/x/x_test.go", "package main\n\nimport \"strings\"\n\nvar _ = strings.HasPrefix(\"\", \"adb:\")\n")
	write("device/adb/a.go", "package adb\n\nimport \"strings\"\n\nvar _ = strings.HasPrefix(\"\", \"adb:\")\n")
	kinds, err := backendKinds(filepath.Join(root, backendDir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kinds, []string{"adb", "ios"}) {
		t.Errorf("kinds = %v, want [adb ios]", kinds)
	}
	vs, err := nameSwitches(root, append(kinds, "sim"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`cmd/x/x.go:12: strings.HasPrefix(…, "adb:") tells device backends apart by name: ask device/backend (Owner, Check, Open) instead`,
		`cmd/x/x.go:13: strings.HasPrefix(…, "ios") tells device backends apart by name: ask device/backend (Owner, Check, Open) instead`,
		`cmd/x/x.go:14: strings.CutPrefix(…, "sim:") tells device backends apart by name: ask device/backend (Owner, Check, Open) instead`,
		`cmd/x/x.go:16: a switch on the driver type *simdrv.Device (phonepilot/device/sim): use a capability of package device (found by type assertion) or device/backend`,
		`cmd/x/x.go:18: a switch on the driver type *adb.Device (phonepilot/device/adb): use a capability of package device (found by type assertion) or device/backend`,
	}
	if !slices.Equal(vs, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(vs, "\n"), strings.Join(want, "\n"))
	}
}

// backendKinds are the Kind: "…" literals of the backend table's package.
func backendKinds(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`\bKind:\s*("[^"]+")`)
	var kinds []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if k, err := strconv.Unquote(m[1]); err == nil && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	slices.Sort(kinds)
	return kinds, nil
}

// prefixFuncs are the strings functions a name-prefix switch is made of.
var prefixFuncs = []string{"HasPrefix", "CutPrefix", "TrimPrefix"}

// nameSwitches finds, in the non-test Go files outside device/, a prefix
// test of a device name against a backend Kind and a type assertion or
// type switch on a driver's concrete type (a type of a package under
// phonepilot/device/ other than device itself).
func nameSwitches(root string, kinds []string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "device") {
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
		drivers := map[string]string{} // local name → import path of a driver package
		strs := "strings"
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			if p == "strings" {
				strs = name
			}
			if strings.HasPrefix(p, "phonepilot/device/") && p != "phonepilot/device/backend" {
				drivers[name] = p
			}
		}
		driverType := func(e ast.Expr) string {
			st, ok := e.(*ast.StarExpr)
			if !ok {
				return ""
			}
			sel, ok := st.X.(*ast.SelectorExpr)
			if !ok {
				return ""
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok || drivers[id.Name] == "" {
				return ""
			}
			return fmt.Sprintf("*%s.%s (%s)", id.Name, sel.Sel.Name, drivers[id.Name])
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || len(n.Args) != 2 || !slices.Contains(prefixFuncs, sel.Sel.Name) {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != strs {
					return true
				}
				lit, ok := n.Args[1].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(lit.Value)
				for _, k := range kinds {
					if s == k || strings.HasPrefix(s, k+":") {
						out = append(out, fmt.Sprintf("%s:%d: strings.%s(…, %q) tells device backends apart by name: ask device/backend (Owner, Check, Open) instead",
							rel, fset.Position(n.Pos()).Line, sel.Sel.Name, s))
						break
					}
				}
			case *ast.TypeAssertExpr:
				if dt := driverType(n.Type); dt != "" {
					out = append(out, fmt.Sprintf("%s:%d: a switch on the driver type %s: use a capability of package device (found by type assertion) or device/backend",
						rel, fset.Position(n.Pos()).Line, dt))
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if dt := driverType(e); dt != "" {
						out = append(out, fmt.Sprintf("%s:%d: a switch on the driver type %s: use a capability of package device (found by type assertion) or device/backend",
							rel, fset.Position(e.Pos()).Line, dt))
					}
				}
			}
			return true
		})
		return nil
	})
	slices.Sort(out)
	return out, err
}
