// Package adb drives real Android phones (and the simulator's adbd) through
// the adb server's host protocol. It speaks that protocol itself over TCP,
// so no adb process is spawned per command, and every call carries a
// deadline: a phone that disappears mid-call yields device.ErrDisconnected
// within seconds instead of a hang.
//
// A Device observes and acts through phonepilot's own helper on the phone
// (device/adb/helper: one UiAutomation held open, tens of milliseconds per
// tree, any Unicode text set directly), started on first use; on any
// failure of it (and with Observer uiautomator) it observes with
// `uiautomator dump` (perception.Parse builds the Scene), captures
// screenshots with raw `screencap` (checked before use), and acts with
// `input`, `am`, `monkey` and, for text that `input text` cannot type, the
// ADB Keyboard IME.
package adb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/perception/frame"
)

// Timeouts bound each kind of operation. A call's deadline is the earlier
// of its ctx deadline and the timeout for its kind. The deadlines are for a
// phone that answers but is slow; a phone that stops answering is found by
// Stall and Probe within seconds, whatever the deadline (see call).
type Timeouts struct {
	Command    time.Duration // a short shell command (wm, dumpsys, am, pm, settings); default 10 s
	Input      time.Duration // an input command (tap, key, text), plus a gesture's own duration; default 10 s
	Dump       time.Duration // one uiautomator dump attempt; default 20 s
	Screenshot time.Duration // one screencap; default 15 s
	// Probe bounds one check: asking the server whether the device is still
	// there, or asking the phone to answer a trivial command; default 3 s.
	Probe time.Duration
	// Stall is how long a call waits before the phone is checked to still
	// answer (and again every Stall); default 3 s.
	Stall time.Duration
}

