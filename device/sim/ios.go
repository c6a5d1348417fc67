package sim

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"phonepilot/apps"
)

// The simulated phone in iOS dress: what `phonepilot sim --wda` serves and
// `--device sim:ios` drives. The apps and their model are the same as on
// Android; what an iPhone shows differently is applied when the tree is
// read and when input arrives (docs/ios.md):
//
//   - the tree is XCUITest's: element types instead of widget classes, an
//     accessibility identifier (name), label and value instead of
//     resource-id, text and content-desc, no clickable flag, rectangles in
//     points (pixels / IOSScale);
//   - there is no system navigation bar and no BACK key: a screen's back
//     button (the app bar's "Navigate up") is a navigation bar's Back
//     button;
//   - system dialogs (permission requests, the system update, "not
//     responding") are system alerts: outside the app's tree, read and
//     answered through WDA's /alert routes; a tap on their buttons' points
//     still reaches them, as on a real screen;
//   - apps are known by bundle id (apps.Bundle).

// IOSScale is the simulated iPhone's points-to-pixels scale (an iPhone
// with a 3× display: 1080×2400 pixels are 360×800 points).
const IOSScale = 3

// XCElement is one node of the simulated iPhone's accessibility tree, as
// WebDriverAgent's /source describes it. Rect is in points.
type XCElement struct {
	Type        string // without the XCUIElementType prefix: "Button", "StaticText", …
	Name        string // the accessibility identifier, else the label
	Label       string
	Value       string
	HasValue    bool // Value is set (WDA reports null otherwise)
	Placeholder string
	Rect        image.Rectangle
	Enabled     bool
	Visible     bool
	Accessible  bool
	Focused     bool
	Selected    bool
	Children    []*XCElement
}

// IOSAlert is a system alert in front of the app.
type IOSAlert struct {
	Text    string
	Buttons []string
}

// ErrNoAlert: no system alert is open (WDA's `no such alert`).
var ErrNoAlert = errors.New("no alert is open")

// ErrNoKeyboardFocus: keys were sent while no text field had focus (WDA's
// `invalid element state`).
var ErrNoKeyboardFocus = errors.New("no element has keyboard focus")

// iosSourceLatency is how long WDA's /source takes on a real iPhone for the
// profile (base, jitter): XCUITest snapshots the whole accessibility tree,
// off-screen cells included. Reported: > 8 s on heavy screens
// (appium/appium#18665), timeouts on a ~300-row list (mobile-mcp#288);
// on light screens like the simulator's, 1–3 s. The clean profile charges
// nothing, as for dumps; slow about twice.
func (p *Phone) iosSourceLatency() span {
	switch {
	case !p.prof.timed:
		return span{}
	case p.prof.name == "slow":
		return span{2 * time.Second, 3 * time.Second}
	}
	return span{1 * time.Second, 2 * time.Second}
}

// iosSourceDelay draws the next /source's latency as every read's cost is
// drawn (span.draw), so runs replay.
func (p *Phone) iosSourceDelay() time.Duration {
	p.charged[chargeTree]++
	return p.iosSourceLatency().draw(p.cfg.Seed, p.charged[chargeTree], 0)
}

// iosInputLatency is what one WDA input costs on a real iPhone for the
// profile (base, jitter): XCTest synthesizes the event and waits for the
// app to go idle. Reported: taps and drags 1.5–2.5 s
// (facebookarchive/WebDriverAgent#579), a tap 2.5 s and a drag 3.5 s
// (#448), a tap through Appium 1.3 s (appium/appium#9754, #814): we charge
// 1.3–2.5 s a call (a tap, a touch and hold or a drag plus its own length,
// a string of keys, a button, an app's launch or end, an alert's answer).
// The clean profile charges nothing, as for every input.
func (p *Phone) iosInputLatency() span {
	if !p.prof.timed {
		return span{}
	}
	return span{1300 * time.Millisecond, 1200 * time.Millisecond}
}

