package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device"
	"phonepilot/device/adb"
	"phonepilot/device/sim"
	"phonepilot/perception/frame"
)

// deviceOptions are the flags and environment that shape openDevice.
type deviceOptions struct {
	// ADBServer is --adb-server; empty falls back to ADB_SERVER_SOCKET,
	// then to 127.0.0.1:5037.
	ADBServer string
	// The simulated phone (--device sim).
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

// openedDevice is a phone ready to drive.
type openedDevice struct {
	Name   string // "sim" or "adb:SERIAL"
	Device device.Device
	Camera frame.Camera         // screenshots; nil when the driver has none
	State  device.StateReporter // the simulator's state; nil for real phones
	Close  func() error         // always non-nil
}

// errDeviceSpec marks a --device value that is not one of the known forms
// (callers exit with status 2 on it).
var errDeviceSpec = errors.New("bad --device")

// deviceSpecForms is shown whenever a --device value is wrong.
const deviceSpecForms = "use sim (the built-in simulated phone), adb (the only phone attached through adb), adb:SERIAL (see `phonepilot devices`) or adb:HOST:PORT (a Wi-Fi phone; connected on demand)"

// addDeviceFlags registers --device and the options openDevice reads, for
// commands that drive a phone.
func addDeviceFlags(cmd *cobra.Command, spec *string, o *deviceOptions) {
	f := cmd.Flags()
	f.StringVar(spec, "device", "sim", "phone to drive: sim, adb, adb:SERIAL or adb:HOST:PORT")
	f.StringVar(&o.ADBServer, "adb-server", "", "adb server address host:port (default: $ADB_SERVER_SOCKET, else 127.0.0.1:5037)")
	f.StringVar(&o.SimLocale, "sim-locale", "en", "simulated phone's language: en or zh")
	f.StringVar(&o.SimProfile, "sim-profile", "", "simulated phone's profile: \"\", realistic, slow, flaky, injected (screens that try to steer an agent) or hostile (realistic plus interruptions, docs/sim.md)")
	f.Int64Var(&o.SimSeed, "sim-seed", 1, "seed for the simulated phone's randomness")
	f.IntVar(&o.SimWidth, "sim-width", 0, "simulated screen width in pixels (default 1080)")
	f.IntVar(&o.SimHeight, "sim-height", 0, "simulated screen height in pixels (default 2400)")
	f.BoolVar(&o.SimNoADBKeyboard, "sim-no-adb-keyboard", false, "simulate a phone without the ADB Keyboard IME")
	f.StringVar(&o.Observer, "observer", "", "how the phone is read and driven: uiautomator (one-shot dumps and input commands; the default) or helper (the on-device helper); on the simulator, the path whose costs it charges (docs/sim.md)")
	f.StringVar(&o.SimLayout, "sim-layout", "", "simulated apps' layout: \"\" or changed (Taobao after a redesign: moved, renamed, reordered elements; for flows to heal against)")
}

// adbServerAddress resolves --adb-server, then ADB_SERVER_SOCKET.
func adbServerAddress(flag string) (string, error) {
	s := flag
	if s == "" {
		s = os.Getenv("ADB_SERVER_SOCKET")
	}
	a, err := adb.ParseServerAddress(s)
	if err != nil {
		if flag != "" {
			return "", fmt.Errorf("--adb-server: %w", err)
		}
		return "", fmt.Errorf("ADB_SERVER_SOCKET: %w", err)
	}
	return a, nil
}

// openDevice opens the phone spec names: "sim", "adb" or "adb:SERIAL".
func openDevice(ctx context.Context, spec string, o deviceOptions) (*openedDevice, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "sim":
		obs, err := sim.ParseObserver(o.Observer)
		if err != nil || obs == sim.ObserverPortal || obs == sim.ObserverOracle {
			return nil, fmt.Errorf("%w: --observer %q: use uiautomator or helper", errDeviceSpec, o.Observer)
		}
		p, err := sim.New(sim.Config{
			Observer: obs,
			Width:    o.SimWidth, Height: o.SimHeight, Locale: o.SimLocale, Profile: o.SimProfile,
			Seed: o.SimSeed, NoADBKeyboard: o.SimNoADBKeyboard, Layout: o.SimLayout, Logger: log,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errDeviceSpec, err)
		}
		return simOpened(p), nil
	case spec == "adb" || strings.HasPrefix(spec, "adb:"):
		serial := strings.TrimPrefix(strings.TrimPrefix(spec, "adb"), ":")
		if spec != "adb" && serial == "" {
			return nil, fmt.Errorf("%w %q: no serial after \"adb:\"; %s", errDeviceSpec, spec, deviceSpecForms)
		}
		addr, err := adbServerAddress(o.ADBServer)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errDeviceSpec, err)
		}
		cfg := adb.Config{Server: addr, Serial: serial, Logger: log}
		var d *adb.Device
		err = withDefaultADBServer(ctx, o.ADBServer, log, func() (err error) {
			d, err = adb.Open(ctx, cfg)
			return err
		})
		if err != nil {
			return nil, err
		}
		return &openedDevice{Name: "adb:" + d.Serial(), Device: d, Camera: d, Close: d.Close}, nil
	case spec == "":
		return nil, fmt.Errorf("%w: no device given; %s", errDeviceSpec, deviceSpecForms)
	}
	return nil, fmt.Errorf("%w %q: %s", errDeviceSpec, spec, deviceSpecForms)
}

// simOpened wraps a simulated phone's in-process driver.
func simOpened(p *sim.Phone) *openedDevice {
	dev := p.Device()
	od := &openedDevice{Name: "sim", Device: dev, Close: func() error { return nil }}
	if c, ok := any(dev).(frame.Camera); ok {
		od.Camera = c
	}
	if s, ok := any(dev).(device.StateReporter); ok {
		od.State = s
	}
	return od
}

// withDefaultADBServer runs try; when it finds no adb server and the user
// named none (no --adb-server, no ADB_SERVER_SOCKET), it starts the default
// server once, as the adb tool itself does, and tries again.
func withDefaultADBServer(ctx context.Context, flag string, log *slog.Logger, try func() error) error {
	err := try()
	if !errors.Is(err, adb.ErrServerUnavailable) || flag != "" || os.Getenv("ADB_SERVER_SOCKET") != "" {
		return err
	}
	if serr := startADBServer(ctx, log); serr != nil {
		return fmt.Errorf("%w (and starting it failed: %v)", err, serr)
	}
	return try()
}

// startADBServer runs `adb start-server` when adb is installed.
func startADBServer(ctx context.Context, log *slog.Logger) error {
	path, err := exec.LookPath("adb")
	if err != nil {
		return errors.New("adb is not installed (Debian/Ubuntu: apt install adb)")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	log.Info("starting the adb server", "adb", path)
	out, err := exec.CommandContext(ctx, path, "start-server").CombinedOutput()
	if err != nil {
		return fmt.Errorf("adb start-server: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
