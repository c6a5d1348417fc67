package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
	"phonepilot/perception"
	"phonepilot/scene"
)

// dumpMethod is how this phone's uiautomator dump reaches us.
type dumpMethod int

const (
	dumpUnknown dumpMethod = iota
	dumpTTY                // exec:uiautomator dump /dev/tty (one round trip)
	dumpFile               // dump to a file on the phone, then cat it
)

// dumpFilePath is where the file method writes; uiautomator's own default.
const dumpFilePath = "/sdcard/window_dump.xml"

// DumpError is a uiautomator dump that failed. It wraps the cause
// (perception.ErrIdleState, perception.ErrNullRoot, or a parse error). The
// driver does not retry a failed dump: the Executor owns dump retries
// (docs/ARCHITECTURE.md, "Retries: one owner per kind of failure"), and an
// idle-state or null-root failure is perception.Retryable for it to tell.
type DumpError struct {
	Err error
}

func (e *DumpError) Error() string {
	return "uiautomator dump failed: " + e.Err.Error()
}

func (e *DumpError) Unwrap() error { return e.Err }

// Scene observes the screen: a uiautomator dump parsed by perception, with
// the screen size from `wm size` (rotated as the dump says) and the
// foreground app and activity from dumpsys. The dumpsys and wm queries run
// while the dump does, so they add no latency.
func (d *Device) Scene(ctx context.Context) (*scene.Scene, error) {
	var (
		wg       sync.WaitGroup
		fg       Focus
		fgErr    error
		size     ScreenSize
		sizeErr  error
		sizeDone bool
	)
	d.mu.Lock()
	size, sizeDone = d.size, d.sizeKnown
	d.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		fg, fgErr = d.Foreground(ctx)
	}()
	if !sizeDone {
		wg.Add(1)
		go func() {
			defer wg.Done()
			size, sizeErr = d.ScreenSize(ctx)
		}()
	}
	sc, err := d.observe(ctx)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if sizeErr == nil && size.Width > 0 && size.Height > 0 {
		w, h := size.Width, size.Height
		if sc.Rotation == 1 || sc.Rotation == 3 {
			w, h = h, w
		}
		sc.Width, sc.Height = w, h
	} else if sizeErr != nil {
		d.log.Debug("screen size unknown; using the dump's extent", "err", sizeErr)
	}
	if fgErr == nil && fg.Package != "" {
		sc.Package, sc.Activity, sc.Secure = fg.Package, fg.Activity, fg.Secure
	} else if fgErr != nil {
		d.log.Debug("foreground app unknown; using the dump's", "err", fgErr)
	}
	return sc, nil
}

// observe reads the tree through the helper, or else dumps it with uiautomator.
func (d *Device) observe(ctx context.Context) (*scene.Scene, error) {
	var xml []byte
	used, err := d.viaHelper(ctx, "tree", d.cfg.Timeouts.Stall, func(ctx context.Context, c *helper.Client) error {
		var err error
		xml, _, err = c.Tree(ctx, helper.TreeDefault)
		return err
	})
	if !used {
		return d.dumpScene(ctx)
	}
	if err != nil {
		return nil, err
	}
	sc, err := perception.Parse(xml, perception.Options{})
	if err != nil {
		return nil, &DumpError{Err: err}
	}
	return sc, nil
}

// dumpScene dumps once and parses. After an idle-state failure the next
// dump adds --compressed, which skips the idle wait's worst offenders
// (mobilewright#117); it is not retried here (the Executor retries).
func (d *Device) dumpScene(ctx context.Context) (*scene.Scene, error) {
	d.mu.Lock()
	compressed := d.compressNext
	d.mu.Unlock()
	raw, err := d.dump(ctx, compressed)
	if err != nil {
		return nil, err
	}
	sc, err := perception.Parse(trimDump(raw), perception.Options{})
	idle := errors.Is(err, perception.ErrIdleState)
	d.mu.Lock()
	d.compressNext = idle
	d.mu.Unlock()
	switch {
	case err == nil:
		return sc, nil
	case !perception.Retryable(err):
		// Not a dump at all: an empty or cut-off answer is what a
		// dying transport leaves behind.
		return nil, d.disconnectedIfGone(ctx, "dump", &DumpError{Err: err})
	case idle:
		d.log.Debug("uiautomator idle-state failure; the next dump is --compressed")
	default:
		d.log.Debug("uiautomator null root")
	}
	return nil, &DumpError{Err: err}
}

// trimDump drops anything a device prints before the XML (warnings).
func trimDump(raw []byte) []byte {
	if i := bytes.Index(raw, []byte("<?xml")); i > 0 {
		return raw[i:]
	}
	if i := bytes.Index(raw, []byte("<hierarchy")); i > 0 {
		return raw[i:]
	}
	return raw
}

