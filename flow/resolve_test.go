package flow

import (
	"context"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/scene"
)

// screen is a small hand-made Scene: a search bar, a Search button, and a
// results list of two rows, each with a title and an "Add to cart".
func screen() *scene.Scene {
	b := func(l, t, r, bt int) scene.Bounds { return scene.Bounds{Left: l, Top: t, Right: r, Bottom: bt} }
	els := []scene.Element{
		{Class: "android.widget.FrameLayout", Parent: -1, Bounds: b(0, 0, 1080, 2400)},
		{Class: "android.widget.FrameLayout", Parent: 0, Depth: 1, ResourceID: "app:id/searchbar", Desc: "Search products", Clickable: true, Bounds: b(0, 100, 800, 200)},
		{Class: "android.widget.Button", Parent: 0, Depth: 1, ResourceID: "app:id/go", Text: "Search", Clickable: true, Bounds: b(800, 100, 1080, 200)},
		{Class: "android.widget.LinearLayout", Parent: 0, Depth: 1, ResourceID: "app:id/row", Bounds: b(0, 600, 1080, 800)},
		{Class: "android.widget.TextView", Parent: 3, Depth: 2, ResourceID: "app:id/title", Text: "Mac mini M4", Bounds: b(0, 600, 700, 800)},
		{Class: "android.widget.Button", Parent: 3, Depth: 2, ResourceID: "app:id/add", Text: "Add to cart", Clickable: true, Bounds: b(700, 600, 1080, 800)},
		{Class: "android.widget.LinearLayout", Parent: 0, Depth: 1, ResourceID: "app:id/row", Bounds: b(0, 300, 1080, 500)},
		{Class: "android.widget.TextView", Parent: 6, Depth: 2, ResourceID: "app:id/title", Text: "iPad Air", Bounds: b(0, 300, 700, 500)},
		{Class: "android.widget.Button", Parent: 6, Depth: 2, ResourceID: "app:id/add", Text: "Add to cart", Clickable: true, Bounds: b(700, 300, 1080, 500)},
	}
	for i := range els {
		els[i].Index, els[i].Enabled = i, true
	}
	return &scene.Scene{Width: 1080, Height: 2400, Package: "app", Elements: els}
}

func TestResolve(t *testing.T) {
	sc := screen()
	cases := []struct {
		name string
		sel  Selector
		want int // -1: not found
	}{
		{"by id, label renamed", Selector{ID: "searchbar", Desc: "Search", Class: "FrameLayout"}, 1},
		{"id gone, label contained, same class", Selector{ID: "home_searchbar", Desc: "Search", Class: "FrameLayout"}, 1},
		{"id gone, label exact beats contained", Selector{ID: "search_btn", Text: "Search"}, 2},
		{"id gone, label matches but another class", Selector{ID: "home_searchbar", Text: "Search products", Class: "TextView"}, -1},
		{"id gone, no label", Selector{ID: "home_searchbar", Class: "FrameLayout"}, -1},
		{"label only", Selector{Text: "iPad Air"}, 7},
		{"nth in reading order, not tree order", Selector{ID: "add", Nth: 0}, 8},
		{"nth 1", Selector{ID: "add", Nth: 1}, 5},
		{"nth past the end", Selector{ID: "add", Nth: 2}, -1},
		{"container picks the row", Selector{ID: "add", Text: "Add to cart", Container: []string{"Mac mini M4"}}, 5},
		{"repeated id, label picks", Selector{ID: "title", Text: "Mac mini M4"}, 4},
		{"repeated id, label gone", Selector{ID: "title", Text: "Galaxy S25"}, -1},
		{"full resource-id", Selector{ID: "app:id/go"}, 2},
		{"a class only, by position", Selector{Class: "Button", Nth: 1}, 8},
		{"a class only, narrowed by container", Selector{Class: "Button", Container: []string{"Mac mini M4"}}, 5},
		{"case and spacing folded", Selector{Text: "  add TO\ncart ", Container: []string{"ipad air"}}, 8},
		// One character is in nothing: "a" is in "Add to cart", "Mac mini
		// M4" and "iPad Air", and matches none of them.
		{"one character is no label's part", Selector{ID: "gone", Text: "a"}, -1},
		{"two characters are", Selector{ID: "gone", Text: "ad", Class: "TextView"}, 7},
	}
	for _, tc := range cases {
		el, ok := Resolve(sc, tc.sel)
		got := -1
		if ok {
			got = el.Index
		}
		if got != tc.want {
			t.Errorf("%s: %s resolved to %d, want %d", tc.name, tc.sel, got, tc.want)
		}
	}
}

// Every element a model could act on, on real screens of the simulator in
// both languages, is named by SelectorFor so that Resolve finds it again.
func TestSelectorForFindsTheSameElement(t *testing.T) {
	for _, loc := range []string{"en", "zh"} {
		p, err := sim.New(sim.Config{Locale: loc})
		if err != nil {
			t.Fatal(err)
		}
		d, ctx := p.Device(), context.Background()
		var screens []*scene.Scene
		read := func() *scene.Scene {
			sc, err := d.Scene(ctx)
			if err != nil {
				t.Fatal(err)
			}
			screens = append(screens, sc)
			return sc
		}
		tap := func(sc *scene.Scene, id string) {
			el, ok := sc.Resolve(scene.Selector{Field: scene.FieldID, Value: id, Mode: scene.ModeExact})
			if !ok {
				t.Fatalf("%s: no %s", loc, id)
			}
			x, y := el.Bounds.Center()
			_ = d.Tap(ctx, x, y)
		}
		read() // the launcher
		_ = d.LaunchApp(ctx, "Taobao")
		tap(read(), "poplayer_close")
		tap(read(), "home_searchbar")
		_ = d.TypeText(ctx, "Mac mini")
		_ = d.Key(ctx, "enter")
		read()
		n := 0
		for _, sc := range screens {
			for _, el := range sc.Listed() {
				if !(el.Clickable || el.Editable || el.LongClickable) {
					continue
				}
				sel := SelectorFor(sc, el)
				got, ok := Resolve(sc, sel)
				if !ok || got.Index != el.Index {
					t.Errorf("%s %s: [%d] %s → %s resolved to %d (%v)", loc, sc.Package, el.Index, el.Label(), sel, got.Index, ok)
				}
				n++
			}
		}
		if n < 40 {
			t.Errorf("%s: only %d elements checked", loc, n)
		}
	}
}
