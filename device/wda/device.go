package wda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"strings"
	"sync"
	"time"

	"phonepilot/apps"
	"phonepilot/device"
	"phonepilot/perception/frame"
	"phonepilot/scene"
)

// SpringBoard is iOS's home screen and the owner of system alerts: the
// Scene's package for both.
const SpringBoard = "com.apple.springboard"

// Device is an iPhone behind WDA.
type Device struct {
	c   *Client
	now func() time.Time

	mu     sync.Mutex
	scale  float64
	width  int // points
	height int
	alert  []alertButton // the alert buttons of the last Scene, in pixels
	last   *scene.Scene
}

// alertButton is a system alert's button as the Scene shows it: a tap
// inside it answers the alert through WDA's /alert/accept {name}, since an
// alert is outside the app's tree and WDA gives its buttons no rectangles.
type alertButton struct {
	label  string
	bounds scene.Bounds
}

var (
	_ device.Device     = (*Device)(nil)
	_ frame.Camera      = (*Device)(nil)
	_ device.Facts      = (*Device)(nil)
	_ device.AppStopper = (*Device)(nil)
)

// Open connects to the WDA at base (http://HOST:PORT), checks it answers
// /status, and reads the screen's scale. hc may be nil.
func Open(ctx context.Context, base string, hc *http.Client) (*Device, error) {
	c, err := NewClient(base, hc)
	if err != nil {
		return nil, err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("wda at %s does not answer /status (is WebDriverAgent running and forwarded? see docs/ios.md): %w", base, err)
	}
	if !st.Ready {
		return nil, fmt.Errorf("wda at %s is not ready: %w", base, device.ErrDisconnected)
	}
	d := &Device{c: c, now: time.Now}
	if err := d.readScreen(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Client is the WDA client behind the device.
func (d *Device) Client() *Client { return d.c }

func (d *Device) readScreen(ctx context.Context) error {
	var v struct {
		ScreenSize struct{ Width, Height float64 } `json:"screenSize"`
		Scale      float64                         `json:"scale"`
	}
	if err := d.c.call(ctx, http.MethodGet, "/wda/screen", nil, &v); err != nil {
		return err
	}
	if v.Scale <= 0 || v.ScreenSize.Width <= 0 {
		return fmt.Errorf("wda /wda/screen: no screen size or scale in the reply")
	}
	d.mu.Lock()
	d.scale, d.width, d.height = v.Scale, int(v.ScreenSize.Width), int(v.ScreenSize.Height)
	d.mu.Unlock()
	return nil
}

// Scale is the screen's points-to-pixels scale.
func (d *Device) Scale() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.scale
}

// Close ends the WDA session.
func (d *Device) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return d.c.Close(ctx)
}

