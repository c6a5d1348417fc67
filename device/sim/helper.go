package sim

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"image"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"phonepilot/device/adb/helper"
)

// The simulator plays phonepilot's helper (device/adb/helper) behind its
// adbd: `app_process` with the pushed dex on CLASSPATH starts it (the
// bytes must be the embedded dex), it prints READY and serves the helper
// protocol on its abstract socket (adbd's localabstract: service, and a
// line in /proc/net/unix), `kill PID` or the end of its exec: stream stops
// it. Config.Helper makes it misbehave the ways a phone can.

// Helper behaviours (Config.Helper).
const (
	HelperOK     = ""       // starts and serves
	HelperRefuse = "refuse" // app_process fails (a vendor build that will not run it)
	HelperHeld   = "held"   // another tool holds the UiAutomation
	// HelperOld is a helper of protocol version 1, before it could start
	// apps: it answers a launch as an unknown request.
	HelperOld = "old"
	// HelperNoLaunch is a helper whose starts the activity manager refuses
	// (START_PERMISSION_DENIED: a vendor build that bars the shell).
	HelperNoLaunch = "launch-refused"
	// HelperNoToasts is a helper of protocol version 2, before it heard
	// toasts: it answers a toasts request as an unknown request.
	HelperNoToasts = "no-toasts"
	helperCrash    = "crash-after="
)

// HelperModes names the behaviours for flags and errors.
const HelperModes = `"" (works), refuse, held, old (protocol 1: no launch), no-toasts (protocol 2), launch-refused, crash-after=N (each helper dies after N requests)`

