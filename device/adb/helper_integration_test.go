package adb

import (
	"errors"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simadb"
	"phonepilot/internal/testlog"
	"phonepilot/scene"
)

// phonepilot's helper on the simulated phone, through Debian's adb server:
// pushed by the sync client, started with app_process, reached through
// localabstract:, and the fallback to uiautomator when it fails.

func openSim(t *testing.T, cfg sim.Config, observer Observer) (*simadb.Env, *Device) {
	t.Helper()
	env := simadb.Start(t, cfg)
	d, err := Open(t.Context(), Config{Server: env.ServerAddr, Serial: env.Serial, Logger: testlog.New(t), Observer: observer})
	if err != nil {
		t.Fatalf("Open: %v\nserver log:\n%s", err, env.ServerLog())
	}
	t.Cleanup(func() { d.Close() })
	return env, d
}

func adbShell(t *testing.T, env *simadb.Env, cmd string) string {
	t.Helper()
	out, err := exec.Command(env.ADBPath, "-P", strconv.Itoa(env.ServerPort), "-s", env.Serial, "shell", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("adb shell %s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

func TestHelperThroughRealADB(t *testing.T) {
	env, d := openSim(t, sim.Config{NoADBKeyboard: true}, ObserverAuto)
	ctx := t.Context()
	if _, err := d.Scene(ctx); err != nil {
		t.Fatal(err)
	}
	if o := d.Observer(); o.Name != "helper" {
		t.Fatalf("observer %+v; want the helper", o)
	}
	// Pushed under its content hash, running, listening where adb sees it.
	st, err := d.client.Stat(ctx, d.serial, helper.RemotePath())
	if err != nil || st.Size != uint32(len(helper.Dex())) {
		t.Fatalf("pushed dex: %+v %v", st, err)
	}
	if pids := env.Phone.HelperPIDs(); len(pids) != 1 {
		t.Fatalf("helper processes %v", pids)
	}
	if unix := adbShell(t, env, "cat /proc/net/unix"); !strings.Contains(unix, "@"+helper.SocketName()) {
		t.Fatalf("/proc/net/unix:\n%s", unix)
	}
	// Chinese and emoji with no keyboard app (the phone has no ADB Keyboard).
	focusTaobaoSearch(t, d)
	if err := d.TypeText(ctx, "你好 👋 wifi"); err != nil {
		t.Fatal(err)
	}
	state, _ := env.Phone.State()
	if !strings.Contains(string(state), "你好 👋 wifi") {
		t.Fatalf("the simulator's state lacks the typed text:\n%s", state)
	}
	// The change counter (device.ChangeCounter) through the helper.
	c1, err := d.ScreenChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Key(ctx, device.KeyBack); err != nil {
		t.Fatal(err)
	}
	if c2, err := d.ScreenChanges(ctx); err != nil || c2.Count <= c1.Count {
		t.Fatalf("changes %d then %d after a key (%v); want it to grow", c1.Count, c2.Count, err)
	}
	if env.Phone.HelperStarts() != 1 {
		t.Fatalf("helper started %d times", env.Phone.HelperStarts())
	}
	// Stop: only its own pid; nothing left listening.
	d.Close()
	if pids := env.Phone.HelperPIDs(); len(pids) != 0 {
		t.Fatalf("helper still running after Close: %v", pids)
	}
}

func TestHelperKilledMidTaskFallsBack(t *testing.T) {
	env, d := openSim(t, sim.Config{}, ObserverAuto)
	ctx := t.Context()
	if _, err := d.Scene(ctx); err != nil {
		t.Fatal(err)
	}
	// Kill it twice over: the restart's helper dies too (a phone that keeps killing it).
	for i := 0; i < 2; i++ {
		for _, pid := range env.Phone.HelperPIDs() {
			env.Phone.KillHelper(pid, 137)
		}
		start := time.Now()
		if _, err := d.Scene(ctx); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("the Scene after the kill took %v", took)
		}
	}
	o := d.Observer()
	if o.Name != "uiautomator" || o.Switches != 1 || !strings.Contains(o.Reason, "helper tree failed") {
		t.Fatalf("observer after two kills: %+v; want uiautomator, one switch, the reason", o)
	}
	if env.Phone.HelperStarts() != 2 {
		t.Errorf("helper started %d times; want 2 (one restart)", env.Phone.HelperStarts())
	}
	if pids := env.Phone.HelperPIDs(); len(pids) != 0 {
		t.Errorf("a helper still runs after the fallback: %v", pids)
	}
}

func TestHelperStartRefusedAndHeld(t *testing.T) {
	for _, mode := range []string{sim.HelperRefuse, sim.HelperHeld} {
		t.Run(mode, func(t *testing.T) {
			_, d := openSim(t, sim.Config{Helper: mode}, ObserverAuto)
			sc, err := d.Scene(t.Context())
			if err != nil || len(sc.Elements) == 0 {
				t.Fatalf("fallback scene: %v", err)
			}
			want := map[string]string{
				sim.HelperRefuse: "phonepilot's helper did not start: ERROR start java.lang.SecurityException",
				sim.HelperHeld:   "phonepilot's helper cannot start: another tool holds the phone's UiAutomation",
			}[mode]
			o := d.Observer()
			if o.Name != "uiautomator" || o.Switches != 1 || !strings.Contains(o.Reason, want) {
				t.Fatalf("observer %+v; want uiautomator after one switch, saying %q", o, want)
			}
			t.Logf("reason: %s", o.Reason)
			// Asked for the helper only: the call fails with the same plain message.
			_, dh := openSim(t, sim.Config{Helper: mode}, ObserverHelper)
			_, err = dh.Scene(t.Context())
			var se *HelperStartError
			if !errors.As(err, &se) || se.Held != (mode == sim.HelperHeld) || !strings.Contains(err.Error(), want) {
				t.Fatalf("--observer helper: %v", err)
			}
		})
	}
}

// phonepilot doctor's checks (Checkup) on the simulator behind adb: all
// pass on a healthy phone; each broken setup the simulator plays fails the
// checks it breaks, with a fix.
func TestCheckup(t *testing.T) {
	failed := func(checks []device.Check) []string {
		var out []string
		for _, c := range checks {
			if !c.OK {
				if c.Fix == "" {
					t.Errorf("failed check %q has no fix", c.Name)
				}
				out = append(out, c.Name)
			}
		}
		return out
	}
	for mode, want := range map[string]string{
		sim.HelperOK:     "",
		sim.HelperRefuse: "helper starts and answers,input injection allowed",
		sim.HelperHeld:   "helper starts and answers,input injection allowed,UiAutomation free",
		"crash-after=1":  "helper starts and answers,input injection allowed",
	} {
		t.Run("helper="+mode, func(t *testing.T) {
			env, d := openSim(t, sim.Config{Helper: mode}, ObserverAuto)
			checks := d.Checkup(t.Context())
			if got := strings.Join(failed(checks), ","); got != want {
				t.Fatalf("failed checks %q; want %q\n%+v", got, want, checks)
			}
			if len(checks) != 8 {
				t.Errorf("%d checks; want 8", len(checks))
			}
			if pids := env.Phone.HelperPIDs(); len(pids) != 0 {
				t.Errorf("the checkup left a helper running: %v", pids)
			}
		})
	}
}

// monkeys lists the `monkey` commands the phone's shell ran.
func monkeys(env *simadb.Env) []string {
	var out []string
	for _, c := range env.Phone.CommandLog() {
		if strings.Contains(c, "monkey") {
			out = append(out, c)
		}
	}
	return out
}

func front(t *testing.T, d *Device) string {
	t.Helper()
	f, err := d.Foreground(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return f.Package
}

// On the helper's path an app starts inside the helper (the activity
// manager's binder): no `monkey` Java process runs on the phone.
func TestHelperLaunchesWithoutMonkey(t *testing.T) {
	env, d := openSim(t, sim.Config{}, ObserverAuto)
	ctx := t.Context()
	for _, app := range []string{"Settings", "淘宝", "com.google.android.deskclock"} {
		if err := d.LaunchApp(ctx, app); err != nil {
			t.Fatalf("launch %s: %v", app, err)
		}
	}
	if got := front(t, d); got != "com.google.android.deskclock" {
		t.Fatalf("in front after the launches: %s", got)
	}
	if m := monkeys(env); len(m) != 0 {
		t.Fatalf("the phone ran monkey on the helper's path: %q", m)
	}
	if o := d.Observer(); o.Name != "helper" || env.Phone.HelperStarts() != 1 {
		t.Fatalf("observer %+v after %d helper starts", o, env.Phone.HelperStarts())
	}
	// A package the phone lists but that has nothing to launch: the
	// helper's "no launcher activity" is device.ErrAppNotFound, as monkey's
	// "No activities found" is.
	err := d.LaunchApp(ctx, "com.android.systemui")
	if !errors.Is(err, device.ErrAppNotFound) {
		t.Fatalf("launch of a package without a launcher activity: %v; want ErrAppNotFound", err)
	}
	if m := monkeys(env); len(m) != 0 {
		t.Fatalf("monkey ran for it: %q", m)
	}
	// The uiautomator path keeps monkey.
	envU, dU := openSim(t, sim.Config{}, ObserverUIAutomator)
	if err := dU.LaunchApp(ctx, "Settings"); err != nil {
		t.Fatal(err)
	}
	if m := monkeys(envU); len(m) != 1 || !strings.Contains(m[0], "monkey -p com.android.settings") {
		t.Fatalf("uiautomator path: monkey commands %q; want one for Settings", m)
	}
}

// When the helper cannot start the app the launch goes through monkey:
// a helper of protocol 1 (it is not asked, and stays in use for the rest),
// one whose starts the activity manager refuses (monkey for that launch),
// and one that dies (restarted once; dead again, given up for good, and
// the launch is monkey's).
func TestHelperLaunchFallsBackToMonkey(t *testing.T) {
	for _, mode := range []string{sim.HelperOld, sim.HelperNoLaunch, sim.HelperRefuse} {
		t.Run(mode, func(t *testing.T) {
			env, d := openSim(t, sim.Config{Helper: mode}, ObserverAuto)
			ctx := t.Context()
			for _, app := range []string{"Settings", "Contacts"} {
				if err := d.LaunchApp(ctx, app); err != nil {
					t.Fatalf("launch %s: %v", app, err)
				}
			}
			if got := front(t, d); got != "com.android.contacts" {
				t.Fatalf("in front: %s", got)
			}
			if m := monkeys(env); len(m) != 2 || !strings.Contains(m[0], "monkey -p com.android.settings") {
				t.Fatalf("monkey commands %q; want one per launch", m)
			}
			o := d.Observer()
			if mode == sim.HelperRefuse {
				if o.Name != "uiautomator" {
					t.Fatalf("observer %+v; want uiautomator after the helper could not start", o)
				}
				return
			}
			// The helper itself is fine: it stays the observer, started once.
			if o.Name != "helper" || o.Switches != 0 || env.Phone.HelperStarts() != 1 {
				t.Fatalf("observer %+v after %d helper starts; want the helper, never restarted", o, env.Phone.HelperStarts())
			}
			if _, err := d.Scene(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("dies", func(t *testing.T) {
		// Each helper dies at its second request.
		env, d := openSim(t, sim.Config{Helper: "crash-after=1"}, ObserverAuto)
		ctx := t.Context()
		if _, err := d.Scene(ctx); err != nil {
			t.Fatal(err)
		}
		// The first helper dies at the launch; the restarted one starts the app.
		if err := d.LaunchApp(ctx, "Settings"); err != nil {
			t.Fatal(err)
		}
		if m := monkeys(env); len(m) != 0 || env.Phone.HelperStarts() != 2 || front(t, d) != "com.android.settings" {
			t.Fatalf("after a death at launch: monkey %q, %d helper starts, %s in front; want the restarted helper's launch", m, env.Phone.HelperStarts(), front(t, d))
		}
		// The restarted one dies too: uiautomator for good, and monkey launches.
		if _, err := d.Scene(ctx); err != nil {
			t.Fatal(err)
		}
		if err := d.LaunchApp(ctx, "Clock"); err != nil {
			t.Fatal(err)
		}
		if m := monkeys(env); len(m) != 1 || !strings.Contains(m[0], "monkey -p com.google.android.deskclock") || front(t, d) != "com.google.android.deskclock" {
			t.Fatalf("after the helper was given up: monkey %q, %s in front", m, front(t, d))
		}
		if o := d.Observer(); o.Name != "uiautomator" || o.Switches != 1 {
			t.Fatalf("observer %+v", o)
		}
	})
}

// The toasts the helper hears (protocol 3, device.ToastWatcher) through
// Debian's adb server and the simulator's adbd: Add to cart's "Added to
// cart" after a mark taken before the press, nothing after the mark taken
// after it; after the helper is killed and restarted, the old mark is
// before all of the new helper's toasts (its numbers start again). A
// helper of protocol 2 is not asked (ErrUnsupported, and it stays the
// observer), nor is uiautomator.
func TestHelperHearsToastsThroughRealADB(t *testing.T) {
	env, d := openSim(t, sim.Config{}, ObserverAuto)
	ctx := t.Context()
	focusTaobaoSearch(t, d)
	if err := d.TypeText(ctx, "Kindle"); err != nil {
		t.Fatal(err)
	}
	tapID := func(id string) {
		t.Helper()
		sc := waitFor(t, d, id, func(sc *scene.Scene) bool { return elementByID(sc, "com.taobao.taobao:id/"+id) != nil })
		x, y := elementByID(sc, "com.taobao.taobao:id/"+id).Bounds.Center()
		if err := d.Tap(ctx, x, y); err != nil {
			t.Fatal(err)
		}
	}
	tapID("search_button")
	tapID("search_item")
	waitFor(t, d, "the product page", func(sc *scene.Scene) bool { return elementByID(sc, "com.taobao.taobao:id/add_cart") != nil })
	mark, ts, err := d.ToastsSince(ctx, device.ToastMark{})
	pids := env.Phone.HelperPIDs()
	if err != nil || len(ts) != 0 || len(pids) != 1 || mark.Source != strconv.Itoa(pids[0]) {
		t.Fatalf("toasts before Add to cart: %v (mark %+v, helpers %v), %v; want none, the helper's pid as the source", ts, mark, pids, err)
	}
	tapID("add_cart")
	want := []device.Toast{{Package: "com.taobao.taobao", Text: "Added to cart"}}
	now, ts, err := d.ToastsSince(ctx, mark)
	if err != nil || !reflect.DeepEqual(ts, want) || now.Seq != mark.Seq+1 {
		t.Fatalf("toasts after Add to cart: %v (mark %+v), %v; want %v", ts, now, err, want)
	}
	if _, ts, err := d.ToastsSince(ctx, now); err != nil || len(ts) != 0 {
		t.Fatalf("toasts after the latest mark: %v, %v; want none", ts, err)
	}
	// Killed: the restarted helper heard nothing yet, and numbers from 1.
	env.Phone.KillHelper(pids[0], 137)
	if again, ts, err := d.ToastsSince(ctx, now); err != nil || len(ts) != 0 || again.Source == now.Source || again.Seq != 0 {
		t.Fatalf("toasts from the restarted helper: %v (mark %+v), %v; want none from a new source", ts, again, err)
	}
	tapID("add_cart")
	if _, ts, err := d.ToastsSince(ctx, device.ToastMark{Seq: 99, Source: now.Source}); err != nil || !reflect.DeepEqual(ts, want) {
		t.Fatalf("toasts of the restarted helper after the old helper's mark: %v, %v; want %v", ts, err, want)
	}
	if o := d.Observer(); o.Name != "helper" || env.Phone.HelperStarts() != 2 {
		t.Fatalf("observer %+v after %d starts", o, env.Phone.HelperStarts())
	}

	_, d2 := openSim(t, sim.Config{Helper: sim.HelperNoToasts}, ObserverAuto)
	if _, _, err := d2.ToastsSince(ctx, device.ToastMark{}); !errors.Is(err, device.ErrUnsupported) {
		t.Fatalf("toasts from a protocol-2 helper: %v; want ErrUnsupported", err)
	}
	if _, err := d2.Scene(ctx); err != nil || d2.Observer().Name != "helper" {
		t.Fatalf("a protocol-2 helper after a toasts request: observer %+v, %v", d2.Observer(), err)
	}
	_, d3 := openSim(t, sim.Config{}, ObserverUIAutomator)
	if _, _, err := d3.ToastsSince(ctx, device.ToastMark{}); !errors.Is(err, device.ErrUnsupported) {
		t.Fatalf("toasts on the uiautomator path: %v; want ErrUnsupported", err)
	}
}
