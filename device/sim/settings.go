package sim

import (
	"image"
	"image/color"
	"strings"
)

const settingsPkg = "com.android.settings"

const (
	settingsHome = "com.android.settings.homepage.SettingsHomepageActivity"
	settingsSub  = "com.android.settings.SubSettings"
	// Android's Settings search runs in Settings Intelligence; here it
	// stays in the Settings package.
	settingsSearch = "com.android.settings.intelligence.search.SearchActivity"
)

type stScreen struct {
	name   string // main, network, connected, display, about, or a generic page key
	scroll int
}

type settingsApp struct {
	p         *Phone
	wifi      bool
	bluetooth bool
	dark      bool
	airplane  bool
	stack     []*stScreen
	draft     string   // the search field
	searches  []string // queries submitted in Settings' search
}

func newSettings(p *Phone) *settingsApp {
	return &settingsApp{p: p, wifi: true, stack: []*stScreen{{name: "main"}}}
}

func (s *settingsApp) pkg() string                 { return settingsPkg }
func (s *settingsApp) icon() (color.RGBA, string)  { return rgb(0x5f, 0x63, 0x68), "gear" }
func (s *settingsApp) launchActivity() string      { return "com.android.settings.Settings" }
func (s *settingsApp) background(c *ui) color.RGBA { return c.pal.bg }
func (s *settingsApp) secure() bool                { return false }
func (s *settingsApp) top() *stScreen              { return s.stack[len(s.stack)-1] }
func (s *settingsApp) screen() string              { return s.top().name }

func (s *settingsApp) activity() string {
	switch s.top().name {
	case "main":
		return settingsHome
	case "search":
		return settingsSearch
	}
	return settingsSub
}

// openSearch is the search bar's tap: the search page, its field focused.
func (s *settingsApp) openSearch() {
	s.draft = ""
	s.stack = append(s.stack, &stScreen{name: "search"})
	s.p.focus = focusKey{s.p.screenKey(), sid("search_src_text")}
}

// searchIndex is what Settings' search finds: every main-page row, and
// every row of the pages they open, read from the pages themselves.
func (s *settingsApp) searchIndex(c *ui) []searchHit {
	saved := s.stack
	defer func() { s.stack = saved }()
	var hits []searchHit
	for _, it := range settingsMain {
		page := it.page
		open := func() { s.stack = append(s.stack, &stScreen{name: page}) }
		hits = append(hits, searchHit{title: c.t(it.key), sub: c.t("st.title"), open: open})
		s.stack = []*stScreen{{name: page}}
		for _, n := range s.build(c) {
			walk(n, func(k *node) {
				if k.id == "android:id/title" && k.text != "" && k.text != c.t("st.nothing") {
					hits = append(hits, searchHit{title: k.text, sub: c.t(it.key), open: open})
				}
			})
		}
	}
	return hits
}

func (s *settingsApp) start(cold bool) {
	if cold {
		s.stack = []*stScreen{{name: "main"}}
	}
}

func (s *settingsApp) back() bool {
	if len(s.stack) <= 1 {
		return false
	}
	s.stack = s.stack[:len(s.stack)-1]
	return true
}

func (s *settingsApp) state() any {
	st := map[string]any{"screen": s.screen(), "wifi": s.wifi, "bluetooth": s.bluetooth, "dark_theme": s.dark, "airplane_mode": s.airplane,
		"searches": nonNil(s.searches), "scroll": s.top().scroll}
	if s.screen() == "search" {
		st["search_query"] = s.draft
	}
	return st
}

type stItem struct {
	key, sub string
	color    color.RGBA
	glyph    string
	page     string
}