// parseHelperMode checks a Config.Helper value; crashAfter is 0 unless crash-after=N.
func parseHelperMode(s string) (crashAfter int, err error) {
	switch s {
	case HelperOK, HelperRefuse, HelperHeld, HelperOld, HelperNoLaunch, HelperNoToasts:
		return 0, nil
	}
	if n, ok := strings.CutPrefix(s, helperCrash); ok {
		v, err := strconv.Atoi(n)
		if err == nil && v >= 1 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("sim config: helper %q: want one of %s", s, HelperModes)
}

// uiAutomationHeld is what a second UiAutomation registration prints (the
// exception peers' trackers show, e.g. Fastbot_Android#46, xiaocong/uiautomator#218):
// `uiautomator dump` fails with it while the helper runs.
const uiAutomationHeld = "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5e1a2balready registered!\n" +
	"\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked(UiAutomationConnection.java:456)\n" +
	"\tat android.app.UiAutomation.connect(UiAutomation.java:243)\n"

// simHelper is one running helper process.
type simHelper struct {
	pid      int
	socket   string
	requests int // requests served by this process (crash-after)
	done     chan struct{}
	once     sync.Once
	status   int
	conns    map[net.Conn]struct{}
	lastSeen time.Time
	// toastBase is the phone's toast number when the process started: it
	// hears only the toasts after, numbered from 1 (Toasts.java).
	toastBase uint64
}

func (h *simHelper) stop(status int) {
	h.once.Do(func() {
		h.status = status
		close(h.done)
	})
}

// helperState is the phone's helper bookkeeping, under p.mu.
type helperState struct {
	nextPID int
	running map[string]*simHelper // by socket name
	started int                   // helper starts, for tests
}

// cmdAppProcess runs `CLASSPATH=DEX app_process / phonepilot.helper.Main --socket NAME [--idle-exit S]`.
func cmdAppProcess(p *Phone, e *cmdEnv) int {
	cp := e.vars["CLASSPATH"]
	if cp == "" || len(e.args) < 3 {
		e.err("Usage: app_process [java-options] cmd-dir start-class-name [options]\n")
		return 1
	}
	main := e.args[2]
	data, err := p.ReadFile(cp)
	if err != nil {
		e.err("Exception in thread \"main\" java.lang.ClassNotFoundException: Didn't find class \"%s\" on path: DexPathList[[zip file \"%s\"]]\n", main, cp)
		return 1
	}
	if !helper.IsDex(data) || main != helper.MainClass {
		// The simulator runs only the helper it embeds; anything else on
		// the class path is an unknown program to it.
		e.err("Exception in thread \"main\" java.lang.ClassNotFoundException: %s is not the dex this simulator embeds (sha256 %s…)\n", cp, helper.Hash()[:16])
		return 1
	}
	socket, idle := "", helper.DefaultIdleExit
	for i := 3; i < len(e.args); i++ {
		switch {
		case e.args[i] == "--socket" && i+1 < len(e.args):
			socket = e.args[i+1]
			i++
		case e.args[i] == "--idle-exit" && i+1 < len(e.args):
			s, err := strconv.ParseFloat(e.args[i+1], 64)
			if err != nil || s <= 0 {
				e.out("ERROR usage --idle-exit takes a positive number of seconds\n")
				return helper.ExitUsage
			}
			idle = time.Duration(s * float64(time.Second))
			i++
		default:
			e.out("ERROR usage unknown argument %s\n", e.args[i])
			return helper.ExitUsage
		}
	}
	if socket == "" {
		e.out("ERROR usage --socket NAME is required\n")
		return helper.ExitUsage
	}
	switch p.cfg.Helper {
	case HelperRefuse:
		e.out("ERROR start java.lang.SecurityException: this build does not let the shell user run app_process (simulated: sim helper=refuse)\n")
		return helper.ExitStart
	case HelperHeld:
		e.out("ERROR held another tool holds the phone's UiAutomation (uiautomator, Appium, Maestro, uiautomator2...): UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5e1a2b already registered! (simulated: sim helper=held)\n")
		return helper.ExitHeld
	}
	p.mu.Lock()
	if _, taken := p.helpers.running[socket]; taken {
		p.mu.Unlock()
		e.out("ERROR socket @%s: java.io.IOException: Address already in use\n", socket)
		return helper.ExitSocket
	}
	if p.helpers.running == nil {
		p.helpers.running = map[string]*simHelper{}
	}
	p.helpers.nextPID++
	h := &simHelper{pid: 20000 + p.helpers.nextPID, socket: socket, done: make(chan struct{}), conns: map[net.Conn]struct{}{}, lastSeen: p.now(), toastBase: p.toasts.seq}
	p.helpers.running[socket] = h
	p.helpers.started++
	p.mu.Unlock()
	defer p.endHelper(h)

	e.out("READY %s %d\n", socket, h.pid)
	if f, ok := e.stdout.(interface{ Flush() error }); ok {
		f.Flush()
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return 129 // the exec: stream closed: SIGHUP
		case <-h.done:
			return h.status
		case <-tick.C:
			p.mu.Lock()
			idleFor := time.Duration(0)
			if len(h.conns) == 0 {
				idleFor = p.now().Sub(h.lastSeen)
			}
			p.mu.Unlock()
			if idleFor >= idle {
				return 0
			}
		}
	}
}

// endHelper unregisters a helper and cuts its clients.
func (p *Phone) endHelper(h *simHelper) {
	h.stop(0)
	p.mu.Lock()
	if p.helpers.running[h.socket] == h {
		delete(p.helpers.running, h.socket)
	}
	conns := make([]net.Conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// cmdKill is `kill [-9] PID...`: it stops the helper processes it names.
func cmdKill(p *Phone, e *cmdEnv) int {
	status := 0
	sig := 15
	for _, a := range e.args[1:] {
		if s, ok := strings.CutPrefix(a, "-"); ok {
			if n, err := strconv.Atoi(s); err == nil {
				sig = n
			}
			continue
		}
		pid, err := strconv.Atoi(a)
		if err != nil {
			e.err("kill: %s: invalid pid\n", a)
			status = 1
			continue
		}
		if !p.KillHelper(pid, 128+sig) {
			e.err("kill: %d: No such process\n", pid)
			status = 1
		}
	}
	return status
}

// KillHelper ends the helper with that pid (a crash, or `kill`); false
// when none runs with it.
func (p *Phone) KillHelper(pid, status int) bool {
	p.mu.Lock()
	var h *simHelper
	for _, r := range p.helpers.running {
		if r.pid == pid {
			h = r
		}
	}
	p.mu.Unlock()
	if h == nil {
		return false
	}
	h.stop(status)
	p.endHelper(h)
	return true
}

// HelperPIDs lists the running helpers' pids (tests, doctor).
func (p *Phone) HelperPIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, h := range p.helpers.running {
		pids = append(pids, h.pid)
	}
	sort.Ints(pids)
	return pids
}

// HelperStarts counts the helper's starts since the phone was made.
func (p *Phone) HelperStarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.helpers.started
}

