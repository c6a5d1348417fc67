package sim

import (
	"image"
	"image/color"
	"sort"
	"strings"
)

const contactsPkg = "com.android.contacts"

const (
	contactsList   = "com.android.contacts.activities.PeopleActivity"
	contactsEditor = "com.android.contacts.activities.ContactEditorActivity"
	contactsDetail = "com.android.contacts.quickcontact.QuickContactActivity"
	contactsSearch = "com.android.contacts.activities.PeopleActivity$Search"
)

type contact struct {
	Name  string `json:"name"`
	Phone string `json:"phone"`
}

type ctScreen struct {
	name   string // list, editor, detail
	index  int    // detail: which contact
	scroll int
}

type contactsApp struct {
	p         *Phone
	people    []contact
	stack     []*ctScreen
	nameDraft string
	telDraft  string
	draft     string // the search field
}

func newContacts(p *Phone) *contactsApp {
	a := &contactsApp{p: p, stack: []*ctScreen{{name: "list"}}}
	if p.zh() {
		a.people = []contact{{"张伟", "138 0013 8000"}, {"李娜", "139 0013 9001"}, {"王芳", "137 0013 7002"}, {"陈杰", "136 0013 6003"}}
	} else {
		a.people = []contact{{"Alice Chen", "(555) 010-1001"}, {"Bob Martinez", "(555) 010-1002"}, {"Carol Wang", "(555) 010-1003"}, {"David Kim", "(555) 010-1004"}}
	}
	return a
}

func (a *contactsApp) pkg() string                 { return contactsPkg }
func (a *contactsApp) icon() (color.RGBA, string)  { return rgb(0x1a, 0x73, 0xe8), "person" }
func (a *contactsApp) launchActivity() string      { return contactsList }
func (a *contactsApp) background(c *ui) color.RGBA { return c.pal.bg }
func (a *contactsApp) secure() bool                { return false }
func (a *contactsApp) top() *ctScreen              { return a.stack[len(a.stack)-1] }
func (a *contactsApp) screen() string              { return a.top().name }

func (a *contactsApp) activity() string {
	switch a.top().name {
	case "editor":
		return contactsEditor
	case "detail":
		return contactsDetail
	case "search":
		return contactsSearch
	}
	return contactsList
}

func (a *contactsApp) start(cold bool) {
	if cold {
		a.stack = []*ctScreen{{name: "list"}}
	}
}

func (a *contactsApp) back() bool {
	if len(a.stack) <= 1 {
		return false
	}
	a.stack = a.stack[:len(a.stack)-1]
	return true
}

func (a *contactsApp) state() any {
	st := map[string]any{"screen": a.screen(), "contacts": append([]contact{}, a.people...)}
	if top := a.top(); top.name == "detail" && top.index >= 0 && top.index < len(a.people) {
		st["open"] = a.people[top.index].Name
	}
	if a.screen() == "search" {
		st["search_query"] = a.draft
	}
	return st
}

func ctid(s string) string { return "com.android.contacts:id/" + s }

func (a *contactsApp) build(c *ui) []*node {
	switch s := a.top(); s.name {
	case "editor":
		return a.editor(c)
	case "detail":
		return a.detail(c, s)
	case "search":
		var hits []searchHit
		for i, p := range a.people {
			i := i
			hits = append(hits, searchHit{title: p.Name, sub: p.Phone, open: func() { a.stack = append(a.stack, &ctScreen{name: "detail", index: i}) }})
		}
		return searchPage(c, ctid, c.t("ct.search"), &a.draft, hits, func() { a.back() }, func() {})
	default:
		return a.listPage(c, s)
	}
}

func (a *contactsApp) openEditor() {
	a.nameDraft, a.telDraft = "", ""
	a.stack = append(a.stack, &ctScreen{name: "editor"})
	a.p.focus = focusKey{a.p.screenKey(), ctid("name_edit")}
}

// openSearch is the search bar's tap: the search page, its field focused.
func (a *contactsApp) openSearch() {
	a.draft = ""
	a.stack = append(a.stack, &ctScreen{name: "search"})
	a.p.focus = focusKey{a.p.screenKey(), ctid("search_src_text")}
}

func (a *contactsApp) save() {
	name, tel := strings.TrimSpace(a.nameDraft), strings.TrimSpace(a.telDraft)
	if name == "" && tel == "" {
		return
	}
	a.people = append(a.people, contact{Name: name, Phone: tel})
	sort.SliceStable(a.people, func(i, j int) bool { return a.people[i].Name < a.people[j].Name })
	idx := 0
	for i, p := range a.people {
		if p.Name == name && p.Phone == tel {
			idx = i
		}
	}
	a.stack = a.stack[:len(a.stack)-1]
	a.stack = append(a.stack, &ctScreen{name: "detail", index: idx})
}

func avatar(c *ui, r image.Rectangle, name string) *node {
	glyph := "?"
	if rs := []rune(name); len(rs) > 0 {
		glyph = strings.ToUpper(string(rs[0]))
	}
	return &node{class: "android.widget.ImageView", id: ctid("photo"), r: r, look: look{kind: paintIcon, accent: picColor(name), glyph: glyph, radius: -1}}
}

