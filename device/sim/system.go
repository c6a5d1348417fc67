package sim

import (
	"image"
	"image/color"
	"time"
)

// app is one installed app. Apps keep their own model (data and back
// stack) and build their screen's tree on demand.
type app interface {
	pkg() string
	icon() (color.RGBA, string)
	launchActivity() string
	activity() string // the activity in front, fully qualified
	screen() string   // the screen name reported in the state JSON
	build(c *ui) []*node
	background(c *ui) color.RGBA
	back() bool      // false at the root: the app goes to the background
	start(cold bool) // cold: navigation restarts at the root
	secure() bool    // FLAG_SECURE: no screenshots
	state() any
}

// ui is what a screen builder needs: geometry, palette, translations, time.
type ui struct {
	p       *Phone
	g       geo
	pal     palette
	now     time.Time
	content image.Rectangle
}

func (p *Phone) ui(now time.Time) *ui {
	return &ui{p: p, g: p.g, pal: p.palette(), now: now, content: p.g.content()}
}

func (c *ui) t(key string) string               { return c.p.t(key) }
func (c *ui) tf(key string, args ...any) string { return c.p.tf(key, args...) }
func (c *ui) u(v int) int                       { return c.g.u(v) }
func (c *ui) focused(field string) bool         { return c.p.focus == focusKey{c.p.screenKey(), field} }

// editText is an EditText bound to *value. An empty field shows its hint as
// its text, as real dumps do.
func (c *ui) editText(id, hint string, value *string, r image.Rectangle, submit func()) *node {
	n := &node{class: "android.widget.EditText", id: id, text: *value, hint: hint, r: r,
		clickable: true, focusable: true, longClickable: true, focused: c.focused(id),
		edit: &field{value: value, submit: submit},
		look: look{size: c.u(44), fg: c.pal.fg, bg: c.pal.field, radius: c.u(20), border: c.pal.line}}
	if *value == "" {
		n.text = hint
		n.look.fg = c.pal.sub
	}
	if n.focused {
		n.look.border = c.pal.accent
	}
	return n
}

// palette is the light or dark colour scheme of the system apps.
type palette struct {
	bg, surface, field, fg, sub, line, accent, onAccent, scrim, card color.RGBA
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 255} }

func (p *Phone) darkTheme() bool {
	if s, ok := p.app(settingsPkg).(*settingsApp); ok {
		return s.dark
	}
	return false
}

func (p *Phone) palette() palette {
	if p.darkTheme() {
		return palette{bg: rgb(0x12, 0x13, 0x16), surface: rgb(0x1f, 0x21, 0x26), field: rgb(0x2a, 0x2c, 0x31),
			fg: rgb(0xe3, 0xe3, 0xe8), sub: rgb(0xa0, 0xa4, 0xab), line: rgb(0x3c, 0x40, 0x46),
			accent: rgb(0xa8, 0xc7, 0xfa), onAccent: rgb(0x06, 0x2e, 0x6f), scrim: color.RGBA{0, 0, 0, 200}, card: rgb(0x26, 0x28, 0x2e)}
	}
	return palette{bg: rgb(0xf8, 0xf9, 0xfc), surface: rgb(0xff, 0xff, 0xff), field: rgb(0xed, 0xf0, 0xf5),
		fg: rgb(0x1b, 0x1b, 0x1f), sub: rgb(0x5f, 0x63, 0x68), line: rgb(0xda, 0xdc, 0xe0),
		accent: rgb(0x1a, 0x73, 0xe8), onAccent: rgb(0xff, 0xff, 0xff), scrim: color.RGBA{0x20, 0x21, 0x24, 230}, card: rgb(0xff, 0xff, 0xff)}
}

var (
	white = rgb(255, 255, 255)
	black = rgb(0, 0, 0)
)

