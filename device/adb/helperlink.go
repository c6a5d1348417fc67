package adb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
	"phonepilot/perception"
)

// Observer chooses how the driver reads the screen and acts.
type Observer string

const (
	// ObserverAuto uses the helper and falls back to uiautomator on any
	// failure of it (the default).
	ObserverAuto Observer = "auto"
	// ObserverHelper uses the helper only: a helper that cannot start or
	// dies twice fails the call.
	ObserverHelper Observer = "helper"
	// ObserverUIAutomator never starts the helper: `uiautomator dump`,
	// `input`, `screencap`.
	ObserverUIAutomator Observer = "uiautomator"
)

// Observers lists the choices, for flags and config.
var Observers = []Observer{ObserverAuto, ObserverHelper, ObserverUIAutomator}

// ParseObserver reads an --observer value ("" is auto).
func ParseObserver(s string) (Observer, error) {
	if s == "" {
		return ObserverAuto, nil
	}
	for _, o := range Observers {
		if string(o) == s {
			return o, nil
		}
	}
	names := make([]string, len(Observers))
	for i, o := range Observers {
		names[i] = string(o)
	}
	return "", fmt.Errorf("observer %q: want one of %s", s, strings.Join(names, ", "))
}

// Names of the observation paths, as device.ObserverState reports them.
const (
	pathHelper      = "helper"
	pathUIAutomator = "uiautomator"
)

// HelperStartError is the helper failing to start; Held is set when another
// tool holds the phone's one UiAutomation.
type HelperStartError struct {
	Held   bool
	Output string // what the helper (or app_process) printed
	Err    error
}

