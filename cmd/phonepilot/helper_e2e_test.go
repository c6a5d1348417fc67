package main

import (
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	ppdevice "phonepilot/device"
	"phonepilot/device/adb"
	"phonepilot/device/adb/helper"
	"phonepilot/device/sim/simadb"
	"phonepilot/lifecycle"
	"phonepilot/scene"
	"phonepilot/storage/sqlite"
)

// phonepilot's helper end to end: `phonepilot sim --adb` in its own process
// behind Debian's real adb server, and tasks on adb:127.0.0.1:PORT through
// `phonepilot run` and through `phonepilot serve`. What is checked is what a
// user sees: the stored task's device_info.observer, the observer_switched
// event, the simulator's own state (the typed text), and the helper gone
// from /proc/net/unix after the run.

// helperFallbackLimit bounds what a helper's death costs a task: from the
// driver first seeing the helper fail (or from its restart's kill) to its
// switch to uiautomator, the restart and the stop included.
const helperFallbackLimit = 2 * time.Second

// observedTask is what the test reads back of one task, however it ran.
type observedTask struct {
	status   string
	observer struct {
		Name     string `json:"name"`
		Reason   string `json:"reason"`
		Switches int    `json:"switches"`
		// Failed: when the driver first saw the helper fail; At: when it
		// switched to uiautomator (the driver's own stamps).
		Failed time.Time `json:"failed"`
		At     time.Time `json:"at"`
	}
	switches []string        // the observer_switched events' reasons
	switched []time.Time     // and when they were recorded (run only)
	steps    []time.Duration // each step's duration
	output   string          // the run's output, or serve's stderr
}

func (o *observedTask) String() string {
	return "status " + o.status + ", observer " + o.observer.Name + " (" + o.observer.Reason + "), switch events " + strings.Join(o.switches, " | ")
}

// readObserver reads device_info.observer out of a task's stored config.
func (o *observedTask) readObserver(t *testing.T, config json.RawMessage) {
	t.Helper()
	var c struct {
		Info struct {
			Observer *json.RawMessage `json:"observer"`
		} `json:"device_info"`
	}
	if err := json.Unmarshal(config, &c); err != nil || c.Info.Observer == nil {
		t.Fatalf("the task's config records no device_info.observer (%v): %s", err, config)
	}
	if err := json.Unmarshal(*c.Info.Observer, &o.observer); err != nil {
		t.Fatal(err)
	}
}

// eventReason is the reason an event's data carries.
func eventReason(data []byte) string {
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Reason
}

// runOnHelperSim runs `phonepilot run` on the phone and reads the task back
// from its database: `show --json` for the task, the store for its events.
func runOnHelperSim(t *testing.T, bin, device, adbServer, goal string) *observedTask {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	home := t.TempDir()
	db := filepath.Join(home, "tasks.db")
	env := append(os.Environ(), "HOME="+home, "PHONEPILOT_CONFIG=", "ADB_SERVER_SOCKET=", "PHONEPILOT_OBSERVER=")
	cmd := exec.CommandContext(ctx, bin, "run", "--db", db, "--device", device, "--adb-server", adbServer, goal)
	cmd.Dir, cmd.Env = home, env
	out, err := cmd.CombinedOutput()
	o := &observedTask{output: string(out)}
	if err != nil {
		t.Fatalf("phonepilot run %q: %v\n%s", goal, err, out)
	}
	m := regexp.MustCompile(`(?m)^task (\S+)$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("phonepilot run printed no task id:\n%s", out)
	}
	id := m[1]
	show := exec.CommandContext(ctx, bin, "show", "--db", db, "--json", id)
	show.Dir, show.Env = home, env
	shown, err := show.Output()
	if err != nil {
		t.Fatalf("phonepilot show %s: %v", id, err)
	}
	var doc struct {
		Task struct {
			Status string          `json:"status"`
			Config json.RawMessage `json:"config"`
		} `json:"task"`
		Steps []struct {
			Duration time.Duration `json:"duration_ns"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(shown, &doc); err != nil {
		t.Fatalf("show --json: %v\n%s", err, shown)
	}
	o.status = doc.Task.Status
	o.readObserver(t, doc.Task.Config)
	for _, s := range doc.Steps {
		o.steps = append(o.steps, s.Duration)
	}
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	evs, err := store.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == lifecycle.EventObserverSwitched {
			o.switches = append(o.switches, eventReason(e.Data))
			o.switched = append(o.switched, e.Time)
		}
	}
	return o
}