// Scene reads the app in front, its tree (JSON: WDA's XML waits for
// animations to end) and any system alert, which is shown as a window of
// its own above the app (package SpringBoard).
func (d *Device) Scene(ctx context.Context) (*scene.Scene, error) {
	var app struct {
		BundleID string `json:"bundleId"`
	}
	if err := d.c.sessionCall(ctx, http.MethodGet, "/wda/activeAppInfo", nil, &app); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := d.c.sessionCall(ctx, http.MethodGet, "/source?format=json", nil, &raw); err != nil {
		return nil, err
	}
	var root *Node
	var err error
	if len(raw) > 0 && raw[0] == '"' { // an XML string from an older WDA
		var s string
		_ = json.Unmarshal(raw, &s)
		root, err = ParseXML([]byte(s))
	} else {
		root, err = ParseJSON(raw)
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	scale := d.scale
	d.mu.Unlock()
	sc := ToScene(root, scale, app.BundleID)
	buttons, err := d.addAlert(ctx, sc)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.alert, d.last = buttons, sc
	d.mu.Unlock()
	return sc, nil
}

// addAlert adds the system alert in front, if any, as a window above the
// app: its text and a row of buttons laid out across the screen's middle.
func (d *Device) addAlert(ctx context.Context, sc *scene.Scene) ([]alertButton, error) {
	var text string
	err := d.c.sessionCall(ctx, http.MethodGet, "/alert/text", nil, &text)
	if IsName(err, "no such alert") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var labels []string
	if err := d.c.sessionCall(ctx, http.MethodGet, "/wda/alert/buttons", nil, &labels); err != nil && !IsName(err, "no such alert") {
		return nil, err
	}
	w, h := sc.Width, sc.Height
	win := 0
	for _, e := range sc.Elements {
		win = max(win, e.Window+1)
	}
	top := h/2 - h/8
	box := scene.Bounds{Left: w / 8, Top: top, Right: w - w/8, Bottom: h/2 + h/8}
	// XCUITest labels an alert with its title, the text's first line.
	title, _, _ := strings.Cut(text, "\n")
	alert := scene.Element{Index: len(sc.Elements), Parent: -1, Window: win, Class: "XCUIElementTypeAlert", Package: SpringBoard,
		Text: title, Bounds: box, Enabled: true}
	sc.Elements = append(sc.Elements, alert)
	sc.Elements = append(sc.Elements, scene.Element{Index: len(sc.Elements), Parent: alert.Index, Depth: 1, Window: win,
		Class: "XCUIElementTypeStaticText", Package: SpringBoard, Text: text, Enabled: true,
		Bounds: scene.Bounds{Left: box.Left, Top: box.Top, Right: box.Right, Bottom: box.Top + box.Height()/2}})
	var out []alertButton
	row := box.Height() / 2 / max(1, len(labels))
	for i, l := range labels {
		b := scene.Bounds{Left: box.Left, Top: box.Top + box.Height()/2 + i*row, Right: box.Right, Bottom: box.Top + box.Height()/2 + (i+1)*row}
		sc.Elements = append(sc.Elements, scene.Element{Index: len(sc.Elements), Parent: alert.Index, Depth: 1, Window: win,
			Class: "XCUIElementTypeButton", Package: SpringBoard, Text: l, Bounds: b, Clickable: true, Enabled: true, Focusable: true})
		out = append(out, alertButton{l, b})
	}
	return out, nil
}

func (d *Device) points(x, y int) (float64, float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return float64(x) / d.scale, float64(y) / d.scale
}

// alertAt is the alert button at the pixel point, if the last Scene showed
// one there.
func (d *Device) alertAt(x, y int) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range d.alert {
		if b.bounds.Contains(x, y) {
			return b.label, true
		}
	}
	return "", false
}

// Tap taps the pixel point (a system alert's button through /alert/accept
// with its name).
func (d *Device) Tap(ctx context.Context, x, y int) error {
	if name, ok := d.alertAt(x, y); ok {
		return d.c.sessionCall(ctx, http.MethodPost, "/alert/accept", map[string]any{"name": name}, nil)
	}
	px, py := d.points(x, y)
	return d.c.sessionCall(ctx, http.MethodPost, "/wda/tap", map[string]any{"x": px, "y": py}, nil)
}

// LongPress touches and holds the pixel point.
func (d *Device) LongPress(ctx context.Context, x, y int, dur time.Duration) error {
	px, py := d.points(x, y)
	return d.c.sessionCall(ctx, http.MethodPost, "/wda/touchAndHold", map[string]any{"x": px, "y": py, "duration": dur.Seconds()}, nil)
}

// Swipe drags between pixel points over dur with W3C pointer actions (WDA's
// dragfromtoforduration holds first for its duration, which is a long
// press, not a swipe).
func (d *Device) Swipe(ctx context.Context, x1, y1, x2, y2 int, dur time.Duration) error {
	ax, ay := d.points(x1, y1)
	bx, by := d.points(x2, y2)
	act := map[string]any{"actions": []any{map[string]any{
		"type": "pointer", "id": "finger1", "parameters": map[string]any{"pointerType": "touch"},
		"actions": []any{
			map[string]any{"type": "pointerMove", "duration": 0, "x": ax, "y": ay},
			map[string]any{"type": "pointerDown", "button": 0},
			map[string]any{"type": "pointerMove", "duration": dur.Milliseconds(), "x": bx, "y": by},
			map[string]any{"type": "pointerUp", "button": 0},
		},
	}}}
	return d.c.sessionCall(ctx, http.MethodPost, "/actions", act, nil)
}

// TypeText replaces the focused field's content: the old text is deleted
// key by key, then the new one typed (WDA's /wda/keys appends; any
// Unicode, no keyboard app needed).
func (d *Device) TypeText(ctx context.Context, text string) error {
	old := d.focusedText()
	keys := strings.Repeat("\b", len([]rune(old))) + text
	if keys == "" {
		return nil
	}
	err := d.c.sessionCall(ctx, http.MethodPost, "/wda/keys", map[string]any{"value": []string{keys}}, nil)
	if IsName(err, "invalid element state") {
		return fmt.Errorf("wda type text: %w", device.ErrNoFocus)
	}
	return err
}

// focusedText is the focused field's text in the last Scene ("" when it is
// empty or unknown).
func (d *Device) focusedText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		return ""
	}
	for _, e := range d.last.Elements {
		if e.Editable && e.Focused && e.Text != e.Hint {
			return e.Text
		}
	}
	return ""
}

