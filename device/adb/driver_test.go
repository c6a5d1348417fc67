package adb

import (
	"context"
	"encoding/binary"
	"errors"
	"image/color"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/perception"
	"phonepilot/perception/frame"
)

func TestOpenPicksTheOnlyDeviceAndNamesThemWhenSeveral(t *testing.T) {
	p := newFakePhone(t)
	s := newFakeServer(t, p.handle)
	d, err := Open(t.Context(), Config{Server: s.addr()})
	if err != nil || d.Serial() != "fake-1" {
		t.Fatalf("Open = %v, %v", d, err)
	}
	s.setDevices(DeviceInfo{Serial: "A1", State: "device", Model: "Pixel_7"}, DeviceInfo{Serial: "B2", State: "device", Model: "Mi_13"})
	_, err = Open(t.Context(), Config{Server: s.addr()})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !strings.Contains(err.Error(), "A1") || !strings.Contains(err.Error(), "B2") {
		t.Errorf("Open with two phones = %v; want an error naming both", err)
	}
	d, err = Open(t.Context(), Config{Server: s.addr(), Serial: "B2"})
	if err != nil || d.Serial() != "B2" {
		t.Errorf("Open(B2) = %v", err)
	}
	_, err = Open(t.Context(), Config{Server: s.addr(), Serial: "C3"})
	if !errors.Is(err, device.ErrDisconnected) || !strings.Contains(err.Error(), "A1") {
		t.Errorf("Open(C3) = %v; want ErrDisconnected listing the attached phones", err)
	}
	s.setDevices(DeviceInfo{Serial: "U", State: "unauthorized"})
	if _, err = Open(t.Context(), Config{Server: s.addr()}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Open(unauthorized) = %v", err)
	}
	s.setDevices()
	if _, err = Open(t.Context(), Config{Server: s.addr()}); err == nil || !strings.Contains(err.Error(), "no phone attached") {
		t.Errorf("Open with none = %v", err)
	}
}

func TestSceneUsesDumpsysAndWMSize(t *testing.T) {
	p := newFakePhone(t)
	p.wmSize = "Physical size: 1440x3200\nOverride size: 1080x2400\n"
	d, s := openFake(t, p)
	sc, err := d.Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Width != 1080 || sc.Height != 2400 {
		t.Errorf("size = %dx%d; want the override 1080x2400", sc.Width, sc.Height)
	}
	if sc.Package != "com.android.settings" || sc.Activity != "com.android.settings.Settings" {
		t.Errorf("foreground = %s/%s", sc.Package, sc.Activity)
	}
	if len(sc.Elements) != 2 || !sc.Elements[1].Editable {
		t.Errorf("elements = %+v", sc.Elements)
	}
	// The tty method is used: one exec, no file.
	for _, svc := range s.opened() {
		if strings.Contains(svc, "window_dump.xml") {
			t.Errorf("file dump used although /dev/tty works: %q", svc)
		}
	}
}

func TestSceneRotationSwapsSize(t *testing.T) {
	p := newFakePhone(t)
	p.dumpScript = []string{strings.Replace(p.dumpXML(), `rotation="0"`, `rotation="1"`, 1)}
	d, _ := openFake(t, p)
	sc, err := d.Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Rotation != 1 || sc.Width != 2400 || sc.Height != 1080 {
		t.Errorf("rotated scene = rot %d %dx%d; want 2400x1080", sc.Rotation, sc.Width, sc.Height)
	}
}

func TestDumpFallsBackToFileWithoutTTY(t *testing.T) {
	p := newFakePhone(t)
	p.ttyWorks = false
	d, s := openFake(t, p)
	for range 2 {
		sc, err := d.Scene(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Elements) != 2 {
			t.Fatalf("elements = %d", len(sc.Elements))
		}
	}
	ttyTries := 0
	for _, svc := range s.opened() {
		if strings.Contains(svc, "/dev/tty") {
			ttyTries++
		}
	}
	if ttyTries != 1 {
		t.Errorf("/dev/tty tried %d times; want once, then the file method remembered", ttyTries)
	}
}

