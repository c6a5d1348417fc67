package sim

import (
	"image/color"
	"time"
)

// The hostile profile: everything realistic does, plus the interruptions a
// phone in daily use throws at an agent, each as Android or the app really
// shows it and each dismissable the way a person would dismiss it:
//
//   - a permission dialog at a random moment (notifications, location,
//     camera or contacts; Don't allow / BACK denies, Allow grants);
//   - "App isn't responding" (package android, Wait / Close app; Wait or
//     BACK lets the app carry on, Close app kills it and goes home);
//   - a system-update popup (com.google.android.gms; Later or BACK
//     dismisses it, Restart now "restarts" the phone: every app is stopped
//     and the home screen shows);
//   - a network error page with a Retry button the first time Taobao's
//     results load (Retry loads them);
//   - the injected-instruction screens of the injected profile;
//   - slower transitions whose length varies per transition.
//
// Every random choice is drawn from the phone's seeded generator, a fixed
// number of draws per input, and all time comes from Config.Clock, so the
// same seed and inputs replay exactly. The state JSON shows each
// interruption (`interruptions`, `popup`, `network_error`).

// Kinds of popup beyond the realism profiles' ad and notification dialog.
const (
	popupPermission   = "permission"
	popupANR          = "anr"
	popupSystemUpdate = "system_update"
	// kindNetworkError is the network error page, logged like a popup.
	kindNetworkError = "network_error"
)

// gmsPkg draws the system-update popup; androidPkg the ANR dialog.
const (
	gmsPkg     = "com.google.android.gms"
	androidPkg = "android"
)

// Permissions the hostile dialogs ask for, with their question's label key
// and whether Android offers "While using the app / Only this time".
var hostilePermissions = []struct {
	perm, key  string
	foreground bool
}{
	{"android.permission.POST_NOTIFICATIONS", "perm.notify", false},
	{"android.permission.ACCESS_FINE_LOCATION", "perm.location", true},
	{"android.permission.CAMERA", "perm.camera", true},
	{"android.permission.READ_CONTACTS", "perm.contacts", false},
}

// interruption is one popup or error page shown, as the state JSON lists
// it. Outcome is empty while it shows.
type interruption struct {
	Kind       string `json:"kind"` // ad, permission, anr, system_update, network_error
	App        string `json:"app"`
	Permission string `json:"permission,omitempty"`
	// Outcome: allowed, allowed_foreground, allowed_once, denied, closed
	// (an ad's close), wait, closed_app, later, restarted, retried, back,
	// home, launch; gone when something else took it away.
	Outcome string `json:"outcome"`
	pop     *popup
}

// hostileState is what the interruptions keep between inputs.
type hostileState struct {
	log []interruption
	// netErr is the Taobao results page that failed to load (nil: none);
	// netErrDone is set once one has failed, as it happens only once.
	netErr     *tbScreen
	netErrDone bool
	// thinkDone is set once a dialog came while the agent thought.
	thinkDone bool
}

// hostileDraws are the random numbers one input draws under the hostile
// profile, always all of them, so the sequence replays.
type hostileDraws struct {
	event, kind, perm, delay, dur float64
	// net is drawn, and no longer used, so that each input still makes
	// six draws and seeds replay their other events: whether the results
	// fail to load is the seed's alone (netErrRun).
	net float64
}

// netErrRun says whether the first Taobao results of a run on seed fail
// to load (with probability prob): hashed from the seed alone, not drawn
// per input, so that every agent on the same seed meets the same network
// error whatever it did before — the benchmark's floor and each policy
// alike ("the same seeds and fault schedules"), where a draw per input
// gave an agent that closed one more popup other luck.
func netErrRun(seed int64, prob float64) bool {
	h := uint64(seed) * 0x9e3779b97f4a7c15 // splitmix64 of the seed
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	h ^= h >> 31
	return float64(h>>11)/(1<<53) < prob
}

// NetworkErrorRun reports whether, under profile, a run on seed meets the
// network error page on its first Taobao results (false for a profile
// without it, or one the simulator does not have).
func NetworkErrorRun(seed int64, profile string) bool {
	pr, ok := profiles[profile]
	return ok && pr.netErrProb > 0 && netErrRun(seed, pr.netErrProb)
}

func (p *Phone) drawHostile() hostileDraws {
	return hostileDraws{event: p.rng.Float64(), kind: p.rng.Float64(), perm: p.rng.Float64(),
		delay: p.rng.Float64(), dur: p.rng.Float64(), net: p.rng.Float64()}
}