// ErrNoBackKey says what to do instead of BACK on an iPhone.
var ErrNoBackKey = fmt.Errorf("an iPhone has no back key: tap the screen's back button (top left, usually labelled Back or with the previous screen's title): %w", device.ErrUnsupported)

// Key presses a key: home is the home button, enter and delete are typed
// into the focused field (with no keyboard up they go nowhere, as on
// Android); an iPhone has no back or app-switch key.
func (d *Device) Key(ctx context.Context, k device.Key) error {
	switch k {
	case device.KeyHome:
		return d.c.sessionCall(ctx, http.MethodPost, "/wda/pressButton", map[string]any{"name": "home"}, nil)
	case device.KeyEnter, device.KeyDelete:
		key := map[device.Key]string{device.KeyEnter: "\n", device.KeyDelete: "\b"}[k]
		err := d.c.sessionCall(ctx, http.MethodPost, "/wda/keys", map[string]any{"value": []string{key}}, nil)
		if IsName(err, "invalid element state") {
			// No keyboard: the key goes nowhere, as on Android.
			return nil
		}
		return err
	case device.KeyBack:
		return ErrNoBackKey
	}
	return fmt.Errorf("wda key %q: an iPhone has no such key: %w", k, device.ErrUnsupported)
}

// Keys are the keys an iPhone has (KeysDeclarer).
func (d *Device) Keys() []device.Key {
	return []device.Key{device.KeyHome, device.KeyEnter, device.KeyDelete}
}

// LaunchApp launches an app by bundle id or by a name the apps table knows.
func (d *Device) LaunchApp(ctx context.Context, app string) error {
	bundle := bundleOf(app)
	if bundle == "" {
		return fmt.Errorf("wda launch %q: no iOS bundle id known for it; give the bundle id (com.example.App): %w", app, device.ErrAppNotFound)
	}
	err := d.c.sessionCall(ctx, http.MethodPost, "/wda/apps/launch", map[string]any{"bundleId": bundle}, nil)
	if IsName(err, "invalid argument") || IsName(err, "unknown error") && strings.Contains(strings.ToLower(err.Error()), "not installed") {
		return fmt.Errorf("wda launch %q (%s): %v: %w", app, bundle, err, device.ErrAppNotFound)
	}
	return err
}

func bundleOf(app string) string {
	app = strings.TrimSpace(app)
	if b := apps.Bundle(app); b != "" {
		return b
	}
	if apps.LooksLikePackage(app) {
		return app
	}
	return ""
}

// StopApp terminates an app (device.AppStopper).
func (d *Device) StopApp(ctx context.Context, app string) error {
	bundle := bundleOf(app)
	if bundle == "" {
		return fmt.Errorf("wda stop %q: %w", app, device.ErrAppNotFound)
	}
	return d.c.sessionCall(ctx, http.MethodPost, "/wda/apps/terminate", map[string]any{"bundleId": bundle}, nil)
}

// Capture takes a screenshot (pixels).
func (d *Device) Capture(ctx context.Context) (frame.Frame, error) {
	var b64 string
	if err := d.c.sessionCall(ctx, http.MethodGet, "/screenshot", nil, &b64); err != nil {
		return frame.Frame{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return frame.Frame{}, fmt.Errorf("wda screenshot: not base64: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return frame.Frame{}, fmt.Errorf("wda screenshot: not a PNG: %v", err)
	}
	return frame.New(raw, cfg.Width, cfg.Height, d.now()), nil
}

// Locale is the iPhone's locale (WDA's /wda/device/info), as a BCP 47 tag.
func (d *Device) Locale(ctx context.Context) (string, error) {
	var v struct {
		CurrentLocale string `json:"currentLocale"`
	}
	if err := d.c.sessionCall(ctx, http.MethodGet, "/wda/device/info", nil, &v); err != nil {
		return "", err
	}
	return strings.ReplaceAll(v.CurrentLocale, "_", "-"), nil
}

// AppVersion: WDA does not tell an app's version.
func (d *Device) AppVersion(ctx context.Context, pkg string) (string, int64, error) {
	return "", 0, fmt.Errorf("wda: an app's version is not available through WebDriverAgent: %w", device.ErrUnsupported)
}

// OSVersion is the iOS version (/status).
func (d *Device) OSVersion(ctx context.Context) (string, error) {
	st, err := d.c.Status(ctx)
	return st.OS.Version, err
}

// ScreenPoints is the screen's size in points.
func (d *Device) ScreenPoints() (w, h int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.width, d.height
}