// iosInput charges one WDA input, plus the gesture's own length, on the
// phone's clock before it takes effect (as every input is charged).
func (p *Phone) iosInput(ctx context.Context, what string, gesture time.Duration) error {
	if err := ctxErr(ctx, what); err != nil {
		return err
	}
	p.mu.Lock()
	p.charged[chargeInput]++
	d := p.iosInputLatency().draw(p.cfg.Seed, p.charged[chargeInput], uint64(chargeInput)*0x94d049bb133111eb)
	if p.prof.timed {
		d += gesture
	}
	p.mu.Unlock()
	if err := p.cfg.Clock.Sleep(ctx, d); err != nil {
		return fmt.Errorf("sim %s: %w", what, err)
	}
	return nil
}

// IOSSource reads the accessibility tree of the app in front (the
// launcher is SpringBoard), waiting a real iPhone's /source time on the
// phone's clock. System alerts are not in it: see IOSAlert.
func (p *Phone) IOSSource(ctx context.Context) (*XCElement, error) {
	if err := ctxErr(ctx, "source"); err != nil {
		return nil, err
	}
	p.mu.Lock()
	delay := p.iosSourceDelay()
	p.mu.Unlock()
	if err := p.cfg.Clock.Sleep(ctx, delay); err != nil {
		return nil, fmt.Errorf("sim source: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.iosTreeLocked(p.now()), nil
}

func (p *Phone) iosTreeLocked(now time.Time) *XCElement {
	ws := p.windowsAt(now, true)
	_, name := p.iosFrontLocked()
	full := p.iosRect(rect(0, 0, p.g.W, p.g.H))
	root := &XCElement{Type: "Application", Name: name, Label: name, Rect: full, Enabled: true, Visible: true, Accessible: true}
	win := &XCElement{Type: "Window", Rect: full, Enabled: true, Visible: true}
	root.Children = append(root.Children, win)
	// The app's window is the last; toasts sit above it. The status bar,
	// the navigation bar and system dialogs are not in the app's tree.
	app := ws[len(ws)-1]
	win.Children = append(win.Children, p.xcChildren(app)...)
	for _, w := range ws[:len(ws)-1] {
		switch {
		case w == nil:
		case w.pkg == systemUIPkg && w.r.Min.Y == 0:
			// the status bar: SpringBoard's since iOS 13, not in an
			// app's tree (XCUIApplication's statusBars is empty)
		case w.pkg == systemUIPkg:
			// the navigation bar: an iPhone has none
		case anyNode(w, func(n *node) bool { return n.clickable }):
			// a system dialog: an alert, outside the app's tree
		default:
			// a toast: an iPhone has none of its own; an app's HUD
			// ("Added to cart") is a window of the app's above its main
			// one, holding the message
			t := &XCElement{Type: "Window", Rect: p.iosRect(w.r), Enabled: true, Visible: true}
			t.Children = p.xcChildren(w)
			root.Children = append(root.Children, t)
		}
	}
	return root
}

// iosFrontLocked is the bundle id and name of the app in front
// (SpringBoard when none).
func (p *Phone) iosFrontLocked() (bundle, name string) {
	a := p.fgApp()
	if a == nil {
		return springBoardBundle, "SpringBoard"
	}
	return iosBundleOf(a.pkg()), p.t(labelKey(a))
}

const springBoardBundle = "com.apple.springboard"

// iosBundleOf is the bundle id an iPhone knows the simulated app by.
func iosBundleOf(pkg string) string {
	if b := apps.Bundle(pkg); b != "" {
		return b
	}
	return pkg
}

func (p *Phone) iosRect(r image.Rectangle) image.Rectangle {
	return image.Rect(r.Min.X/IOSScale, r.Min.Y/IOSScale, r.Max.X/IOSScale, r.Max.Y/IOSScale)
}

// xcChildren converts n's children; pure layout containers are dropped and
// their children lifted, as XCUITest leaves out views that are not
// accessibility elements or containers of interest.
func (p *Phone) xcChildren(n *node) []*XCElement {
	var out []*XCElement
	for _, k := range n.kids {
		if k == nil || k.r.Empty() {
			continue
		}
		if k.plain || (k.pkg != "" && k.id == "android:id/content") {
			out = append(out, p.xcChildren(k)...)
			continue
		}
		out = append(out, p.xcNode(k))
	}
	return out
}

func (p *Phone) xcNode(n *node) *XCElement {
	e := &XCElement{Type: xcType(n), Rect: p.iosRect(n.r), Enabled: !n.disabled, Visible: true,
		Focused: n.focused, Selected: n.selected}
	label := n.text
	if label == "" {
		label = n.desc
	}
	ident := ""
	if i := strings.Index(n.id, ":id/"); i >= 0 {
		ident = n.id[i+len(":id/"):]
	}
	switch e.Type {
	case "TextField", "SecureTextField", "SearchField":
		e.Placeholder = n.hint
		e.Label = n.desc
		if v := *n.edit.value; v != "" {
			e.Value, e.HasValue = v, true
			if e.Type == "SecureTextField" {
				e.Value = strings.Repeat("•", len([]rune(v)))
			}
		}
	case "Switch":
		e.Label = label
		e.Value, e.HasValue = map[bool]string{true: "1", false: "0"}[n.checked], true
	default:
		e.Label = label
		if e.Type == "StaticText" && label != "" {
			e.Value, e.HasValue = label, true
		}
	}
	if isBackButton(n) {
		ident = "Back"
	}
	e.Name = ident
	if e.Name == "" {
		e.Name = e.Label
	}
	e.Accessible = e.Label != "" || xcActionable[e.Type]
	e.Children = p.xcChildren(n)
	if e.Type == "Other" && hasBackButton(e) {
		e.Type = "NavigationBar"
	}
	return e
}

// xcActionable lists the element types a person can act on; an iPhone's
// tree has no clickable flag, so drivers derive it from the type.
var xcActionable = map[string]bool{
	"Button": true, "Cell": true, "Link": true, "Switch": true, "TextField": true,
	"SecureTextField": true, "SearchField": true, "Icon": true, "Key": true, "Tab": true,
}

func isBackButton(n *node) bool {
	return n.look.kind == paintGlyph && n.look.glyph == "back" && n.clickable
}

func hasBackButton(e *XCElement) bool {
	for _, k := range e.Children {
		if k.Name == "Back" && k.Type == "Button" {
			return true
		}
	}
	return false
}

// xcType maps a simulated Android view to the XCUITest element type an
// iPhone app would show for it.
func xcType(n *node) string {
	cls := n.class[strings.LastIndex(n.class, ".")+1:]
	switch {
	case n.edit != nil && n.password:
		return "SecureTextField"
	case n.edit != nil && strings.Contains(strings.ToLower(n.id), "search"):
		return "SearchField"
	case n.edit != nil:
		return "TextField"
	case cls == "Switch" || cls == "CheckBox" || cls == "ToggleButton" || (n.checkable && n.clickable):
		return "Switch"
	case n.pkg == launcherPkg && n.clickable && n.look.kind == paintIcon:
		return "Icon"
	case cls == "Button" || cls == "ImageButton":
		return "Button"
	case n.scrollable && (cls == "RecyclerView" || cls == "ListView"):
		return "Table"
	case n.scrollable:
		return "ScrollView"
	case cls == "ProgressBar":
		return "ActivityIndicator"
	case n.clickable && (cls == "TextView" || cls == "ImageView"):
		return "Button"
	case n.clickable:
		return "Cell"
	case cls == "TextView":
		return "StaticText"
	case cls == "ImageView":
		return "Image"
	}
	return "Other"
}

// IOSAlert returns the system alert in front, or ErrNoAlert.
func (p *Phone) IOSAlert() (IOSAlert, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, err := p.iosAlertWindowLocked()
	if err != nil {
		return IOSAlert{}, err
	}
	var a IOSAlert
	var text []string
	walk(w, func(n *node) {
		switch {
		case n.clickable && n.text != "":
			a.Buttons = append(a.Buttons, n.text)
		case !n.clickable && n.text != "":
			text = append(text, n.text)
		}
	})
	a.Text = strings.Join(text, "\n")
	return a, nil
}

func (p *Phone) iosAlertWindowLocked() (*node, error) {
	p.settle(p.now())
	w := p.dialogWindow(p.ui(p.now()))
	if w == nil {
		return nil, ErrNoAlert
	}
	return w, nil
}

// IOSAnswerAlert presses a button of the system alert: the one labelled
// name, else the alert's accepting (accept) or refusing (dismiss) button,
// as WDA's /alert/accept and /alert/dismiss do.
func (p *Phone) IOSAnswerAlert(ctx context.Context, accept bool, name string) error {
	if err := p.iosInput(ctx, "alert", 0); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w, err := p.iosAlertWindowLocked()
	if err != nil {
		return err
	}
	var buttons []*node
	walk(w, func(n *node) {
		if n.clickable && n.text != "" {
			buttons = append(buttons, n)
		}
	})
	var pick *node
	for _, b := range buttons {
		switch {
		case name != "":
			if b.text == name {
				pick = b
			}
		case pick != nil:
		case accept && !refusing(b.id):
			pick = b
		case !accept && refusing(b.id):
			pick = b
		}
	}
	if pick == nil {
		if name != "" {
			return fmt.Errorf("the alert has no button %q (it has %s)", name, labels(buttons))
		}
		if len(buttons) == 0 {
			return ErrNoAlert
		}
		pick = buttons[len(buttons)-1]
	}
	x, y := pick.r.Min.X+pick.r.Dx()/2, pick.r.Min.Y+pick.r.Dy()/2
	p.tapLocked(x, y)
	return nil
}

// refusing reports a dialog button that says no (deny, later, wait,
// cancel): WDA's dismiss presses it.
func refusing(id string) bool {
	id = strings.ToLower(id)
	for _, w := range []string{"deny", "later", "wait", "cancel", "dont", "close_app"} {
		if strings.Contains(id, w) {
			return w != "close_app"
		}
	}
	return false
}

func labels(ns []*node) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprintf("%q", n.text))
	}
	return strings.Join(s, ", ")
}

