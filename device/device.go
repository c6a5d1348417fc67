// Package device defines what phonepilot needs from a phone: observe the
// Scene and act on it. Drivers (device/adb, device/sim, device/wda)
// implement it; the optional capabilities some have (facts, stopping an
// app, the simulator's state, a change counter, ...) are interfaces here,
// found by type assertion.
package device

import (
	"context"
	"errors"
	"time"

	"phonepilot/scene"
)

// Device is a phone that can be observed and driven. Every method honours
// ctx (deadline and cancellation).
type Device interface {
	// Scene observes the current screen.
	Scene(ctx context.Context) (*scene.Scene, error)
	// Tap taps the point.
	Tap(ctx context.Context, x, y int) error
	// LongPress presses and holds the point for d.
	LongPress(ctx context.Context, x, y int, d time.Duration) error
	// Swipe drags from (x1,y1) to (x2,y2) over d.
	Swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error
	// TypeText replaces the content of the focused editable field with text
	// (any Unicode). An empty text clears the field.
	TypeText(ctx context.Context, text string) error
	// Key sends a key event.
	Key(ctx context.Context, k Key) error
	// LaunchApp starts an app by package name or by the name a user knows it by.
	LaunchApp(ctx context.Context, app string) error
}

// Key is a key event by name, as the press_key tool names it.
type Key string

// The keys the tools offer.
const (
	KeyBack      Key = "back"
	KeyHome      Key = "home"
	KeyEnter     Key = "enter"
	KeyAppSwitch Key = "app_switch"
	KeyDelete    Key = "delete"
)

// Keys lists every Key in the order the press_key tool documents them.
var Keys = []Key{KeyBack, KeyHome, KeyEnter, KeyAppSwitch, KeyDelete}

// KeysDeclarer is implemented by devices that lack some of Keys (an iPhone
// has no back or app-switch key): it lists the ones the device has, and
// planners offer only those.
type KeysDeclarer interface {
	Keys() []Key
}

// KeysOf is the keys d has: what it declares, else every Key (nil d too).
func KeysOf(d Device) []Key {
	if kd, ok := d.(KeysDeclarer); ok {
		return kd.Keys()
	}
	return Keys
}

// The optional capabilities below are what consumers need beyond Device.
// A driver implements those it can; a consumer finds one by type assertion
// on the Device it holds (as database/sql finds a driver's optional
// interfaces) and does without when it is absent. No package declares its
// own copy, and no code switches on a concrete driver type.

// StateReporter is implemented by devices that can report their own state as
// JSON (the simulator). Benchmarks judge success on it.
type StateReporter interface {
	State(ctx context.Context) ([]byte, error)
}

// Facts is implemented by devices that can say what they run: their locale
// and the installed version of an app (device/sim, device/adb). The task
// service records them when a task ends; a flow's replay compares them with
// the device the flow was recorded on.
type Facts interface {
	// Locale is the device's locale as a BCP 47 tag ("en-US").
	Locale(ctx context.Context) (string, error)
	// AppVersion is the installed versionName and versionCode of pkg; the
	// error wraps ErrAppNotFound when pkg is not installed.
	AppVersion(ctx context.Context, pkg string) (name string, code int64, err error)
}

// AppStopper is implemented by devices that can stop an app (Android's
// force-stop: its process ends, its next launch starts fresh). A farm
// worker stops the last task's app before the next task; launch_app's
// stop (a flow's first step) stops the app before launching it. app is a
// package or any name LaunchApp takes.
type AppStopper interface {
	StopApp(ctx context.Context, app string) error
}

// PackageLister is implemented by devices that can list their installed
// packages (adb's `pm list packages`, the simulator): the apps a goal names
// are checked against them before the first action.
type PackageLister interface {
	Packages(ctx context.Context) ([]string, error)
}

// Sentinel errors a driver wraps (with %w) so callers can tell them apart.
var (
	// ErrDisconnected: the phone is gone (unplugged, adb lost it, simulator
	// stopped). A task fails on it; retrying does not help.
	ErrDisconnected = errors.New("device disconnected")
	// ErrUnsupported: the phone cannot do this (for example non-ASCII text
	// without ADB Keyboard). The message says what to install or change.
	ErrUnsupported error = &permanentError{"not supported by this device"}
	// ErrAppNotFound: no installed app matches the name or package.
	ErrAppNotFound error = &permanentError{"app not found"}
	// ErrNoFocus: text was sent while no editable field had focus.
	ErrNoFocus = errors.New("no focused editable field")
)

// permanentError is a sentinel that says, where it is produced, that
// another attempt of the same input cannot succeed (an app that is not
// installed stays missing): the Executor checks for a Permanent method with
// errors.As instead of keeping a list of such errors.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// Permanent reports that retrying cannot help.
func (e *permanentError) Permanent() bool { return true }

// ChangeCounter is an optional ability (found by type assertion): a cheap
// count of the screen's changes, read without reading the tree. The
// on-device helper counts the accessibility events it sees; settling can
// then wait for the screen to stop changing and read the tree once instead
// of reading it again and again. A device whose path has no counter at the
// moment (the helper fell back to uiautomator) returns ErrUnsupported.
type ChangeCounter interface {
	ScreenChanges(ctx context.Context) (ScreenChanges, error)
}

// ToastReader is an optional ability (found by type assertion): the toasts
// the phone's system is showing or about to show, read without reading the
// tree (`dumpsys notification`'s toast queue, where Android keeps each
// toast from its app's show() until its time is up). A press whose only
// answer is a toast ("Added to cart") leaves no other trace: where a read
// of the tree comes back after the toast is gone, this is the evidence that
// tells a press that landed from one that was lost.
type ToastReader interface {
	Toasts(ctx context.Context) ([]Toast, error)
}

// ToastWatcher is an optional ability (found by type assertion): the
// toasts the phone announced, each as it showed, since a mark. Android
// announces a toast with an accessibility event when it shows it (the
// on-device helper hears them); a press answered only by a toast ("Added
// to cart") is told from one that was lost by a toast announced after the
// press, even while an older toast of the same text is still on the
// screen. A device whose path cannot hear them at the moment (no helper, a
// helper too old, fallen back to uiautomator) returns ErrUnsupported.
type ToastWatcher interface {
	// ToastsSince returns the mark now and the toasts announced after
	// mark, oldest first (the last few the phone keeps). The zero mark
	// is before every toast: to take a mark, ask with it and keep the
	// mark returned.
	ToastsSince(ctx context.Context, mark ToastMark) (ToastMark, []Toast, error)
}

// ToastMark is a point in a ToastWatcher's record of toasts.
type ToastMark struct {
	// Seq is the number of the last toast announced before the mark.
	Seq uint64
	// Source is the record it counts in (the helper process): a mark of
	// another source is before every toast of this one (a helper
	// restarted after the mark heard all its toasts after it).
	Source string
}

// In is the mark's Seq in the record of source: 0, before every toast,
// when the mark counts in another.
func (m ToastMark) In(source string) uint64 {
	if m.Source != source {
		return 0
	}
	return m.Seq
}

// Toast is one toast in the system's queue, or announced.
type Toast struct {
	// Package is the app that showed it.
	Package string
	// Text is what it says ("" for a toast with a custom view).
	Text string
}

// ScreenChanges is one reading of a ChangeCounter.
type ScreenChanges struct {
	// Count grows with every change of what a read of the screen shows
	// (and with every frame a transition draws).
	Count uint64
	// Since is how long ago the last change was, as the phone measures
	// it (no clock is shared with the host).
	Since time.Duration
}
