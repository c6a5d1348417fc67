package archtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportRules is the architecture test: every phonepilot package, its
// test files included, imports only what the table allows, and only the
// drivers, plan/ai (and providers) and cmd import perception/frame.
func TestImportRules(t *testing.T) {
	module, root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := trackSources(root); err != nil {
		t.Fatal(err)
	}
	pkgs, err := goList(root)
	if err != nil {
		t.Fatal(err)
	}
	c := checker{module: module, root: root}
	vs, seen := c.check(pkgs)
	// An empty or broken listing must not pass as a clean one.
	for _, must := range []string{"scene", "device", "tools", "internal/archtest"} {
		if !slices.Contains(seen, module+"/"+must) {
			t.Fatalf("go list did not report %s/%s; saw %v", module, must, seen)
		}
	}
	for _, v := range vs {
		t.Error(v)
	}
	if len(vs) > 0 {
		t.Logf("%d violation(s) in %d packages; the rules are in internal/archtest/rules_test.go and docs/ARCHITECTURE.md", len(vs), len(seen))
	}
}

// TestTableIsWellFormed: every pattern an entry allows names a table entry,
// so a typo in the table cannot silently allow nothing (or everything).
func TestTableIsWellFormed(t *testing.T) {
	for pkg, allowed := range allowedImports {
		for _, a := range allowed {
			if a == "*" || a == "internal/*" {
				continue
			}
			if _, ok := lookup(a); !ok {
				t.Errorf("%s may import %q, which is not a package in the table", pkg, a)
			}
			if a == pkg {
				t.Errorf("%s lists itself", pkg)
			}
		}
	}
	for _, f := range frameImporters {
		if _, ok := lookup(strings.TrimSuffix(f, "/*")); !ok {
			t.Errorf("frameImporters names %q, which is not in the table", f)
		}
	}
}