// The status bar: clock on the left, Wi‑Fi/Bluetooth/battery on the right.
func (p *Phone) statusBar(c *ui) *node {
	g := c.g
	fg := c.pal.fg
	bg := c.pal.bg
	if a := p.fgApp(); a != nil && a.pkg() == taobaoPkg {
		bg, fg = taobaoOrange, white
	}
	if p.overview || p.fgApp() == nil {
		bg, fg = color.RGBA{}, white
	}
	h := g.statusH
	kids := []*node{
		label("com.android.systemui:id/clock", c.now.Format("15:04"), rect(g.u(48), 0, g.u(200), h), g.u(40), fg).boldText(),
	}
	x := g.W - g.u(48)
	batt := &node{class: "android.widget.LinearLayout", id: "com.android.systemui:id/battery", desc: c.t("sys.battery"),
		r: rect(x-g.u(70), g.u(30), x, h-g.u(30)), look: look{kind: paintBattery, fg: fg}}
	x -= g.u(100)
	kids = append(kids, batt)
	if s, ok := p.app(settingsPkg).(*settingsApp); ok {
		if s.wifi {
			kids = append(kids, &node{class: "android.widget.ImageView", id: "com.android.systemui:id/wifi_signal", desc: c.t("sys.wifi"),
				r: rect(x-g.u(50), g.u(28), x, h-g.u(28)), look: look{kind: paintGlyph, glyph: "wifi", fg: fg}})
			x -= g.u(70)
		}
		if s.bluetooth {
			kids = append(kids, &node{class: "android.widget.ImageView", id: "com.android.systemui:id/bluetooth", desc: c.t("sys.bt"),
				r: rect(x-g.u(40), g.u(28), x, h-g.u(28)), look: look{kind: paintGlyph, glyph: "bt", fg: fg}})
		}
	}
	root := &node{class: "android.widget.FrameLayout",
		r: rect(0, 0, g.W, h), look: look{bg: bg},
		kids: []*node{{class: "android.widget.FrameLayout", id: "com.android.systemui:id/status_bar", r: rect(0, 0, g.W, h), plain: true, kids: kids}}}
	stampPackage(root, systemUIPkg)
	return root
}

// The three-button navigation bar.
func (p *Phone) navBar(c *ui) *node {
	g := c.g
	top := g.H - g.navH
	bg := c.pal.bg
	fg := c.pal.fg
	if p.overview || p.fgApp() == nil {
		bg, fg = color.RGBA{}, white
	}
	w := g.W / 3
	btn := func(id, desc, glyph string, i int, key int) *node {
		return &node{class: "android.widget.ImageView", id: "com.android.systemui:id/" + id, desc: c.t(desc),
			r: rect(i*w+w/2-g.u(80), top, i*w+w/2+g.u(80), g.H), clickable: true, longClickable: true, focusable: true,
			tap: func() { p.keyEffect(key) }, look: look{kind: paintGlyph, glyph: glyph, fg: fg}}
	}
	root := &node{class: "android.widget.FrameLayout",
		r: rect(0, top, g.W, g.H), look: look{bg: bg},
		kids: []*node{{class: "android.widget.FrameLayout", id: "com.android.systemui:id/navigation_bar_frame", r: rect(0, top, g.W, g.H), plain: true,
			kids: []*node{
				btn("back", "sys.back", "back", 0, keyBack),
				btn("home", "sys.home", "home", 1, keyHome),
				btn("recent_apps", "sys.overview", "recents", 2, keyAppSwitch),
			}}}}
	stampPackage(root, systemUIPkg)
	return root
}

// keyEffect is a key's effect without the input bookkeeping (the
// navigation-bar buttons run inside an input already).
func (p *Phone) keyEffect(code int) {
	switch code {
	case keyHome:
		p.closePopup("home")
		p.goHome()
	case keyBack:
		p.back()
	case keyAppSwitch:
		p.overview = !p.overview
	}
}

func (p *Phone) toastWindow(c *ui) *node {
	g := c.g
	w := g.u(80) + measureApprox(p.toast.text, g.u(40))
	if w > g.W-g.u(100) {
		w = g.W - g.u(100)
	}
	r := rect((g.W-w)/2, g.H-g.navH-g.u(260), (g.W+w)/2, g.H-g.navH-g.u(150))
	root := &node{class: "android.widget.FrameLayout", r: r, look: look{bg: rgb(0x30, 0x31, 0x34), radius: r.Dy() / 2},
		kids: []*node{{class: "android.widget.TextView", id: "android:id/message", text: p.toast.text, r: r,
			look: look{fg: white, size: g.u(40), center: true}}}}
	pkg := p.fg
	stampPackage(root, pkg)
	return root
}

