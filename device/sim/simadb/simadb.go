// Package simadb is a test helper: it puts a simulated phone behind the
// device side of ADB (adbd) on a loopback port, starts a private adb
// server for it (its own port, HOME and key), `adb connect`s, and waits
// until the real adb client sees the phone as "device". Tests then drive
// it with the real adb client (Env.ADB) or talk to the adb server
// themselves (Env.ServerAddr).
//
// Debian's adb (package "adb") is needed. Without it the test is skipped,
// unless PHONEPILOT_INTEGRATION=1, when it fails instead.
package simadb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/device/sim/adbd"
	"phonepilot/internal/testlog"
)

// Timeouts for the real adb processes; generous because CI machines are
// slow, and only ever reached when something is broken.
const (
	startTimeout   = 20 * time.Second
	commandTimeout = 60 * time.Second
)

// Env is one simulated phone reachable through a private adb server.
type Env struct {
	// Serial is the phone's adb serial ("127.0.0.1:PORT"), for -s.
	Serial string
	// ServerAddr is the private adb server ("127.0.0.1:PORT").
	ServerAddr string
	// ServerPort is ServerAddr's port, for `adb -P`.
	ServerPort int
	// ADBPath is the adb client binary.
	ADBPath string
	// Phone is the simulated phone (Start only): inspect its state or
	// drive it in process alongside adb.
	Phone *sim.Phone
	// Daemon is the device-side server and Device the phone behind it
	// (both nil for an Env made by Attach).
	Daemon *adbd.Server
	Device adbd.Phone

	t            testing.TB
	home         string
	server       *exec.Cmd
	serverLog    *testlog.Buffer
	serverExited chan struct{}

	phone *phoneServer // nil for Attach
}

// lookADB finds the adb client or skips (fails under PHONEPILOT_INTEGRATION=1).
func lookADB(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("adb")
	if err != nil {
		path, err = exec.LookPath("/usr/bin/adb")
	}
	if err != nil {
		msg := "adb client not found (install Debian's \"adb\" package) - skipping the real-adb integration test"
		if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
			t.Fatal(msg + "; PHONEPILOT_INTEGRATION=1 requires it")
		}
		t.Skip(msg)
	}
	return path
}

// Start makes a simulated phone from cfg (Logger defaults to the test log,
// discarded in benchmarks), serves it through adbd with the phone's own
// banner, and attaches a private adb server to it (see StartDevice and
// Attach). Env.Serial is then a device the real adb client sees in state
// "device".
func Start(t testing.TB, cfg sim.Config) *Env {
	t.Helper()
	lookADB(t)
	if cfg.Logger == nil {
		cfg.Logger = defaultLogger(t)
	}
	phone, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("simadb: %v", err)
	}
	product, model, device := phone.Model()
	e := StartDevice(t, phone, adbd.Config{Product: product, Model: model, Device: device, Logger: cfg.Logger})
	e.Phone = phone
	return e
}

// StartDevice serves phone through adbd with cfg (Logger as in Start) on a loopback port outside 5555-5585 and attaches a private adb
// server to it (see Attach). Everything is torn down by t.Cleanup.
func StartDevice(t testing.TB, phone adbd.Phone, cfg adbd.Config) *Env {
	t.Helper()
	lookADB(t) // skip before starting anything
	if cfg.Logger == nil {
		cfg.Logger = defaultLogger(t)
	}
	daemon, err := adbd.New(phone, cfg)
	if err != nil {
		t.Fatalf("simadb: %v", err)
	}
	ln, err := listenOutsideEmulatorPorts()
	if err != nil {
		t.Fatalf("simadb: %v", err)
	}
	ps := &phoneServer{t: t, daemon: daemon, log: cfg.Logger}
	ps.serve(ln)
	t.Cleanup(ps.stop)
	e := Attach(t, ln.Addr().String())
	e.Daemon, e.Device, e.phone = daemon, phone, ps
	return e
}

// phoneServer runs adbd on one address; it can stop and start again.
type phoneServer struct {
	t      testing.TB
	daemon *adbd.Server
	log    *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (ps *phoneServer) serve(ln net.Listener) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := ps.daemon.Serve(ctx, ln); err != nil {
			ps.log.Error("simadb: adbd stopped", "err", err)
		}
	}()
	ps.mu.Lock()
	ps.cancel, ps.done = cancel, done
	ps.mu.Unlock()
}

