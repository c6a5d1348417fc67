package tools

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"phonepilot/scene"
)

// page is a small Scene: a search field holding text, a button, in pkg.
func page(pkg, field string, extra ...string) *scene.Scene {
	sc := &scene.Scene{Width: 1080, Height: 2400, Package: pkg, Activity: ".Main"}
	sc.Elements = []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}},
		{Index: 1, Parent: 0, Class: "android.widget.EditText", Text: field, Editable: true, Bounds: scene.Bounds{Left: 40, Top: 100, Right: 800, Bottom: 200}},
		{Index: 2, Parent: 0, Class: "android.widget.Button", Text: "Search", Clickable: true, Bounds: scene.Bounds{Left: 820, Top: 100, Right: 1040, Bottom: 200}},
	}
	for i, l := range extra {
		sc.Elements = append(sc.Elements, scene.Element{Index: 3 + i, Parent: 0, Class: "android.widget.TextView", Text: l,
			Bounds: scene.Bounds{Left: 40, Top: 300 + 100*i, Right: 1040, Bottom: 390 + 100*i}})
	}
	return sc
}

func tool(t *testing.T, name string) *Tool {
	t.Helper()
	tl, ok := Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

// toolsMDOrder is the order of the tools the design's TOOLS.md defines.
// The registry keeps them in this order, any other tool after them; every
// other list of tools a test needs is taken from the registry.
var toolsMDOrder = []string{Tap, LongPress, TypeText, Scroll, PressKey, LaunchApp, Wait, FinishTask, AskUser}

// registered is the registry's tool names, in its order.
func registered() []string {
	var out []string
	for _, tl := range All() {
		out = append(out, tl.Name())
	}
	return out
}

// checkTOOLSMDOrder fails unless every tool of TOOLS.md is in got, in
// TOOLS.md's order.
func checkTOOLSMDOrder(t *testing.T, got []string) {
	t.Helper()
	at := -1
	for _, name := range toolsMDOrder {
		i := slices.Index(got, name)
		if i < 0 {
			t.Errorf("%s is missing from %v", name, got)
			continue
		}
		if i < at {
			t.Errorf("%s is at %d in %v, before a tool TOOLS.md lists ahead of it", name, i, got)
		}
		at = i
	}
}

func TestEveryToolIsDefinedOnce(t *testing.T) {
	checkTOOLSMDOrder(t, registered())
	seen := map[string]bool{}
	for i, tl := range All() {
		if tl.Name() == "" || seen[tl.Name()] || tl.Spec().Name != tl.Name() || tl.run == nil {
			t.Errorf("tool %d: %q (spec %q, run %t, seen before %t); want a name of its own, its spec under that name, and a run", i, tl.Name(), tl.Spec().Name, tl.run != nil, seen[tl.Name()])
		}
		seen[tl.Name()] = true
		if got, ok := Lookup(tl.Name()); !ok || got != tl {
			t.Errorf("Lookup(%q) = %v, %t; want the registry's tool", tl.Name(), got, ok)
		}
		if tl.Ends() != (tl.Name() == FinishTask) {
			t.Errorf("%s: Ends() = %t; only finish_task ends a task", tl.Name(), tl.Ends())
		}
	}
}

func TestIntentNamesTheCall(t *testing.T) {
	el := scene.Element{Index: 4, Class: "android.widget.Button", Text: "Search"}
	for _, c := range []struct {
		call Call
		el   *scene.Element
		want string
	}{
		{NewCall(Tap, TapArgs{Element: 4}), &el, `tap [4] Button "Search"`},
		{NewCall(LongPress, LongPressArgs{Element: 4}), &el, `long-press [4] Button "Search"`},
		{NewCall(TypeText, TypeTextArgs{Text: "Mac mini", Submit: true}), &el, `type "Mac mini" into [4] Button "Search" and submit`},
		{NewCall(TypeText, TypeTextArgs{Text: "苹果"}), nil, `type "苹果"`},
		{NewCall(Scroll, ScrollArgs{Direction: "down"}), nil, "scroll down"},
		{NewCall(PressKey, PressKeyArgs{Key: "back"}), nil, "press back"},
		{NewCall(LaunchApp, LaunchAppArgs{App: "淘宝"}), nil, "launch 淘宝"},
		{NewCall(Wait, WaitArgs{Seconds: 1.5}), nil, "wait 1.5s"},
	} {
		if got := tool(t, c.call.Name).Intent(c.call, c.el); got != c.want {
			t.Errorf("Intent(%s) = %q; want %q", c.call, got, c.want)
		}
	}
}

func TestEffectsAndTheirChecks(t *testing.T) {
	home := page("com.taobao.taobao", "")
	typed := page("com.taobao.taobao", "Mac mini")
	results := page("com.taobao.taobao", "Mac mini", "Mac mini M4 16GB")
	settings := page("com.android.settings", "")
	out := func(before, after *scene.Scene) Outcome {
		return Outcome{Before: before, After: after, Changed: before.Fingerprint() != after.Fingerprint()}
	}

	typeSubmit := NewCall(TypeText, TypeTextArgs{Text: "Mac mini", Submit: true})
	tt := tool(t, TypeText)
	if e := tt.Effect(typeSubmit); e.Kind != EffectChange {
		t.Errorf("type_text with submit expects %+v; want a change", e)
	}
	if e := tt.Effect(NewCall(TypeText, TypeTextArgs{Text: "Mac mini"})); e.Kind != EffectFieldText || e.Text != "Mac mini" {
		t.Errorf("type_text expects %+v; want the text in a field", e)
	}
	// A submit must change more than the fields: typing alone is not it.
	if ok, why := tt.Changed(typeSubmit, out(home, typed)); ok || !strings.Contains(why, "submitting") {
		t.Errorf("submit judged on a screen where only the field changed: %t %q", ok, why)
	}
	if ok, _ := tt.Changed(typeSubmit, out(home, results)); !ok {
		t.Error("submit that brought results judged unchanged")
	}
	// The text in the field is the effect; the rest to do is the enter key.
	if !tt.TookEffect(typeSubmit, out(home, typed)) || tt.TookEffect(typeSubmit, out(home, home)) {
		t.Error("type_text: TookEffect must follow the field's text")
	}
	rest, done, ok := tt.Remainder(typeSubmit, out(home, typed))
	if !ok || rest.Name != PressKey || string(rest.Args) != `{"key":"enter"}` || done == "" {
		t.Errorf("Remainder = %s %q %t; want press_key enter", rest, done, ok)
	}
	if _, _, ok := tt.Remainder(typeSubmit, out(home, results)); ok {
		t.Error("Remainder after the submit landed; nothing is left to do")
	}

	// launch_app: satisfied by its app in front, even when nothing changed.
	la, launch := tool(t, LaunchApp), NewCall(LaunchApp, LaunchAppArgs{App: "设置"})
	if ok, _ := la.Changed(launch, out(settings, settings)); !ok {
		t.Error("launch_app of the app in front judged unchanged")
	}
	if ok, _ := la.Changed(launch, out(home, home)); ok {
		t.Error("launch_app with another app in front and nothing changed judged changed")
	}
	if !la.TookEffect(launch, out(home, settings)) || la.TookEffect(launch, out(home, home)) {
		t.Error("launch_app: TookEffect must follow the app in front")
	}

	// wait never took effect already; tap and scroll follow the screen.
	if tool(t, Wait).TookEffect(NewCall(Wait, WaitArgs{Seconds: 1}), out(home, results)) {
		t.Error("a wait is never already done")
	}
	for _, name := range []string{Tap, Scroll} {
		c := Call{Name: name, Args: []byte(`{"element":2,"direction":"down"}`)}
		if tool(t, name).TookEffect(c, out(home, home)) || !tool(t, name).TookEffect(c, out(home, results)) {
			t.Errorf("%s: TookEffect must follow the screen's change", name)
		}
	}
	if e := tool(t, Scroll).Effect(NewCall(Scroll, ScrollArgs{Direction: "down"})); e.Kind != EffectNone {
		t.Errorf("scroll expects %+v; want nothing (the list may be at its end)", e)
	}
	if !tool(t, Tap).Press() || !tool(t, PressKey).Press() || tool(t, TypeText).Press() {
		t.Error("tap and press_key are presses; type_text is not")
	}
	if !tool(t, Wait).Passive() || !tool(t, FinishTask).Passive() || tool(t, Scroll).Passive() {
		t.Error("wait and finish_task are passive; scroll is not")
	}
}

func TestEndingReadsFinishTask(t *testing.T) {
	f, err := Ending(Call{Name: FinishTask, Args: []byte(`{"success":false,"reason":"no such app"}`)})
	if err != nil || f == nil || f.Success || f.Reason != "no such app" {
		t.Errorf("Ending = %+v, %v", f, err)
	}
	if f, err := Ending(NewCall(Tap, TapArgs{Element: 1})); f != nil || err != nil {
		t.Errorf("a tap ends nothing: %+v, %v", f, err)
	}
	if _, err := Ending(Call{Name: FinishTask, Args: []byte(`{"reason":"x"}`)}); err == nil || !strings.Contains(err.Error(), "success") {
		t.Errorf("finish_task without success: %v; want an error naming it", err)
	}
}

// Adding a tool touches only this package: no package outside it compares
// a call's name with a tool name (a switch or ==); they ask the tool's
// definition. Building calls (tools.NewCall(tools.Tap, …)) is fine.
func TestNoToolNameSwitchesOutsideTools(t *testing.T) {
	names := toolNameConstants(t)
	if len(names) < len(toolsMDOrder) {
		t.Fatalf("found the constants %v; want one per tool of TOOLS.md at least", names)
	}
	isTool := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == "tools" && names[sel.Sel.Name]
	}
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "tools" && filepath.Dir(path) == root || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isTool(n.X) || isTool(n.Y)) {
					t.Errorf("%s: compares with a tool name; ask the tool's definition (tools.Lookup)", fset.Position(n.Pos()))
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if isTool(e) {
						t.Errorf("%s: switches on a tool name; ask the tool's definition (tools.Lookup)", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestQuestionReadsAskUser(t *testing.T) {
	q, ok, err := Question(NewCall(AskUser, AskUserArgs{Question: "  Please log in, then answer done.  "}))
	if err != nil || !ok || q != "Please log in, then answer done." {
		t.Fatalf("Question(ask_user) = %q, %t, %v; want the trimmed question", q, ok, err)
	}
	if _, ok, err := Question(NewCall(Tap, TapArgs{Element: 3})); ok || err != nil {
		t.Errorf("Question(tap) = %t, %v; want not a question", ok, err)
	}
	for _, bad := range []string{`{"question":""}`, `{"question":"   "}`, `{}`, `{"question":"` + strings.Repeat("x", 501) + `"}`} {
		if _, ok, err := Question(Call{Name: AskUser, Args: json.RawMessage(bad)}); !ok || err == nil {
			t.Errorf("Question(ask_user %s) = %t, %v; want an error", bad, ok, err)
		}
	}
	if a := tool(t, AskUser).Act(NewCall(AskUser, AskUserArgs{Question: "x"})); a.Kind != ActNone {
		t.Errorf("ask_user acts on the phone (%s); it must not", a.Kind)
	}
}

// toolNameConstants is the package's exported string constants whose
// value is a registered tool's name (const Tap = "tap" → "Tap"), read from
// its source so that a new tool's constant is watched without an edit here.
func toolNameConstants(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				if vs.Type != nil {
					continue // a typed constant (InputTap InputKind = "tap") names something else
				}
				for i, id := range vs.Names {
					if i >= len(vs.Values) || !id.IsExported() {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if v, err := strconv.Unquote(lit.Value); err == nil {
						if _, isTool := Lookup(v); isTool {
							names[id.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}
