package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/scene"
	"phonepilot/tools"
)

// dialog is a screen with what the declaration must see: a Send button,
// a text field inside a frame, a horizontal carousel of clickable cards
// (a sideways swipe in it stays on one card), a row whose middle holds a
// clickable Delete icon, and a focused Allow button (Enter clicks it).
func dialog() *scene.Scene {
	return &scene.Scene{
		Width: 1080, Height: 2400, Package: "com.example.chat",
		Elements: []scene.Element{
			{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: box(0, 0, 1080, 2400)},
			{Index: 1, Parent: 0, Depth: 1, Class: "android.widget.FrameLayout", ResourceID: "com.example.chat:id/compose_frame", Bounds: box(0, 2200, 880, 2400), Clickable: true},
			{Index: 2, Parent: 1, Depth: 2, Class: "android.widget.EditText", Text: "Text message", Bounds: box(20, 2220, 860, 2380), Editable: true, Clickable: true, Focusable: true},
			{Index: 3, Parent: 0, Depth: 1, Class: "android.widget.Button", Text: "Send SMS", Bounds: box(880, 2200, 1080, 2400), Clickable: true, Focusable: true},
			{Index: 4, Parent: 0, Depth: 1, Class: "androidx.recyclerview.widget.RecyclerView", Bounds: box(0, 200, 1080, 800), Scrollable: true},
			{Index: 5, Parent: 4, Depth: 2, Class: "android.widget.FrameLayout", Desc: "Buy now", Bounds: box(0, 200, 1080, 800), Clickable: true},
			{Index: 6, Parent: 0, Depth: 1, Class: "android.widget.LinearLayout", Text: "Ana", Bounds: box(0, 900, 1080, 1100), Clickable: true},
			{Index: 7, Parent: 6, Depth: 2, Class: "android.widget.ImageView", Desc: "Delete", Bounds: box(440, 900, 640, 1100), Clickable: true},
			{Index: 8, Parent: 0, Depth: 1, Class: "android.widget.Button", Text: "Allow", Bounds: box(600, 1500, 1000, 1600), Clickable: true, Focusable: true, Focused: true},
			{Index: 9, Parent: 0, Depth: 1, Class: "android.widget.TextView", Text: "Chat", Bounds: box(0, 1200, 1080, 1300)},
		},
	}
}

// editing is the dialog with the text field focused instead.
func editing() *scene.Scene {
	sc := dialog()
	sc.Elements[8].Focused = false
	sc.Elements[2].Focused = true
	return sc
}

// type_text on an element that takes no text would press it with its
// focusing tap: it is refused before anything touches the phone, with a
// message that says what to do. A frame holding a field takes text.
func TestTypeTextIntoAButtonIsRefused(t *testing.T) {
	sc := dialog()
	for _, c := range []tools.Call{
		tools.NewCall(tools.TypeText, map[string]any{"text": "", "element": 3}),
		tools.NewCall(tools.TypeText, map[string]any{"text": "hi", "element": 8, "submit": true}),
		tools.NewCall(tools.TypeText, map[string]any{"text": "x", "element": 9}),
	} {
		dev := fake.New(sc)
		_, err := tools.Run(context.Background(), dev, sc, c, tools.RunOptions{})
		var nt *tools.NotTextError
		if !errors.As(err, &nt) {
			t.Fatalf("%s: err %v, want a NotTextError", c, err)
		}
		if n := len(dev.Actions()); n != 0 {
			t.Errorf("%s: %d inputs reached the phone: %v", c, n, dev.Actions())
		}
		if _, perr := tools.Prepare(c, sc); perr == nil || perr.Error() != err.Error() {
			t.Errorf("%s: Prepare says %v, Run %v", c, perr, err)
		}
	}
	_, err := tools.Run(context.Background(), fake.New(sc), sc, tools.NewCall(tools.TypeText, map[string]any{"text": "", "element": 3}), tools.RunOptions{})
	if want := `[3] Button "Send SMS" is a button; tap it or pick the text field`; err == nil || err.Error() != want {
		t.Errorf("message: %v, want %s", err, want)
	}
	for _, el := range []int{1, 2} {
		dev := fake.New(sc)
		if _, err := tools.Run(context.Background(), dev, sc, tools.NewCall(tools.TypeText, map[string]any{"text": "hi", "element": el}), tools.RunOptions{}); err != nil {
			t.Errorf("type into [%d]: %v", el, err)
		}
	}
}