// Config configures Open.
type Config struct {
	// Server is the adb server address (host:port or tcp:host:port);
	// empty means DefaultServer. cmd fills it from --adb-server or
	// ADB_SERVER_SOCKET.
	Server string
	// Serial picks the device; empty means the only attached one.
	Serial string
	// Logger receives debug lines about commands; nil discards them.
	Logger *slog.Logger
	// Clock paces retries; nil means the real clock.
	Clock    clock.Clock
	Timeouts Timeouts
	// Observer is how the screen is read and driven: auto (the default:
	// phonepilot's helper on the phone, uiautomator when it fails), helper
	// or uiautomator.
	Observer Observer
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if _, err := ParseServerAddress(c.Server); err != nil {
		return fmt.Errorf("adb config: %w", err)
	}
	if _, err := ParseObserver(string(c.Observer)); err != nil {
		return fmt.Errorf("adb config: %w", err)
	}
	if strings.ContainsAny(c.Serial, " \t\r\n") {
		// Serials are single words (TCP devices are host:port).
		return fmt.Errorf("adb config: serial %q contains whitespace", c.Serial)
	}
	for name, d := range map[string]time.Duration{
		"Command": c.Timeouts.Command, "Input": c.Timeouts.Input, "Dump": c.Timeouts.Dump,
		"Screenshot": c.Timeouts.Screenshot, "Probe": c.Timeouts.Probe, "Stall": c.Timeouts.Stall,
	} {
		if d < 0 {
			return fmt.Errorf("adb config: Timeouts.%s is negative (%v)", name, d)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Observer == "" {
		c.Observer = ObserverAuto
	}
	t := &c.Timeouts
	if t.Command == 0 {
		t.Command = 10 * time.Second
	}
	if t.Input == 0 {
		t.Input = 10 * time.Second
	}
	if t.Dump == 0 {
		t.Dump = 20 * time.Second
	}
	if t.Screenshot == 0 {
		t.Screenshot = 15 * time.Second
	}
	if t.Probe == 0 {
		t.Probe = 3 * time.Second
	}
	if t.Stall == 0 {
		t.Stall = 3 * time.Second
	}
	return c
}

// Device is one phone reached through the adb server. It is safe for
// concurrent use; many Devices (one per serial) can be open at once.
type Device struct {
	client  *Client
	serial  string
	cfg     Config
	log     *slog.Logger
	clk     clock.Clock
	shellV2 bool
	info    DeviceInfo

	mu         sync.Mutex // guards the fields below
	dumpMethod dumpMethod
	// compressNext: the last dump failed on idle state; the next one
	// adds --compressed.
	compressNext bool
	size         ScreenSize
	sizeKnown    bool

	textMu sync.Mutex // one TypeText at a time: it switches the IME

	live liveness // whether the phone stopped answering

	helper helperLink // phonepilot's helper on the phone (Observer)
}

var (
	_ device.Device           = (*Device)(nil)
	_ device.Facts            = (*Device)(nil)
	_ device.AppStopper       = (*Device)(nil)
	_ frame.Camera            = (*Device)(nil)
	_ device.ObserverReporter = (*Device)(nil)
	_ device.ChangeCounter    = (*Device)(nil)
	_ device.ToastWatcher     = (*Device)(nil)
	_ device.PackageLister    = (*Device)(nil)
)

// Open finds the device (cfg.Serial, or the only attached one), checks it
// is usable, and learns its features. It fails with device.ErrDisconnected
// for an offline or unknown serial and ErrUnauthorized for an unaccepted key.
func Open(ctx context.Context, cfg Config) (*Device, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	client, err := NewClient(cfg.Server)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeouts.Command)
	defer cancel()

	list, err := client.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("adb: list devices: %w", err)
	}
	info, err := pickDevice(list, cfg.Serial)
	if err != nil && isNetworkSerial(cfg.Serial) && !listed(list, cfg.Serial) {
		// A Wi-Fi phone the server does not know yet: `adb connect` it.
		info, err = connectDevice(ctx, client, cfg)
	}
	if err != nil {
		return nil, err
	}
	switch info.State {
	case "device":
	case "unauthorized":
		return nil, fmt.Errorf("adb: %s: %w", info.Serial, ErrUnauthorized)
	case "offline":
		return nil, fmt.Errorf("adb: %s is offline: %w", info.Serial, device.ErrDisconnected)
	default:
		return nil, fmt.Errorf("adb: %s is in state %q, not ready for commands", info.Serial, info.State)
	}
	feats, err := client.Features(ctx, info.Serial)
	if err != nil {
		return nil, fmt.Errorf("adb: features of %s: %w", info.Serial, err)
	}
	d := &Device{
		client:  client,
		serial:  info.Serial,
		cfg:     cfg,
		log:     cfg.Logger.With("serial", info.Serial),
		clk:     cfg.Clock,
		shellV2: slices.Contains(feats, "shell_v2"),
		info:    info,
	}
	d.log.Debug("adb device opened", "server", client.Addr(), "model", info.Model, "features", strings.Join(feats, ","))
	return d, nil
}