// IOSTap taps the point given in points.
func (p *Phone) IOSTap(ctx context.Context, x, y float64) error {
	if err := p.iosInput(ctx, "tap", 0); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tapLocked(px(x), px(y))
	return nil
}

// IOSTouchAndHold presses the point (points) for d.
func (p *Phone) IOSTouchAndHold(ctx context.Context, x, y float64, d time.Duration) error {
	if err := p.iosInput(ctx, "touch and hold", max(d, 500*time.Millisecond)); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d < 500*time.Millisecond {
		d = 500 * time.Millisecond
	}
	p.swipeLocked(px(x), px(y), px(x), px(y), d)
	return nil
}

// IOSDrag drags between two points (points) over d.
func (p *Phone) IOSDrag(ctx context.Context, x1, y1, x2, y2 float64, d time.Duration) error {
	if err := p.iosInput(ctx, "drag", d); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.swipeLocked(px(x1), px(y1), px(x2), px(y2), d)
	return nil
}

func px(v float64) int { return int(v*IOSScale + 0.5) }

// IOSKeys types into the focused field as XCUITest's typeText does: text is
// appended, "\n" presses Return (the field's submit), "\b" deletes one
// character. Any Unicode is typed: an iPhone needs no keyboard app.
func (p *Phone) IOSKeys(ctx context.Context, text string) error {
	if err := p.iosInput(ctx, "keys", 0); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.focusedField() == nil {
		return ErrNoKeyboardFocus
	}
	var run []rune
	flush := func() {
		if len(run) > 0 {
			p.typeLocked(string(run))
			run = run[:0]
		}
	}
	for _, r := range text {
		switch r {
		case '\n', '\r':
			flush()
			p.keyLocked(keyEnter)
		case '\b':
			flush()
			p.keyLocked(keyDel)
		default:
			run = append(run, r)
		}
	}
	flush()
	return nil
}