// The driver does not retry a failed dump (the Executor owns dump
// retries): one idle-state failure is one dump and a typed, retryable
// error, and the next dump adds --compressed.
func TestDumpFailureIsReportedOnceAndTheNextDumpIsCompressed(t *testing.T) {
	p := newFakePhone(t)
	p.dumpScript = []string{"ERROR: could not get idle state.\n"}
	d, _ := openFake(t, p)
	_, err := d.Scene(t.Context())
	var de *DumpError
	if !errors.As(err, &de) || !errors.Is(err, perception.ErrIdleState) || !perception.Retryable(err) {
		t.Fatalf("idle state = %v; want a *DumpError wrapping ErrIdleState", err)
	}
	if _, err := d.Scene(t.Context()); err != nil {
		t.Fatal(err)
	}
	var dumps []string
	for _, c := range p.commands() {
		if strings.HasPrefix(c, "uiautomator") {
			dumps = append(dumps, c)
		}
	}
	if len(dumps) != 2 || strings.Contains(dumps[0], "--compressed") || !strings.Contains(dumps[1], "--compressed") {
		t.Errorf("dumps = %q; want one plain dump for the failed Scene, then a --compressed one", dumps)
	}
	if n := len(d.clk.(*clock.Fake).Sleeps()); n != 0 {
		t.Errorf("the driver paused %d times; it must not retry (the Executor does)", n)
	}
}

func TestDumpNullRootIsATypedRetryableError(t *testing.T) {
	p := newFakePhone(t)
	p.dumpScript = []string{"ERROR: null root node returned by UiTestAutomationBridge.\n"}
	d, _ := openFake(t, p)
	_, err := d.Scene(t.Context())
	if !errors.Is(err, perception.ErrNullRoot) || !perception.Retryable(err) {
		t.Fatalf("null root = %v; want ErrNullRoot, retryable", err)
	}
	if _, err := d.Scene(t.Context()); err != nil {
		t.Fatalf("the next dump is good: %v", err)
	}
}

func TestDisconnectMidCall(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	// The transport dies under the command: the stream closes without a
	// v2 exit packet and the server forgets the device.
	s.phone = func(serial, service, cmd string) reply {
		s.setDevices()
		return reply{out: []byte("partial"), cut: true}
	}
	start := time.Now()
	err := d.Tap(t.Context(), 10, 10)
	if !errors.Is(err, device.ErrDisconnected) {
		t.Fatalf("Tap on a vanishing phone = %v; want ErrDisconnected", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	// exec: (no exit packet): a screenshot cut in half.
	s.setDevices(DeviceInfo{Serial: "fake-1", State: "device"})
	png := noisyPNG(t, 64, 64)
	s.phone = func(serial, service, cmd string) reply {
		s.setDevices(DeviceInfo{Serial: "fake-1", State: "offline"})
		return reply{out: png, cutHalf: true}
	}
	if _, err := d.Capture(t.Context()); !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("Capture cut off = %v; want ErrDisconnected", err)
	}
	s.phone = func(serial, service, cmd string) reply { return reply{out: []byte("x")} }
	if _, err := d.Scene(t.Context()); !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("Scene on offline phone = %v; want ErrDisconnected", err)
	}
}

// A command that outlives its deadline on a phone that still answers is a
// plain timeout: slow is not gone.
func TestSlowCommandOnAnsweringPhoneTimesOut(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	d.cfg.Timeouts.Input = 150 * time.Millisecond
	s.phone = func(serial, service, cmd string) reply {
		if cmd == probeCommand {
			return p.handle(serial, service, cmd)
		}
		return reply{hang: true}
	}
	start := time.Now()
	err := d.Key(t.Context(), device.KeyBack)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("Key on a hung command = %v after %v; want a timeout error quickly", err, time.Since(start))
	}
	if errors.Is(err, device.ErrDisconnected) {
		t.Errorf("the phone answers its check; got ErrDisconnected: %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the phone answers, but `input keyevent 4` did not finish within 150ms") {
		t.Errorf("err = %v; want DeadlineExceeded saying the phone answers", err)
	}
}