// dump runs one uiautomator dump by the best method the phone allows: to
// /dev/tty through exec: (one round trip), else to a file that is then
// read. The method that worked is remembered.
func (d *Device) dump(ctx context.Context, compressed bool) ([]byte, error) {
	d.mu.Lock()
	method := d.dumpMethod
	d.mu.Unlock()
	flag := ""
	if compressed {
		flag = "--compressed "
	}
	if method != dumpFile {
		out, err := d.exec(ctx, d.cfg.Timeouts.Dump, "uiautomator dump "+flag+"/dev/tty")
		if err != nil {
			return nil, err
		}
		if bytes.Contains(out, []byte("<hierarchy")) || perception.Retryable(perceptionDeviceError(out)) {
			if method == dumpUnknown && bytes.Contains(out, []byte("<hierarchy")) {
				d.setDumpMethod(dumpTTY)
			}
			return out, nil
		}
		if method == dumpTTY {
			// It worked before; a bad answer now is not a reason to switch.
			return out, nil
		}
		d.log.Debug("uiautomator dump to /dev/tty gave no XML; trying a file", "output", clip(out))
	}
	out, err := d.run(ctx, d.cfg.Timeouts.Dump, "uiautomator dump "+flag+dumpFilePath)
	if err != nil {
		return nil, err
	}
	if perception.Retryable(perceptionDeviceError(out)) {
		return out, nil
	}
	if !bytes.Contains(out, []byte("dumped to")) {
		return nil, d.disconnectedIfGone(ctx, "dump", &DumpError{Err: fmt.Errorf("uiautomator dump %s: %s", dumpFilePath, clip(out))})
	}
	xml, err := d.exec(ctx, d.cfg.Timeouts.Dump, "cat "+dumpFilePath)
	if err != nil {
		return nil, err
	}
	if method == dumpUnknown && bytes.Contains(xml, []byte("<hierarchy")) {
		d.setDumpMethod(dumpFile)
	}
	return xml, nil
}

func (d *Device) setDumpMethod(m dumpMethod) {
	d.mu.Lock()
	d.dumpMethod = m
	d.mu.Unlock()
	d.log.Debug("uiautomator dump method chosen", "tty", m == dumpTTY)
}

// perceptionDeviceError classifies uiautomator's error lines the way
// perception.Parse does, without parsing a whole document.
func perceptionDeviceError(out []byte) error {
	if bytes.Contains(out, []byte("<hierarchy")) {
		return nil
	}
	switch {
	case bytes.Contains(out, []byte("could not get idle state")):
		return perception.ErrIdleState
	case bytes.Contains(out, []byte("null root node returned")):
		return perception.ErrNullRoot
	}
	return nil
}

// ScreenSize is the display size in its natural orientation.
type ScreenSize struct {
	Width, Height int
	// Overridden is true when `wm size` reported an override (which wins
	// over the physical size).
	Overridden bool
}

// ScreenSize asks `wm size` once and remembers the answer.
func (d *Device) ScreenSize(ctx context.Context) (ScreenSize, error) {
	d.mu.Lock()
	if d.sizeKnown {
		s := d.size
		d.mu.Unlock()
		return s, nil
	}
	d.mu.Unlock()
	out, err := d.run(ctx, d.cfg.Timeouts.Command, "wm size")
	if err != nil {
		return ScreenSize{}, err
	}
	s, err := ParseWMSize(out)
	if err != nil {
		return ScreenSize{}, err
	}
	d.mu.Lock()
	d.size, d.sizeKnown = s, true
	d.mu.Unlock()
	return s, nil
}

var wmSizeRE = regexp.MustCompile(`(?m)^\s*(Physical|Override) size:\s*(\d+)\s*x\s*(\d+)`)

// ParseWMSize reads `wm size` output: "Physical size: WxH", and an
// "Override size: WxH" line that wins when present.
func ParseWMSize(out []byte) (ScreenSize, error) {
	var s ScreenSize
	found := false
	for _, m := range wmSizeRE.FindAllSubmatch(out, -1) {
		w, _ := strconv.Atoi(string(m[2]))
		h, _ := strconv.Atoi(string(m[3]))
		if w <= 0 || h <= 0 {
			continue
		}
		if string(m[1]) == "Override" {
			s = ScreenSize{Width: w, Height: h, Overridden: true}
			found = true
		} else if !s.Overridden {
			s = ScreenSize{Width: w, Height: h}
			found = true
		}
	}
	if !found {
		return ScreenSize{}, fmt.Errorf("wm size: no size in %q", clip(out))
	}
	return s, nil
}

// Focus is the app and activity in front. Secure is set when the focused
// window has FLAG_SECURE (no screenshot allowed: payment, password and
// banking screens).
type Focus struct {
	Package, Activity string
	Secure            bool
}

// Foreground asks dumpsys which app and activity are in front, reading the
// window manager first and the activity manager when that says nothing.
func (d *Device) Foreground(ctx context.Context) (Focus, error) {
	out, err := d.run(ctx, d.cfg.Timeouts.Command, "dumpsys window windows")
	if err == nil {
		if fg := ParseWindowFocus(out); fg.Package != "" {
			fg.Secure = FocusedWindowSecure(out)
			return fg, nil
		}
	} else if ctx.Err() != nil {
		return Focus{}, err
	}
	out2, err2 := d.run(ctx, d.cfg.Timeouts.Command, "dumpsys activity activities")
	if err2 != nil {
		if err != nil {
			return Focus{}, err
		}
		return Focus{}, err2
	}
	if fg := ParseResumedActivity(out2); fg.Package != "" {
		return fg, nil
	}
	return Focus{}, errors.New("dumpsys: no focused window or resumed activity found")
}

// Toasts reads the system's toast queue (`dumpsys notification`): each
// toast stays there from its app's show() until its time is up (2 s for a
// short one), so a read right after a press hears a toast that a one-shot
// dump, seconds later, no longer shows; device.ToastReader.
func (d *Device) Toasts(ctx context.Context) ([]device.Toast, error) {
	out, err := d.run(ctx, d.cfg.Timeouts.Command, "dumpsys notification")
	if err != nil {
		return nil, err
	}
	return ParseToasts(out), nil
}