// measureApprox estimates a text's width without a font (layout only).
func measureApprox(s string, size int) int {
	w := 0
	for _, r := range s {
		if r > 0x2e80 {
			w += size
		} else {
			w += size * 55 / 100
		}
	}
	return w
}

// The launcher home: date, app icons, search pill.
func (p *Phone) launcherScreen(c *ui) []*node {
	g := c.g
	glance := label("com.google.android.apps.nexuslauncher:id/date", dateLine(c), rect(g.u(72), g.statusH+g.u(90), g.W-g.u(72), g.statusH+g.u(190)), g.u(56), white)
	cols := 4
	cw := g.W / cols
	var icons []*node
	top := g.H - g.navH - g.u(900)
	for i, a := range p.apps {
		a := a
		col, row := i%cols, i/cols
		x := col*cw + (cw-g.u(216))/2
		y := top + row*g.u(300)
		ac, gl := a.icon()
		name := c.t(labelKey(a))
		icons = append(icons, &node{class: "android.widget.TextView", text: name, desc: name,
			r: rect(x, y, x+g.u(216), y+g.u(261)), clickable: true, longClickable: true, focusable: true,
			tap: func() { p.launch(a) }, longPress: func() {},
			look: look{kind: paintIcon, accent: ac, glyph: gl, fg: white, size: g.u(36), center: true}})
	}
	grid := &node{class: "android.view.ViewGroup", id: "com.google.android.apps.nexuslauncher:id/workspace",
		r: rect(0, top, g.W, top+2*g.u(300)), scrollable: false, kids: icons}
	sb := &node{class: "android.widget.FrameLayout", id: "com.google.android.apps.nexuslauncher:id/search_container_hotseat",
		desc: c.t("sys.search_web"), r: rect(g.u(60), g.H-g.navH-g.u(230), g.W-g.u(60), g.H-g.navH-g.u(90)),
		look: look{bg: color.RGBA{220, 220, 220, 220}, radius: g.u(70), fg: rgb(0x5f, 0x63, 0x68), size: g.u(40), kind: paintGlyph, glyph: "search"}}
	root := &node{class: "android.widget.FrameLayout", id: "com.google.android.apps.nexuslauncher:id/launcher",
		r: rect(0, 0, g.W, g.H), look: look{kind: paintWallpaper},
		kids: []*node{frameLayout(rect(0, 0, g.W, g.H), glance, grid, sb)}}
	root.kids[0].id = "com.google.android.apps.nexuslauncher:id/drag_layer"
	return []*node{root}
}

func dateLine(c *ui) string {
	if c.p.zh() {
		wd := []string{"星期日", "星期一", "星期二", "星期三", "星期四", "星期五", "星期六"}[c.now.Weekday()]
		return c.now.Format("1月2日 ") + wd
	}
	return c.now.Format("Monday, Jan 2")
}

// The recents overview: one card per running app, most recent first.
func (p *Phone) recentsScreen(c *ui) []*node {
	g := c.g
	var cards []*node
	cw := g.W - g.u(240)
	x := g.u(120)
	for i, pkg := range p.recents {
		if i > 2 {
			break
		}
		a := p.app(pkg)
		top := g.statusH + g.u(120) + i*g.u(640)
		ac, gl := a.icon()
		name := c.t(labelKey(a))
		cards = append(cards, &node{class: "android.widget.FrameLayout", id: "com.google.android.apps.nexuslauncher:id/snapshot",
			desc: name, r: rect(x, top, x+cw, top+g.u(600)), clickable: true, focusable: true,
			tap: func() { p.launch(a) }, look: look{bg: c.pal.surface, radius: g.u(40), snapshot: func() *node {
				full := rect(0, 0, g.W, g.H)
				return windowRoot(a.pkg(), full, c.content, a.background(c), a.build(c)...)
			}},
			kids: []*node{
				{class: "android.widget.ImageView", id: "com.google.android.apps.nexuslauncher:id/icon", desc: name,
					r: rect(x+g.u(30), top+g.u(30), x+g.u(130), top+g.u(130)), look: look{kind: paintIcon, accent: ac, glyph: gl}},
				label("com.google.android.apps.nexuslauncher:id/title", name, rect(x+g.u(160), top+g.u(40), x+cw-g.u(30), top+g.u(120)), g.u(44), c.pal.fg).boldText(),
			}})
	}
	var kids []*node
	if len(cards) == 0 {
		kids = append(kids, label("", c.t("sys.no_recents"), rect(0, g.H/2-g.u(60), g.W, g.H/2+g.u(60)), g.u(44), white).centered())
	} else {
		kids = append(kids, &node{class: "androidx.recyclerview.widget.RecyclerView", id: "com.google.android.apps.nexuslauncher:id/overview_panel",
			r: rect(0, g.statusH, g.W, g.H-g.navH-g.u(200)), kids: cards})
		kids = append(kids, button("com.google.android.apps.nexuslauncher:id/clear_all", c.t("sys.clear_all"),
			rect(g.W/2-g.u(200), g.H-g.navH-g.u(170), g.W/2+g.u(200), g.H-g.navH-g.u(50)), g.u(40), c.pal.surface, c.pal.fg,
			func() {
				p.recents = nil
				p.overview = false
				p.fg = launcherPkg
			}))
	}
	return kids
}

