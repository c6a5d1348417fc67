package sim

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"phonepilot/device"
	"phonepilot/perception"
	"phonepilot/perception/frame"
	"phonepilot/scene"
)

// Device drives the phone in process: what `--device sim` uses. Scene goes
// through the uiautomator dump and perception.Parse exactly as a real
// phone's would. Each read, input and screenshot costs what its
// observation path charges (paths.go).
type Device struct {
	p   *Phone
	obs Observer
}

var (
	_ device.Device        = (*Device)(nil)
	_ device.StateReporter = (*Device)(nil)
	_ device.ChangeCounter = (*Device)(nil)
	_ device.ToastWatcher  = (*Device)(nil)
	_ device.Facts         = (*Device)(nil)
	_ device.AppStopper    = (*Device)(nil)
	_ frame.Camera         = (*Device)(nil)
	_ device.PackageLister = (*Device)(nil)
)

// Device returns the in-process driver of this phone, on Config.Observer's
// path.
func (p *Phone) Device() *Device { return &Device{p: p, obs: p.cfg.Observer} }

// DeviceVia returns an in-process driver of this phone on path o (several
// may drive one phone: a benchmark's peer reads the way that agent does).
func (p *Phone) DeviceVia(o Observer) *Device {
	if o == "" {
		o = ObserverUIAutomator
	}
	return &Device{p: p, obs: o}
}

// Observer is the path this driver reads and drives the phone by.
func (d *Device) Observer() Observer { return d.obs }

