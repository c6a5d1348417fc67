package adb

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/devicetest"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simadb"
	"phonepilot/internal/testlog"
	"phonepilot/perception"
	"phonepilot/scene"
)

// These tests drive the simulated phone through Debian's real adb server:
// simadb starts a private server, `adb connect`s the simulator's adbd, and
// the driver speaks the host protocol to that server. Without adb they
// skip (fail under PHONEPILOT_INTEGRATION=1).

func startSim(t *testing.T, cfg sim.Config) (*simadb.Env, *Device) {
	t.Helper()
	env := simadb.Start(t, cfg)
	d, err := Open(t.Context(), Config{Server: env.ServerAddr, Serial: env.Serial, Logger: testlog.New(t)})
	if err != nil {
		t.Fatalf("Open through the real adb server: %v\nserver log:\n%s", err, env.ServerLog())
	}
	return env, d
}

func TestConformanceThroughRealADB(t *testing.T) {
	devicetest.SimulatorContent(t, func(t *testing.T) device.Device {
		_, d := startSim(t, sim.Config{})
		return d
	})
}

// The device contract every backend passes, on the simulator behind
// Debian's real adb server; the phone vanishes by its adbd stopping.
func TestContractThroughRealADB(t *testing.T) {
	envs := map[device.Device]*simadb.Env{}
	devicetest.Contract(t, devicetest.Target{
		Open: func(t *testing.T) device.Device {
			env, d := startSim(t, sim.Config{})
			envs[d] = env
			return d
		},
		Field:  devicetest.OpenTaobaoSearch,
		Vanish: func(t *testing.T, d device.Device) { envs[d].StopPhone() },
	})
}

// focusTaobaoSearch opens Taobao's search field through the driver.
func focusTaobaoSearch(t *testing.T, d *Device) {
	t.Helper()
	if err := d.LaunchApp(t.Context(), "淘宝"); err != nil {
		t.Fatal(err)
	}
	sc := waitFor(t, d, "Taobao home", func(sc *scene.Scene) bool {
		return sc.Package == "com.taobao.taobao" && elementByID(sc, "com.taobao.taobao:id/home_searchbar") != nil
	})
	if cl := elementByID(sc, "com.taobao.taobao:id/poplayer_close"); cl != nil {
		x, y := cl.Bounds.Center()
		if err := d.Tap(t.Context(), x, y); err != nil {
			t.Fatal(err)
		}
		sc = waitFor(t, d, "promotion closed", func(sc *scene.Scene) bool {
			return elementByID(sc, "com.taobao.taobao:id/poplayer_close") == nil
		})
	}
	x, y := elementByID(sc, "com.taobao.taobao:id/home_searchbar").Bounds.Center()
	if err := d.Tap(t.Context(), x, y); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "a focused search field", func(sc *scene.Scene) bool { return focusedElement(sc) != nil })
}

func elementByID(sc *scene.Scene, id string) *scene.Element {
	for i := range sc.Elements {
		if sc.Elements[i].ResourceID == id {
			return &sc.Elements[i]
		}
	}
	return nil
}

func focusedElement(sc *scene.Scene) *scene.Element {
	for i := range sc.Elements {
		if e := &sc.Elements[i]; e.Focused && e.Editable {
			return e
		}
	}
	return nil
}

func waitFor(t *testing.T, d *Device, what string, cond func(*scene.Scene) bool) *scene.Scene {
	t.Helper()
	var last *scene.Scene
	for i := range 40 {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		sc, err := d.Scene(t.Context())
		if err != nil {
			t.Fatalf("Scene while waiting for %s: %v", what, err)
		}
		if last = sc; cond(sc) {
			return sc
		}
	}
	t.Fatalf("timed out waiting for %s (package %s)", what, last.Package)
	return nil
}