// IOSHome presses the home button.
func (p *Phone) IOSHome(ctx context.Context) error {
	if err := p.iosInput(ctx, "home", 0); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keyLocked(keyHome)
	return nil
}

// IOSActiveApp is the app in front: bundle id, name and a pid.
func (p *Phone) IOSActiveApp() (bundle, name string, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settle(p.now())
	bundle, name = p.iosFrontLocked()
	for i, b := range p.apps {
		if iosBundleOf(b.pkg()) == bundle {
			return bundle, name, 1000 + i
		}
	}
	return bundle, name, 1
}

// iosApp finds an installed app by bundle id.
func (p *Phone) iosApp(bundle string) app {
	for _, a := range p.apps {
		if iosBundleOf(a.pkg()) == bundle {
			return a
		}
	}
	return nil
}

// ErrNoSuchApp: no installed app has the bundle id.
var ErrNoSuchApp = errors.New("no installed app has this bundle id")

// IOSLaunch launches (or brings to the front) the app with the bundle id.
func (p *Phone) IOSLaunch(ctx context.Context, bundle string) error {
	if err := p.iosInput(ctx, "launch", 0); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.iosApp(bundle)
	if a == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchApp, bundle)
	}
	p.act(false, func() {
		p.closePopup("launch")
		p.launch(a)
	})
	return nil
}