func (a *contactsApp) listPage(c *ui, s *ctScreen) []*node {
	g := c.g
	r := c.content
	y := r.Min.Y
	search := &node{class: "android.widget.TextView", id: ctid("search_view"), text: c.t("ct.search"), r: rect(g.u(40), y+g.u(30), g.W-g.u(40), y+g.u(170)),
		clickable: true, focusable: true, tap: a.openSearch,
		look: look{bg: c.pal.field, radius: g.u(70), fg: c.pal.sub, size: g.u(44), center: true}}
	listR := rect(0, y+g.u(200), g.W, r.Max.Y)
	people := append([]contact(nil), a.people...)
	lst := list("androidx.recyclerview.widget.RecyclerView", ctid("contact_list"), listR, len(people), g.u(170), &s.scroll,
		func(i int, rr image.Rectangle) *node {

			p := people[i]
			return &node{class: "android.view.ViewGroup", id: ctid("contact_row"), r: rr, clickable: true, focusable: true,
				tap: func() { a.stack = append(a.stack, &ctScreen{name: "detail", index: i}) },
				kids: []*node{
					avatar(c, rect(g.u(60), rr.Min.Y+g.u(25), g.u(180), rr.Min.Y+g.u(145)), p.Name),
					label(ctid("cliv_name_textview"), p.Name, rect(g.u(220), rr.Min.Y, g.W-g.u(40), rr.Max.Y), g.u(46), c.pal.fg),
				}}
		})
	fab := &node{class: "android.widget.ImageButton", id: ctid("floating_action_button"), desc: c.t("ct.create"),
		r: rect(g.W-g.u(230), r.Max.Y-g.u(230), g.W-g.u(60), r.Max.Y-g.u(60)), clickable: true, focusable: true, tap: a.openEditor,
		look: look{kind: paintGlyph, glyph: "plus", bg: c.pal.accent, fg: c.pal.onAccent, radius: g.u(50)}}
	return []*node{frameLayout(r, search, lst, fab)}
}

func (a *contactsApp) editor(c *ui) []*node {
	g := c.g
	r := c.content
	y := r.Min.Y
	bar := &node{class: "android.view.ViewGroup", id: ctid("editor_toolbar"), r: rect(0, y, g.W, y+g.u(170)), kids: []*node{
		imageButton("", c.t("ct.cancel"), rect(g.u(20), y+g.u(30), g.u(140), y+g.u(140)), "close", c.pal.fg, func() { a.back() }),
		label(ctid("editor_title"), c.t("ct.create"), rect(g.u(170), y, g.W-g.u(300), y+g.u(170)), g.u(52), c.pal.fg),
		button(ctid("editor_menu_save_button"), c.t("ct.save"), rect(g.W-g.u(270), y+g.u(40), g.W-g.u(40), y+g.u(140)), g.u(42), c.pal.accent, c.pal.onAccent, a.save),
	}}
	name := c.editText(ctid("name_edit"), c.t("ct.name"), &a.nameDraft, rect(g.u(60), y+g.u(260), g.W-g.u(60), y+g.u(400)), nil)
	tel := c.editText(ctid("phone_edit"), c.t("ct.phone"), &a.telDraft, rect(g.u(60), y+g.u(450), g.W-g.u(60), y+g.u(590)), a.save)
	return []*node{frameLayout(r, bar, &node{class: "android.widget.ScrollView", id: ctid("editor_scroll"), r: rect(0, y+g.u(180), g.W, r.Max.Y),
		kids: []*node{vlayout(rect(0, y+g.u(180), g.W, y+g.u(620)), name, tel)}})}
}

func (a *contactsApp) detail(c *ui, s *ctScreen) []*node {
	g := c.g
	r := c.content
	y := r.Min.Y
	if s.index >= len(a.people) {
		s.index = len(a.people) - 1
	}
	p := a.people[s.index]
	back := imageButton("", c.t("sys.back"), rect(g.u(20), y+g.u(30), g.u(140), y+g.u(150)), "back", c.pal.fg, func() { a.back() })
	kids := []*node{back,
		avatar(c, rect(g.W/2-g.u(150), y+g.u(200), g.W/2+g.u(150), y+g.u(500)), p.Name),
		label(ctid("large_title"), p.Name, rect(g.u(40), y+g.u(540), g.W-g.u(40), y+g.u(660)), g.u(72), c.pal.fg).centered(),
		button(ctid("call_button"), c.t("ct.call"), rect(g.u(160), y+g.u(720), g.W/2-g.u(30), y+g.u(840)), g.u(40), c.pal.field, c.pal.fg, func() {}),
		button(ctid("text_button"), c.t("ct.text"), rect(g.W/2+g.u(30), y+g.u(720), g.W-g.u(160), y+g.u(840)), g.u(40), c.pal.field, c.pal.fg, func() { a.textContact(p) }),
		&node{class: "android.widget.RelativeLayout", id: ctid("phone_row"), r: rect(g.u(40), y+g.u(920), g.W-g.u(40), y+g.u(1120)), look: look{bg: c.pal.surface, radius: g.u(30)},
			kids: []*node{
				label(ctid("header"), p.Phone, rect(g.u(100), y+g.u(950), g.W-g.u(100), y+g.u(1030)), g.u(46), c.pal.fg),
				label(ctid("sub_header"), c.t("ct.mobile"), rect(g.u(100), y+g.u(1030), g.W-g.u(100), y+g.u(1090)), g.u(36), c.pal.sub),
			}},
	}
	return []*node{frameLayout(r, kids...)}
}

// textContact opens Messages on a new conversation addressed to the
// contact, with the message field focused.
func (a *contactsApp) textContact(p contact) {
	m, ok := a.p.app(messagesPkg).(*messagesApp)
	if !ok {
		return
	}
	a.p.launch(m)
	m.toDraft, m.draft = p.Name, ""
	m.stack = append(m.stack, &msScreen{name: "new"})
	a.p.focus = focusKey{a.p.screenKey(), msid("compose_message_text")}
}