// A gesture's deadline allows for the gesture: a swipe or long press that
// lasts dur gets the input deadline plus dur (a long swipe is not cut off
// as a hang), a tap only the input deadline. The error names the deadline
// the command was given.
func TestGestureDeadlineFollowsItsDuration(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	d.cfg.Timeouts.Input = 100 * time.Millisecond
	s.phone = func(serial, service, cmd string) reply {
		if cmd == probeCommand {
			return p.handle(serial, service, cmd)
		}
		return reply{hang: true}
	}
	for _, c := range []struct {
		name, cmd, within string
		do                func(context.Context) error
	}{
		{"swipe of 250ms", "input swipe 10 900 10 300 250", "350ms", func(ctx context.Context) error {
			return d.Swipe(ctx, 10, 900, 10, 300, 250*time.Millisecond)
		}},
		{"long press of 300ms", "input swipe 50 60 50 60 300", "400ms", func(ctx context.Context) error {
			return d.LongPress(ctx, 50, 60, 300*time.Millisecond)
		}},
		{"tap", "input tap 50 60", "100ms", func(ctx context.Context) error { return d.Tap(ctx, 50, 60) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.do(t.Context())
			want := "the phone answers, but `" + c.cmd + "` did not finish within " + c.within + ":"
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v; want DeadlineExceeded containing %q", err, want)
			}
		})
	}
}

func TestServerGoneIsDisconnected(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	s.ln.Close()
	if err := d.Tap(t.Context(), 1, 1); !errors.Is(err, device.ErrDisconnected) || !errors.Is(err, ErrServerUnavailable) {
		t.Errorf("Tap with the server gone = %v; want ErrDisconnected and ErrServerUnavailable", err)
	}
}

func TestGesturesAndKeys(t *testing.T) {
	p := newFakePhone(t)
	d, _ := openFake(t, p)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Tap(ctx, 540, 1200))
	must(d.LongPress(ctx, 100, 200, 900*time.Millisecond))
	must(d.Swipe(ctx, 540, 2000, 540, 600, 350*time.Millisecond))
	for _, k := range device.Keys {
		must(d.Key(ctx, k))
	}
	want := []string{
		"input tap 540 1200", "input swipe 100 200 100 200 900", "input swipe 540 2000 540 600 350",
		"input keyevent 4", "input keyevent 3", "input keyevent 66", "input keyevent 187", "input keyevent 67",
	}
	if got := p.commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commands = %q\nwant %q", got, want)
	}
	if err := d.Key(ctx, "volume_up"); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("unknown key = %v", err)
	}
	if err := d.Tap(ctx, -1, 5); err == nil {
		t.Error("negative tap accepted")
	}
}

func TestCommandFailureIsReported(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	s.phone = func(serial, service, cmd string) reply {
		return reply{stderr: []byte("java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission\n"), exit: 1}
	}
	err := d.Tap(t.Context(), 1, 1)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.ExitCode != 1 || !strings.Contains(ce.Output, "INJECT_EVENTS") {
		t.Errorf("failed input = %v", err)
	}
	// Without shell_v2 the failure is only visible in the text.
	p2 := newFakePhone(t)
	p2.legacyShell = true
	d2, s2 := openFake(t, p2)
	s2.phone = func(serial, service, cmd string) reply {
		return reply{out: []byte("Exception occurred while executing 'text':\njava.lang.NullPointerException\n")}
	}
	if err := d2.Tap(t.Context(), 1, 1); !errors.As(err, &ce) {
		t.Errorf("legacy shell failure = %v; want *CommandError", err)
	}
}