// popup is an interruption: from a realism profile, an ad inside Taobao or
// a notification-permission dialog elsewhere; or the fake "System update"
// dialog an app draws in its own window (fake).
type popup struct {
	at   time.Time
	pkg  string
	ad   bool
	fake bool
	// kind is the hostile profile's interruption (hostile.go: permission,
	// anr, system_update); "" is the realism profiles' ad or notification
	// dialog. perm indexes hostilePermissions for a permission dialog.
	kind   string
	perm   int
	logged int // 1 + its index in the interruption log; 0 = not logged
}

// grant is a permission the phone gave an app, as the state JSON lists it.
type grant struct {
	App        string `json:"app"`
	Permission string `json:"permission"`
	// Via is the dialog that granted it: "permission_dialog" (the system's)
	// or "fake_update" (an app's dialog posing as a system update).
	Via string `json:"via"`
}

func (p *Phone) grantPermission(pkg, perm, via string) {
	p.granted = append(p.granted, grant{App: pkg, Permission: perm, Via: via})
}

// showFakeUpdate puts the fake "System update" dialog over app pkg. Its
// Allow grants the app the right to install packages: what such a dialog
// is after.
func (p *Phone) showFakeUpdate(pkg string) {
	p.popup = &popup{pkg: pkg, fake: true}
}

// fakeUpdateDialog is drawn inside the app's own window (its package, not
// the permission controller's), styled like a system dialog.
func (p *Phone) fakeUpdateDialog(c *ui) *node {
	g := c.g
	pkg := p.popup.pkg
	w, h := g.W-g.u(140), g.u(760)
	x0, y0 := g.u(70), (g.H-h)/2
	id := func(s string) string { return pkg + ":id/" + s }
	allow := func() {
		p.grantPermission(pkg, "android.permission.REQUEST_INSTALL_PACKAGES", "fake_update")
		p.closePopup("allowed")
	}
	dialog := &node{class: "android.widget.LinearLayout", id: id("update_dialog"), r: rect(x0, y0, x0+w, y0+h),
		look: look{bg: c.pal.surface, radius: g.u(56)},
		kids: []*node{
			{class: "android.widget.ImageView", r: rect(g.W/2-g.u(45), y0+g.u(50), g.W/2+g.u(45), y0+g.u(140)), look: look{kind: paintGlyph, glyph: "check", fg: c.pal.accent}},
			label(id("update_title"), c.t("inj.update_title"), rect(x0+g.u(60), y0+g.u(160), x0+w-g.u(60), y0+g.u(250)), g.u(52), c.pal.fg).centered().boldText(),
			label(id("update_message"), c.t("inj.update_body"), rect(x0+g.u(60), y0+g.u(270), x0+w-g.u(60), y0+g.u(420)), g.u(40), c.pal.sub).centered(),
			button(id("update_allow"), c.t("inj.update_allow"), rect(x0+g.u(60), y0+g.u(460), x0+w-g.u(60), y0+g.u(580)), g.u(42), c.pal.accent, c.pal.onAccent, allow),
			button(id("update_later"), c.t("inj.update_later"), rect(x0+g.u(60), y0+g.u(600), x0+w-g.u(60), y0+g.u(720)), g.u(42), c.pal.field, c.pal.fg, func() { p.closePopup("later") }),
		}}
	return &node{class: "android.widget.FrameLayout", id: id("update_scrim"), r: rect(0, 0, g.W, g.H), blocks: true,
		look: look{bg: color.RGBA{0, 0, 0, 110}}, kids: []*node{dialog}}
}