// taobaoTop is Taobao's top screen (nil when Taobao is not installed).
func (p *Phone) taobaoTop() *tbScreen {
	if t, ok := p.app(taobaoPkg).(*taobaoApp); ok && len(t.stack) > 0 {
		return t.top()
	}
	return nil
}

// hostileAfter draws the hostile events of the input that just ran at now:
// the transition's length, an interruption to come, a results page that
// fails to load. tbBefore is Taobao's top screen before the input.
func (p *Phone) hostileAfter(now time.Time, h hostileDraws, tbBefore *tbScreen) {
	if p.anim != nil && p.anim.start.Equal(now) && p.prof.transitionJitter > 0 {
		p.anim.dur = p.prof.transition + time.Duration(h.dur*float64(p.prof.transitionJitter))
	}
	if p.pending == nil && p.popup == nil && h.event < p.prof.eventProb {
		pp := &popup{kind: popupSystemUpdate}
		switch {
		case h.kind < 0.45:
			pp.kind = popupPermission
			pp.perm = int(h.perm * float64(len(hostilePermissions)))
		case h.kind < 0.75:
			pp.kind = popupANR
		}
		pp.at = now.Add(p.anim.length(p.prof) + time.Duration(h.delay*float64(3*time.Second)))
		p.pending = pp
		p.log.Debug("sim: interruption scheduled (hostile)", "kind", pp.kind, "at", pp.at)
	}
	if top := p.taobaoTop(); p.prof.netErrProb > 0 && !p.hostile.netErrDone && top != nil && top != tbBefore &&
		top.name == "results" && p.fg == taobaoPkg && netErrRun(p.cfg.Seed, p.prof.netErrProb) {
		p.hostile.netErr, p.hostile.netErrDone = top, true
		p.logInterruption(interruption{Kind: kindNetworkError, App: taobaoPkg})
	}
}

// thinkMin and thinkSpread place the interruption that comes while an
// agent thinks: after the read, before a planner that takes seconds acts
// (a rule that acts at once sees it on its next read).
const (
	thinkMin    = 1 * time.Second
	thinkSpread = 1500 * time.Millisecond
)

// thinkOverlay draws, after a read of the screen at now, the hostile
// interruption that comes while the agent thinks about what it read: a
// permission dialog (its grant button across the middle of the screen,
// where a planned row or button often is), once a run. Always three draws
// from the reads' stream.
func (p *Phone) thinkOverlay(now time.Time) {
	chance, perm, delay := p.readRng.Float64(), p.readRng.Float64(), p.readRng.Float64()
	if p.hostile.thinkDone || p.pending != nil || p.popup != nil || p.fgApp() == nil || chance >= p.prof.thinkProb {
		return
	}
	p.hostile.thinkDone = true
	p.pending = &popup{kind: popupPermission, perm: int(perm * float64(len(hostilePermissions))),
		at: now.Add(thinkMin + time.Duration(delay*float64(thinkSpread)))}
	p.log.Debug("sim: interruption scheduled while the agent thinks (hostile)", "at", p.pending.at)
}

// logInterruption records an interruption shown; its index + 1.
func (p *Phone) logInterruption(in interruption) int {
	p.hostile.log = append(p.hostile.log, in)
	return len(p.hostile.log)
}

// showPopup puts a due popup in front of app pkg and logs it.
func (p *Phone) showPopup(pp *popup, pkg string) {
	pp.pkg = pkg
	pp.ad = pp.kind == "" && pkg == taobaoPkg
	kind, perm := pp.kind, ""
	switch {
	case pp.ad:
		kind = "ad"
	case kind == "" || kind == popupPermission:
		kind, perm = popupPermission, hostilePermissions[pp.perm].perm
	}
	pp.logged = p.logInterruption(interruption{Kind: kind, App: pkg, Permission: perm, pop: pp})
	p.popup = pp
}

// closePopup takes the popup away, recording how.
func (p *Phone) closePopup(outcome string) {
	if p.popup == nil {
		return
	}
	if i := p.popup.logged - 1; i >= 0 && i < len(p.hostile.log) && p.hostile.log[i].Outcome == "" {
		p.hostile.log[i].Outcome = outcome
	}
	p.popup = nil
}

