// Package fake is a hand-written device.Device for tests: it shows scripted
// Scenes, records every call with its arguments in order, fails on demand,
// and keeps a one-field model of typed text. It never touches a phone.
//
// Scripting: with New(scenes...), Scene returns scenes[n] where n is the
// number of successful actions (everything but Scene) so far, staying on the
// last one; so the screen changes when, and only when, something is done to
// it. With NewFunc, a function of the call history decides.
package fake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"phonepilot/device"
	"phonepilot/scene"
)

// Method names a Device method, for Calls and error injection.
type Method string

// The methods of device.Device.
const (
	MethodScene     Method = "Scene"
	MethodTap       Method = "Tap"
	MethodLongPress Method = "LongPress"
	MethodSwipe     Method = "Swipe"
	MethodTypeText  Method = "TypeText"
	MethodKey       Method = "Key"
	MethodLaunchApp Method = "LaunchApp"
	// MethodStopApp is device.AppStopper's.
	MethodStopApp Method = "StopApp"
)

// Call is one recorded method call. Only the fields of its Method are set.
type Call struct {
	Method   Method
	X, Y     int           // Tap, LongPress; Swipe start
	X2, Y2   int           // Swipe end
	Duration time.Duration // LongPress, Swipe
	Text     string        // TypeText
	Key      device.Key    // Key
	App      string        // LaunchApp, StopApp
	Err      error         // what the call returned
}

// String renders the call compactly, e.g. Tap(540,1200) or TypeText("mac mini").
func (c Call) String() string {
	switch c.Method {
	case MethodTap:
		return fmt.Sprintf("Tap(%d,%d)", c.X, c.Y)
	case MethodLongPress:
		return fmt.Sprintf("LongPress(%d,%d,%s)", c.X, c.Y, c.Duration)
	case MethodSwipe:
		return fmt.Sprintf("Swipe(%d,%d→%d,%d,%s)", c.X, c.Y, c.X2, c.Y2, c.Duration)
	case MethodTypeText:
		return fmt.Sprintf("TypeText(%q)", c.Text)
	case MethodKey:
		return fmt.Sprintf("Key(%s)", c.Key)
	case MethodLaunchApp:
		return fmt.Sprintf("LaunchApp(%q)", c.App)
	case MethodStopApp:
		return fmt.Sprintf("StopApp(%q)", c.App)
	}
	return string(c.Method) + "()"
}

// ErrNoScene is returned by Scene when nothing was scripted.
var ErrNoScene = errors.New("fake device: no scene scripted")

// Device is the fake phone. The zero value works (no scenes); it is safe for
// concurrent use.
type Device struct {
	mu        sync.Mutex
	scenes    []*scene.Scene
	sceneFunc func(history []Call) (*scene.Scene, error)
	calls     []Call
	actions   int
	fail      map[Method][]error // queued one-shot errors, consumed first
	failAll   map[Method]error   // every call fails while set
	field     string
	submitted []string
}

var _ device.Device = (*Device)(nil)

// New returns a Device that shows scenes in order, one step per successful
// action, staying on the last.
func New(scenes ...*scene.Scene) *Device {
	return &Device{scenes: scenes}
}

// NewFunc returns a Device whose Scene is f of the calls so far (the
// current Scene call not included).
func NewFunc(f func(history []Call) (*scene.Scene, error)) *Device {
	return &Device{sceneFunc: f}
}

// FailAlways makes every call of m fail with err until FailAlways(m, nil).
func (d *Device) FailAlways(m Method, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failAll == nil {
		d.failAll = map[Method]error{}
	}
	if err == nil {
		delete(d.failAll, m)
		return
	}
	d.failAll[m] = err
}

// FailNext makes the next calls of m fail, one per error given, in order;
// then m behaves normally again.
func (d *Device) FailNext(m Method, errs ...error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail == nil {
		d.fail = map[Method][]error{}
	}
	d.fail[m] = append(d.fail[m], errs...)
}

