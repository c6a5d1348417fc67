package sim

import (
	"image"
	"strings"
)

// searchHit is one result of an app's own search: a title, a line under
// it (where it is), and what tapping it opens.
type searchHit struct {
	title, sub string
	open       func()
}

// searchPage is the page a search bar opens in Settings and Contacts: a
// back arrow, the focused field, and the entries whose title holds what is
// typed, live as it is typed (as both apps do on Android). submit is the
// keyboard's search key: the results stay, the query is recorded.
func searchPage(c *ui, ids func(string) string, hint string, draft *string, hits []searchHit, back, submit func()) []*node {
	g := c.g
	r := c.content
	y := r.Min.Y
	top := g.u(170)
	bk := imageButton(ids("search_back"), c.t("sys.back"), rect(g.u(20), y+g.u(30), g.u(140), y+top-g.u(30)), "back", c.pal.fg, back)
	edit := c.editText(ids("search_src_text"), hint, draft, rect(g.u(160), y+g.u(25), g.W-g.u(40), y+top-g.u(25)), submit)
	kids := []*node{bk, edit}
	q := strings.ToLower(strings.TrimSpace(*draft))
	var shown []searchHit
	if q != "" {
		for _, h := range hits {
			if strings.Contains(strings.ToLower(h.title), q) {
				shown = append(shown, h)
			}
		}
	}
	listR := rect(0, y+top+g.u(20), g.W, r.Max.Y)
	if q != "" && len(shown) == 0 {
		kids = append(kids, label(ids("search_empty"), c.t("search.none"), rect(g.u(60), listR.Min.Y+g.u(60), g.W-g.u(60), listR.Min.Y+g.u(160)), g.u(42), c.pal.sub))
	}
	off := 0
	kids = append(kids, list("androidx.recyclerview.widget.RecyclerView", ids("search_results"), listR, len(shown), g.u(190), &off,
		func(i int, rr image.Rectangle) *node {
			h := shown[i]
			return &node{class: "android.widget.LinearLayout", id: ids("search_result"), r: rr, clickable: true, focusable: true, tap: h.open,
				kids: []*node{
					label("android:id/title", h.title, rect(g.u(60), rr.Min.Y+g.u(30), g.W-g.u(60), rr.Min.Y+g.u(100)), g.u(46), c.pal.fg),
					label("android:id/summary", h.sub, rect(g.u(60), rr.Min.Y+g.u(105), g.W-g.u(60), rr.Min.Y+g.u(165)), g.u(36), c.pal.sub),
				}}
		}))
	return []*node{frameLayout(r, kids...)}
}