// isNetworkSerial reports a serial of the form host:port (a phone reached
// over TCP, as `adb connect` names it).
func isNetworkSerial(serial string) bool {
	host, port, err := net.SplitHostPort(serial)
	if err != nil || host == "" {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n <= 65535
}

func listed(list []DeviceInfo, serial string) bool {
	for _, d := range list {
		if d.Serial == serial {
			return true
		}
	}
	return false
}

// connectDevice asks the server to connect to a network phone and waits
// until it is listed in a settled state (the server reports "connected"
// before the handshake completes).
func connectDevice(ctx context.Context, client *Client, cfg Config) (DeviceInfo, error) {
	msg, err := client.Connect(ctx, cfg.Serial)
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("adb: connect %s: %w", cfg.Serial, err)
	}
	if !strings.Contains(msg, "connected to") || strings.Contains(msg, "failed") || strings.Contains(msg, "cannot") {
		return DeviceInfo{}, fmt.Errorf("adb: connect %s: %s: %w", cfg.Serial, strings.TrimSpace(msg), device.ErrDisconnected)
	}
	cfg.Logger.Debug("adb connect", "serial", cfg.Serial, "answer", strings.TrimSpace(msg))
	var last DeviceInfo
	for range 100 {
		list, err := client.Devices(ctx)
		if err != nil {
			return DeviceInfo{}, fmt.Errorf("adb: list devices: %w", err)
		}
		for _, d := range list {
			if d.Serial == cfg.Serial {
				last = d
			}
		}
		if last.State != "" && last.State != "offline" && last.State != "connecting" && last.State != "authorizing" {
			return last, nil
		}
		if err := cfg.Clock.Sleep(ctx, 100*time.Millisecond); err != nil {
			break
		}
	}
	if last.State == "" {
		return DeviceInfo{}, fmt.Errorf("adb: connected to %s but the server does not list it: %w", cfg.Serial, device.ErrDisconnected)
	}
	return last, nil
}

// pickDevice chooses serial from list, or the only device when serial is
// empty. Errors name what is attached so the user can choose.
func pickDevice(list []DeviceInfo, serial string) (DeviceInfo, error) {
	if serial != "" {
		for _, d := range list {
			if d.Serial == serial {
				return d, nil
			}
		}
		return DeviceInfo{}, fmt.Errorf("adb: no device %q (attached: %s): %w", serial, describe(list), device.ErrDisconnected)
	}
	switch len(list) {
	case 0:
		return DeviceInfo{}, fmt.Errorf("adb: no phone attached: plug one in with USB debugging on, or `adb connect HOST:PORT`: %w", device.ErrDisconnected)
	case 1:
		return list[0], nil
	}
	return DeviceInfo{}, &AmbiguousError{Devices: list}
}

// AmbiguousError: several phones are attached and none was chosen.
type AmbiguousError struct{ Devices []DeviceInfo }

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("adb: %d phones attached (%s): choose one with --device adb:SERIAL", len(e.Devices), describe(e.Devices))
}

func describe(list []DeviceInfo) string {
	if len(list) == 0 {
		return "none"
	}
	parts := make([]string, len(list))
	for i, d := range list {
		s := d.Serial + " (" + d.State
		if d.Model != "" {
			s += ", " + d.Model
		}
		parts[i] = s + ")"
	}
	return strings.Join(parts, ", ")
}

// Serial is the device's serial as the adb server names it.
func (d *Device) Serial() string { return d.serial }

// Info is the device's line from `adb devices -l` at Open.
func (d *Device) Info() DeviceInfo { return d.info }

// Client is the host-protocol client the device uses.
func (d *Device) Client() *Client { return d.client }

// opCtx bounds ctx by the operation's default timeout.
func opCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// CommandError is a shell command that ran and failed.
type CommandError struct {
	Cmd      string
	ExitCode int    // -1 when the device does not report exit codes
	Output   string // stdout and stderr, trimmed, at most 500 bytes
}

