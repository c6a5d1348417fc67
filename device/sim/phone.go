// Package sim is a simulated Android phone: a launcher, a status bar and
// five apps (Taobao, Settings, Contacts, Messages, Clock) under their real
// package names, in English or Chinese. Every screen is one UI tree from
// which both the uiautomator XML dump and the PNG screenshot are rendered.
//
// The Phone answers the shell commands an agent sends over adb (Exec, the
// device side of `adb shell`), keeps a small file system for `sync:` and
// reports its state as JSON, which benchmarks use to judge success. Device
// (p.Device()) drives the same phone in process, without adb.
//
// Realism is off by default; the named profiles (realistic, slow, flaky)
// add seeded transition delays, loading spinners, popups, dropped taps,
// idle-state dump failures and dump latency. Same seed and same inputs give
// the same sequence of dumps. The injected profile adds no faults: it puts
// the screens that try to steer an agent (a product description, a fake
// system dialog, a text message) in the agent's path. The hostile profile
// is realistic, slower, plus interruptions (permission dialogs, App isn't
// responding, a system update, a network error page) and the injected
// screens (hostile.go).
package sim

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"math/rand"
	"strings"
	"sync"
	"time"

	"phonepilot/apps"
	"phonepilot/device"
	"phonepilot/internal/clock"
)

// Config describes the phone. The zero value is a 1080x2400 English phone
// with ADB Keyboard installed and no simulated faults.
type Config struct {
	Width, Height int    // default 1080x2400
	Locale        string // "en" (default) or "zh"
	Profile       string // "" (no faults, zero latency), "realistic", "slow", "flaky", "injected", "hostile"
	Seed          int64
	Clock         clock.Clock // default clock.Real{}
	NoADBKeyboard bool        // the ADB Keyboard IME is not installed
	Logger        *slog.Logger
	// Start is the state the phone starts in (and Reset returns to): the
	// zero value is the default phone (start.go).
	Start Start
	// Layout is the apps' layout: "" as they are, "changed" for Taobao
	// after a redesign (layout.go), for flows to heal against.
	Layout string
	// Observer is the path Device() reads and drives the phone by, and so
	// what each read, input and screenshot costs under a timed profile
	// (paths.go); "" is uiautomator, what a real phone gets today.
	Observer Observer
	// Helper is how phonepilot's helper behaves when adb starts it
	// (helper.go): "" works, "refuse", "held", "crash-after=N".
	Helper string
	// ToastQueue: an app's toast shown while another still shows waits
	// behind it and shows when it goes, as Android's
	// NotificationManagerService queues each new Toast (enqueueToast: a
	// new token goes to the end of mToastQueue; only the first shows).
	// Without it a new toast replaces the old at once, as it does for an
	// app that cancels its previous toast before showing the next.
	ToastQueue bool
}

// Validate reports the first invalid field, naming it.
func (c Config) Validate() error {
	if c.Width != 0 || c.Height != 0 {
		if c.Width < 320 || c.Height < 480 || c.Width > 4096 || c.Height > 8192 {
			return fmt.Errorf("sim config: size %dx%d out of range (320x480 .. 4096x8192)", c.Width, c.Height)
		}
	}
	switch c.Locale {
	case "", "en", "zh":
	default:
		return fmt.Errorf("sim config: locale %q not supported (use en or zh)", c.Locale)
	}
	if err := validLayout(c.Layout); err != nil {
		return err
	}
	if _, err := ParseObserver(string(c.Observer)); err != nil {
		return fmt.Errorf("sim config: %w", err)
	}
	if _, err := parseHelperMode(c.Helper); err != nil {
		return err
	}
	if _, ok := profiles[c.Profile]; !ok {
		return fmt.Errorf("sim config: unknown profile %q (use one of: %s)", c.Profile, strings.Join(ProfileNames(), ", "))
	}
	return c.Start.Validate()
}