// procNetUnix is /proc/net/unix: one listening line per helper socket.
func (p *Phone) procNetUnixLocked() []byte {
	var b bytes.Buffer
	b.WriteString("Num       RefCount Protocol Flags    Type St Inode Path\n")
	names := make([]string, 0, len(p.helpers.running))
	for n := range p.helpers.running {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := fnv.New32a()
		h.Write([]byte(n))
		fmt.Fprintf(&b, "0000000000000000: 00000002 00000000 00010000 0001 01 %d @%s\n", 100000+h.Sum32()%900000, n)
	}
	return b.Bytes()
}

// DialAbstract connects to an abstract socket (adbd's localabstract:).
// Only a running helper's socket answers.
func (p *Phone) DialAbstract(name string) (io.ReadWriteCloser, error) {
	p.mu.Lock()
	h := p.helpers.running[name]
	if h == nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("connect @%s: Connection refused", name)
	}
	client, server := net.Pipe()
	h.conns[server] = struct{}{}
	p.mu.Unlock()
	go func() {
		defer func() {
			server.Close()
			p.mu.Lock()
			delete(h.conns, server)
			h.lastSeen = p.now()
			p.mu.Unlock()
		}()
		b := &helperBackend{p: p, h: h}
		proto := helper.ProtocolVersion
		switch p.cfg.Helper {
		case HelperOld:
			proto = 1
		case HelperNoToasts:
			proto = 2
		}
		err := helper.Serve(server, helper.Hello{Proto: proto, SDK: 34, PID: h.pid}, b, true)
		if err == helper.ErrQuit {
			h.stop(0)
		}
	}()
	return client, nil
}

// helperBackend is the helper's view of the phone: the same screen the
// simulated uiautomator dumps, no idle wait, text set directly.
type helperBackend struct {
	p *Phone
	h *simHelper
}

// request counts one request against crash-after; a crashed helper's
// process ends and its socket goes away.
func (b *helperBackend) request() error {
	n, _ := parseHelperMode(b.p.cfg.Helper)
	b.p.mu.Lock()
	b.h.requests++
	crash := n > 0 && b.h.requests > n
	b.p.mu.Unlock()
	if crash {
		// The process dies before it answers: its socket closes under the client.
		b.p.KillHelper(b.h.pid, 134) // SIGABRT
		return fmt.Errorf("helper crashed (simulated: sim helper=%s)", b.p.cfg.Helper)
	}
	return nil
}