func TestTypeTextASCIIArrivesVerbatim(t *testing.T) {
	p := newFakePhone(t)
	p.field = "old query"
	d, _ := openFake(t, p)
	texts := []string{
		`Mac mini & "quotes" $HOME; rm -rf /`,
		`it's 100%sure \ back|slash <tag> (x) * ? [a] {b} ~ # ! ^ = + , : @ ` + "`id`",
		"%s%%s %",
		strings.Repeat("long text ", 60),
		"",
	}
	for _, text := range texts {
		if err := d.TypeText(t.Context(), text); err != nil {
			t.Fatalf("TypeText(%q): %v", text, err)
		}
		p.mu.Lock()
		got := p.field
		p.mu.Unlock()
		if got != text {
			t.Errorf("field = %q; want %q", got, text)
		}
	}
	for _, c := range p.commands() {
		if strings.HasPrefix(c, "am broadcast") || strings.HasPrefix(c, "ime ") {
			t.Errorf("ASCII text switched to ADB Keyboard: %q", c)
		}
	}
}

func TestTypeTextNonASCIIUsesADBKeyboardAndRestoresIME(t *testing.T) {
	p := newFakePhone(t)
	p.field = "old"
	before := p.ime
	d, _ := openFake(t, p)
	text := "苹果电脑 Mac mini 🍎"
	if err := d.TypeText(t.Context(), text); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.field != text {
		t.Errorf("field = %q; want %q", p.field, text)
	}
	if p.ime != before {
		t.Errorf("IME after typing = %q; want the user's %q restored", p.ime, before)
	}
	if p.enabledIMEs[adbKeyboardIME] {
		t.Error("ADB Keyboard left enabled although it was not enabled before")
	}
}

func TestTypeTextNonASCIIWithoutADBKeyboard(t *testing.T) {
	p := newFakePhone(t)
	p.packages = []string{"com.android.settings"}
	p.field = "keep me"
	d, _ := openFake(t, p)
	err := d.TypeText(t.Context(), "你好")
	if !errors.Is(err, device.ErrUnsupported) || !strings.Contains(err.Error(), "ADBKeyboard.apk") || !strings.Contains(err.Error(), "ime enable") {
		t.Errorf("TypeText without ADB Keyboard = %v; want ErrUnsupported with the install hint", err)
	}
	if p.field != "keep me" {
		t.Errorf("field changed to %q although typing failed", p.field)
	}
}

func TestTypeTextWithoutFocus(t *testing.T) {
	p := newFakePhone(t)
	p.focused = false
	d, _ := openFake(t, p)
	if err := d.TypeText(t.Context(), "hello"); !errors.Is(err, device.ErrNoFocus) {
		t.Errorf("TypeText without a focused field = %v; want ErrNoFocus", err)
	}
}

