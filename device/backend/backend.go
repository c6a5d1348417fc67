// Package backend is the one table of device backends: which device names
// each backend owns ("sim", "sim:NAME", "adb", "adb:SERIAL",
// "wda:http://HOST:PORT", "ios:UDID"), how a name is
// checked, how a device is opened (with its camera and its close), how the
// attached devices are listed with their labels, and what a task's snapshot
// records of the backend's settings. The commands, the server, the farm
// worker and the task snapshot loop over Table; nothing outside this
// package switches on a device name's prefix or on a concrete driver type
// (internal/archtest's TestNoDeviceNameSwitches says so).
//
// A new backend is its own package (the driver) plus one entry in Table
// (a file here that adapts the driver, and its line in Table).
package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"phonepilot/device"
	"phonepilot/perception/frame"
)

// Table is every backend, in the order help text lists them.
var Table = []*Backend{adbBackend, simBackend, wdaBackend, iosBackend}

// Backend is one kind of phone. It owns the device name Kind and the names
// Kind:REST.
type Backend struct {
	// Kind is the backend's name and the first part of its device names.
	Kind string
	// Forms are the device names the backend takes, with what each means,
	// for help text and errors.
	Forms []Form
	// Kept: one phone per name lives as long as the process that opened it
	// (the simulator: a second task on sim:a sees the screen the first
	// left). Other backends' devices are opened per use and closed after.
	Kept bool
	// Named: a farm worker offers Kind:REST names only (a bare "sim" would
	// be a different phone on every worker).
	Named bool
	// Check says whether rest (what follows "Kind:"; "" for the bare Kind)
	// is well-formed; the error says what is wrong.
	Check func(name, rest string) error
	// Open opens the device name names (its Kind:REST or the bare Kind).
	Open func(ctx context.Context, name, rest string, o Options) (*Opened, error)
	// List lists the devices attached now (nil for Kept backends: their
	// phones are the ones a Set keeps).
	List func(ctx context.Context, o Options) ([]Listed, error)
	// Probe checks one named device of a backend that cannot list its
	// devices (List nil): its state ("device" when it answers).
	Probe func(ctx context.Context, name, rest string, o Options) (Listed, error)
	// Labels reads a device's labels (kind, model, android, screen,
	// locale). dev is the opened device for Kept backends, nil for the
	// others (the backend asks the phone l names itself).
	Labels func(ctx context.Context, o Options, l Listed, dev device.Device) map[string]string
	// Settings is what a task's snapshot records of o under Kind (nil:
	// nothing).
	Settings func(o Options) any
}

// Form is one form of device name ("adb:SERIAL") and what it means.
type Form struct {
	Name, Means string
}

// Options are the flags and environment that shape opening a device. A
// backend reads only its own fields.
type Options struct {
	// ADBServer is --adb-server; empty falls back to ADB_SERVER_SOCKET,
	// then to 127.0.0.1:5037.
	ADBServer string
	// The simulated phone.
	SimLocale, SimProfile string
	SimSeed               int64
	SimWidth, SimHeight   int
	SimNoADBKeyboard      bool
	SimLayout             string // --sim-layout: "" or changed (device/sim/layout.go)
	// Observer is --observer: how the phone is read and driven. On the
	// simulator it is the path whose costs it charges (docs/sim.md,
	// "Observation paths"): uiautomator (default) or helper.
	Observer string
	Logger   *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Opened is a phone ready to drive.
type Opened struct {
	Name   string // "sim", "sim:NAME" or "adb:SERIAL"
	Kind   string // its backend's Kind
	Device device.Device
	Camera frame.Camera         // screenshots; nil when the driver has none
	State  device.StateReporter // the device's own state; nil when it reports none
	Close  func() error         // always non-nil
}

// opened fills an Opened from what dev is (its camera and state found by
// type assertion).
func opened(name, kind string, dev device.Device, closeFn func() error) *Opened {
	od := &Opened{Name: name, Kind: kind, Device: dev, Close: closeFn}
	if c, ok := dev.(frame.Camera); ok {
		od.Camera = c
	}
	if s, ok := dev.(device.StateReporter); ok {
		od.State = s
	}
	if od.Close == nil {
		od.Close = func() error { return nil }
	}
	return od
}

// Listed is one device a backend sees.
type Listed struct {
	Name  string // its device name ("adb:SERIAL")
	Kind  string
	State string            // as the driver reports it ("device", "offline", "unauthorized")
	Model string            // as the driver reports it, when it does
	Extra map[string]string // driver-specific details a Labels may read
}

// ErrName marks a device name that is not one of the known forms (commands
// exit with status 2 on it).
var ErrName = errors.New("bad device name")

// Owner is the backend that owns name and what follows "Kind:" in it ("" for
// the bare Kind); ok is false when no backend owns it.
func Owner(name string) (b *Backend, rest string, ok bool) {
	for _, b := range Table {
		if name == b.Kind {
			return b, "", true
		}
		if r, found := strings.CutPrefix(name, b.Kind+":"); found {
			return b, r, true
		}
	}
	return nil, "", false
}

// FormsText lists every backend's forms with their meanings: "sim (the
// built-in simulated phone), …, adb:SERIAL (…) or adb:HOST:PORT (…)".
func FormsText() string {
	var parts []string
	for _, b := range Table {
		for _, f := range b.Forms {
			parts = append(parts, f.Name+" ("+f.Means+")")
		}
	}
	return joinOr(parts)
}

// Names lists every backend's forms: "sim, sim:NAME, adb or adb:SERIAL".
// keep, when non-nil, picks the forms to list.
func Names(keep func(*Backend, Form) bool) string {
	var parts []string
	for _, b := range Table {
		for _, f := range b.Forms {
			if keep == nil || keep(b, f) {
				parts = append(parts, f.Name)
			}
		}
	}
	return joinOr(parts)
}

func joinOr(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// Check says whether name is a device name some backend takes; the error
// wraps ErrName and says what is wrong.
func Check(name string) error {
	b, rest, ok := Owner(name)
	if !ok {
		if name == "" {
			return fmt.Errorf("%w: no device given; use %s", ErrName, FormsText())
		}
		return fmt.Errorf("%w %q: use %s", ErrName, name, FormsText())
	}
	if err := b.Check(name, rest); err != nil {
		return fmt.Errorf("%w %q: %w; use %s", ErrName, name, err, FormsText())
	}
	return nil
}

// Open opens the device name names, once: a Kept backend's phone too is
// new (a Set keeps them across uses). The error wraps ErrName for a name
// no backend takes or settings a backend refuses.
func Open(ctx context.Context, name string, o Options) (*Opened, error) {
	name = strings.TrimSpace(name)
	if err := Check(name); err != nil {
		return nil, err
	}
	b, rest, _ := Owner(name)
	return b.Open(ctx, name, rest, o)
}

// Settings is what a task's snapshot records of the backend that owns
// name: its Kind and its settings (nil when it records none or no backend
// owns name).
func Settings(name string, o Options) (kind string, settings any) {
	b, _, ok := Owner(name)
	if !ok || b.Settings == nil {
		return "", nil
	}
	return b.Kind, b.Settings(o)
}