// Tree charges the helper's tree read (paths.go) and reads the screen
// without uiautomator's idle wait; while a window has no root yet the
// helper asks again, 5 tries 50 ms apart, as Automation.java does.
func (b *helperBackend) Tree(extras bool) ([]byte, error) {
	if err := b.request(); err != nil {
		return nil, err
	}
	p := b.p
	ctx := context.Background()
	for try := 1; ; try++ {
		p.mu.Lock()
		start := p.now()
		p.mu.Unlock()
		if err := p.charge(ctx, ObserverHelper, chargeTree); err != nil {
			return nil, err
		}
		p.mu.Lock()
		xml, err := p.readSince(start, p.now(), false, false)
		if err == nil {
			p.lookLocked(p.now())
		}
		p.mu.Unlock()
		switch {
		case err == nil:
			return xml, nil
		case try == 5:
			return nil, &helper.Error{Code: helper.CodeNoWindow, Message: "no active window (null root after 5 tries)"}
		}
		if err := p.cfg.Clock.Sleep(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// Changes is the helper's count of accessibility events (paths.go's counter).
func (b *helperBackend) Changes() (uint64, time.Duration) {
	p := b.p
	p.charge(context.Background(), ObserverHelper, chargeCounter)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.screenChanges(p.now())
}

// Screenshot is the raw frame (charged as the helper's); a FLAG_SECURE
// window comes out black, as UiAutomation's screenshot of it does.
func (b *helperBackend) Screenshot() ([]byte, error) {
	if err := b.request(); err != nil {
		return nil, err
	}
	p := b.p
	if err := p.charge(context.Background(), ObserverHelper, chargeFrame); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	img := p.drawLocked()
	if p.secureLocked() {
		img = blackLike(img)
	}
	return helper.EncodeFrame(img), nil
}

// SetText sets the focused field's text (any Unicode: no keyboard app).
func (b *helperBackend) SetText(selector, text string) error {
	return b.input(func() error {
		f := b.p.focusedField()
		if selector != "" && (f == nil || f.id != selector) {
			return &helper.Error{Code: helper.CodeNotFound, Message: "no node has resource-id " + selector}
		}
		if !b.p.setTextLocked(text) {
			return &helper.Error{Code: helper.CodeNoFocus, Message: "no field has input focus"}
		}
		return nil
	})
}

// input charges one injected input and runs fn under p.mu.
func (b *helperBackend) input(fn func() error) error {
	if err := b.request(); err != nil {
		return err
	}
	if err := b.p.charge(context.Background(), ObserverHelper, chargeInput); err != nil {
		return err
	}
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	return fn()
}

func (b *helperBackend) Tap(x, y int) error {
	return b.input(func() error { b.p.tapLocked(x, y); return nil })
}

func (b *helperBackend) LongPress(x, y int, d time.Duration) error {
	return b.input(func() error { b.p.swipeLocked(x, y, x, y, max(d, 500*time.Millisecond)); return nil })
}

func (b *helperBackend) Swipe(x1, y1, x2, y2 int, d time.Duration) error {
	return b.input(func() error { b.p.swipeLocked(x1, y1, x2, y2, d); return nil })
}

func (b *helperBackend) Key(code int) error {
	return b.input(func() error { b.p.keyLocked(code); return nil })
}

func (b *helperBackend) FrontApp() (string, error) {
	if err := b.request(); err != nil {
		return "", err
	}
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	pkg, _ := b.p.focusedWindow()
	return pkg, nil
}

// Launch starts the package's launcher activity as the helper does
// (Starter.java: the activity manager's binder, no Java process), charged
// the helper's launch (paths.go). A package the phone does not have is the
// helper's "no launcher activity" (CodeNotFound); launch-refused plays an
// activity manager that refuses the shell.
func (b *helperBackend) Launch(pkg string) (string, error) {
	if err := b.request(); err != nil {
		return "", err
	}
	p := b.p
	if err := p.charge(context.Background(), ObserverHelper, chargeLaunch); err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.app(pkg)
	if a == nil {
		return "", &helper.Error{Code: helper.CodeNotFound, Message: "no launcher activity in " + pkg + " (not installed, or nothing to launch)"}
	}
	component := pkg + "/" + a.launchActivity()
	if p.cfg.Helper == HelperNoLaunch {
		return "", &helper.Error{Code: helper.CodeRefused, Message: "the activity manager did not start " + component + ": START_PERMISSION_DENIED (-94) (simulated: sim helper=launch-refused)"}
	}
	p.startLocked(a)
	return component, nil
}

// blackLike is a black frame of img's size (opaque).
func blackLike(img *image.RGBA) *image.RGBA {
	out := image.NewRGBA(img.Bounds())
	for i := 3; i < len(out.Pix); i += 4 {
		out.Pix[i] = 0xff
	}
	return out
}
