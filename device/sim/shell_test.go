package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"phonepilot/perception"
)

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`input text hello`, []string{"input", "text", "hello"}},
		{`input text 'a b'`, []string{"input", "text", "a b"}},
		{`input text "a \"b\" c"`, []string{"input", "text", `a "b" c`}},
		{`input text a\ b`, []string{"input", "text", "a b"}},
		{`echo 'it'\''s'`, []string{"echo", "it's"}},
		{`screencap '-p'`, []string{"screencap", "-p"}}, // exec-out quotes every argument
		{`echo "" x`, []string{"echo", "", "x"}},
		{`echo a  	b # comment`, []string{"echo", "a", "b"}},
	}
	for _, c := range cases {
		got, err := SplitWords(c.in)
		if err != nil {
			t.Errorf("SplitWords(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if _, err := SplitWords(`echo 'open`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestExecStatusAndOperators(t *testing.T) {
	p := newTestPhone(t, Config{})
	cases := []struct {
		line, out string
		rc        int
	}{
		{"true", "", 0},
		{"false", "", 1},
		{"nosuchcmd --x", "", 127},
		{"echo hi", "hi\n", 0},
		{"echo -n hi", "hi", 0},
		{"false && echo no", "", 1},
		{"false || echo yes", "yes\n", 0},
		{"true && echo a; echo b", "a\nb\n", 0},
		{"echo one > /sdcard/f.txt && cat /sdcard/f.txt", "one\n", 0},
		{"echo two >> /sdcard/f.txt; cat /sdcard/f.txt", "one\ntwo\n", 0},
		{"cat /sdcard/f.txt | grep two", "two\n", 0},
		{"cat /sdcard/nope 2>/dev/null", "", 1},
		{"rm /sdcard/f.txt && cat /sdcard/f.txt", "", 1},
		{"exit 3", "", 3},
		{"echo 'unterminated", "", 2},
	}
	for _, c := range cases {
		out, errOut, rc := sh(t, p, c.line)
		if rc != c.rc || out != c.out {
			t.Errorf("%q: rc=%d out=%q (stderr %q), want rc=%d out=%q", c.line, rc, out, errOut, c.rc, c.out)
		}
	}
	_, errOut, _ := sh(t, p, "nosuchcmd")
	if !strings.Contains(errOut, "sh: nosuchcmd: not found") {
		t.Errorf("unknown command stderr = %q, want it to say sh: nosuchcmd: not found", errOut)
	}
}

func TestUIAutomatorDump(t *testing.T) {
	p := newTestPhone(t, Config{})
	ctx := context.Background()

	// to a file, then read back: a parseable one-line dump
	out, _, rc := sh(t, p, "uiautomator dump /sdcard/window_dump.xml")
	if rc != 0 || out != "UI hierchary dumped to: /sdcard/window_dump.xml\n" {
		t.Fatalf("dump to file: rc=%d out=%q", rc, out)
	}
	xml, err := p.ReadFile("/sdcard/window_dump.xml")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(xml, []byte("\n")) != 0 || !bytes.HasPrefix(xml, []byte(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`)) {
		t.Errorf("dump is not shaped like uiautomator's: %.120s", xml)
	}
	sc, err := perception.Parse(xml, perception.Options{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if sc.Width != 1080 || sc.Height != 2400 {
		t.Errorf("scene size %dx%d, want 1080x2400", sc.Width, sc.Height)
	}
	if findLabel(sc, "Taobao") == nil || findID(sc, "com.android.systemui:id/clock") == nil {
		t.Errorf("dump lacks the Taobao icon or the status bar clock")
	}

	// /dev/tty with a terminal (shell:, exec:): XML then the line
	var o, e bytes.Buffer
	p.Exec(ctx, "uiautomator dump /dev/tty", true, &o, &e)
	if !bytes.HasPrefix(o.Bytes(), []byte("<?xml")) || !strings.HasSuffix(o.String(), "</hierarchy>UI hierchary dumped to: /dev/tty\n") {
		t.Errorf("tty dump = %.80q…%q", o.String(), tail(o.String(), 60))
	}
	// without one (shell,v2,raw): only the line, as on a phone
	out, _, rc = sh(t, p, "uiautomator dump /dev/tty")
	if rc != 0 || out != "UI hierchary dumped to: /dev/tty\n" {
		t.Errorf("no-tty dump: rc=%d out=%q, want only the dumped-to line", rc, out)
	}
	// default file
	out, _, _ = sh(t, p, "uiautomator dump")
	if out != "UI hierchary dumped to: /sdcard/window_dump.xml\n" {
		t.Errorf("default dump: %q", out)
	}
	// compressed drops layout-only containers
	sh(t, p, "uiautomator dump --compressed /sdcard/c.xml")
	cx, _ := p.ReadFile("/sdcard/c.xml")
	if len(cx) >= len(xml) || !bytes.Contains(cx, []byte(`text="Taobao"`)) {
		t.Errorf("compressed dump (%d bytes) not smaller than full (%d) or lost the icons", len(cx), len(xml))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func TestScreencap(t *testing.T) {
	p := newTestPhone(t, Config{Width: 720, Height: 1600})
	var o, e bytes.Buffer
	if rc := p.Exec(context.Background(), "screencap -p", true, &o, &e); rc != 0 {
		t.Fatalf("screencap rc=%d %s", rc, e.String())
	}
	img, err := png.Decode(&o)
	if err != nil {
		t.Fatalf("screencap -p output is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 720 || b.Dy() != 1600 {
		t.Errorf("PNG is %v, want 720x1600", b)
	}
	out, _, _ := sh(t, p, "wm size")
	if out != "Physical size: 720x1600\n" {
		t.Errorf("wm size = %q", out)
	}
	if _, _, rc := sh(t, p, "screencap -p /sdcard/s.png"); rc != 0 {
		t.Fatal("screencap to file failed")
	}
	data, err := p.ReadFile("/sdcard/s.png")
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("screencap file: %v %.8q", err, data)
	}
	raw, _, _ := sh(t, p, "screencap")
	if len(raw) != 16+720*1600*4 {
		t.Errorf("raw screencap is %d bytes, want header+RGBA %d", len(raw), 16+720*1600*4)
	}
}

func TestInputText(t *testing.T) {
	v := newDrive(t, Config{})
	p := v.d.p
	v.launch("Taobao")
	v.tapID("com.taobao.taobao:id/poplayer_close")
	v.tapID("com.taobao.taobao:id/home_searchbar")

	if _, _, rc := sh(t, p, "input text Mac%smini"); rc != 0 {
		t.Fatal("input text failed")
	}
	if got := findID(v.scene(), "com.taobao.taobao:id/search_edit").Text; got != "Mac mini" {
		t.Errorf("after input text Mac%%smini the field holds %q", got)
	}
	// input text appends; non-ASCII fails as on a phone and types nothing
	_, errOut, rc := sh(t, p, "input text 苹果")
	if rc == 0 || !strings.Contains(errOut, "Exception occurred while executing 'text'") {
		t.Errorf("non-ASCII input text: rc=%d stderr=%q, want failure", rc, errOut)
	}
	// ADB Keyboard: clear, then base64 UTF-8
	sh(t, p, "am broadcast -a ADB_CLEAR_TEXT")
	b64 := base64.StdEncoding.EncodeToString([]byte("苹果电脑 Mac mini 🍎"))
	out, _, _ := sh(t, p, "am broadcast -a ADB_INPUT_B64 --es msg "+b64)
	if !strings.Contains(out, "Broadcast completed: result=0") {
		t.Errorf("broadcast output %q", out)
	}
	if got := findID(v.scene(), "com.taobao.taobao:id/search_edit").Text; got != "苹果电脑 Mac mini 🍎" {
		t.Errorf("after ADB Keyboard the field holds %q", got)
	}
	// DEL removes one character, ENTER submits the search
	sh(t, p, "input keyevent KEYCODE_DEL 67")
	sh(t, p, "input keyevent 66")
	st := v.state()
	if got := dig(st, "taobao", "last_search"); got != "苹果电脑 Mac mini" {
		t.Errorf("last_search = %v, want the field minus two characters", got)
	}
	if got := dig(st, "taobao", "screen"); got != "results" {
		t.Errorf("taobao screen = %v, want results", got)
	}
}

func TestADBKeyboardOnlyWhenCurrentIME(t *testing.T) {
	v := newDrive(t, Config{})
	p := v.d.p
	v.launch("Contacts")
	v.tapID("com.android.contacts:id/floating_action_button")
	out, _, _ := sh(t, p, "settings get secure default_input_method")
	if out != "com.android.adbkeyboard/.AdbIME\n" {
		t.Fatalf("default IME = %q", out)
	}
	out, _, rc := sh(t, p, "ime set com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME")
	if rc != 0 || !strings.Contains(out, "selected") {
		t.Fatalf("ime set gboard: %d %q", rc, out)
	}
	sh(t, p, "am broadcast -a ADB_INPUT_B64 --es msg "+base64.StdEncoding.EncodeToString([]byte("张三")))
	if got := findID(v.scene(), "com.android.contacts:id/name_edit").Text; got != "Name" {
		t.Errorf("broadcast reached the field while ADB Keyboard was not the IME: %q", got)
	}
	sh(t, p, "ime set com.android.adbkeyboard/.AdbIME")
	sh(t, p, "am broadcast -a ADB_INPUT_B64 --es msg "+base64.StdEncoding.EncodeToString([]byte("张三")))
	if got := findID(v.scene(), "com.android.contacts:id/name_edit").Text; got != "张三" {
		t.Errorf("field = %q after ADB Keyboard input", got)
	}
	out, _, _ = sh(t, p, "ime list -s")
	if !strings.Contains(out, "com.android.adbkeyboard/.AdbIME") {
		t.Errorf("ime list -s = %q", out)
	}
}

func TestNoADBKeyboard(t *testing.T) {
	v := newDrive(t, Config{NoADBKeyboard: true})
	p := v.d.p
	out, _, _ := sh(t, p, "ime list -a -s")
	if strings.Contains(out, "adbkeyboard") {
		t.Errorf("ADB Keyboard listed though absent: %q", out)
	}
	if _, errOut, rc := sh(t, p, "ime set com.android.adbkeyboard/.AdbIME"); rc == 0 {
		t.Errorf("ime set of a missing IME succeeded: %q", errOut)
	}
	v.launch("Contacts")
	v.tapID("com.android.contacts:id/floating_action_button")
	err := v.d.TypeText(t.Context(), "张三")
	if err == nil || !strings.Contains(err.Error(), "ADB Keyboard") {
		t.Errorf("TypeText(non-ASCII) without ADB Keyboard = %v, want ErrUnsupported naming ADB Keyboard", err)
	}
	if err := v.d.TypeText(t.Context(), "Ann"); err != nil {
		t.Errorf("ASCII TypeText without ADB Keyboard: %v", err)
	}
}

func TestLaunchCommandsAndForeground(t *testing.T) {
	p := newTestPhone(t, Config{})
	out, _, rc := sh(t, p, "monkey -p com.taobao.taobao -c android.intent.category.LAUNCHER 1")
	if rc != 0 || !strings.Contains(out, "Events injected: 1") {
		t.Fatalf("monkey: %d %q", rc, out)
	}
	out, _, _ = sh(t, p, "dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'")
	if !strings.Contains(out, "mCurrentFocus=Window{") || !strings.Contains(out, "u0 com.taobao.taobao/com.taobao.tao.TBMainActivity}") ||
		!strings.Contains(out, "mFocusedApp=ActivityRecord{") {
		t.Errorf("dumpsys window focus lines:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n != 2 {
		t.Errorf("grep gave %d lines, want 2:\n%s", n, out)
	}
	out, _, _ = sh(t, p, "am start -n com.android.settings/.Settings")
	if !strings.Contains(out, "Starting: Intent { cmp=com.android.settings/.Settings }") {
		t.Errorf("am start output %q", out)
	}
	out, _, _ = sh(t, p, "dumpsys activity activities | grep ResumedActivity")
	if !strings.Contains(out, "  ResumedActivity: ActivityRecord{") || !strings.Contains(out, "com.android.settings/.homepage.SettingsHomepageActivity t") {
		t.Errorf("ResumedActivity lines:\n%s", out)
	}
	if _, errOut, rc := sh(t, p, "am start -n com.example.none/.Main"); rc == 0 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("am start unknown: rc=%d %q", rc, errOut)
	}
	if _, errOut, rc := sh(t, p, "monkey -p com.example.none -c android.intent.category.LAUNCHER 1"); rc == 0 || !strings.Contains(errOut, "No activities found") {
		t.Errorf("monkey unknown: rc=%d %q", rc, errOut)
	}
	out, _, _ = sh(t, p, "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER com.taobao.taobao")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[len(lines)-1] != "com.taobao.taobao/com.taobao.tao.welcome.Welcome" {
		t.Errorf("resolve-activity last line %q", lines[len(lines)-1])
	}
	out, _, _ = sh(t, p, "pm list packages")
	for _, pkg := range []string{"com.taobao.taobao", "com.android.settings", "com.android.contacts", "com.google.android.apps.messaging", "com.google.android.deskclock", "com.android.adbkeyboard"} {
		if !strings.Contains(out, "package:"+pkg+"\n") {
			t.Errorf("pm list packages lacks %s", pkg)
		}
	}
	out, _, _ = sh(t, p, "getprop ro.product.model")
	if out != "PhonePilot Sim\n" {
		t.Errorf("getprop model = %q", out)
	}
	if out, _, _ := sh(t, p, "getprop"); !strings.Contains(out, "[ro.build.version.sdk]: [34]") {
		t.Errorf("getprop list lacks sdk: %q", out)
	}
}

func TestSettingsCommandDrivesToggles(t *testing.T) {
	p := newTestPhone(t, Config{})
	sh(t, p, "settings put global bluetooth_on 1")
	sh(t, p, "settings put secure ui_night_mode 2")
	st := stateOf(t, p)
	if dig(st, "settings", "bluetooth") != true || dig(st, "settings", "dark_theme") != true {
		t.Errorf("settings state after put: %v", st["settings"])
	}
	if out, _, _ := sh(t, p, "settings get global wifi_on"); out != "1\n" {
		t.Errorf("wifi_on = %q", out)
	}
	if out, _, _ := sh(t, p, "settings get system nosuchkey"); out != "null\n" {
		t.Errorf("unknown key = %q", out)
	}
}

func TestFiles(t *testing.T) {
	p := newTestPhone(t, Config{})
	if _, err := p.ReadFile("/sdcard/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error %v, want fs.ErrNotExist", err)
	}
	if err := p.WriteFile("/sdcard/Download/a.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteFile("/nosuchdir/a.txt", []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write into a missing dir: %v", err)
	}
	data, err := p.ReadFile("/storage/emulated/0/Download/a.txt")
	if err != nil || string(data) != "x" {
		t.Errorf("read through the /storage/emulated/0 alias: %q %v", data, err)
	}
	st, err := p.Stat("/sdcard/Download/a.txt")
	if err != nil || st.Size() != 1 || st.IsDir() || st.Mode().Perm() != 0o644 {
		t.Errorf("stat: %v %v", st, err)
	}
	ents, err := p.ReadDir("/sdcard/Download")
	if err != nil || len(ents) != 1 || ents[0].Name() != "a.txt" {
		t.Errorf("readdir: %v %v", ents, err)
	}
	if st, err := p.Stat("/sdcard"); err != nil || !st.IsDir() {
		t.Errorf("stat /sdcard: %v %v", st, err)
	}
}

func TestEncodePNGExact(t *testing.T) {
	p := newTestPhone(t, Config{Width: 400, Height: 880})
	p.mu.Lock()
	img := p.drawLocked()
	data := encodePNG(img)
	p.mu.Unlock()
	dec, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	for y := 0; y < 880; y++ {
		for x := 0; x < 400; x++ {
			r1, g1, b1, _ := img.At(x, y).RGBA()
			r2, g2, b2, a2 := dec.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a2 != 0xffff {
				t.Fatalf("pixel %d,%d differs after the round trip", x, y)
			}
		}
	}
}