func (ps *phoneServer) stop() {
	ps.mu.Lock()
	cancel, done := ps.cancel, ps.done
	ps.cancel, ps.done = nil, nil
	ps.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case <-done:
	case <-time.After(commandTimeout):
		ps.t.Errorf("simadb: adbd did not stop within %v", commandTimeout)
	}
}

// Attach starts a private adb server (its own port outside 5555-5585, HOME,
// TMPDIR and key; run as a child process that cannot outlive the test),
// runs `adb connect serial` and waits until `adb get-state` says device.
// Use it for a phone served elsewhere (e.g. by `phonepilot sim --adb`).
func Attach(t testing.TB, serial string) *Env {
	t.Helper()
	e := &Env{
		Serial:    serial,
		ADBPath:   lookADB(t),
		t:         t,
		home:      t.TempDir(),
		serverLog: new(testlog.Buffer),
	}
	if err := e.startServer(); err != nil {
		t.Fatalf("simadb: %v\nadb server log:\n%s", err, e.serverLog.String())
	}
	t.Cleanup(e.stopServer)
	if err := e.connect(); err != nil {
		t.Fatalf("simadb: %v\nadb server log:\n%s", err, e.serverLog.String())
	}
	return e
}

// defaultLogger logs to the test, except in benchmarks, where per-command
// log lines would be measured and pile up.
func defaultLogger(t testing.TB) *slog.Logger {
	if _, ok := t.(*testing.B); ok {
		return slog.New(slog.DiscardHandler)
	}
	return testlog.New(t)
}

// inEmulatorRange reports ports the adb server probes on its own (and
// 5037, the default server port), which a test must never use.
func inEmulatorRange(port int) bool { return (port >= 5555 && port <= 5585) || port == 5037 }

// listenOutsideEmulatorPorts binds a loopback port the adb server does
// not scan, so a developer's own adb never grabs the test phone.
func listenOutsideEmulatorPorts() (net.Listener, error) {
	var rejected []net.Listener
	defer func() {
		for _, l := range rejected {
			l.Close()
		}
	}()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("listen on loopback: %w", err)
		}
		if !inEmulatorRange(ln.Addr().(*net.TCPAddr).Port) {
			return ln, nil
		}
		rejected = append(rejected, ln)
	}
	return nil, errors.New("no free loopback port outside 5555-5585")
}

func freePort() (int, error) {
	ln, err := listenOutsideEmulatorPorts()
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Environ is the environment every adb process of this Env runs with: a
// private HOME (its own ~/.android/adbkey), TMPDIR, and server port.
func (e *Env) Environ() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "TMPDIR", "ANDROID_SDK_HOME", "ANDROID_ADB_SERVER_PORT", "ADB_SERVER_SOCKET",
			"ANDROID_SERIAL", "ADB_VENDOR_KEYS", "ADB_TRACE":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+e.home, "TMPDIR="+e.home, "ANDROID_SDK_HOME="+e.home)
	if e.ServerPort != 0 {
		env = append(env, "ANDROID_ADB_SERVER_PORT="+strconv.Itoa(e.ServerPort))
	}
	return env
}

// startServer runs `adb -P PORT nodaemon server` as our own child (so it
// can never outlive the test) and waits until it accepts connections.
func (e *Env) startServer() error {
	var lastErr error
	for range 3 { // the picked port can be taken before adb binds it
		port, err := freePort()
		if err != nil {
			return err
		}
		lastErr = nil
		e.ServerPort = port
		e.ServerAddr = "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(e.ADBPath, "-P", strconv.Itoa(port), "nodaemon", "server")
		cmd.Env = e.Environ()
		cmd.Stdout = e.serverLog
		cmd.Stderr = e.serverLog
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start adb server: %w", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		deadline := time.Now().Add(startTimeout)
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				lastErr = fmt.Errorf("adb server on port %d exited at start", port)
			default:
			}
			if lastErr != nil {
				break
			}
			if c, err := net.DialTimeout("tcp", e.ServerAddr, time.Second); err == nil {
				c.Close()
				e.server = cmd
				e.serverExited = exited
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		if lastErr == nil {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("adb server on port %d did not accept connections within %v", port, startTimeout)
		}
	}
	return lastErr
}