func (e *HelperStartError) Error() string {
	if e.Held {
		return "phonepilot's helper cannot start: another tool holds the phone's UiAutomation (uiautomator, Appium, Maestro, uiautomator2 or an accessibility test); stop that tool, or use --observer uiautomator: " + e.Output
	}
	msg := "phonepilot's helper did not start"
	if e.Output != "" {
		msg += ": " + e.Output
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *HelperStartError) Unwrap() error { return e.Err }

// helperProc is one running helper: the exec: stream that holds its
// process (closing it ends the process) and the client on its socket.
type helperProc struct {
	pid    int
	proc   *Stream
	client *helper.Client
	exited chan struct{} // closed when the process's stream ends
}

// helperLink is the helper's life on one phone: started on first use,
// restarted once, then given up for uiautomator (auto) for good.
type helperLink struct {
	mu        sync.Mutex
	proc      *helperProc
	restarted bool
	noLaunch  bool   // launches go through monkey (the helper cannot start apps here)
	off       bool   // fallen back (or never to be used)
	reason    string // why off
	offErr    error  // the failure that turned it off
	switches  int
	startTime time.Duration // how long the last start took
	// failed: when the helper first failed; switched: when the driver
	// gave it up (device.ObserverState.Failed, At).
	failed, switched time.Time
}

// Observer reports the path the driver observes through now.
func (d *Device) Observer() device.ObserverState {
	if d.cfg.Observer == ObserverUIAutomator {
		return device.ObserverState{Name: pathUIAutomator}
	}
	l := &d.helper
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.off {
		return device.ObserverState{Name: pathUIAutomator, Reason: l.reason, Switches: l.switches, Failed: l.failed, At: l.switched}
	}
	return device.ObserverState{Name: pathHelper, Switches: l.switches, Failed: l.failed}
}

// ScreenChanges is the helper's count of accessibility events and how long
// ago the last one was; device.ErrUnsupported when the helper is not in use.
func (d *Device) ScreenChanges(ctx context.Context) (device.ScreenChanges, error) {
	var out device.ScreenChanges
	used, err := d.viaHelper(ctx, "changes", d.cfg.Timeouts.Probe, func(ctx context.Context, c *helper.Client) error {
		var err error
		out.Count, out.Since, err = c.Changes(ctx)
		return err
	})
	if !used {
		return out, fmt.Errorf("adb screen changes: uiautomator counts no changes: %w", device.ErrUnsupported)
	}
	return out, err
}

// ToastsSince lists the toasts the helper heard after mark (helper.OpToasts,
// protocol 3); device.ErrUnsupported when the helper is not in use or too
// old to hear them. A mark of another helper process (restarted since) is
// before all of this one's toasts.
func (d *Device) ToastsSince(ctx context.Context, mark device.ToastMark) (device.ToastMark, []device.Toast, error) {
	var (
		now       device.ToastMark
		out       []device.Toast
		notServed bool
	)
	used, err := d.viaHelper(ctx, "toasts", d.cfg.Timeouts.Probe, func(ctx context.Context, c *helper.Client) error {
		if !c.Serves(helper.OpToasts) {
			notServed = true
			return nil
		}
		src := strconv.Itoa(c.Hello().PID)
		seq, evs, err := c.Toasts(ctx, mark.In(src))
		if err != nil {
			return err
		}
		now = device.ToastMark{Seq: seq, Source: src}
		for _, e := range evs {
			out = append(out, device.Toast{Package: e.Package, Text: e.Text})
		}
		return nil
	})
	switch {
	case !used:
		return now, nil, fmt.Errorf("adb toasts since: uiautomator hears no toasts: %w", device.ErrUnsupported)
	case err == nil && notServed:
		return now, nil, fmt.Errorf("adb toasts since: the helper's protocol predates toasts: %w", device.ErrUnsupported)
	}
	return now, out, err
}

// viaHelper runs do on the helper when the helper is the observer, starting
// it on first use. It reports whether the helper handled the call; when it
// did not, the caller uses the uiautomator path. A helper that fails (it
// did not start, died, or its stream broke) is restarted once; after that,
// with auto, the helper is stopped (a phone allows one UiAutomation, and
// uiautomator dump needs it) and every later call takes the uiautomator
// path. A helper's error reply (no focused field, ...) is the call's error.
func (d *Device) viaHelper(ctx context.Context, op string, timeout time.Duration, do func(context.Context, *helper.Client) error) (bool, error) {
	if d.cfg.Observer == ObserverUIAutomator {
		return false, nil
	}
	l := &d.helper
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.off {
		if d.cfg.Observer == ObserverHelper {
			return true, l.offErr
		}
		return false, nil
	}
	var err error
	for attempt := 0; ; attempt++ {
		if l.proc == nil {
			err = d.startHelperLocked(ctx)
		}
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			err = do(cctx, l.proc.client)
			cancel()
			var he *helper.Error
			if err == nil || errors.As(err, &he) {
				return true, helperCallError(op, err)
			}
		}
		if ctx.Err() != nil {
			return true, fmt.Errorf("adb helper %s: %w", op, ctx.Err())
		}
		if gone, why := d.gone(ctx); gone {
			d.stopHelperLocked(ctx)
			return true, fmt.Errorf("adb helper %s: %w (%s): %w", op, device.ErrDisconnected, why, err)
		}
		if e, frozen := d.frozenAfterHelper(ctx, op, timeout, err); frozen {
			// A silent phone, not a dead helper: restarting the helper or
			// falling back would only wait on it again.
			return true, fmt.Errorf("adb helper %s: %w", op, e)
		}
		d.log.Warn("phonepilot's helper failed", "op", op, "err", err)
		if l.failed.IsZero() {
			l.failed = d.clk.Now()
		}
		d.stopHelperLocked(ctx)
		var se *HelperStartError
		if l.restarted || (errors.As(err, &se) && se.Held) {
			break
		}
		l.restarted = true
	}
	// Give up on the helper for this phone.
	l.off, l.offErr, l.switches, l.switched = true, err, l.switches+1, d.clk.Now()
	l.reason = fmt.Sprintf("helper %s failed: %v", op, err)
	if d.cfg.Observer == ObserverHelper {
		return true, err
	}
	d.log.Warn("observing with uiautomator from now on", "reason", l.reason)
	return false, nil
}

// helperCallError maps the helper's error replies onto the driver's.
func helperCallError(op string, err error) error {
	var he *helper.Error
	if !errors.As(err, &he) {
		return err
	}
	switch he.Code {
	case helper.CodeNoFocus:
		return fmt.Errorf("adb helper %s: %w", op, device.ErrNoFocus)
	case helper.CodeNoWindow:
		return &DumpError{Err: fmt.Errorf("%w: %s", perception.ErrNullRoot, he.Message)}
	}
	return fmt.Errorf("adb helper %s: %w", op, err)
}

