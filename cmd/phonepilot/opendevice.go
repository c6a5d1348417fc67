package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"phonepilot/device/backend"
)

// deviceOptions are the flags and environment that shape opening a device
// (the backend table's options).
type deviceOptions = backend.Options

// openedDevice is a phone ready to drive.
type openedDevice = backend.Opened

// errDeviceSpec marks a --device value that is not one of the known forms
// (callers exit with status 2 on it).
var errDeviceSpec = backend.ErrName

// adbServerAddress resolves --adb-server, then ADB_SERVER_SOCKET.
var adbServerAddress = backend.ADBServerAddress

// addDeviceFlags registers --device and the options openDevice reads, for
// commands that drive a phone.
func addDeviceFlags(cmd *cobra.Command, spec *string, o *deviceOptions) {
	f := cmd.Flags()
	f.StringVar(spec, "device", "sim", "phone to drive: "+backend.Names(nil))
	f.StringVar(&o.ADBServer, "adb-server", "", "adb server address host:port (default: $ADB_SERVER_SOCKET, else 127.0.0.1:5037)")
	f.StringVar(&o.SimLocale, "sim-locale", "en", "simulated phone's language: en or zh")
	f.StringVar(&o.SimProfile, "sim-profile", "", simProfileHelp("simulated phone's profile"))
	f.Int64Var(&o.SimSeed, "sim-seed", 1, "seed for the simulated phone's randomness")
	f.IntVar(&o.SimWidth, "sim-width", 0, "simulated screen width in pixels (default 1080)")
	f.IntVar(&o.SimHeight, "sim-height", 0, "simulated screen height in pixels (default 2400)")
	f.BoolVar(&o.SimNoADBKeyboard, "sim-no-adb-keyboard", false, "simulate a phone without the ADB Keyboard IME")
	f.StringVar(&o.Observer, "observer", "", "how the phone is read and driven: auto (a phone over adb: phonepilot's helper on the phone, uiautomator when it fails; the default), helper (the helper only) or uiautomator (one-shot dumps and input commands); on the simulator, the path whose costs it charges (auto: uiautomator; docs/sim.md, docs/device-helper.md)")
	f.StringVar(&o.SimLayout, "sim-layout", "", "simulated apps' layout: \"\" or changed (Taobao after a redesign: moved, renamed, reordered elements; for flows to heal against)")
}

// openDevice opens the phone spec names (a form of the backend table:
// sim, sim:NAME, adb, adb:SERIAL).
func openDevice(ctx context.Context, spec string, o deviceOptions) (*openedDevice, error) {
	od, err := backend.Open(ctx, spec, o)
	if errors.Is(err, errDeviceSpec) {
		return nil, fmt.Errorf("--device: %w", err)
	}
	return od, err
}