func TestCaptureChecksThePNG(t *testing.T) {
	p := newFakePhone(t)
	d, _ := openFake(t, p)
	good := noisyPNG(t, 90, 160)
	p.screencap = good
	f, err := d.Capture(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if w, h := f.Size(); w != 90 || h != 160 || len(f.PNG()) != len(good) {
		t.Errorf("frame %dx%d, %d bytes", w, h, len(f.PNG()))
	}
	cases := []struct {
		name string
		out  []byte
		want error
	}{
		{"secure status", []byte("Status: -1\n"), frame.ErrSecure},
		{"empty", nil, frame.ErrSecure},
		{"black", solidPNG(t, 90, 160, color.Black), frame.ErrSecure},
		{"truncated", good[:len(good)-20], ErrBadPNG},
		{"text", []byte("/system/bin/sh: screencap: inaccessible or not found\n"), ErrBadPNG},
	}
	for _, c := range cases {
		p.mu.Lock()
		p.screencap = c.out
		p.mu.Unlock()
		if _, err := d.Capture(t.Context()); !errors.Is(err, c.want) {
			t.Errorf("%s: Capture = %v; want %v", c.name, err, c.want)
		}
	}
	p.screencap = solidPNG(t, 90, 160, color.White)
	if _, err := d.Capture(t.Context()); err != nil {
		t.Errorf("a white screen is a valid screenshot: %v", err)
	}
}

func TestLaunchApp(t *testing.T) {
	p := newFakePhone(t)
	d, _ := openFake(t, p)
	ctx := t.Context()
	for _, name := range []string{"淘宝", "Taobao", "settings", "设置", "com.android.settings", "Firefox", "firefox"} {
		if err := d.LaunchApp(ctx, name); err != nil {
			t.Errorf("LaunchApp(%q) = %v", name, err)
		}
	}
	want := "com.taobao.taobao com.taobao.taobao com.android.settings com.android.settings com.android.settings org.mozilla.firefox org.mozilla.firefox"
	if got := strings.Join(p.launched, " "); got != want {
		t.Errorf("launched %q\nwant     %q", got, want)
	}
	for _, name := range []string{"WeChat", "微信", "com.example.nothere", "Nonexistent App", ""} {
		if err := d.LaunchApp(ctx, name); !errors.Is(err, device.ErrAppNotFound) {
			t.Errorf("LaunchApp(%q) = %v; want ErrAppNotFound", name, err)
		}
	}
}

func TestManyDevicesAtOnce(t *testing.T) {
	phones := map[string]*fakePhone{"A": newFakePhone(t), "B": newFakePhone(t), "C": newFakePhone(t)}
	s := newFakeServer(t, func(serial, service, cmd string) reply { return phones[serial].handle(serial, service, cmd) })
	s.setDevices(DeviceInfo{Serial: "A", State: "device"}, DeviceInfo{Serial: "B", State: "device"}, DeviceInfo{Serial: "C", State: "device"})
	errs := make(chan error, 3)
	for serial := range phones {
		go func() {
			d, err := Open(t.Context(), Config{Server: s.addr(), Serial: serial})
			if err != nil {
				errs <- err
				return
			}
			for i := range 5 {
				if err := d.Tap(t.Context(), i, i); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range phones {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for serial, p := range phones {
		if n := len(p.commands()); n != 5 {
			t.Errorf("phone %s got %d commands; want its own 5", serial, n)
		}
	}
}

// Raw screencap (no -p): the framebuffer as it is, header of 12 or 16
// bytes, read in place; all black is a secure screen; a short one is not a
// frame.
func TestCaptureReadsRawScreencap(t *testing.T) {
	p := newFakePhone(t)
	d, _ := openFake(t, p)
	raw := func(header, w, h int, px func(i int) byte) []byte {
		b := make([]byte, header+4*w*h)
		binary.LittleEndian.PutUint32(b[0:], uint32(w))
		binary.LittleEndian.PutUint32(b[4:], uint32(h))
		binary.LittleEndian.PutUint32(b[8:], 1)
		for i := header; i < len(b); i++ {
			b[i] = px(i)
		}
		return b
	}
	for _, header := range []int{12, 16} {
		p.mu.Lock()
		p.screencap = raw(header, 90, 160, func(i int) byte { return byte(i * 7) })
		p.mu.Unlock()
		f, err := d.Capture(t.Context())
		if err != nil {
			t.Fatalf("header %d: %v", header, err)
		}
		if w, h := f.Size(); w != 90 || h != 160 || f.Pixels() == nil || f.Pixels().Pix[0] != byte(header*7) {
			t.Errorf("header %d: frame %dx%d, pixels %v", header, w, h, f.Pixels() != nil)
		}
	}
	p.mu.Lock()
	p.screencap = raw(16, 90, 160, func(i int) byte {
		if i%4 == 3 {
			return 0xff
		}
		return 0
	})
	p.mu.Unlock()
	if _, err := d.Capture(t.Context()); !errors.Is(err, frame.ErrSecure) {
		t.Errorf("all black raw frame: %v, want ErrSecure", err)
	}
	if _, err := ParseRawScreencap(raw(16, 90, 160, func(int) byte { return 1 })[:5000]); !errors.Is(err, ErrBadRaw) {
		t.Errorf("a cut raw frame: %v, want ErrBadRaw", err)
	}
}