var settingsMain = []stItem{
	{"st.network", "st.network.sub", rgb(0x1a, 0x73, 0xe8), "wifi", "network"},
	{"st.connected", "st.connected.sub", rgb(0x12, 0x8a, 0x7e), "bt", "connected"},
	{"st.apps", "st.apps.sub", rgb(0x4b, 0x6b, 0xd6), "grid", "apps"},
	{"st.notifications", "st.notif.sub", rgb(0xd9, 0x5a, 0x1e), "bell", "notifications"},
	{"st.battery", "st.battery.sub", rgb(0x18, 0x80, 0x38), "battery", "battery"},
	{"st.storage", "st.storage.sub", rgb(0x7b, 0x1f, 0xa2), "storage", "storage"},
	{"st.sound", "st.sound.sub", rgb(0x00, 0x89, 0x7b), "sound", "sound"},
	{"st.display", "st.display.sub", rgb(0xf2, 0x9d, 0x00), "sun", "display"},
	{"st.wallpaper", "st.wallpaper.sub", rgb(0xc2, 0x18, 0x5b), "palette", "wallpaper"},
	{"st.a11y", "st.a11y.sub", rgb(0x45, 0x5a, 0x64), "person", "a11y"},
	{"st.security", "st.security.sub", rgb(0x2e, 0x7d, 0x32), "lock", "security"},
	{"st.location", "st.location.sub", rgb(0x00, 0x79, 0x6b), "pin", "location"},
	{"st.emergency", "st.emergency.sub", rgb(0xd3, 0x2f, 0x2f), "star", "emergency"},
	{"st.accounts", "st.accounts.sub", rgb(0x30, 0x3f, 0x9f), "key", "accounts"},
	{"st.wellbeing", "st.wellbeing.sub", rgb(0x38, 0x8e, 0x3c), "heart", "wellbeing"},
	{"st.google", "st.google.sub", rgb(0x42, 0x85, 0xf4), "G", "google"},
	{"st.system", "st.system.sub", rgb(0x60, 0x7d, 0x8b), "info", "system"},
	{"st.about", "st.about.sub", rgb(0x54, 0x6e, 0x7a), "phone", "about"},
	{"st.tips", "st.tips.sub", rgb(0x1e, 0x88, 0xe5), "help", "tips"},
}

func sid(s string) string { return "com.android.settings:id/" + s }

func (s *settingsApp) build(c *ui) []*node {
	top := s.top()
	switch top.name {
	case "main":
		return s.mainPage(c, top)
	case "search":
		return searchPage(c, sid, c.t("st.search"), &s.draft, s.searchIndex(c), func() { s.back() }, func() {
			if q := strings.TrimSpace(s.draft); q != "" {
				s.searches = append(s.searches, q)
			}
		})
	case "network":
		return s.page(c, top, "st.network", []*node{
			s.toggleRow(c, "st.wifi", "", &s.wifi),
			s.row(c, "st.internet", onOff(c, s.wifi, "st.internet.sub"), nil),
			s.toggleRow(c, "st.airplane", "", &s.airplane),
			s.row(c, "st.hotspot", "", nil),
			s.row(c, "st.data_saver", "st.off", nil),
		})
	case "connected":
		return s.page(c, top, "st.connected", []*node{
			s.toggleRow(c, "st.use_bluetooth", "", &s.bluetooth),
			s.row(c, "st.pair_new", "", nil),
		})
	case "display":
		return s.page(c, top, "st.display", []*node{
			s.toggleRow(c, "st.dark_theme", "", &s.dark),
			s.row(c, "st.brightness", "", nil),
			s.row(c, "st.font_size", "", nil),
			s.row(c, "st.screen_timeout", "", nil),
		})
	case "about":
		return s.page(c, top, "st.about", []*node{
			s.row(c, "st.device_name", "st.about.sub", nil),
			s.row(c, "st.model", "st.about.sub", nil),
			s.row(c, "st.android", "14", nil),
		})
	}
	for _, it := range settingsMain {
		if it.page == top.name {
			return s.page(c, top, it.key, []*node{s.row(c, "st.nothing", "", nil)})
		}
	}
	return nil
}

func onOff(c *ui, on bool, onKey string) string {
	if on {
		return onKey
	}
	return "st.off"
}

// row is a preference: title, optional summary, optional tap.
// sub is a label key, or a literal when it has no translation.
func (s *settingsApp) row(c *ui, titleKey, sub string, tap func()) *node {
	n := &node{class: "android.widget.LinearLayout", clickable: true, focusable: true, tap: tap,
		kids: []*node{{class: "android.widget.TextView", id: "android:id/title", text: c.t(titleKey), look: look{size: c.u(46), fg: c.pal.fg}}}}
	if sub != "" {
		n.kids = append(n.kids, &node{class: "android.widget.TextView", id: "android:id/summary", text: c.t(sub), look: look{size: c.u(36), fg: c.pal.sub}})
	}
	return n
}

