package simadb_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/device/sim/simadb"
	"phonepilot/internal/clock"
	"phonepilot/perception"
	"phonepilot/scene"
)

// fixedClock keeps the status-bar time still, so two screenshots of the
// same screen are the same bytes.
func fixedClock() clock.Clock { return clock.NewFake(time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC)) }

func startSim(t testing.TB, locale string) *simadb.Env {
	return simadb.Start(t, sim.Config{Locale: locale, Seed: 1, Clock: fixedClock()})
}

// dumpScene dumps to /sdcard with `adb shell`, pulls the file and parses it,
// the way an agent without exec-out would.
func dumpScene(t *testing.T, env *simadb.Env) *scene.Scene {
	t.Helper()
	out, err := env.ADB("shell", "uiautomator", "dump", "/sdcard/window_dump.xml")
	if err != nil || !strings.Contains(string(out), "UI hierchary dumped to: /sdcard/window_dump.xml") {
		t.Fatalf("uiautomator dump: %q, %v", out, err)
	}
	local := filepath.Join(t.TempDir(), "window_dump.xml")
	if _, err := env.ADB("pull", "/sdcard/window_dump.xml", local); err != nil {
		t.Fatal(err)
	}
	xml, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(xml, []byte("<?xml")) {
		t.Fatalf("pulled dump is not XML: %.80q", xml)
	}
	sc, err := perception.Parse(xml, perception.Options{})
	if err != nil {
		t.Fatalf("perception.Parse of the pulled dump: %v", err)
	}
	return sc
}

func findLabel(sc *scene.Scene, label string) (scene.Element, bool) {
	for _, e := range sc.Elements {
		if e.Label() == label && !e.Bounds.Empty() {
			return e, true
		}
	}
	return scene.Element{}, false
}

var wmSize = regexp.MustCompile(`Physical size: (\d+)x(\d+)`)

// TestRealADBMustShow is issue 3's integration scenario, driven entirely
// by Debian's adb client against the simulator's ADB endpoint.
func TestRealADBMustShow(t *testing.T) {
	env := startSim(t, "en")

	// devices -l lists the simulator with its banner.
	out, err := env.ADB("devices", "-l")
	if err != nil {
		t.Fatal(err)
	}
	product, model, device := env.Phone.Model()
	want := fmt.Sprintf("device product:%s model:%s device:%s", product, strings.ReplaceAll(model, " ", "_"), device)
	if line := lineWith(string(out), env.Serial); !strings.Contains(line, want) {
		t.Errorf("devices -l line for %s = %q, want it to contain %q\n%s", env.Serial, line, want, out)
	}

	// uiautomator dump to a file + pull gives XML our parser reads.
	home := dumpScene(t, env)
	icon, ok := findLabel(home, "Taobao")
	if !ok {
		t.Fatalf("no Taobao icon on the home screen; labels: %v", labels(home))
	}

	// exec-out screencap -p is a PNG of the size wm size prints.
	pngBytes, err := env.ADB("exec-out", "screencap", "-p")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(pngBytes))
	if err != nil {
		t.Fatalf("exec-out screencap -p: not a PNG (%d bytes): %v", len(pngBytes), err)
	}
	out, err = env.ADB("shell", "wm", "size")
	m := wmSize.FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("wm size: %q, %v", out, err)
	}
	if w, _ := strconv.Atoi(m[1]); w != cfg.Width {
		t.Errorf("screenshot width %d, wm size says %s", cfg.Width, m[1])
	}
	if h, _ := strconv.Atoi(m[2]); h != cfg.Height {
		t.Errorf("screenshot height %d, wm size says %s", cfg.Height, m[2])
	}
	// The bytes through adb are exactly what the phone renders in process.
	var direct bytes.Buffer
	if code := env.Phone.Exec(context.Background(), "screencap -p", true, &direct, &direct); code != 0 || !bytes.Equal(direct.Bytes(), pngBytes) {
		t.Errorf("screencap through adb (%d bytes) differs from in process (%d bytes, exit %d)", len(pngBytes), direct.Len(), code)
	}

	// Tap the Taobao icon where the dump says it is; Taobao comes to front.
	x, y := icon.Bounds.Center()
	if _, err := env.ADB("shell", "input", "tap", strconv.Itoa(x), strconv.Itoa(y)); err != nil {
		t.Fatal(err)
	}
	out, err = env.ADB("shell", "dumpsys", "window")
	if err != nil {
		t.Fatal(err)
	}
	if focus := lineWith(string(out), "mCurrentFocus"); !strings.Contains(focus, "com.taobao.taobao") {
		t.Errorf("after tapping Taobao at (%d,%d): mCurrentFocus line %q", x, y, focus)
	}

	// Exit codes through shell v2.
	if _, err := env.ADB("shell", "false"); simadb.ExitCode(err) != 1 {
		t.Errorf("shell false: exit %d (%v), want 1", simadb.ExitCode(err), err)
	}
	if _, err := env.ADB("shell", "frobnicate"); simadb.ExitCode(err) != 127 || !strings.Contains(err.Error(), "frobnicate: not found") {
		t.Errorf("unknown command: exit %d (%v), want 127 and sh's message", simadb.ExitCode(err), err)
	}
	if _, err := env.ADB("shell", "true"); err != nil {
		t.Errorf("shell true: %v", err)
	}
}