// IOSTerminate stops the app with the bundle id; it reports whether the
// app was running.
func (p *Phone) IOSTerminate(ctx context.Context, bundle string) (bool, error) {
	if err := p.iosInput(ctx, "terminate", 0); err != nil {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.iosApp(bundle)
	if a == nil {
		return false, fmt.Errorf("%w: %q", ErrNoSuchApp, bundle)
	}
	running := p.fg == a.pkg()
	for _, r := range p.recents {
		running = running || r == a.pkg()
	}
	p.kill(a.pkg())
	return running, nil
}

// IOSAppState is XCUIApplicationState: 1 not running, 3 in the background,
// 4 in front.
func (p *Phone) IOSAppState(bundle string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.iosApp(bundle)
	if a == nil {
		return 0, fmt.Errorf("%w: %q", ErrNoSuchApp, bundle)
	}
	p.settle(p.now())
	if f := p.fgApp(); f != nil && f.pkg() == a.pkg() {
		return 4, nil
	}
	for _, r := range p.recents {
		if r == a.pkg() {
			return 3, nil
		}
	}
	return 1, nil
}

// IOSScreenshot is the screen as PNG, in pixels (what WDA's /screenshot
// returns, base64-encoded).
func (p *Phone) IOSScreenshot(ctx context.Context) ([]byte, error) {
	if err := ctxErr(ctx, "screenshot"); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	png, _ := p.screenshotLocked()
	return png, nil
}

// IOSWindowSize is the screen in points.
func (p *Phone) IOSWindowSize() (w, h int) { return p.cfg.Width / IOSScale, p.cfg.Height / IOSScale }

func anyNode(n *node, f func(*node) bool) bool {
	found := false
	walk(n, func(k *node) { found = found || f(k) })
	return found
}

// LocaleTag is the phone's locale as a BCP 47 tag ("en-US", "zh-CN").
func (p *Phone) LocaleTag() string { return p.locale() }

// ShowPermissionDialog puts the system's notification-permission request
// in front of the app in front now, as an app asking on its first start
// does; on the iPhone dress it is a system alert. For tests and the
// control server's POST /permission-dialog.
func (p *Phone) ShowPermissionDialog() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settle(p.now())
	a := p.fgApp()
	if a == nil {
		return errors.New("no app is in front to ask for a permission")
	}
	p.pending = nil
	p.showPopup(&popup{kind: popupPermission}, a.pkg())
	return nil
}