// serveOnHelperSim submits the goal to a served phonepilot and reads the
// task back through the HTTP API: the task, its steps and its event stream.
func serveOnHelperSim(t *testing.T, sp *serveProcess, device, goal string) *observedTask {
	t.Helper()
	api := newSurfaceClient(t, sp.url)
	id := api.submit(goal, device, nil)
	task := api.waitFinal(id, 2*time.Minute)
	o := &observedTask{status: str(task, "status"), output: sp.stderr.String()}
	cfg, _ := json.Marshal(task["config"])
	o.readObserver(t, cfg)
	code, body := api.do(http.MethodGet, "/v1/tasks/"+id+"/steps", nil)
	if code != http.StatusOK {
		t.Fatalf("GET steps = %d: %s", code, body)
	}
	var steps struct {
		Steps []struct {
			Duration time.Duration `json:"duration_ns"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(body, &steps); err != nil {
		t.Fatalf("steps: %v\n%.500s", err, body)
	}
	for _, s := range steps.Steps {
		o.steps = append(o.steps, s.Duration)
	}
	events, stop := followEvents(t, sp.url, id)
	defer stop()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return o
			}
			if ev.event == string(lifecycle.EventObserverSwitched) {
				// The stream sends the stored event: its data under "data".
				var payload struct {
					Data json.RawMessage `json:"data"`
				}
				_ = json.Unmarshal([]byte(ev.data), &payload)
				o.switches = append(o.switches, eventReason(payload.Data))
			}
		case <-timeout:
			t.Fatalf("the event stream of finished task %s did not end", id)
		}
	}
}

// killRecord is what killHelperTwice did: the pids it killed, the last when.
type killRecord struct {
	pids []int
	last time.Time
}

// killHelperTwice waits for Taobao in front, then kills every helper the
// phone runs (POST /helper/kill) until two have died or quit is closed.
func (s *simProcess) killHelperTwice(quit <-chan struct{}) killRecord {
	var k killRecord
	c := http.Client{Timeout: 5 * time.Second}
	inFront := false
	for len(k.pids) < 2 {
		select {
		case <-quit:
			return k
		case <-time.After(20 * time.Millisecond):
		}
		if !inFront {
			inFront = s.foregroundNow() == "com.taobao.taobao"
			continue
		}
		resp, err := c.Post("http://"+s.control+"/helper/kill", "", nil)
		if err != nil {
			continue
		}
		var r struct {
			Killed []int `json:"killed"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if len(r.Killed) > 0 {
			k.pids, k.last = append(k.pids, r.Killed...), time.Now()
		}
	}
	return k
}

// doctorTrial runs `phonepilot doctor --trial --json` on the phone.
func doctorTrial(t *testing.T, bin, device, adbServer string, extra ...string) (rep doctorReport, code int, out []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	home := t.TempDir()
	args := append([]string{"doctor", "--device", device, "--adb-server", adbServer, "--trial", "--json"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "PHONEPILOT_CONFIG=", "ADB_SERVER_SOCKET=")
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("phonepilot doctor --trial: %v", err)
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor --trial --json: %v\n%s", err, out)
	}
	t.Logf("doctor --trial: exit %d, %s", code, out)
	return rep, code, out
}

// getControl decodes the JSON a GET of path on the simulator's control server answers.
func (s *simProcess) getControl(t *testing.T, path string, v any) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + s.control + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// simTaobao is the simulator's Taobao state (GET /state).
func (s *simProcess) taobaoState(t *testing.T) (lastSearch string, installed []string) {
	t.Helper()
	var st struct {
		Installed []string `json:"installed"`
		Taobao    struct {
			LastSearch string `json:"last_search"`
		} `json:"taobao"`
	}
	s.getControl(t, "/state", &st)
	return st.Taobao.LastSearch, st.Installed
}

// commands is what the simulated phone's shell has run (GET /commands).
func (s *simProcess) commands(t *testing.T) []string {
	t.Helper()
	var out struct {
		Commands []string `json:"commands"`
	}
	s.getControl(t, "/commands", &out)
	return out.Commands
}

// helperListening reports whether the helper's socket is in the phone's
// /proc/net/unix, read with Debian's adb.
func helperListening(t *testing.T, env *simadb.Env) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := env.Command(ctx, "shell", "cat", "/proc/net/unix").CombinedOutput()
	if err != nil {
		t.Fatalf("adb shell cat /proc/net/unix: %v\n%s", err, out)
	}
	return strings.Contains(string(out), "@"+helper.SocketName())
}