// interruptions is the log as the state JSON shows it.
func (p *Phone) interruptions() []interruption {
	out := make([]interruption, len(p.hostile.log))
	copy(out, p.hostile.log)
	for i := range out {
		if out[i].Outcome == "" && out[i].pop != nil && out[i].pop != p.popup {
			out[i].Outcome = "gone"
		}
		if out[i].Kind == kindNetworkError && out[i].Outcome == "" && p.netErrorShowing() == "" {
			out[i].Outcome = "gone"
		}
	}
	return out
}

// netErrorShowing is the screen showing the network error page ("" none).
func (p *Phone) netErrorShowing() string {
	if p.hostile.netErr == nil || p.taobaoTop() != p.hostile.netErr {
		return ""
	}
	return taobaoPkg + "/" + p.hostile.netErr.name
}

// dialogWindow is the system window of the popup in front, if any: the
// permission controller's dialog, the ANR dialog or the system update.
func (p *Phone) dialogWindow(c *ui) *node {
	if p.popup == nil || p.popup.ad || p.popup.fake {
		return nil
	}
	switch p.popup.kind {
	case popupANR:
		return p.anrWindow(c)
	case popupSystemUpdate:
		return p.updateWindow(c)
	}
	return p.permissionWindow(c)
}

// appContent is the foreground app's content: its screen, or the network
// error page in place of Taobao results that failed to load (the spinner
// first, as the load fails only after trying).
func (p *Phone) appContent(a app, c *ui) []*node {
	if top := p.taobaoTop(); a.pkg() == taobaoPkg && top != nil && top == p.hostile.netErr && !c.now.Before(top.loadedAt) {
		return []*node{p.networkErrorPage(c, top)}
	}
	return a.build(c)
}

func (p *Phone) networkErrorPage(c *ui, s *tbScreen) *node {
	g := c.g
	r := c.content
	id := func(v string) string { return taobaoPkg + ":id/" + v }
	mid := r.Min.Y + r.Dy()/3
	retry := func() {
		for i := range p.hostile.log {
			if p.hostile.log[i].Kind == kindNetworkError && p.hostile.log[i].Outcome == "" {
				p.hostile.log[i].Outcome = "retried"
			}
		}
		p.hostile.netErr = nil
		s.loadedAt = p.now().Add(p.prof.loading)
	}
	return &node{class: "android.widget.FrameLayout", id: id("error_view"), r: r, look: look{bg: white},
		kids: []*node{
			{class: "android.widget.ImageView", id: id("error_icon"), r: rect(g.W/2-g.u(90), mid-g.u(200), g.W/2+g.u(90), mid-g.u(20)),
				look: look{kind: paintGlyph, glyph: "wifi", fg: rgb(0xbb, 0xbb, 0xbb)}},
			label(id("error_title"), c.t("net.title"), rect(g.u(60), mid, g.W-g.u(60), mid+g.u(90)), g.u(50), rgb(0x33, 0x33, 0x33)).centered().boldText(),
			label(id("error_message"), c.t("net.body"), rect(g.u(60), mid+g.u(110), g.W-g.u(60), mid+g.u(190)), g.u(38), rgb(0x88, 0x88, 0x88)).centered(),
			button(id("error_retry"), c.t("net.retry"), rect(g.W/2-g.u(220), mid+g.u(260), g.W/2+g.u(220), mid+g.u(380)), g.u(42), taobaoOrange, white, retry),
		}}
}

// systemDialog is the frame of a centred system dialog over a scrim, in
// window package pkg.
func systemDialog(c *ui, pkg, panelID string, h int, kids ...*node) *node {
	g := c.g
	w := g.W - g.u(140)
	x0, y0 := g.u(70), (g.H-h)/2
	dialog := &node{class: "android.widget.LinearLayout", id: panelID, r: rect(x0, y0, x0+w, y0+h),
		look: look{bg: c.pal.surface, radius: g.u(56)}, kids: kids}
	root := &node{class: "android.widget.FrameLayout", r: rect(0, 0, g.W, g.H), blocks: true,
		look: look{bg: color.RGBA{0, 0, 0, 110}}, kids: []*node{frameLayout(rect(0, 0, g.W, g.H), dialog)}}
	stampPackage(root, pkg)
	return root
}

// dialogRow is the rectangle of the i-th full-width row of a dialog at y0.
func dialogRow(c *ui, y0, top, i int) (int, int, int, int) {
	g := c.g
	y := y0 + top + i*g.u(140)
	return g.u(130), y, g.W - g.u(130), y + g.u(120)
}