func (s *settingsApp) toggleRow(c *ui, titleKey, sub string, v *bool) *node {
	n := s.row(c, titleKey, sub, func() { *v = !*v })
	n.kids = append(n.kids, &node{class: "android.widget.Switch", id: "android:id/switch_widget", checkable: true, checked: *v, focusable: true,
		look: look{kind: paintSwitch, accent: c.pal.accent}})
	return n
}

// place lays a row's parts out in r: title and summary stacked on the
// left, a switch on the right.
func placeRow(c *ui, n *node, r image.Rectangle, left int) {
	n.r = r
	for _, k := range n.kids {
		switch k.id {
		case "android:id/title":
			if len(n.kids) > 1 && n.kids[1].id == "android:id/summary" {
				k.r = rect(left, r.Min.Y+c.u(35), r.Max.X-c.u(220), r.Min.Y+c.u(100))
			} else {
				k.r = rect(left, r.Min.Y, r.Max.X-c.u(220), r.Max.Y)
			}
		case "android:id/summary":
			k.r = rect(left, r.Min.Y+c.u(105), r.Max.X-c.u(220), r.Min.Y+c.u(160))
		case "android:id/switch_widget":
			k.r = rect(r.Max.X-c.u(190), r.Min.Y+r.Dy()/2-c.u(40), r.Max.X-c.u(50), r.Min.Y+r.Dy()/2+c.u(40))
		case "android:id/icon":
			k.r = rect(c.u(50), r.Min.Y+r.Dy()/2-c.u(50), c.u(150), r.Min.Y+r.Dy()/2+c.u(50))
		}
	}
}

func (s *settingsApp) mainPage(c *ui, top *stScreen) []*node {
	g := c.g
	r := c.content
	y := r.Min.Y
	title := label(sid("homepage_title"), c.t("st.title"), rect(g.u(60), y+g.u(80), g.W-g.u(60), y+g.u(240)), g.u(96), c.pal.fg)
	search := &node{class: "android.widget.LinearLayout", id: sid("search_action_bar"), desc: c.t("st.search"), r: rect(g.u(40), y+g.u(280), g.W-g.u(40), y+g.u(420)),
		clickable: true, focusable: true, tap: s.openSearch, look: look{bg: c.pal.field, radius: g.u(70)},
		kids: []*node{label(sid("search_action_bar_title"), c.t("st.search"), rect(g.u(150), y+g.u(280), g.W-g.u(60), y+g.u(420)), g.u(44), c.pal.sub)}}
	listR := rect(0, y+g.u(450), g.W, r.Max.Y)
	lst := list("androidx.recyclerview.widget.RecyclerView", sid("recycler_view"), listR, len(settingsMain), g.u(200), &top.scroll,
		func(i int, rr image.Rectangle) *node {
			it := settingsMain[i]
			n := s.row(c, it.key, it.sub, func() { s.stack = append(s.stack, &stScreen{name: it.page}) })
			n.kids = append(n.kids, &node{class: "android.widget.ImageView", id: "android:id/icon", look: look{kind: paintIcon, accent: it.color, glyph: it.glyph, radius: -1}})
			placeRow(c, n, rr, g.u(200))
			return n
		})
	return []*node{frameLayout(r, &node{class: "android.widget.FrameLayout", id: sid("main_content"), r: r, kids: []*node{title, search, lst}})}
}

func (s *settingsApp) page(c *ui, top *stScreen, titleKey string, rows []*node) []*node {
	g := c.g
	r := c.content
	y := r.Min.Y
	back := imageButton("", c.t("sys.back"), rect(g.u(20), y+g.u(30), g.u(140), y+g.u(150)), "back", c.pal.fg, func() { s.back() })
	back.desc = map[bool]string{false: "Navigate up", true: "转到上一层级"}[c.p.zh()]
	title := label(sid("collapsing_toolbar_title"), c.t(titleKey), rect(g.u(60), y+g.u(200), g.W-g.u(60), y+g.u(360)), g.u(84), c.pal.fg)
	listR := rect(0, y+g.u(400), g.W, r.Max.Y)
	lst := list("androidx.recyclerview.widget.RecyclerView", sid("recycler_view"), listR, len(rows), g.u(210), &top.scroll,
		func(i int, rr image.Rectangle) *node {
			placeRow(c, rows[i], rr, g.u(60))
			return rows[i]
		})
	return []*node{frameLayout(r, &node{class: "android.widget.LinearLayout", id: sid("content_parent"), r: r, kids: []*node{back, title, lst}})}
}