func TestRealADBFourMegabytesByteExact(t *testing.T) {
	env := startSim(t, "en")
	big := make([]byte, 4<<20)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range big { // incompressible, no short period
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		big[i] = byte(x >> 24)
	}
	local := filepath.Join(t.TempDir(), "big.png")
	if err := os.WriteFile(local, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ADB("push", local, "/sdcard/big.png"); err != nil {
		t.Fatal(err)
	}
	if got, err := env.Phone.ReadFile("/sdcard/big.png"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("on the phone after push: %d bytes, %v", len(got), err)
	}
	out, err := env.ADB("exec-out", "cat", "/sdcard/big.png")
	if err != nil || !bytes.Equal(out, big) {
		t.Errorf("exec-out cat: %d bytes (want %d), equal=%v, %v", len(out), len(big), bytes.Equal(out, big), err)
	}
	back := filepath.Join(t.TempDir(), "back.png")
	if _, err := env.ADB("pull", "/sdcard/big.png", back); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(back); !bytes.Equal(got, big) {
		t.Errorf("pull: %d bytes, not byte-exact", len(got))
	}

	// A screenshot saved on the phone and pulled equals exec-out's.
	if _, err := env.ADB("shell", "screencap", "-p", "/sdcard/screen.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ADB("pull", "/sdcard/screen.png", back); err != nil {
		t.Fatal(err)
	}
	pulled, _ := os.ReadFile(back)
	streamed, err := env.ADB("exec-out", "screencap", "-p")
	if err != nil || len(pulled) == 0 || !bytes.Equal(pulled, streamed) {
		t.Errorf("pulled screenshot (%d bytes) differs from exec-out (%d bytes): %v", len(pulled), len(streamed), err)
	}
}

func TestRealADBDumpToTTYAsOnAPhone(t *testing.T) {
	env := startSim(t, "zh")
	// exec-out has a tty: the XML comes back on stdout, then the notice.
	out, err := env.ADB("exec-out", "uiautomator", "dump", "/dev/tty")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := perception.Parse(out, perception.Options{})
	if err != nil {
		t.Fatalf("exec-out uiautomator dump /dev/tty did not parse: %v\n%.200q", err, out)
	}
	if _, ok := findLabel(sc, "淘宝"); !ok {
		t.Errorf("zh home screen has no 淘宝 icon; labels: %v", labels(sc))
	}
	// adb shell (shell v2, pipes) has none, so the XML does not arrive.
	out, _ = env.ADB("shell", "uiautomator", "dump", "/dev/tty")
	if bytes.Contains(out, []byte("<hierarchy")) {
		t.Errorf("adb shell uiautomator dump /dev/tty returned XML; a phone has no tty under shell v2")
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func labels(sc *scene.Scene) []string {
	var out []string
	for _, e := range sc.Elements {
		if l := e.Label(); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestRealADBConcurrentCommands runs several adb clients at once; they
// share the one transport, so their streams interleave on the wire.
func TestRealADBConcurrentCommands(t *testing.T) {
	env := startSim(t, "en")
	want, err := env.ADB("exec-out", "screencap", "-p")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 12)
	for i := range 12 {
		go func() {
			switch i % 3 {
			case 0:
				got, err := env.ADB("exec-out", "screencap", "-p")
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("screencap %d: %d bytes differ from the first %d", i, len(got), len(want))
				}
				errs <- err
			case 1:
				got, err := env.ADB("exec-out", "uiautomator", "dump", "/dev/tty")
				if err == nil {
					_, err = perception.Parse(got, perception.Options{})
				}
				errs <- err
			default:
				msg := fmt.Sprintf("client-%d", i)
				got, err := env.ADB("shell", "echo", msg)
				if err == nil && string(got) != msg+"\n" {
					err = fmt.Errorf("echo %d: %q", i, got)
				}
				errs <- err
			}
		}()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
