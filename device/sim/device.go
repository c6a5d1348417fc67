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
// phone's would.
type Device struct{ p *Phone }

var (
	_ device.Device        = (*Device)(nil)
	_ device.StateReporter = (*Device)(nil)
	_ frame.Camera         = (*Device)(nil)
)

// Device returns the in-process driver of this phone.
func (p *Phone) Device() *Device { return &Device{p: p} }

// Phone returns the simulated phone behind the driver.
func (d *Device) Phone() *Phone { return d.p }

// Scene dumps the screen (waiting the profile's dump latency on the clock)
// and parses it. While the screen animates it may fail with
// perception.ErrIdleState, as uiautomator does.
func (d *Device) Scene(ctx context.Context) (*scene.Scene, error) {
	if err := ctxErr(ctx, "scene"); err != nil {
		return nil, err
	}
	p := d.p
	p.mu.Lock()
	delay := p.dumpDelay()
	start := p.now()
	p.mu.Unlock()
	if err := p.cfg.Clock.Sleep(ctx, delay); err != nil {
		return nil, fmt.Errorf("sim scene: %w", err)
	}
	p.mu.Lock()
	xml, err := p.dumpSince(start, p.now(), false)
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
	if err := ctxErr(ctx, "tap"); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.tapLocked(x, y)
	return nil
}

// LongPress presses and holds the point.
func (d *Device) LongPress(ctx context.Context, x, y int, dur time.Duration) error {
	if err := ctxErr(ctx, "long press"); err != nil {
		return err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if dur < 500*time.Millisecond {
		dur = 500 * time.Millisecond
	}
	d.p.swipeLocked(x, y, x, y, dur)
	return nil
}

// Swipe drags from one point to another; on a scrollable it scrolls.
func (d *Device) Swipe(ctx context.Context, x1, y1, x2, y2 int, dur time.Duration) error {
	if err := ctxErr(ctx, "swipe"); err != nil {
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
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	d.p.keyLocked(code)
	return nil
}

// LaunchApp starts an app by package or label (either locale).
func (d *Device) LaunchApp(ctx context.Context, app string) error {
	if err := ctxErr(ctx, "launch"); err != nil {
		return err
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.secureLocked() {
		return frame.Frame{}, fmt.Errorf("sim capture: %w", frame.ErrSecure)
	}
	png, _ := p.screenshotLocked()
	return frame.New(png, p.cfg.Width, p.cfg.Height, p.now()), nil
}

// State reports the phone's state JSON.
func (d *Device) State(ctx context.Context) ([]byte, error) {
	if err := ctxErr(ctx, "state"); err != nil {
		return nil, err
	}
	return d.p.State()
}