// Every input a tool gives the phone is one it declared, on the element it
// declared: every tool, with its arguments varied over what its schema
// allows (every element, every enum value, each flag), on screens with
// the cases that matter, run on a recording device and compared input by
// input with tools.Prepare's declaration. Where each input lands is
// computed here independently: the clickable element on top under the
// point, the clickable element a swipe never leaves, the focused element.
func TestEveryInputIsDeclared(t *testing.T) {
	screens := map[string]*scene.Scene{"search": screen(), "dialog": dialog(), "editing": editing()}
	ran := map[string]int{}
	for name, sc := range screens {
		for _, tool := range tools.All() {
			for _, c := range variants(t, tool, sc) {
				act, err := tools.Prepare(c, sc)
				dev := fake.New(sc)
				ctx, cancel := context.WithCancel(context.Background())
				if tool.Name() == tools.Wait {
					cancel() // no sleeping here; wait touches nothing anyway
				}
				_, runErr := tools.Run(ctx, dev, sc, c, tools.RunOptions{Clock: clock.NewFake(time.Time{})})
				cancel()
				got := dev.Actions()
				if err != nil {
					if len(got) != 0 {
						t.Errorf("%s on %s: refused (%v) but the phone got %v", c, name, err, got)
					}
					continue
				}
				if tool.Name() == tools.Wait {
					continue
				}
				if runErr != nil {
					t.Errorf("%s on %s: %v", c, name, runErr)
					continue
				}
				ran[tool.Name()]++
				if len(got) != len(act.Inputs) {
					t.Errorf("%s on %s: the phone got %v, the declaration says %+v", c, name, got, act.Inputs)
					continue
				}
				for i, g := range got {
					if why := lands(sc, c, g, act.Inputs[i]); why != "" {
						t.Errorf("%s on %s, input %d %v: %s", c, name, i+1, g, why)
					}
				}
			}
		}
	}
	for _, tool := range tools.All() {
		if d := tools.Declare(tools.Call{Name: tool.Name(), Args: json.RawMessage(tool.Example().Args)}, screen()); len(d.Inputs) > 0 && ran[tool.Name()] == 0 {
			t.Errorf("%s: no call of it ran", tool.Name())
		}
	}
	t.Logf("calls run per tool: %v", ran)
}

// lands says why a recorded input is not the declared one ("" when it is).
func lands(sc *scene.Scene, c tools.Call, g fake.Call, in tools.Input) string {
	method := map[tools.InputKind]fake.Method{tools.InputTap: fake.MethodTap, tools.InputLongPress: fake.MethodLongPress,
		tools.InputSwipe: fake.MethodSwipe, tools.InputText: fake.MethodTypeText, tools.InputKey: fake.MethodKey, tools.InputLaunch: fake.MethodLaunchApp, tools.InputStop: fake.MethodStopApp}
	if method[in.Kind] != g.Method {
		return fmt.Sprintf("declared a %s", in.Kind)
	}
	switch g.Method {
	case fake.MethodTap, fake.MethodLongPress:
		if g.X != in.X || g.Y != in.Y {
			return fmt.Sprintf("declared at %d,%d", in.X, in.Y)
		}
		if in.On < 0 || !sc.Elements[in.On].Bounds.Contains(g.X, g.Y) {
			return fmt.Sprintf("the point is not on the declared element %d", in.On)
		}
		if top := onTop(sc, g.X, g.Y); top >= 0 && top != in.On && top != in.Hit {
			return fmt.Sprintf("it lands on [%d], declared [%d] (hit %d)", top, in.On, in.Hit)
		}
	case fake.MethodSwipe:
		if g.X != in.X || g.Y != in.Y || g.X2 != in.X2 || g.Y2 != in.Y2 {
			return "declared elsewhere"
		}
		want := onTop(sc, g.X, g.Y)
		if want >= 0 && !sc.Elements[want].Bounds.Contains(g.X2, g.Y2) {
			want = -1
		}
		if in.On != want {
			return fmt.Sprintf("it clicks [%d], declared [%d]", want, in.On)
		}
	case fake.MethodKey, fake.MethodTypeText:
		if g.Key != in.Key || g.Text != in.Text {
			return "declared another key or text"
		}
		if want := focusAfter(sc, c); in.On != want {
			return fmt.Sprintf("it goes to [%d], declared [%d]", want, in.On)
		}
	case fake.MethodLaunchApp:
		if g.App != in.App {
			return "declared another app"
		}
	}
	return ""
}

// onTop is the clickable element on top at a point: the last one in dump
// order that holds it.
func onTop(sc *scene.Scene, x, y int) int {
	for i := len(sc.Elements) - 1; i >= 0; i-- {
		if e := sc.Elements[i]; (e.Clickable || e.LongClickable) && sc.Visible(e) && e.Bounds.Contains(x, y) {
			return i
		}
	}
	return -1
}

