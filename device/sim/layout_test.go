package sim

import (
	"context"
	"strings"
	"testing"

	"phonepilot/scene"
)

// taobaoHome opens Taobao on a fresh phone with layout and closes its
// launch promotion; it returns the phone's device and the home screen.
func taobaoHome(t *testing.T, locale, layout string) (*Phone, *scene.Scene) {
	t.Helper()
	p, err := New(Config{Locale: locale, Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	d, ctx := p.Device(), context.Background()
	if err := d.LaunchApp(ctx, "Taobao"); err != nil {
		t.Fatal(err)
	}
	sc := mustScene(t, p)
	tapID(t, p, sc, "poplayer_close")
	return p, mustScene(t, p)
}

func mustScene(t *testing.T, p *Phone) *scene.Scene {
	t.Helper()
	sc, err := p.Device().Scene(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func byID(sc *scene.Scene, id string) (scene.Element, bool) {
	return sc.Resolve(scene.Selector{Field: scene.FieldID, Value: id, Mode: scene.ModeExact})
}

func tapID(t *testing.T, p *Phone, sc *scene.Scene, id string) {
	t.Helper()
	el, ok := byID(sc, id)
	if !ok {
		t.Fatalf("no %s on %s", id, sc.Listing())
	}
	x, y := el.Bounds.Center()
	if err := p.Device().Tap(context.Background(), x, y); err != nil {
		t.Fatal(err)
	}
}

func TestChangedLayoutMovesRenamesAndReorders(t *testing.T) {
	for _, tc := range []struct{ locale, renamed string }{{"en", "Search products"}, {"zh", "搜索商品"}} {
		_, before := taobaoHome(t, tc.locale, LayoutDefault)
		p, after := taobaoHome(t, tc.locale, LayoutChanged)
		bar, ok := byID(before, "home_searchbar")
		if !ok {
			t.Fatalf("%s: the default layout has no search bar", tc.locale)
		}
		if _, still := byID(after, "home_searchbar"); still {
			t.Errorf("%s: the changed layout still has home_searchbar", tc.locale)
		}
		pill, ok := byID(after, "search_pill")
		if !ok || pill.Text != tc.renamed || scene.SimpleClass(pill.Class) != "TextView" || !pill.Clickable || pill.Bounds == bar.Bounds {
			t.Fatalf("%s: search pill %+v; want a clickable TextView %q in a new place", tc.locale, pill, tc.renamed)
		}
		// Reordered: Cart before Messages, the category grid reversed.
		msgs, _ := byID(after, "tab_messages")
		cart, _ := byID(after, "tab_cart")
		msgs0, _ := byID(before, "tab_messages")
		if !(cart.Bounds.Left < msgs.Bounds.Left) || cart.Bounds.Left != msgs0.Bounds.Left {
			t.Errorf("%s: tabs not swapped: cart %v, messages %v", tc.locale, cart.Bounds, msgs.Bounds)
		}
		first := func(sc *scene.Scene) string {
			m := sc.Find(scene.Selector{Field: scene.FieldID, Value: "category_item", Mode: scene.ModeExact})
			best := m[0].Element
			for _, e := range m {
				if e.Element.Bounds.Top < best.Bounds.Top || e.Element.Bounds.Top == best.Bounds.Top && e.Element.Bounds.Left < best.Bounds.Left {
					best = e.Element
				}
			}
			return best.Text
		}
		if a, b := first(before), first(after); a == b {
			t.Errorf("%s: the category grid starts with %q in both layouts", tc.locale, a)
		}
		// The pill opens the search page, whose button is renamed and moved.
		tapID(t, p, after, "search_pill")
		search := mustScene(t, p)
		edit, okE := byID(search, "search_edit")
		btn, okB := byID(search, "search_button")
		if !okE || !okB || btn.Text != tc.renamed || !(btn.Bounds.Left < edit.Bounds.Left) {
			t.Errorf("%s: search page: button %+v, field %+v; want the button %q left of the field", tc.locale, btn, edit, tc.renamed)
		}
		if !strings.Contains(search.Activity, "SearchDoor") {
			t.Errorf("%s: the pill opened %s", tc.locale, search.Activity)
		}
	}
	if _, err := New(Config{Layout: "sideways"}); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("unknown layout: %v", err)
	}
}