// The checker itself, on synthetic listings: each rule fails when broken.
func TestCheckerFindsViolations(t *testing.T) {
	root := t.TempDir()
	writeGo := treeWriter(t, root)
	writeGo("tools/bad.go", "package tools\n\nimport (\n\t\"fmt\"\n\t\"phonepilot/perception/frame\"\n)\n")
	writeGo("runtime/x_test.go", "package runtime\n\nimport \"phonepilot/perception/frame\"\n")
	dir := func(rel string) string { return filepath.Join(root, rel) }

	pkgs := []listedPackage{
		// tools → frame: a table violation and a boundary violation.
		{ImportPath: "phonepilot/tools", Dir: dir("tools"), GoFiles: []string{"bad.go"},
			Imports: []string{"fmt", "phonepilot/device", "phonepilot/perception/frame", "phonepilot/scene"}},
		// scene → device: a table violation only.
		{ImportPath: "phonepilot/scene", Dir: dir("scene"), Imports: []string{"phonepilot/device"}},
		// runtime's test imports frame: boundary applies to tests; the
		// other test import (device/fake) is fine in a test.
		{ImportPath: "phonepilot/runtime", Dir: dir("runtime"), TestGoFiles: []string{"x_test.go"},
			TestImports: []string{"phonepilot/perception/frame", "phonepilot/device/fake", "testing"}},
		// plan imports the Anthropic SDK; storage/sqlite the driver (fine).
		{ImportPath: "phonepilot/plan", Dir: dir("plan"), Imports: []string{"github.com/anthropics/anthropic-sdk-go/v2/option", "phonepilot/tools"}},
		{ImportPath: "phonepilot/storage/sqlite", Dir: dir("storage/sqlite"), Imports: []string{"modernc.org/sqlite", "phonepilot/storage"}},
		// api imports pgx in a test file.
		{ImportPath: "phonepilot/api", Dir: dir("api"), XTestImports: []string{"github.com/jackc/pgx/v5", "phonepilot/api"}},
		// allowed: drivers and cmd with frame; cmd with anything.
		{ImportPath: "phonepilot/device/sim", Dir: dir("device/sim"), Imports: []string{"phonepilot/perception/frame", "phonepilot/perception"}},
		{ImportPath: "phonepilot/cmd/phonepilot", Dir: dir("cmd/phonepilot"), Imports: []string{"phonepilot/perception/frame", "phonepilot/runtime", "github.com/openai/openai-go/v3"}},
		{ImportPath: "phonepilot/internal/clock", Dir: dir("internal/clock"), Imports: []string{"time"}},
		// a test file named for another platform is never compiled here.
		{ImportPath: "phonepilot/mcpserver", Dir: dir("mcpserver"), IgnoredGoFiles: []string{"touch_ios_test.go"}},
		// a new package nobody put in the table.
		{ImportPath: "phonepilot/gizmo", Dir: dir("gizmo")},
		// a package go list could not load.
		{ImportPath: "phonepilot/plan/rule", Dir: dir("plan/rule"), Error: &packageError{Err: "plan/rule/rule.go:3:2: expected 'package', found 'EOF'"}},
		// test variants and test mains are skipped (their imports are in the
		// plain entry's TestImports).
		{ImportPath: "phonepilot/tools [phonepilot/tools.test]", ForTest: "phonepilot/tools", Imports: []string{"phonepilot/perception/frame"}},
		{ImportPath: "phonepilot/tools.test", Imports: []string{"phonepilot/perception/frame"}},
		// not ours at all.
		{ImportPath: "github.com/anthropics/anthropic-sdk-go/v2", Imports: []string{"modernc.org/sqlite"}},
	}
	vs, seen := checker{module: "phonepilot", root: root}.check(pkgs)
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	frameList := checker{module: "phonepilot"}.list(frameImporters)
	want := []string{
		"api: phonepilot/api (test) imports github.com/jackc/pgx/v5; only phonepilot/storage/*, phonepilot/farm may import github.com/jackc/pgx",
		"gizmo: phonepilot/gizmo is not in the architecture table: add it, with the packages it may import, to allowedImports in internal/archtest/rules_test.go and to the table in docs/ARCHITECTURE.md",
		"mcpserver/touch_ios_test.go: never compiled here (its name ends in a GOOS or GOARCH, or a build constraint leaves it out), so its code and tests never run: rename it",
		"plan/rule: go list reports an error for phonepilot/plan/rule: plan/rule/rule.go:3:2: expected 'package', found 'EOF'",
		"plan: phonepilot/plan imports github.com/anthropics/anthropic-sdk-go/v2/option; only phonepilot/plan/ai/anthropic may import github.com/anthropics/anthropic-sdk-go",
		"runtime/x_test.go:3: Perception Boundary: phonepilot/runtime (test) imports phonepilot/perception/frame; only " + frameList + " may import it, test files included (screenshot bytes must not reach any other package)",
		"scene: phonepilot/scene imports phonepilot/device; phonepilot/scene may import only phonepilot/apps, phonepilot/internal/editdist",
		"tools/bad.go:5: Perception Boundary: phonepilot/tools imports phonepilot/perception/frame; only " + frameList + " may import it, test files included (screenshot bytes must not reach any other package)",
		"tools/bad.go:5: phonepilot/tools imports phonepilot/perception/frame; phonepilot/tools may import only phonepilot/apps, phonepilot/device, phonepilot/scene, phonepilot/internal/clock",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(seen) != 12 {
		t.Errorf("looked at %d module packages, want 12: %v", len(seen), seen)
	}
}

func TestMatchAny(t *testing.T) {
	for _, tc := range []struct {
		rel      string
		patterns []string
		want     bool
	}{
		{"device/sim/adbd", []string{"device/sim/*"}, true},
		{"device/sim", []string{"device/sim/*"}, false},
		{"device/simulator", []string{"device/sim/*"}, false},
		{"internal/clock", []string{"internal/*"}, true},
		{"plan/ai/internal/aitest", []string{"internal/*"}, false},
		{"anything/at/all", []string{"*"}, true},
		{"tools", nil, false},
	} {
		if got := matchAny(tc.rel, tc.patterns); got != tc.want {
			t.Errorf("matchAny(%q, %v) = %v", tc.rel, tc.patterns, got)
		}
	}
}

// treeWriter writes files under root for a check to read: write(rel, src)
// creates rel's folders and the file.
func treeWriter(t *testing.T, root string) func(rel, src string) {
	return func(rel, src string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