// simField reads the search box straight from the simulator's state, not
// through adb, so the check does not trust the path under test.
func simField(t *testing.T, env *simadb.Env) string {
	t.Helper()
	raw, err := env.Phone.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao struct {
			QueryBox *string `json:"query_box"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if st.Taobao.QueryBox == nil {
		t.Fatalf("the simulator is not on Taobao's search page: %s", raw)
	}
	return *st.Taobao.QueryBox
}

func simIME(t *testing.T, env *simadb.Env) string {
	t.Helper()
	raw, err := env.Phone.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		IME string `json:"ime"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st.IME
}

func TestSimTextArrivesVerbatim(t *testing.T) {
	env, d := startSim(t, sim.Config{})
	focusTaobaoSearch(t, d)
	// The user's own keyboard is active, as on a real phone.
	const gboard = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
	if _, err := d.run(t.Context(), time.Second*5, "ime set "+gboard); err != nil {
		t.Fatal(err)
	}
	if _, err := d.run(t.Context(), time.Second*5, "ime disable "+adbKeyboardIME); err != nil {
		t.Fatal(err)
	}
	imeBefore := simIME(t, env)
	if imeBefore != gboard {
		t.Fatalf("simulator IME = %q after ime set; want %q", imeBefore, gboard)
	}

	ascii := `Mac mini & "quotes" $HOME; rm -rf /`
	if err := d.TypeText(t.Context(), ascii); err != nil {
		t.Fatal(err)
	}
	if got := simField(t, env); got != ascii {
		t.Errorf("simulator field = %q; want %q", got, ascii)
	}

	uni := "苹果电脑 Mac mini 🍎"
	if err := d.TypeText(t.Context(), uni); err != nil {
		t.Fatal(err)
	}
	if got := simField(t, env); got != uni {
		t.Errorf("simulator field = %q; want %q (replacing the previous text)", got, uni)
	}
	if got := simIME(t, env); got != imeBefore || got == adbKeyboardIME {
		t.Errorf("IME after typing = %q; want the previous %q restored", got, imeBefore)
	}
	if out, err := d.run(t.Context(), 5*time.Second, "ime list -s"); err != nil || strings.Contains(string(out), adbKeyboardIME) {
		t.Errorf("enabled IMEs after typing: %q, %v; want ADB Keyboard disabled again", out, err)
	}

	// Back to ASCII: the field is replaced again, and an empty text clears it.
	for _, want := range []string{"it's 100%sure", ""} {
		if err := d.TypeText(t.Context(), want); err != nil {
			t.Fatal(err)
		}
		if got := simField(t, env); got != want {
			t.Errorf("simulator field = %q; want %q", got, want)
		}
	}
}

// Through uiautomator and `input` (the helper sets any text itself: see
// TestHelperThroughRealADB).
func TestSimWithoutADBKeyboard(t *testing.T) {
	env, d := openSim(t, sim.Config{NoADBKeyboard: true}, ObserverUIAutomator)
	focusTaobaoSearch(t, d)
	if err := d.TypeText(t.Context(), "kept"); err != nil {
		t.Fatal(err)
	}
	err := d.TypeText(t.Context(), "苹果电脑 Mac mini 🍎")
	if !errors.Is(err, device.ErrUnsupported) || !strings.Contains(err.Error(), "ADBKeyboard.apk") || !strings.Contains(err.Error(), "adb install") {
		t.Errorf("non-ASCII without ADB Keyboard = %v; want ErrUnsupported with the install hint", err)
	}
	if got := simField(t, env); got != "kept" {
		t.Errorf("field = %q after the refused text; want it untouched", got)
	}
}

func TestSimStopsMidCall(t *testing.T) {
	env, d := startSim(t, sim.Config{})
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	stop := make(chan struct{})
	go func() {
		// Observe and act in a loop, as a task does, until a call fails.
		for i := 0; ; i++ {
			var err error
			switch i % 3 {
			case 0:
				_, err = d.Scene(t.Context())
			case 1:
				_, err = d.Capture(t.Context())
			default:
				err = d.Tap(t.Context(), 540, 1200)
			}
			if err != nil {
				done <- result{err, time.Now()}
				return
			}
			select {
			case <-stop:
				done <- result{nil, time.Now()}
				return
			default:
			}
		}
	}()
	// And one command that is certainly in flight: it runs for 20 s.
	long := make(chan result, 1)
	go func() {
		_, err := d.run(t.Context(), 30*time.Second, "sleep 20")
		long <- result{err, time.Now()}
	}()
	time.Sleep(500 * time.Millisecond)
	stopped := time.Now()
	env.StopPhone()
	select {
	case r := <-long:
		if !errors.Is(r.err, device.ErrDisconnected) {
			t.Errorf("command in flight when the phone stopped = %v; want ErrDisconnected", r.err)
		}
		if el := r.at.Sub(stopped); el > 5*time.Second {
			t.Errorf("in-flight command failed %v after the stop; want within 5s", el)
		} else {
			t.Logf("in-flight command: ErrDisconnected %v after the stop: %v", el, r.err)
		}
	case <-time.After(15 * time.Second):
		t.Error("in-flight command still hanging 15s after the phone stopped")
	}
	select {
	case r := <-done:
		if !errors.Is(r.err, device.ErrDisconnected) {
			t.Fatalf("first failing call after the phone stopped = %v; want ErrDisconnected", r.err)
		}
		if el := r.at.Sub(stopped); el > 5*time.Second {
			t.Errorf("ErrDisconnected %v after the stop; want within 5s", el)
		} else {
			t.Logf("ErrDisconnected %v after the stop: %v", el, r.err)
		}
	case <-time.After(15 * time.Second):
		close(stop)
		t.Fatal("calls kept succeeding or hanging 15s after the phone stopped")
	}
	start := time.Now()
	if _, err := d.Scene(t.Context()); !errors.Is(err, device.ErrDisconnected) || time.Since(start) > 5*time.Second {
		t.Errorf("Scene after the stop = %v after %v; want ErrDisconnected within 5s", err, time.Since(start))
	}
}

func TestSimSceneMatchesInProcess(t *testing.T) {
	env, d := startSim(t, sim.Config{Width: 720, Height: 1600, Locale: "zh"})
	if err := d.LaunchApp(t.Context(), "设置"); err != nil {
		t.Fatal(err)
	}
	sc := waitFor(t, d, "Settings", func(sc *scene.Scene) bool { return sc.Package == "com.android.settings" })
	direct, err := env.Phone.Device().Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Width != 720 || sc.Height != 1600 || sc.Activity != direct.Activity || len(sc.Elements) != len(direct.Elements) {
		t.Errorf("through adb: %dx%d %s %d elements; in process: %s %d elements",
			sc.Width, sc.Height, sc.Activity, len(sc.Elements), direct.Activity, len(direct.Elements))
	}
	f, err := d.Capture(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if w, h := f.Size(); w != 720 || h != 1600 {
		t.Errorf("screenshot %dx%d; want 720x1600", w, h)
	}
}

func TestSimFlakyProfileObservesDuringTransitions(t *testing.T) {
	_, d := startSim(t, sim.Config{Profile: "flaky", Seed: 3})
	ctx := t.Context()
	// Straight after an input the screen animates. The driver reports each
	// failed dump once, as a typed retryable error (the Executor owns dump
	// retries); asked again, as the Executor does, it reads the screen.
	observe := func(what string) {
		t.Helper()
		failures := 0
		for {
			_, err := d.Scene(ctx)
			if err == nil {
				return
			}
			if !perception.Retryable(err) {
				t.Errorf("%s: Scene during the transition: %v; want only retryable failures", what, err)
				return
			}
			if failures++; failures > 10 {
				t.Errorf("%s: still failing after %d dumps: %v", what, failures, err)
				return
			}
		}
	}
	for i, app := range []string{"Settings", "Taobao"} {
		if err := d.LaunchApp(ctx, app); err != nil {
			t.Fatal(err)
		}
		observe(fmt.Sprintf("launch %d (%s)", i, app))
		if err := d.Key(ctx, device.KeyHome); err != nil {
			t.Fatal(err)
		}
		observe(fmt.Sprintf("home %d", i))
	}
}

// The simulator's shell answers `dumpsys package` and getprop as a phone
// does, so the driver reads its app versions and locale through real adb.
func TestSimAppVersionAndLocaleThroughRealADB(t *testing.T) {
	_, d := startSim(t, sim.Config{Locale: "zh", Layout: sim.LayoutChanged})
	name, code, err := d.AppVersion(t.Context(), "com.taobao.taobao")
	if err != nil || name != "10.42.20" || code != 1042200 {
		t.Errorf("Taobao after the redesign: %q %d %v, want 10.42.20 1042200", name, code, err)
	}
	if name, _, err := d.AppVersion(t.Context(), "com.android.settings"); err != nil || name != "14" {
		t.Errorf("Settings: %q %v", name, err)
	}
	if _, _, err := d.AppVersion(t.Context(), "com.nope.app"); !errors.Is(err, device.ErrAppNotFound) {
		t.Errorf("not installed: %v, want ErrAppNotFound", err)
	}
	if l, err := d.Locale(t.Context()); err != nil || l != "zh-CN" {
		t.Errorf("locale %q %v, want zh-CN", l, err)
	}
}