// connect runs `adb connect` and waits for state "device". adb connect
// exits 0 even when it fails, and right after a disconnect it can answer
// "already connected" for a transport the server is tearing down, so
// get-state decides, and a vanished transport is connected again.
func (e *Env) connect() error {
	deadline := time.Now().Add(startTimeout)
	var connectOut, state string
	var stateErr error
	for time.Now().Before(deadline) {
		out, err := e.run(false, "connect", e.Serial)
		if err != nil {
			return fmt.Errorf("adb connect %s: %w", e.Serial, err)
		}
		connectOut = strings.TrimSpace(string(out))
		retry := time.Now().Add(3 * time.Second)
		if retry.After(deadline) {
			retry = deadline
		}
		for time.Now().Before(retry) {
			out, err := e.ADB("get-state")
			state, stateErr = strings.TrimSpace(string(out)), err
			if err == nil && state == "device" {
				return nil
			}
			if err != nil && strings.Contains(err.Error(), "not found") {
				break // the transport is gone: connect again
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return fmt.Errorf("adb connect %s: %q; get-state: %q, %v (want device)", e.Serial, connectOut, state, stateErr)
}

// Command returns the real adb client set up for this Env's private server
// and phone (`adb -P PORT -s SERIAL args...`), for callers that want to
// stream its output or set their own context.
func (e *Env) Command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"-P", strconv.Itoa(e.ServerPort), "-s", e.Serial}, args...)
	cmd := exec.CommandContext(ctx, e.ADBPath, full...)
	cmd.Env = e.Environ()
	return cmd
}

// ADB runs the real adb client with args against this phone and returns
// its stdout. A non-zero exit is an error wrapping *exec.ExitError (so
// the status is available) and quoting stderr.
func (e *Env) ADB(args ...string) ([]byte, error) { return e.run(true, args...) }

func (e *Env) run(withSerial bool, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if withSerial {
		cmd = e.Command(ctx, args...)
	} else {
		cmd = exec.CommandContext(ctx, e.ADBPath, append([]string{"-P", strconv.Itoa(e.ServerPort)}, args...)...)
		cmd.Env = e.Environ()
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("adb %s: %w (stderr: %s)", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// ExitCode is the adb client's exit status in an error from ADB, 0 for
// nil, and -1 when it did not exit normally.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// StopPhone stops the simulated phone's listener and closes every
// transport, as if it were unplugged; the adb server then sees it vanish.
// It is safe to call more than once; it does nothing for an Env made by
// Attach (the phone is not ours to stop).
func (e *Env) StopPhone() {
	if e.phone != nil {
		e.phone.stop()
	}
}

// RestartPhone serves the same phone (same state) on the same address
// again after StopPhone, reconnects adb (`disconnect`, `connect`) and waits
// for state "device", as a user does after replugging.
func (e *Env) RestartPhone() error {
	if e.phone == nil {
		return errors.New("simadb: RestartPhone on an Env made by Attach")
	}
	e.phone.stop()
	ln, err := net.Listen("tcp", e.Serial)
	if err != nil {
		return fmt.Errorf("simadb: listen again on %s: %w", e.Serial, err)
	}
	e.phone.serve(ln)
	e.run(false, "disconnect", e.Serial)
	// Wait until the server has dropped the old transport, so connect does
	// not answer "already connected" for it.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := e.ADB("get-state"); err != nil && strings.Contains(err.Error(), "not found") {
			break
		}
	}
	return e.connect()
}

// ServerLog is what the private adb server has logged so far.
func (e *Env) ServerLog() string { return e.serverLog.String() }

func (e *Env) stopServer() {
	if e.server == nil {
		return
	}
	e.run(false, "kill-server")
	select {
	case <-e.serverExited:
	case <-time.After(5 * time.Second):
		e.server.Process.Kill()
		<-e.serverExited
	}
	if e.t.Failed() {
		e.t.Logf("adb server log:\n%s", e.serverLog.String())
	}
}

// The simulator is what this package serves; adbd only knows its interface.
var _ adbd.Phone = (*sim.Phone)(nil)