// focusAfter is where text or a key goes: the element a type_text call
// taps to focus, else the focused field, else the focused element.
func focusAfter(sc *scene.Scene, c tools.Call) int {
	if i, ok := tools.ElementArg(c); ok && c.Name == tools.TypeText {
		return i
	}
	for _, e := range sc.Elements {
		if e.Focused && e.Editable {
			return e.Index
		}
	}
	for _, e := range sc.Elements {
		if e.Focused {
			return e.Index
		}
	}
	return -1
}

// variants are calls of tool derived from its schema: its example, with
// "element" set to every element of sc (and left out when optional), and
// every enum value and both values of every flag.
func variants(t *testing.T, tool *tools.Tool, sc *scene.Scene) []tools.Call {
	t.Helper()
	var sch struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tool.Spec().Schema, &sch); err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal([]byte(tool.Example().Args), &base); err != nil {
		t.Fatalf("%s example: %v", tool.Name(), err)
	}
	out := []map[string]any{base}
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		p := sch.Properties[name]
		var values []any
		switch {
		case name == "element":
			for i := range sc.Elements {
				values = append(values, i)
			}
		case len(p.Enum) > 0:
			values = p.Enum
		case p.Type == "boolean":
			values = []any{false, true}
		default:
			continue
		}
		if !slices.Contains(sch.Required, name) {
			values = append(values, nil)
		}
		var next []map[string]any
		for _, a := range out {
			for _, v := range values {
				b := map[string]any{}
				for k, x := range a {
					b[k] = x
				}
				if v == nil {
					delete(b, name)
				} else {
					b[name] = v
				}
				next = append(next, b)
			}
		}
		out = next
	}
	calls := make([]tools.Call, len(out))
	for i, a := range out {
		calls[i] = tools.NewCall(tool.Name(), a)
	}
	return calls
}

// Only perform gives the phone an input: every tool's source is parsed, and
// a call of a device method (as device.Device names them) anywhere else in
// the package fails, as does a device held where a tool could reach it.
// A tool that touched the phone by itself would act outside its
// declaration, unseen by the gate.
func TestOnlyPerformDrivesTheDevice(t *testing.T) {
	methods := map[string]bool{}
	it := reflect.TypeOf((*device.Device)(nil)).Elem()
	for i := range it.NumMethod() {
		methods[it.Method(i).Name] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var fn string
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				fn = n.Name.Name
			case *ast.StructType:
				for _, field := range n.Fields.List {
					if sel, ok := field.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Device" {
						t.Errorf("%s: a struct holds a device.Device: tools reach the phone only through perform", fset.Position(field.Pos()))
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !methods[sel.Sel.Name] {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && slices.ContainsFunc(file.Imports, func(im *ast.ImportSpec) bool {
					return strings.HasSuffix(strings.Trim(im.Path.Value, `"`), "/"+id.Name)
				}) {
					return true // a package's name (device.Key converts), not a device
				}
				if fn == "perform" {
					found++
					return true
				}
				t.Errorf("%s: %s calls .%s: only perform gives the phone inputs, each declared by the tool's inputs",
					fset.Position(n.Pos()), fn, sel.Sel.Name)
			}
			return true
		})
	}
	if found < len(methods)-1 { // every method but Scene
		t.Errorf("perform calls %d device methods, want %d: the parse found nothing to check", found, len(methods)-1)
	}
}

// TestWhichCallsLandOnTheScreen: a call planned on a screen of the past is
// checked on a read of the screen of the moment when it lands on the
// screen (it names an element, touches, swipes, types into the focused
// field, or presses a key that clicks the focused element); back, home,
// delete and a launch do the same on any screen and need no read.
func TestWhichCallsLandOnTheScreen(t *testing.T) {
	sc := dialog()
	for _, tc := range []struct {
		call string
		args string
		want bool
	}{
		{"tap", `{"element":3}`, true},
		{"long_press", `{"element":6}`, true},
		{"type_text", `{"element":2,"text":"hi"}`, true},
		{"type_text", `{"text":"hi"}`, true},
		{"scroll", `{"direction":"down"}`, true},
		{"scroll", `{"element":4,"direction":"left"}`, true},
		{"press_key", `{"key":"enter"}`, true},
		{"press_key", `{"key":"back"}`, false},
		{"press_key", `{"key":"home"}`, false},
		{"press_key", `{"key":"delete"}`, false},
		{"launch_app", `{"app":"Settings"}`, false},
	} {
		c := tools.Call{Name: tc.call, Args: json.RawMessage(tc.args)}
		if err := tools.Validate(c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if got := tools.Aims(c, sc); got != tc.want {
			t.Errorf("Aims(%s) = %v, want %v", c, got, tc.want)
		}
	}
}
