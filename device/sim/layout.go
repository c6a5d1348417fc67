package sim

import (
	"fmt"
	"image"
	"strings"
)

// Layouts of the simulated apps (Config.Layout). "" is the apps as they
// are; "changed" is Taobao after a redesign, for flows to heal against
// (docs/flows.md): elements move, are renamed and reordered, and one entry
// point is replaced by a different kind of element.
const (
	LayoutDefault = ""
	LayoutChanged = "changed"
)

// LayoutNames lists the layouts besides the default.
func LayoutNames() []string { return []string{LayoutChanged} }

func validLayout(l string) error {
	switch l {
	case LayoutDefault, LayoutChanged:
		return nil
	}
	return fmt.Errorf("sim config: unknown layout %q (use %s)", l, strings.Join(LayoutNames(), ", "))
}

// relayout applies the phone's layout to a Taobao screen's tree (the hook
// in taobaoApp.build). The "changed" layout:
//
//   - home: the search bar (a FrameLayout, content-desc "Search", id
//     home_searchbar, with a camera and a Search button inside) becomes a
//     plain TextView pill "Search products" (id search_pill), narrower and
//     moved to the right of the header; the category grid is reversed; the
//     tab bar swaps Messages and Cart;
//   - search page: the Search button is renamed "Search products" and
//     moved to the left of the search field.
//
// Ids other than the search bar's stay, so a selector by id survives the
// moves, renames and reorders; the search bar does not survive: its id,
// class and label all changed.
func (t *taobaoApp) relayout(c *ui, screen string, kids []*node) []*node {
	if t.p.cfg.Layout != LayoutChanged {
		return kids
	}
	g := c.g
	zh := t.p.zh()
	renamed := "Search products"
	if zh {
		renamed = "搜索商品"
	}
	for _, root := range kids {
		walk(root, func(n *node) {
			switch n.id {
			case tbid("home_searchbar"):
				bar := n.r
				pill := rect(bar.Min.X+bar.Dx()/3, bar.Min.Y, bar.Max.X, bar.Max.Y)
				*n = node{class: "android.widget.TextView", id: tbid("search_pill"), text: renamed, r: pill,
					clickable: true, focusable: true, tap: n.tap,
					look: look{bg: white, radius: bar.Dy() / 2, size: g.u(42), fg: rgb(0x99, 0x99, 0x99)}}
			case tbid("home_category"):
				reverseKids(n)
			case tbid("tab_bar"):
				swapKids(n, tbid("tab_messages"), tbid("tab_cart"))
			case tbid("searchbar"):
				if b := layoutNode(n, tbid("search_button")); b != nil {
					b.text = renamed
				}
				swapKids(n, tbid("search_edit"), tbid("search_button"))
			}
		})
	}
	return kids
}

func layoutNode(n *node, id string) *node {
	var out *node
	walk(n, func(m *node) {
		if out == nil && m.id == id {
			out = m
		}
	})
	return out
}

// swapKids exchanges the places of two children (found below n by id):
// each takes the other's position on screen, left edges swapped, and its
// place in the tree.
func swapKids(n *node, a, b string) {
	ia, ib := -1, -1
	for i, k := range n.kids {
		switch {
		case k.id == a || layoutNode(k, a) != nil && ia < 0:
			ia = i
		case k.id == b || layoutNode(k, b) != nil && ib < 0:
			ib = i
		}
	}
	if ia < 0 || ib < 0 {
		return
	}
	ka, kb := n.kids[ia], n.kids[ib]
	// The left one's left edge goes to the right one, which keeps its width.
	left, right := ka, kb
	if kb.r.Min.X < ka.r.Min.X {
		left, right = kb, ka
	}
	x0, x1 := left.r.Min.X, right.r.Max.X
	shift(right, x0-right.r.Min.X, 0)
	shift(left, x1-left.r.Max.X, 0)
	n.kids[ia], n.kids[ib] = kb, ka
}

// reverseKids puts n's children in reverse order, each in the place the
// mirror child had.
func reverseKids(n *node) {
	k := n.kids
	if len(k) < 2 {
		return
	}
	places := make([]image.Point, len(k))
	for i, c := range k {
		places[i] = c.r.Min
	}
	for i, j := 0, len(k)-1; i < j; i, j = i+1, j-1 {
		k[i], k[j] = k[j], k[i]
	}
	for i, c := range k {
		shift(c, places[i].X-c.r.Min.X, places[i].Y-c.r.Min.Y)
	}
}

// shift moves a subtree by (dx, dy).
func shift(n *node, dx, dy int) {
	walk(n, func(m *node) {
		d := image.Pt(dx, dy)
		m.r = m.r.Add(d)
		if !m.full.Empty() {
			m.full = m.full.Add(d)
		}
	})
}