// Calls returns every call so far, in order, including failed ones.
func (d *Device) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Call(nil), d.calls...)
}

// Actions returns the calls other than Scene, in order.
func (d *Device) Actions() []Call {
	var out []Call
	for _, c := range d.Calls() {
		if c.Method != MethodScene {
			out = append(out, c)
		}
	}
	return out
}

// TypedText is what the text field holds: the last TypeText, minus one
// character per delete key since. Enter does not clear it.
func (d *Device) TypedText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.field
}

// Submitted lists the field's content at each enter key, in order.
func (d *Device) Submitted() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.submitted...)
}

// record logs c, decides its error (ctx first, then injected errors), and
// applies effect when the call succeeds. It returns the error to give back.
func (d *Device) record(ctx context.Context, c Call, effect func()) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := ctx.Err()
	if err == nil {
		if q := d.fail[c.Method]; len(q) > 0 {
			err, d.fail[c.Method] = q[0], q[1:]
		} else {
			err = d.failAll[c.Method]
		}
	}
	c.Err = err
	d.calls = append(d.calls, c)
	if err != nil {
		return err
	}
	if c.Method != MethodScene {
		d.actions++
	}
	if effect != nil {
		effect()
	}
	return nil
}

// Scene returns the scripted Scene (a copy the caller may modify).
func (d *Device) Scene(ctx context.Context) (*scene.Scene, error) {
	d.mu.Lock()
	history := append([]Call(nil), d.calls...)
	f, scenes, n := d.sceneFunc, d.scenes, d.actions
	d.mu.Unlock()
	if err := d.record(ctx, Call{Method: MethodScene}, nil); err != nil {
		return nil, err
	}
	var sc *scene.Scene
	switch {
	case f != nil:
		var err error
		if sc, err = f(history); err != nil {
			return nil, err
		}
	case len(scenes) > 0:
		sc = scenes[min(n, len(scenes)-1)]
	}
	if sc == nil {
		return nil, ErrNoScene
	}
	cp := *sc
	cp.Elements = append([]scene.Element(nil), sc.Elements...)
	return &cp, nil
}

// Tap records a tap.
func (d *Device) Tap(ctx context.Context, x, y int) error {
	return d.record(ctx, Call{Method: MethodTap, X: x, Y: y}, nil)
}

// LongPress records a long press.
func (d *Device) LongPress(ctx context.Context, x, y int, dur time.Duration) error {
	return d.record(ctx, Call{Method: MethodLongPress, X: x, Y: y, Duration: dur}, nil)
}

// Swipe records a swipe.
func (d *Device) Swipe(ctx context.Context, x1, y1, x2, y2 int, dur time.Duration) error {
	return d.record(ctx, Call{Method: MethodSwipe, X: x1, Y: y1, X2: x2, Y2: y2, Duration: dur}, nil)
}

// TypeText replaces the field's content with text.
func (d *Device) TypeText(ctx context.Context, text string) error {
	return d.record(ctx, Call{Method: MethodTypeText, Text: text}, func() { d.field = text })
}

// Key records a key; delete removes the field's last character and enter
// records a submission.
func (d *Device) Key(ctx context.Context, k device.Key) error {
	return d.record(ctx, Call{Method: MethodKey, Key: k}, func() {
		switch k {
		case device.KeyDelete:
			if _, size := utf8.DecodeLastRuneInString(d.field); size > 0 {
				d.field = d.field[:len(d.field)-size]
			}
		case device.KeyEnter:
			d.submitted = append(d.submitted, d.field)
		}
	})
}

// LaunchApp records a launch.
func (d *Device) LaunchApp(ctx context.Context, app string) error {
	return d.record(ctx, Call{Method: MethodLaunchApp, App: app}, nil)
}

// StopApp records a force-stop (device.AppStopper).
func (d *Device) StopApp(ctx context.Context, app string) error {
	return d.record(ctx, Call{Method: MethodStopApp, App: app}, nil)
}