func (e *CommandError) Error() string {
	if e.ExitCode >= 0 {
		return fmt.Sprintf("%s: exit status %d: %s", e.Cmd, e.ExitCode, e.Output)
	}
	return fmt.Sprintf("%s: %s", e.Cmd, e.Output)
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// run executes a shell command and returns its stdout (stderr appended when
// the device merges them). A non-zero exit status is a *CommandError. The
// call is watched (see call): a phone that stops answering fails it with a
// *StoppedError.
func (d *Device) run(ctx context.Context, timeout time.Duration, cmd string) ([]byte, error) {
	var res ShellResult
	start := d.clk.Now()
	err := d.call(ctx, timeout, "shell "+clipCmd(cmd), clipCmd(cmd), func(cctx context.Context) error {
		var err error
		res, err = d.client.Shell(cctx, d.serial, cmd, d.shellV2)
		return err
	})
	d.log.Debug("adb shell", "cmd", clipCmd(cmd), "took", d.clk.Now().Sub(start), "exit", res.ExitCode, "err", err)
	if err != nil {
		return nil, err
	}
	if res.HasExitCode && res.ExitCode != 0 {
		return res.Stdout, &CommandError{Cmd: clipCmd(cmd), ExitCode: res.ExitCode, Output: clip(append(append([]byte{}, res.Stdout...), res.Stderr...))}
	}
	if len(res.Stderr) > 0 {
		return append(res.Stdout, res.Stderr...), nil
	}
	return res.Stdout, nil
}

// exec runs cmd through exec: (binary-safe, with a tty on real adbd),
// watched like run.
func (d *Device) exec(ctx context.Context, timeout time.Duration, cmd string) ([]byte, error) {
	var out []byte
	start := d.clk.Now()
	err := d.call(ctx, timeout, "exec "+clipCmd(cmd), clipCmd(cmd), func(cctx context.Context) error {
		var err error
		out, err = d.client.Exec(cctx, d.serial, cmd)
		return err
	})
	d.log.Debug("adb exec", "cmd", clipCmd(cmd), "took", d.clk.Now().Sub(start), "bytes", len(out), "err", err)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func clipCmd(cmd string) string {
	if len(cmd) > 120 {
		return cmd[:120] + "…"
	}
	return cmd
}

// classify turns a transport-level failure into device.ErrDisconnected when
// the server confirms the device is gone (or the server itself is gone).
// The caller's own cancellation is returned as is.
func (d *Device) classify(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("adb %s: %w", op, ctx.Err())
	}
	if errors.Is(err, device.ErrDisconnected) {
		return fmt.Errorf("adb %s: %w", op, err)
	}
	if errors.Is(err, ErrServerUnavailable) {
		return fmt.Errorf("adb %s: %w: %w", op, device.ErrDisconnected, err)
	}
	if isConnectionLoss(err) || errors.Is(err, context.DeadlineExceeded) {
		if gone, why := d.gone(ctx); gone {
			return fmt.Errorf("adb %s: %w (%s): %v", op, device.ErrDisconnected, why, err)
		}
	}
	return fmt.Errorf("adb %s: %w", op, err)
}

// goneChecks is how often gone asks again while the server still reports
// the device as ready: right after a transport drops, the server may not
// have noticed yet (it takes longer on a loaded machine).
const (
	goneChecks   = 5
	goneInterval = 100 * time.Millisecond
)

// gone asks the server whether the device is still attached and ready,
// after a connection loss. A device that stays ready for goneChecks
// answers is taken to be there.
func (d *Device) gone(ctx context.Context) (bool, string) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.Timeouts.Probe)
	defer cancel()
	for i := 0; ; i++ {
		state, err := d.client.State(pctx, d.serial)
		switch {
		case err != nil && (errors.Is(err, device.ErrDisconnected) || errors.Is(err, ErrServerUnavailable)):
			return true, err.Error()
		case err != nil:
			// The server did not answer in time either: treat the phone as
			// unreachable rather than pretending it is fine.
			return true, "adb server did not confirm the device: " + err.Error()
		case state != "device":
			return true, "device state is " + strings.TrimSpace(state)
		}
		if i+1 == goneChecks || d.clk.Sleep(pctx, goneInterval) != nil {
			return false, ""
		}
	}
}

// disconnectedIfGone returns a device.ErrDisconnected error when the
// device has vanished, else fallback. Used after outputs that are invalid
// in a way a dying transport produces (empty, truncated).
func (d *Device) disconnectedIfGone(ctx context.Context, op string, fallback error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("adb %s: %w", op, ctx.Err())
	}
	if gone, why := d.gone(ctx); gone {
		return fmt.Errorf("adb %s: %w (%s)", op, device.ErrDisconnected, why)
	}
	return fallback
}