// Packages lists the installed apps' packages.
func (d *Device) Packages(ctx context.Context) ([]string, error) {
	if err := ctxErr(ctx, "packages"); err != nil {
		return nil, err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	var out []string
	for _, a := range d.p.installed() {
		out = append(out, a.Package)
	}
	return out, nil
}

// Phone returns the simulated phone behind the driver.
func (d *Device) Phone() *Phone { return d.p }

// Scene reads the UI tree (waiting the path's read cost on the clock) and
// parses it. On the uiautomator path, while the screen animates, it may
// fail with perception.ErrIdleState, as uiautomator does; on any path with
// perception.ErrNullRoot while a window is created.
func (d *Device) Scene(ctx context.Context) (*scene.Scene, error) {
	if err := ctxErr(ctx, "scene"); err != nil {
		return nil, err
	}
	p := d.p
	p.mu.Lock()
	delay := p.cost(d.obs, chargeTree)
	start := p.now()
	p.mu.Unlock()
	if err := p.cfg.Clock.Sleep(ctx, delay); err != nil {
		return nil, fmt.Errorf("sim scene: %w", err)
	}
	p.mu.Lock()
	var (
		xml []byte
		err error
	)
	if costs[d.obs].free {
		xml, err = p.dumpAt(p.now(), false)
	} else {
		xml, err = p.readSince(start, p.now(), false, costs[d.obs].idleWait)
	}
	pkg, act := p.focusedWindow()
	secure := p.secureLocked()
	p.mu.Unlock()
	switch {
	case errors.Is(err, errIdleState):
		return nil, fmt.Errorf("sim scene: %w", perception.ErrIdleState)
	case errors.Is(err, errNullRoot):
		return nil, fmt.Errorf("sim scene: %w", perception.ErrNullRoot)
	}
	if err != nil {
		return nil, fmt.Errorf("sim scene: %w", err)
	}
	sc, err := perception.Parse(xml, perception.Options{Width: p.cfg.Width, Height: p.cfg.Height})
	if err != nil {
		return nil, fmt.Errorf("sim scene: %w", err)
	}
	sc.Package, sc.Activity, sc.Secure = pkg, act, secure
	return sc, nil
}

// Tap taps the point.
func (d *Device) Tap(ctx context.Context, x, y int) error {
	if err := d.input(ctx, "tap", 0); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.tapLocked(x, y)
	return nil
}

// LongPress presses and holds the point.
func (d *Device) LongPress(ctx context.Context, x, y int, dur time.Duration) error {
	if dur < 500*time.Millisecond {
		dur = 500 * time.Millisecond
	}
	if err := d.input(ctx, "long press", dur); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.swipeLocked(x, y, x, y, dur)
	return nil
}

// Swipe drags from one point to another; on a scrollable it scrolls.
func (d *Device) Swipe(ctx context.Context, x1, y1, x2, y2 int, dur time.Duration) error {
	if err := d.input(ctx, "swipe", dur); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.swipeLocked(x1, y1, x2, y2, dur)
	return nil
}

// TypeText replaces the focused field's content. Without ADB Keyboard only
// ASCII can be typed, as through adb.
func (d *Device) TypeText(ctx context.Context, text string) error {
	if err := ctxErr(ctx, "type text"); err != nil {
		return err
	}
	if d.p.cfg.NoADBKeyboard {
		for _, r := range text {
			if r >= utf8.RuneSelf {
				return fmt.Errorf("sim type text: non-ASCII text needs the ADB Keyboard IME (com.android.adbkeyboard): %w", device.ErrUnsupported)
			}
		}
	}
	if err := d.input(ctx, "type text", 0); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if !d.p.setTextLocked(text) {
		return fmt.Errorf("sim type text: %w", device.ErrNoFocus)
	}
	return nil
}

var keyCodes = map[device.Key]int{
	device.KeyBack: keyBack, device.KeyHome: keyHome, device.KeyEnter: keyEnter,
	device.KeyAppSwitch: keyAppSwitch, device.KeyDelete: keyDel,
}

// Key sends a key event.
func (d *Device) Key(ctx context.Context, k device.Key) error {
	if err := ctxErr(ctx, "key"); err != nil {
		return err
	}
	code, ok := keyCodes[k]
	if !ok {
		return fmt.Errorf("sim key: unknown key %q: %w", k, device.ErrUnsupported)
	}
	if err := d.input(ctx, "key", 0); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.keyLocked(code)
	return nil
}

// LaunchApp starts an app by package or label (either locale), charged
// what device/adb's launch costs on the path: `monkey` (a Java process) on
// uiautomator's and the portal's, the helper's own start through the
// activity manager on the helper's (paths.go).
func (d *Device) LaunchApp(ctx context.Context, app string) error {
	if err := ctxErr(ctx, "launch"); err != nil {
		return err
	}
	if err := d.p.charge(ctx, d.obs, chargeLaunch); err != nil {
		return fmt.Errorf("sim launch: %w", err)
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if err := d.p.launchLocked(app); err != nil {
		return fmt.Errorf("sim %w", err)
	}
	return nil
}

// Capture takes a screenshot. A secure screen (payment) gives frame.ErrSecure.
func (d *Device) Capture(ctx context.Context) (frame.Frame, error) {
	if err := ctxErr(ctx, "capture"); err != nil {
		return frame.Frame{}, err
	}
	p := d.p
	if err := p.charge(ctx, d.obs, chargeFrame); err != nil {
		return frame.Frame{}, fmt.Errorf("sim capture: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.secureLocked() {
		return frame.Frame{}, fmt.Errorf("sim capture: %w", frame.ErrSecure)
	}
	// The framebuffer as it is, like raw screencap: nothing is encoded
	// for a consumer that scales it down anyway.
	return frame.NewRGBA(p.drawLocked(), p.now()), nil
}

// State reports the phone's state JSON.
func (d *Device) State(ctx context.Context) ([]byte, error) {
	if err := ctxErr(ctx, "state"); err != nil {
		return nil, err
	}
	return d.p.State()
}

// input charges one input on the driver's path, plus the gesture's own
// length (a swipe or a long press lasts that long on a phone too).
func (d *Device) input(ctx context.Context, what string, gesture time.Duration) error {
	if err := ctxErr(ctx, what); err != nil {
		return err
	}
	if err := d.p.charge(ctx, d.obs, chargeInput); err != nil {
		return fmt.Errorf("sim %s: %w", what, err)
	}
	if d.p.prof.timed && gesture > 0 {
		if err := d.p.cfg.Clock.Sleep(ctx, gesture); err != nil {
			return fmt.Errorf("sim %s: %w", what, err)
		}
	}
	return nil
}

// ScreenChanges reads the change counter the on-device helper keeps (the
// accessibility events it saw), at its cost; on a path without one it is
// device.ErrUnsupported.
func (d *Device) ScreenChanges(ctx context.Context) (device.ScreenChanges, error) {
	if err := ctxErr(ctx, "screen changes"); err != nil {
		return device.ScreenChanges{}, err
	}
	if costs[d.obs].counter == (span{}) {
		return device.ScreenChanges{}, fmt.Errorf("sim screen changes: the %s path counts no changes: %w", d.obs, device.ErrUnsupported)
	}
	if err := d.p.charge(ctx, d.obs, chargeCounter); err != nil {
		return device.ScreenChanges{}, fmt.Errorf("sim screen changes: %w", err)
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	n, since := d.p.screenChanges(d.p.now())
	return device.ScreenChanges{Count: n, Since: since}, nil
}

// Toasts reads the system's toast queue as `dumpsys notification` shows it
// (the toast on the screen, with the app that showed it), at the cost of
// one shell command on the driver's path; device.ToastReader.
func (d *Device) Toasts(ctx context.Context) ([]device.Toast, error) {
	if err := ctxErr(ctx, "toasts"); err != nil {
		return nil, err
	}
	if err := d.p.charge(ctx, d.obs, chargeInput); err != nil {
		return nil, fmt.Errorf("sim toasts: %w", err)
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	return d.p.toastsLocked(d.p.now()), nil
}

// toastsLocked is the toast queue at now.
func (p *Phone) toastsLocked(now time.Time) []device.Toast {
	p.settle(now)
	if p.toast.text == "" {
		return nil
	}
	out := []device.Toast{{Package: p.toast.pkg, Text: p.toast.text}}
	for _, t := range p.toastQ {
		out = append(out, device.Toast{Package: t.pkg, Text: t.text})
	}
	return out
}