// startHelperLocked pushes the dex if the phone lacks it, starts the helper
// as the shell user, waits for its READY line and connects to its socket.
func (d *Device) startHelperLocked(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Command)
	defer cancel()
	if _, err := d.pushHelper(ctx); err != nil {
		return err
	}
	socket := helper.SocketName()
	proc, err := d.client.OpenStream(ctx, d.serial, "exec:"+helper.StartCommand(socket, helper.DefaultIdleExit))
	if err != nil {
		return &HelperStartError{Err: err}
	}
	if dl, ok := ctx.Deadline(); ok {
		proc.SetDeadline(dl)
	}
	r := bufio.NewReader(proc)
	line, err := r.ReadString('\n')
	proc.SetDeadline(time.Time{})
	line = strings.TrimSpace(line)
	pid, ready := parseReady(line, socket)
	if !ready {
		rest, _ := io.ReadAll(io.LimitReader(r, 2048))
		proc.Close()
		out := strings.TrimSpace(line + "\n" + string(rest))
		if err == nil || err == io.EOF {
			err = nil
		}
		return &HelperStartError{Held: strings.HasPrefix(line, "ERROR held"), Output: clip([]byte(out)), Err: err}
	}
	p := &helperProc{pid: pid, proc: proc, exited: make(chan struct{})}
	go func() {
		io.Copy(io.Discard, r) // the helper prints nothing more; EOF is its end
		close(p.exited)
	}()
	conn, err := d.client.OpenStream(ctx, d.serial, "localabstract:"+socket)
	if err == nil {
		p.client, err = helper.Dial(ctx, conn)
	}
	if err == nil && p.client.Hello().PID != pid {
		err = fmt.Errorf("socket @%s is served by pid %d, not by the helper just started (pid %d)", socket, p.client.Hello().PID, pid)
		p.client.Close()
	}
	if err != nil {
		d.helper.proc = p
		d.stopHelperLocked(ctx)
		return &HelperStartError{Err: fmt.Errorf("connect to @%s: %w", socket, err)}
	}
	d.helper.proc = p
	d.helper.startTime = time.Since(start)
	d.log.Info("phonepilot's helper started", "pid", pid, "sdk", p.client.Hello().SDK, "took", d.helper.startTime.Round(time.Millisecond))
	return nil
}

// pushHelper pushes the dex through the sync client unless the phone has
// it under its content hash already; pushed says whether it did.
func (d *Device) pushHelper(ctx context.Context) (pushed bool, err error) {
	dex := helper.Dex()
	st, err := d.client.Stat(ctx, d.serial, helper.RemotePath())
	if err == nil && st.Size == uint32(len(dex)) && st.Mode != 0 {
		return false, nil
	}
	if err := d.client.Push(ctx, d.serial, helper.RemotePath(), dex, 0o644, time.Now()); err != nil {
		return false, &HelperStartError{Err: fmt.Errorf("push %s: %w", helper.RemotePath(), err)}
	}
	return true, nil
}

// parseReady reads "READY NAME PID".
func parseReady(line, socket string) (int, bool) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "READY" || f[1] != socket {
		return 0, false
	}
	pid, err := strconv.Atoi(f[2])
	return pid, err == nil && pid > 0
}

// stopHelperLocked stops the running helper: asks it to quit, kills its own
// pid (never by name: another phonepilot's helper may run) if it does not
// go, and closes the stream that holds its process.
func (d *Device) stopHelperLocked(ctx context.Context) {
	p := d.helper.proc
	if p == nil {
		return
	}
	d.helper.proc = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.Timeouts.Probe)
	defer cancel()
	if p.client != nil {
		if err := p.client.Quit(ctx); err == nil {
			select {
			case <-p.exited:
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	select {
	case <-p.exited:
	default:
		if p.pid > 0 {
			if _, err := d.client.Shell(ctx, d.serial, "kill "+strconv.Itoa(p.pid), d.shellV2); err != nil {
				d.log.Debug("kill helper", "pid", p.pid, "err", err)
			}
		}
	}
	p.proc.Close()
}

// Close stops the helper if it runs.
func (d *Device) Close() error {
	d.helper.mu.Lock()
	defer d.helper.mu.Unlock()
	d.stopHelperLocked(context.Background())
	return nil
}

// frozenAfterHelper checks, after a helper call that got no reply in time,
// whether the phone itself still answers a trivial command; when it does
// not, the phone is marked stopped (the task fails device_gone at once, as
// on the uiautomator path) and the error says so.
func (d *Device) frozenAfterHelper(ctx context.Context, op string, waited time.Duration, err error) (*StoppedError, bool) {
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
		return nil, false
	}
	start := time.Now()
	if !errors.Is(d.probe(ctx), errNoAnswer) {
		return nil, false
	}
	e := &StoppedError{Serial: d.serial, Cmd: "phonepilot's helper: " + op, Waited: waited, Check: time.Since(start)}
	d.markStopped(e)
	return e, true
}