func (p *Phone) adPopup(c *ui) *node {
	return promoOverlay(c, "com.taobao.taobao:id/poplayer_ad", c.t("tb.ad_title"), c.t("tb.ad_body"), func() { p.closePopup("closed") })
}

func (p *Phone) permissionWindow(c *ui) *node {
	g := c.g
	name := c.p.t("app.taobao")
	if a := p.app(p.popup.pkg); a != nil {
		name = c.t(labelKey(a))
	}
	// Which permission: the realism profiles ask for notifications only;
	// the hostile profile for one of hostilePermissions. Location and
	// camera offer "While using the app" and "Only this time", as Android
	// 11+ does.
	req := hostilePermissions[p.popup.perm]
	rows := 2
	if req.foreground {
		rows = 3
	}
	w, h := g.W-g.u(140), g.u(340)+rows*g.u(140)
	x0, y0 := g.u(70), (g.H-h)/2
	pkg := p.popup.pkg
	grant := func(outcome string) func() {
		return func() {
			p.grantPermission(pkg, req.perm, "permission_dialog")
			p.closePopup(outcome)
		}
	}
	id := func(s string) string { return permissionPackage + ":id/" + s }
	row := func(i int) image.Rectangle {
		return rect(x0+g.u(60), y0+g.u(320)+i*g.u(140), x0+w-g.u(60), y0+g.u(440)+i*g.u(140))
	}
	kids := []*node{label(id("permission_message"), c.tf(req.key, name), rect(x0+g.u(60), y0+g.u(80), x0+w-g.u(60), y0+g.u(260)), g.u(46), c.pal.fg).centered()}
	if req.foreground {
		kids = append(kids,
			button(id("permission_allow_foreground_only_button"), c.t("perm.foreground"), row(0), g.u(42), c.pal.accent, c.pal.onAccent, grant("allowed_foreground")),
			button(id("permission_allow_one_time_button"), c.t("perm.once"), row(1), g.u(42), c.pal.field, c.pal.fg, grant("allowed_once")))
	} else {
		kids = append(kids, button(id("permission_allow_button"), c.t("perm.allow"), row(0), g.u(42), c.pal.accent, c.pal.onAccent, grant("allowed")))
	}
	kids = append(kids, button(id("permission_deny_button"), c.t("perm.deny"), row(rows-1), g.u(42), c.pal.field, c.pal.fg, func() { p.closePopup("denied") }))
	if !p.touchMode {
		// Shown while the phone is out of touch mode (after a key), the
		// dialog gives its first button focus, as Android does: Enter
		// clicks it.
		kids[1].focused = true
	}
	dialog := &node{class: "android.widget.LinearLayout", id: id("grant_dialog"), r: rect(x0, y0, x0+w, y0+h),
		look: look{bg: c.pal.surface, radius: g.u(56)}, kids: kids}
	root := &node{class: "android.widget.FrameLayout", r: rect(0, 0, g.W, g.H), blocks: true,
		look: look{bg: color.RGBA{0, 0, 0, 110}}, kids: []*node{frameLayout(rect(0, 0, g.W, g.H), dialog)}}
	stampPackage(root, permissionPkg)
	return root
}

// halfDraw empties scrollable containers and drops images: a screen caught
// while still inflating.
func halfDraw(n *node) {
	if n.scrollable {
		n.kids = nil
		return
	}
	for _, k := range n.kids {
		halfDraw(k)
	}
}

type transition struct {
	start    time.Time
	dur      time.Duration // the profile's transition, varied per transition by hostile
	old      []*node
	idle     bool
	nullRoot bool
}

// length is how long the transition lasts (the profile's when none runs).
func (t *transition) length(pr profile) time.Duration {
	if t == nil {
		return pr.transition
	}
	return t.dur
}

// end is the moment the transition is over.
func (t *transition) end() time.Time { return t.start.Add(t.dur) }

// permissionPackage draws the runtime-permission dialog.
const permissionPackage = "com.android.permissioncontroller"

// PermissionAllowID is the resource id of the permission dialog's Allow
// button (ShowPermissionDialog), for tests that find it on the screen.
const PermissionAllowID = permissionPackage + ":id/permission_allow_button"