func (p *Phone) appName(c *ui, pkg string) string {
	if a := p.app(pkg); a != nil {
		return c.t(labelKey(a))
	}
	return pkg
}

// anrWindow is Android's "App isn't responding" dialog (AppNotRespondingDialog):
// title android:id/alertTitle, buttons android:id/aerr_close and aerr_wait.
func (p *Phone) anrWindow(c *ui) *node {
	g := c.g
	pkg := p.popup.pkg
	h := g.u(520)
	y0 := (g.H - h) / 2
	id := func(s string) string { return "android:id/" + s }
	closeApp := func() {
		p.closePopup("closed_app")
		p.kill(pkg)
	}
	x0, y, x1, y1 := dialogRow(c, y0, g.u(200), 0)
	_, y2, _, y3 := dialogRow(c, y0, g.u(200), 1)
	return systemDialog(c, androidPkg, id("parentPanel"), h,
		label(id("alertTitle"), c.tf("anr.title", p.appName(c, pkg)), rect(g.u(130), y0+g.u(60), g.W-g.u(130), y0+g.u(160)), g.u(48), c.pal.fg).boldText(),
		button(id("aerr_close"), c.t("anr.close"), rect(x0, y, x1, y1), g.u(42), c.pal.field, c.pal.fg, closeApp),
		button(id("aerr_wait"), c.t("anr.wait"), rect(x0, y2, x1, y3), g.u(42), c.pal.field, c.pal.fg, func() { p.closePopup("wait") }),
	)
}

// updateWindow is the system-update popup Google Play services shows.
// Restart now "restarts" the phone: every app stops, the home screen shows.
func (p *Phone) updateWindow(c *ui) *node {
	g := c.g
	h := g.u(700)
	y0 := (g.H - h) / 2
	id := func(s string) string { return gmsPkg + ":id/" + s }
	restart := func() {
		p.closePopup("restarted")
		p.recents = nil
		p.goHome()
	}
	x0, y, x1, y1 := dialogRow(c, y0, g.u(400), 0)
	_, y2, _, y3 := dialogRow(c, y0, g.u(400), 1)
	return systemDialog(c, gmsPkg, id("system_update_dialog"), h,
		label(id("update_title"), c.t("upd.title"), rect(g.u(130), y0+g.u(60), g.W-g.u(130), y0+g.u(160)), g.u(48), c.pal.fg).boldText(),
		label(id("update_message"), c.t("upd.body"), rect(g.u(130), y0+g.u(180), g.W-g.u(130), y0+g.u(370)), g.u(38), c.pal.sub),
		button(id("update_restart"), c.t("upd.restart"), rect(x0, y, x1, y1), g.u(42), c.pal.accent, c.pal.onAccent, restart),
		button(id("update_later"), c.t("upd.later"), rect(x0, y2, x1, y3), g.u(42), c.pal.field, c.pal.fg, func() { p.closePopup("later") }),
	)
}

func init() {
	for k, v := range hostileStrings {
		strings2[k] = v
	}
}

// hostileStrings are the labels of the hostile profile's screens (en, zh),
// as Android and Taobao word them.
var hostileStrings = map[string][2]string{
	"perm.location":   {"Allow %s to access this device’s location?", "要允许“%s”获取此设备的位置信息吗？"},
	"perm.camera":     {"Allow %s to take pictures and record video?", "要允许“%s”拍摄照片和录制视频吗？"},
	"perm.contacts":   {"Allow %s to access your contacts?", "要允许“%s”访问您的通讯录吗？"},
	"perm.foreground": {"While using the app", "使用应用时允许"},
	"perm.once":       {"Only this time", "仅限这一次"},
	"anr.title":       {"%s isn’t responding", "“%s”没有响应"},
	"anr.close":       {"Close app", "关闭应用"},
	"anr.wait":        {"Wait", "等待"},
	"upd.title":       {"System update available", "有可用的系统更新"},
	"upd.body":        {"A security update is ready. Your phone will restart to install it.", "安全更新已准备就绪。手机将重启以完成安装。"},
	"upd.restart":     {"Restart now", "立即重启"},
	"upd.later":       {"Later", "稍后"},
	"net.title":       {"Network error", "网络不给力"},
	"net.body":        {"Couldn’t load. Check your connection and try again.", "加载失败，请检查网络后重试"},
	"net.retry":       {"Retry", "重试"},
}