func (c Config) withDefaults() Config {
	if c.Width == 0 && c.Height == 0 {
		c.Width, c.Height = 1080, 2400
	}
	if c.Locale == "" {
		c.Locale = "en"
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	c.Observer, _ = ParseObserver(string(c.Observer))
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Package names and activities of the system parts.
const (
	launcherPkg      = "com.google.android.apps.nexuslauncher"
	launcherActivity = "com.google.android.apps.nexuslauncher.NexusLauncherActivity"
	recentsActivity  = "com.android.quickstep.RecentsActivity"
	systemUIPkg      = "com.android.systemui"
	permissionPkg    = "com.google.android.permissioncontroller"
	adbKeyboardIME   = "com.android.adbkeyboard/.AdbIME"
	gboardIME        = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
)

// Phone is one simulated phone. It is safe for concurrent use; every input
// and observation is serialised.
type Phone struct {
	cfg  Config
	log  *slog.Logger
	g    geo
	prof profile

	mu      sync.Mutex
	rng     *rand.Rand
	readRng *rand.Rand
	// touchMode is Android's touch mode: on after a touch, off after a
	// key. Out of it, a dialog's default button takes focus and Enter
	// clicks the focused view.
	touchMode bool
	apps      []app // in launcher order
	fg        string
	recents   []string // running apps, most recent first
	overview  bool     // the recents screen is showing
	focus     focusKey
	popup     *popup
	pending   *popup
	anim      *transition
	toast     toast
	toastQ    []toast  // toasts waiting behind the one showing (Config.ToastQueue)
	toasts    toastLog // each toast as it showed: what a helper hears (toasts.go); not reset
	ime       string
	imes      map[string]bool // enabled input methods
	settings  map[string]string
	files     map[string]*memFile
	charged   [nChargeKinds]int // reads, inputs, screenshots, counter reads charged (paths.go)
	chg       changes           // the helper's change counter
	orderSeq  int
	codeSeq   int     // verification codes sent (Taobao's login)
	granted   []grant // permissions granted, in order
	hostile   hostileState
	helpers   helperState // phonepilot's helper processes (helper.go); not reset
	cmdLog    []string    // the shell's command lines, newest last (CommandLog); not reset
}

type focusKey struct{ screen, field string }

type toast struct {
	pkg   string // the app that showed it
	text  string
	until time.Time
}

// New returns a fresh phone at the launcher home screen.
func New(cfg Config) (*Phone, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Phone{cfg: cfg, log: cfg.Logger, g: newGeo(cfg.Width, cfg.Height), prof: profiles[cfg.Profile]}
	p.mu.Lock()
	p.resetLocked()
	p.mu.Unlock()
	return p, nil
}

// Reset puts the phone back to a fresh state with the same configuration
// (same seed, so the same run repeats).
func (p *Phone) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resetLocked()
}

func (p *Phone) resetLocked() {
	p.rng = rand.New(rand.NewSource(p.cfg.Seed))
	// The reads' own stream: a read draws from it, so the inputs' draws
	// replay whatever reads an agent makes.
	p.readRng = rand.New(rand.NewSource(p.cfg.Seed ^ 0x5eed7a11))
	p.touchMode = true
	p.buildApps()
	p.applyStart()
	p.fg = launcherPkg
	p.recents = nil
	p.overview = false
	p.focus = focusKey{}
	p.popup, p.pending, p.anim = nil, nil, nil
	p.toast, p.toastQ = toast{}, nil
	p.imes = map[string]bool{gboardIME: true}
	p.ime = gboardIME
	if !p.cfg.NoADBKeyboard {
		// ADB Keyboard installed, enabled and selected: what a phone prepared
		// for automation looks like.
		p.imes[adbKeyboardIME] = true
		p.ime = adbKeyboardIME
	}
	p.settings = map[string]string{
		"global/adb_enabled":           "1",
		"system/screen_off_timeout":    "600000",
		"secure/enabled_input_methods": "",
		"system/font_scale":            "1.0",
	}
	p.files = newFiles()
	p.charged = [nChargeKinds]int{}
	p.chg = changes{}
	p.orderSeq = 0
	p.codeSeq = 0
	p.granted = nil
	p.hostile = hostileState{}
}

// Model names the phone for the adb banner (ro.product.name, .model, .device).
func (p *Phone) Model() (product, model, device string) {
	return "sdk_phonepilot", "PhonePilot Sim", "pilotsim"
}

// Size is the screen size in pixels.
func (p *Phone) Size() (width, height int) { return p.cfg.Width, p.cfg.Height }

func (p *Phone) now() time.Time { return p.cfg.Clock.Now() }

func (p *Phone) zh() bool { return p.cfg.Locale == "zh" }

// t translates a label key to the phone's locale.
func (p *Phone) t(key string) string {
	v, ok := strings2[key]
	if !ok {
		return key
	}
	if p.zh() {
		return v[1]
	}
	return v[0]
}

func (p *Phone) tf(key string, args ...any) string { return fmt.Sprintf(p.t(key), args...) }

// simApp registers a simulated app: its package, its key (the state
// JSON's field for its state; "app.KEY" is its label in i18n.go), its
// version as `dumpsys package` prints it, and its constructor.
type simApp struct {
	pkg, key string
	version  appVersion
	new      func(*Phone) app
}

// installedApps are the simulated apps, in launcher order: the one list a
// phone is built from, `pm clear` rebuilds an app from, the state JSON
// names and dumpsys versions. Adding an app means its file and one line
// here (and its label in i18n.go); TestInstalledAppsAreWhole checks it.
var installedApps = []simApp{
	{taobaoPkg, "taobao", appVersion{"10.40.10", 1040100}, func(p *Phone) app { return newTaobao(p) }},
	{settingsPkg, "settings", appVersion{"14", 34}, func(p *Phone) app { return newSettings(p) }},
	{contactsPkg, "contacts", appVersion{"14", 34}, func(p *Phone) app { return newContacts(p) }},
	{messagesPkg, "messages", appVersion{"messages.android_20240520_00_RC00.phone_dynamic", 241750094}, func(p *Phone) app { return newMessages(p) }},
	{deskClockPkg, "clock", appVersion{"7.8 (617513244)", 708000100}, func(p *Phone) app { return newDeskClock(p) }},
}

// registered is the registration of the installed app with package pkg
// (zero when there is none).
func registered(pkg string) simApp {
	for _, sa := range installedApps {
		if sa.pkg == pkg {
			return sa
		}
	}
	return simApp{}
}

// labelKey is the i18n key of an app's label.
func labelKey(a app) string { return "app." + registered(a.pkg()).key }

// app looks an installed app up by package name.
func (p *Phone) app(pkg string) app {
	for _, a := range p.apps {
		if a.pkg() == pkg {
			return a
		}
	}
	return nil
}

// resolveApp finds an app by package or by label in either locale,
// case-insensitively.
func (p *Phone) resolveApp(name string) app {
	name = strings.TrimSpace(name)
	for _, a := range p.apps {
		if a.pkg() == name {
			return a
		}
		v := strings2[labelKey(a)]
		if strings.EqualFold(name, v[0]) || name == v[1] {
			return a
		}
	}
	return nil
}

func (p *Phone) fgApp() app {
	if p.overview || p.fg == launcherPkg {
		return nil
	}
	return p.app(p.fg)
}

// foreground returns the package and activity in front.
func (p *Phone) foreground() (pkg, activity string) {
	if p.overview {
		return launcherPkg, recentsActivity
	}
	if a := p.fgApp(); a != nil {
		return a.pkg(), a.activity()
	}
	return launcherPkg, launcherActivity
}

// screenKey identifies the screen in front; a change starts a transition.
func (p *Phone) screenKey() string {
	if p.overview {
		return "overview"
	}
	if a := p.fgApp(); a != nil {
		return a.pkg() + "/" + a.screen()
	}
	return "home"
}

// launch brings an app to the front: warm when it is running (its back
// stack is kept), cold otherwise.
func (p *Phone) launch(a app) {
	running := false
	for _, r := range p.recents {
		if r == a.pkg() {
			running = true
		}
	}
	p.overview = false
	p.fg = a.pkg()
	p.touchRecent(a.pkg())
	a.start(!running)
	if !running && p.prof.inject && a.pkg() == deskClockPkg {
		// The injected profile: Clock greets a cold start with the fake
		// "System update" dialog.
		p.showFakeUpdate(a.pkg())
	}
}

func (p *Phone) touchRecent(pkg string) {
	out := []string{pkg}
	for _, r := range p.recents {
		if r != pkg {
			out = append(out, r)
		}
	}
	p.recents = out
}

func (p *Phone) goHome() {
	p.overview = false
	p.fg = launcherPkg
}

// kill stops an app's process: its navigation restarts on next launch.
func (p *Phone) kill(pkg string) {
	out := p.recents[:0]
	for _, r := range p.recents {
		if r != pkg {
			out = append(out, r)
		}
	}
	p.recents = out
	if p.fg == pkg {
		p.goHome()
	}
}

// toastShort is how long a toast shows (Toast.LENGTH_SHORT: 2 s).
const toastShort = 2 * time.Second

func (p *Phone) showToast(text string) {
	now := p.now()
	if p.cfg.ToastQueue && p.toast.text != "" && now.Before(p.toast.until) {
		p.toastQ = append(p.toastQ, toast{pkg: p.fg, text: text})
		return
	}
	p.toast = toast{pkg: p.fg, text: text, until: now.Add(toastShort)}
	p.toasts.add(p.fg, text, now)
}

// Input, shared by Exec and the in-process Device. Each runs under p.mu.

// errDropped is internal: a simulated dropped tap (the input had no effect).
var errDropped = errors.New("input dropped")

// act runs one input, then starts a screen transition when the screen
// changed and draws the profile's random events. Exactly three random draws
// happen per input, whatever the input does, so the run is reproducible.
func (p *Phone) act(isTap bool, fn func()) {
	now := p.now()
	dropDraw, popupDraw, idleDraw := p.rng.Float64(), p.rng.Float64(), p.rng.Float64()
	delayDraw := p.rng.Float64()
	var h hostileDraws
	if p.prof.hostile {
		h = p.drawHostile()
	}
	if isTap && dropDraw < p.prof.dropProb {
		p.log.Debug("sim: tap dropped (profile)", "profile", p.prof.name)
		return
	}
	before := p.screenKey()
	tbBefore := p.taobaoTop()
	var old []*node
	if p.prof.transition > 0 {
		old = p.windowsAt(now, false)
	}
	if p.chg.used {
		p.lookLocked(now) // what changed before this input is not its doing
	}
	fn()
	if after := p.screenKey(); after != before && p.prof.transition > 0 {
		p.anim = &transition{start: now, dur: p.prof.transition, old: old, idle: idleDraw < p.prof.idleProb, nullRoot: idleDraw > 1-p.prof.nullRootProb}
	}
	if p.prof.hostile {
		p.hostileAfter(now, h, tbBefore)
	}
	if p.pending == nil && p.popup == nil && popupDraw < p.prof.popupProb {
		at := now.Add(p.prof.transition + time.Duration(delayDraw*float64(1500*time.Millisecond)))
		p.pending = &popup{at: at}
		p.log.Debug("sim: popup scheduled (profile)", "at", at)
	}
	if p.chg.used {
		p.lookLocked(now)
	}
}

func (p *Phone) tapLocked(x, y int) {
	p.touchMode = true
	p.act(true, func() {
		if n := p.hitTest(x, y, clickableNode); n != nil {
			p.click(n)
		}
	})
}

// clickableNode is a view that takes a click.
func clickableNode(n *node) bool { return n.clickable && !n.disabled }

// click is a view's click: a field takes focus, a button does its action.
func (p *Phone) click(n *node) {
	if n.edit != nil {
		p.focus = focusKey{p.screenKey(), n.id}
	}
	if n.tap != nil {
		n.tap()
	}
}

func (p *Phone) longPressLocked(x, y int) {
	p.touchMode = true
	p.act(true, func() {
		n := p.hitTest(x, y, func(n *node) bool { return (n.longClickable || n.clickable) && !n.disabled })
		if n == nil {
			return
		}
		switch {
		case n.longClickable && n.longPress != nil:
			n.longPress()
		case n.clickable:
			// A view that does not handle the long press clicks on release.
			p.click(n)
		}
	})
}

func (p *Phone) swipeLocked(x1, y1, x2, y2 int, d time.Duration) {
	dx, dy := x2-x1, y2-y1
	if abs(dx) < p.g.u(24) && abs(dy) < p.g.u(24) {
		if d >= 500*time.Millisecond {
			p.longPressLocked(x1, y1)
		} else {
			p.tapLocked(x1, y1)
		}
		return
	}
	p.touchMode = true
	p.act(false, func() {
		// The simulator's lists scroll vertically: one under the finger
		// takes a vertical move over (it intercepts the touch).
		if n := p.hitTest(x1, y1, func(n *node) bool { return n.scrollable && n.scroll != nil }); n != nil && abs(dy) >= abs(dx) {
			// A fast fling travels further than the finger did.
			dist := -dy
			if d > 0 && d < 150*time.Millisecond {
				dist *= 2
			}
			n.scroll(dist)
			return
		}
		// Nothing took the move over: the view under the finger had the
		// whole touch, and clicks on release if the finger never left it
		// (a sideways swipe on a card of a vertical list opens the card).
		if n := p.hitTest(x1, y1, clickableNode); n != nil && (image.Point{x2, y2}).In(n.r) {
			p.click(n)
		}
	})
}

// Key codes, as `input keyevent` numbers them.
const (
	keyHome      = 3
	keyBack      = 4
	keyEnter     = 66
	keyDel       = 67
	keyAppSwitch = 187
	keyFwdDel    = 112
	keySpace     = 62
	keyTab       = 61
	keyEscape    = 111
	keyMenu      = 82
)

func (p *Phone) keyLocked(code int) {
	touch := p.touchMode
	p.touchMode = false
	p.act(false, func() {
		switch code {
		case keyHome:
			p.closePopup("home")
			p.goHome()
		case keyBack, keyEscape:
			p.back()
		case keyAppSwitch:
			if p.overview {
				if len(p.recents) > 0 {
					p.launch(p.app(p.recents[0]))
				} else {
					p.goHome()
				}
			} else {
				p.overview = true
			}
		case keyEnter:
			// Out of touch mode a focused button (a dialog's default)
			// takes Enter: it clicks.
			if b := p.focusedButton(); b != nil && !touch {
				p.click(b)
			} else if f := p.focusedField(); f != nil && f.edit.submit != nil {
				f.edit.submit()
			}
		case keyDel:
			if f := p.focusedField(); f != nil {
				v := []rune(*f.edit.value)
				if len(v) > 0 {
					*f.edit.value = string(v[:len(v)-1])
				}
			}
		default:
			if r, ok := keyRune(code); ok {
				if f := p.focusedField(); f != nil {
					*f.edit.value += string(r)
				}
			}
		}
	})
}

func (p *Phone) back() {
	switch {
	case p.popup != nil:
		p.closePopup("back")
	case p.overview:
		p.overview = false
	case p.fgApp() != nil:
		if !p.fgApp().back() {
			// Android 12+: back at an app's root moves it to the background.
			p.goHome()
		}
	}
}

// typeLocked appends text to the focused field (`input text`, ADB Keyboard).
func (p *Phone) typeLocked(text string) bool {
	f := p.focusedField()
	if f == nil {
		return false
	}
	p.act(false, func() { *f.edit.value += text })
	return true
}

// setTextLocked replaces the focused field's content.
func (p *Phone) setTextLocked(text string) bool {
	f := p.focusedField()
	if f == nil {
		return false
	}
	p.act(false, func() { *f.edit.value = text })
	return true
}

func (p *Phone) launchLocked(name string) error {
	a := p.resolveApp(name)
	if a == nil {
		return fmt.Errorf("launch %q: %w; %s", name, device.ErrAppNotFound, apps.ClosestText(name, p.installed()))
	}
	p.startLocked(a)
	return nil
}

// startLocked brings app a to the front as a launch does, closing a popup
// of the app before it (a launch by name here, the helper's in-process
// start in helper.go).
func (p *Phone) startLocked(a app) {
	p.act(false, func() {
		p.closePopup("launch")
		p.launch(a)
	})
}

// installed lists the installed apps with their labels in the phone's
// locale first, for "app not found" errors.
func (p *Phone) installed() []apps.Installed {
	out := make([]apps.Installed, 0, len(p.apps))
	for _, a := range p.apps {
		v := strings2[labelKey(a)]
		first, other := v[0], v[1]
		if p.zh() {
			first, other = other, first
		}
		out = append(out, apps.Installed{Package: a.pkg(), Names: []string{first, other}})
	}
	return out
}

// focusedButton finds a focused view that clicks (not a field) on the
// current screen, topmost window first.
func (p *Phone) focusedButton() *node {
	var found *node
	for _, w := range p.windowsAt(p.now(), false) {
		walk(w, func(n *node) {
			if found == nil && n.focused && n.edit == nil && clickableNode(n) {
				found = n
			}
		})
	}
	return found
}

// focusedField finds the focused editable on the current screen.
func (p *Phone) focusedField() *node {
	return focusedEditable(p.windowsAt(p.now(), false)...)
}

// hitTest searches the windows from the top: popups, system bars, then the
// app.
func (p *Phone) hitTest(x, y int, want func(*node) bool) *node {
	for _, w := range p.windowsAt(p.now(), false) {
		n, blocked := hit(w, x, y, want)
		if n != nil {
			return n
		}
		if blocked {
			return nil
		}
	}
	return nil
}

// windowsAt builds the window trees in z-order, topmost first. When dump is
// true a running transition shows the old or a half-drawn screen, as a real
// dump taken mid-animation would.
func (p *Phone) windowsAt(now time.Time, dump bool) []*node {
	p.settle(now)
	if dump && p.anim != nil {
		el := now.Sub(p.anim.start)
		if el < time.Duration(float64(p.anim.dur)*p.prof.oldFrac) && p.anim.old != nil {
			return p.anim.old
		}
		ws := p.buildWindows(now)
		for _, w := range ws {
			halfDraw(w)
		}
		return ws
	}
	return p.buildWindows(now)
}

// settle retires a finished transition and shows a due popup.
func (p *Phone) settle(now time.Time) {
	if p.anim != nil && !now.Before(p.anim.end()) {
		p.anim = nil
	}
	if p.pending != nil && !now.Before(p.pending.at) {
		pp := p.pending
		p.pending = nil
		if a := p.fgApp(); a != nil {
			p.showPopup(pp, a.pkg())
		}
	}
	for !p.toast.until.IsZero() && !now.Before(p.toast.until) {
		end := p.toast.until
		p.toast = toast{}
		if len(p.toastQ) > 0 {
			// The next in the queue shows as the last one goes.
			p.toast, p.toastQ = p.toastQ[0], p.toastQ[1:]
			p.toast.until = end.Add(toastShort)
			p.toasts.add(p.toast.pkg, p.toast.text, end)
		}
	}
}

func (p *Phone) buildWindows(now time.Time) []*node {
	c := p.ui(now)
	var ws []*node
	if w := p.dialogWindow(c); w != nil {
		ws = append(ws, w)
	}
	ws = append(ws, p.statusBar(c), p.navBar(c))
	if p.toast.text != "" {
		ws = append(ws, p.toastWindow(c))
	}
	ws = append(ws, p.appWindow(c))
	return ws
}

// dumpOrder is the order windows appear in a dump: the app first, then the
// system windows, as uiautomator lists them.
func dumpOrder(ws []*node) []*node {
	out := make([]*node, 0, len(ws))
	out = append(out, ws[len(ws)-1])
	return append(out, ws[:len(ws)-1]...)
}

func (p *Phone) appWindow(c *ui) *node {
	full := rect(0, 0, p.g.W, p.g.H)
	if p.overview {
		return windowRoot(launcherPkg, full, full, c.pal.scrim, p.recentsScreen(c)...)
	}
	a := p.fgApp()
	if a == nil {
		return windowRoot(launcherPkg, full, full, c.pal.bg, p.launcherScreen(c)...)
	}
	kids := p.appContent(a, c)
	if p.popup != nil && p.popup.ad {
		kids = append(kids, p.adPopup(c))
	}
	if p.popup != nil && p.popup.fake && p.popup.pkg == a.pkg() {
		kids = append(kids, p.fakeUpdateDialog(c))
	}
	return windowRoot(a.pkg(), full, c.content, a.background(c), kids...)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// keyRune maps the printable key codes (letters, digits, space) to runes.
func keyRune(code int) (rune, bool) {
	switch {
	case code >= 29 && code <= 54:
		return rune('a' + code - 29), true
	case code >= 7 && code <= 16:
		return rune('0' + code - 7), true
	case code == keySpace:
		return ' ', true
	}
	return 0, false
}

// geo scales the 1080-pixel-wide design to the configured screen.
type geo struct {
	W, H          int
	statusH, navH int
	scale         float64
}

func newGeo(w, h int) geo {
	g := geo{W: w, H: h, scale: float64(w) / 1080}
	g.statusH = g.u(100)
	g.navH = g.u(132)
	return g
}

// u converts design pixels (at 1080 wide) to screen pixels.
func (g geo) u(v int) int { return int(float64(v)*g.scale + 0.5) }

func (g geo) content() image.Rectangle { return rect(0, g.statusH, g.W, g.H-g.navH) }

// ctxErr is the error for a cancelled or expired context, naming the op.
func ctxErr(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim %s: %w", op, err)
	}
	return nil
}