func TestHelperEndToEnd(t *testing.T) {
	requireADB(t)
	bin := buildPhonepilot(t)

	// A healthy helper on a phone without ADB Keyboard: the tasks observe
	// through it, and Chinese and emoji reach the field through it (the
	// uiautomator path cannot type them without a keyboard app).
	t.Run("helper", func(t *testing.T) {
		phone := startSimProcess(t, bin, "--no-adb-keyboard")
		env := simadb.Attach(t, phone.adb)
		device := "adb:" + phone.adb
		check := func(t *testing.T, o *observedTask, typed string) {
			t.Helper()
			t.Logf("%v", o)
			if o.status != string(lifecycle.Completed) {
				t.Fatalf("task %v; want completed\n%s", o, o.output)
			}
			if o.observer.Name != "helper" || o.observer.Switches != 0 || len(o.switches) != 0 {
				t.Errorf("observer %+v, switch events %q; want the helper, no switch", o.observer, o.switches)
			}
			last, installed := phone.taobaoState(t)
			if last != typed {
				t.Errorf("the simulator's Taobao last searched %q; want %q typed", last, typed)
			}
			for _, pkg := range installed {
				if strings.Contains(pkg, "adbkeyboard") {
					t.Fatalf("the phone has a keyboard app installed (%s): the test must run without one", pkg)
				}
			}
		}

		t.Run("run", func(t *testing.T) {
			defer phone.reset(t)
			const text = "你好 👋 世界🌏"
			before := len(phone.commands(t))
			o := runOnHelperSim(t, bin, device, env.ServerAddr, "open Taobao and search "+text)
			check(t, o, text)
			// Taobao was started by the helper (the activity manager's
			// binder), not by a `monkey` Java process through the shell.
			for _, c := range phone.commands(t)[before:] {
				if strings.Contains(c, "monkey") {
					t.Errorf("the phone ran %q on the helper's path", c)
				}
			}
			if helperListening(t, env) {
				t.Errorf("the helper still listens on @%s after phonepilot run ended", helper.SocketName())
			}
		})
		// The one check a user runs on a phone: doctor --trial.
		t.Run("doctor-trial", func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trial")
			rep, code, out := doctorTrial(t, bin, device, env.ServerAddr, "--out", dir)
			if code != 0 || !rep.OK || rep.Trial == nil || !rep.Trial.OK {
				t.Fatalf("doctor --trial on a healthy phone: exit %d\n%s", code, out)
			}
			tr := rep.Trial
			if tr.Trees.Read != 20 || tr.Trees.Identical != 20 || tr.Shots.Taken != 5 || !tr.Stop.SocketGone || !tr.Stop.DumpAgain {
				t.Errorf("trial: trees %+v, shots %+v, stop %+v; want 20 trees identical to the dump, 5 screenshots, a clean stop", tr.Trees, tr.Shots, tr.Stop)
			}
			dump, err1 := os.ReadFile(filepath.Join(dir, "uiautomator-dump.xml"))
			tree, err2 := os.ReadFile(filepath.Join(dir, "helper-tree.xml"))
			if err1 != nil || err2 != nil || len(dump) == 0 || string(dump) != string(tree) {
				t.Errorf("--out: the dump (%d bytes, %v) and the helper's tree (%d bytes, %v) should be kept and equal", len(dump), err1, len(tree), err2)
			}
			f, err := os.Open(filepath.Join(dir, "helper-screenshot.png"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 1080 || cfg.Height != 2400 {
				t.Errorf("--out screenshot: %+v %v; want a 1080x2400 PNG", cfg, err)
			}
			if helperListening(t, env) {
				t.Errorf("the helper still listens after the trial")
			}
		})
		// The helper hears toasts (protocol 3) in the simulator's own
		// process, through Debian's adb server and localabstract:: after a
		// task left a product page, a mark, Add to cart, and its toast.
		t.Run("toasts", func(t *testing.T) {
			defer phone.reset(t)
			if o := runOnHelperSim(t, bin, device, env.ServerAddr, "open Taobao and tap the first product"); o.status != string(lifecycle.Completed) {
				t.Fatalf("task %v\n%s", o, o.output)
			}
			ctx := t.Context()
			d, err := adb.Open(ctx, adb.Config{Server: env.ServerAddr, Serial: phone.adb, Observer: adb.ObserverHelper})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			sc, err := d.Scene(ctx)
			if err != nil {
				t.Fatal(err)
			}
			el, ok := sc.Resolve(scene.Selector{Field: scene.FieldID, Value: "com.taobao.taobao:id/add_cart"})
			if !ok {
				t.Fatalf("no Add to cart on %s after the task", sc.Package)
			}
			mark, ts, err := d.ToastsSince(ctx, ppdevice.ToastMark{})
			if err != nil || len(ts) != 0 {
				t.Fatalf("toasts before Add to cart: %v, %v", ts, err)
			}
			x, y := el.Bounds.Center()
			if err := d.Tap(ctx, x, y); err != nil {
				t.Fatal(err)
			}
			want := []ppdevice.Toast{{Package: "com.taobao.taobao", Text: "Added to cart"}}
			if now, ts, err := d.ToastsSince(ctx, mark); err != nil || !reflect.DeepEqual(ts, want) || now.Seq != mark.Seq+1 {
				t.Fatalf("toasts after Add to cart: %v (mark %+v then %+v), %v; want %v", ts, mark, now, err, want)
			}
		})
		t.Run("serve", func(t *testing.T) {
			defer phone.reset(t)
			sp := startServeProcess(t, bin, filepath.Join(t.TempDir(), "phonepilot.db"), "--adb-server", env.ServerAddr)
			const text = "手机壳 🎉"
			check(t, serveOnHelperSim(t, sp, device, "打开淘宝搜索"+text), text)
		})
	})

	// A helper that dies mid-task (each helper the phone starts dies after a
	// few requests: the restart dies too): the task falls back to
	// uiautomator within helperFallbackLimit and completes, and the switch
	// is an event and the stored observer.
	t.Run("crash", func(t *testing.T) {
		phone := startSimProcess(t, bin, "--helper", "crash-after=3")
		env := simadb.Attach(t, phone.adb)
		device := "adb:" + phone.adb
		check := func(t *testing.T, o *observedTask) {
			t.Helper()
			t.Logf("%v; steps %v", o, o.steps)
			if o.status != string(lifecycle.Completed) {
				t.Fatalf("task %v; want completed after the fallback\n%s", o, o.output)
			}
			if o.observer.Name != "uiautomator" || o.observer.Switches != 1 || !strings.Contains(o.observer.Reason, "unexpected EOF") {
				t.Errorf("stored observer %+v; want uiautomator after one switch, the helper's death the reason", o.observer)
			}
			if len(o.switches) != 1 || !strings.Contains(o.switches[0], "observing through uiautomator") {
				t.Errorf("observer_switched events %q; want one, saying it observes through uiautomator", o.switches)
			}
			// What the helper's death cost: from the driver first seeing it
			// fail to its switch (the restart, the restart's death, the
			// stop), on the driver's own stamps. A step's whole time would
			// also count its reads and the planner's, which a loaded machine
			// stretches; the fallback is what the bound is on.
			if o.observer.Failed.IsZero() || o.observer.At.Before(o.observer.Failed) {
				t.Fatalf("stored observer %+v; want when the helper failed and when the driver switched", o.observer)
			}
			took := o.observer.At.Sub(o.observer.Failed)
			t.Logf("the fallback took %v from the helper's first failure to the switch", took)
			if took > helperFallbackLimit {
				t.Errorf("the fallback took %v from the helper's first failure to the switch; a helper's death must cost at most %v", took, helperFallbackLimit)
			}
			if last, _ := phone.taobaoState(t); last != "Mac mini" {
				t.Errorf("the simulator's Taobao last searched %q; want Mac mini", last)
			}
		}
		t.Run("run", func(t *testing.T) {
			defer phone.reset(t)
			check(t, runOnHelperSim(t, bin, device, env.ServerAddr, "open Taobao and search Mac mini"))
		})
		t.Run("serve", func(t *testing.T) {
			defer phone.reset(t)
			sp := startServeProcess(t, bin, filepath.Join(t.TempDir(), "phonepilot.db"), "--adb-server", env.ServerAddr)
			check(t, serveOnHelperSim(t, sp, device, "open Taobao and search Mac mini"))
		})
	})

	// The helper killed mid-task, and its restart killed too, through the
	// simulator's control server (as a phone's low-memory killer would):
	// the driver switches to uiautomator within helperFallbackLimit of
	// the second kill and the task completes.
	t.Run("killed", func(t *testing.T) {
		// The realistic profile, so that the task outlasts two kills: on
		// the fault-free phone the helper now launches Taobao in-process
		// and the whole task took 0.1 s, done before the killer, which
		// waits for Taobao in front, got a second try. The bound is on the
		// driver's switch, whatever the dumps after it cost.
		phone := startSimProcess(t, bin, "--profile", "realistic", "--seed", "1")
		env := simadb.Attach(t, phone.adb)
		quit := make(chan struct{})
		kills := make(chan killRecord, 1)
		go func() { kills <- phone.killHelperTwice(quit) }()
		o := runOnHelperSim(t, bin, "adb:"+phone.adb, env.ServerAddr, frozenGoal)
		close(quit)
		k := <-kills
		t.Logf("%v; killed %v, the last at %v", o, k.pids, k.last.Format("15:04:05.000"))
		if len(k.pids) < 2 {
			t.Fatalf("the task ended before the helper and its restart were killed (killed %v): make the task longer\n%s", k.pids, o.output)
		}
		if o.status != string(lifecycle.Completed) {
			t.Fatalf("task %v; want completed after the fallback\n%s", o, o.output)
		}
		if o.observer.Name != "uiautomator" || o.observer.Switches != 1 || len(o.switches) != 1 {
			t.Fatalf("stored observer %+v, switch events %q; want uiautomator after one switch, one event", o.observer, o.switches)
		}
		// The driver's stamp of its switch, not the event's: the event is
		// recorded at the next observation, after that step's settling
		// reads on uiautomator, which a loaded machine stretches.
		if o.observer.At.IsZero() || len(o.switched) != 1 || o.switched[0].Before(o.observer.At) {
			t.Fatalf("stored observer %+v, switch event at %v; want the switch stamped, the event after it", o.observer, o.switched)
		}
		took := o.observer.At.Sub(k.last)
		t.Logf("the switch was made %v after the second kill (its event recorded %v after)", took, o.switched[0].Sub(k.last))
		if took > helperFallbackLimit {
			t.Errorf("the switch was made %v after the helper's restart was killed; want within %v", took, helperFallbackLimit)
		}
	})

	// A phone that will not run the helper, and one where another tool
	// holds the UiAutomation: each says so plainly, and the task completes
	// on uiautomator.
	for _, c := range []struct{ mode, says string }{
		{"refuse", "phonepilot's helper did not start: ERROR start"},
		{"held", "another tool holds the phone's UiAutomation"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			phone := startSimProcess(t, bin, "--helper", c.mode)
			env := simadb.Attach(t, phone.adb)
			o := runOnHelperSim(t, bin, "adb:"+phone.adb, env.ServerAddr, "open Taobao and search Mac mini")
			t.Logf("%v", o)
			if o.status != string(lifecycle.Completed) {
				t.Fatalf("task %v; want completed on uiautomator\n%s", o, o.output)
			}
			if o.observer.Name != "uiautomator" || !strings.Contains(o.observer.Reason, c.says) {
				t.Errorf("stored observer %+v; want uiautomator, the reason saying %q", o.observer, c.says)
			}
			if len(o.switches) != 1 || !strings.Contains(o.switches[0], c.says) {
				t.Errorf("observer_switched events %q; want one saying %q", o.switches, c.says)
			}
			if !strings.Contains(o.output, c.says) {
				t.Errorf("phonepilot run's output does not say %q:\n%s", c.says, o.output)
			}
			// The trial names the same failure and still checks the stop.
			rep, code, out := doctorTrial(t, bin, "adb:"+phone.adb, env.ServerAddr)
			if code != 1 || rep.OK || rep.Trial == nil || rep.Trial.OK || !strings.Contains(rep.Trial.Start.Error, c.says) || !rep.Trial.Stop.DumpAgain {
				t.Errorf("doctor --trial: exit %d; want 1, the trial failing at the start with %q, uiautomator working after\n%s", code, c.says, out)
			}
		})
	}
}
