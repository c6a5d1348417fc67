package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/api"
	"phonepilot/device"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
	"phonepilot/tools"
)

// servedAPI is the real server wiring (runtime, in-process simulators,
// recorder) behind httptest.
type servedAPI struct {
	url   string
	store storage.Store
}

func startServedAPI(t testing.TB, store storage.Store, simProfile string) *servedAPI {
	t.Helper()
	return startServedAPIWith(t, store, simProfile, testlog.New(t))
}

// warnLog logs warnings and errors only through t.Log (the 50-task test
// would otherwise spend its time logging).
func warnLog(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func startServedAPIWith(t testing.TB, store storage.Store, simProfile string, log *slog.Logger) *servedAPI {
	t.Helper()
	devs := newServeDevices(deviceOptions{SimLocale: "en", SimProfile: simProfile, SimSeed: 1, Logger: log, ADBServer: "127.0.0.1:1"})
	url := serveOver(t, store, devs, &runtimeRunner{base: runtime.Defaults(), log: log}, 200*time.Millisecond, log)
	return &servedAPI{url: url, store: store}
}

// servedDevices are what both the task service and the API need of the
// devices (serveDevices, or a test's stand-in).
type servedDevices interface {
	task.Devices
	api.Devices
}

// serveOver serves the API and the page over a task service on store,
// devs and runner behind httptest, closed when the test ends; it returns
// the server's URL.
func serveOver(t testing.TB, store storage.Store, devs servedDevices, runner task.Runner, poll time.Duration, log *slog.Logger) string {
	t.Helper()
	return serveOverAs(t, store, devs, runner, poll, log, nil)
}

// serveOverAs is serveOver with outer, when not nil, wrapped around the
// door: what reaches the listener before the door does (a test's record
// of what arrived, or what else answers on the same address).
func serveOverAs(t testing.TB, store storage.Store, devs servedDevices, runner task.Runner, poll time.Duration, log *slog.Logger, outer func(http.Handler) http.Handler) string {
	t.Helper()
	return serveWith(t, store, devs, runner, task.Config{PollInterval: poll, Logger: log}, outer)
}

// serveWith is serveOverAs with the task service's whole configuration
// (its clock, say).
func serveWith(t testing.TB, store storage.Store, devs servedDevices, runner task.Runner, tcfg task.Config, outer func(http.Handler) http.Handler) string {
	t.Helper()
	log := tcfg.Logger
	svc, err := task.New(tcfg, store, devs, runner)
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Defaults()
	cfg.ApprovalKey = testApprovalKey
	srv, err := api.New(cfg, svc, devs, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Behind the door, as every listener of phonepilot serves.
	ts := httptest.NewUnstartedServer(nil)
	h, err := api.Door(ts.Listener.Addr().String(), api.DoorConfig{}, srv.Handler())
	if err != nil {
		t.Fatal(err)
	}
	if outer != nil {
		h = outer(h)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		ts.Close()
	})
	return ts.URL
}

// testApprovalKey is the approval key of the servers serveOver starts: the
// person's credential for decisions (the page gets it from the approval
// link, pageBoot opens it).
const testApprovalKey = "TESTAPPROVALKEY0123456789"

// postAsPerson posts a decision (approve, deny, answer) with the approval
// key, as the person holding the approval link does.
func postAsPerson(base, id, verb, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/tasks/"+id+"/"+verb, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Phonepilot-Approval", testApprovalKey)
	return http.DefaultClient.Do(req)
}

func openTestSQLite(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "phonepilot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func postTask(t testing.TB, base, goal, dev string) storage.Task {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"goal": goal, "device": dev})
	resp, err := http.Post(base+"/v1/tasks", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var task storage.Task
	if err := json.NewDecoder(resp.Body).Decode(&task); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/tasks = %d (%v)", resp.StatusCode, err)
	}
	return task
}

func getJSON(t testing.TB, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

type streamed struct {
	id, event, data string
	at              time.Time
}

// followEvents opens task id's event stream on the server at base and
// reads it into a channel; stop closes the stream.
func followEvents(t *testing.T, base, id string) (events <-chan streamed, stop func()) {
	t.Helper()
	resp, err := http.Get(base + "/v1/tasks/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan streamed, 1000)
	go readStream(resp.Body, ch)
	return ch, func() { resp.Body.Close() }
}

// readStream parses server-sent events until the stream ends or ctx is done.
func readStream(body io.Reader, out chan<- streamed) {
	defer close(out)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	var ev streamed
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.event != "" {
				ev.at = time.Now()
				out <- ev
			}
			ev = streamed{}
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data += line[6:]
		}
	}
}

// The event stream carries a task's steps on the simulator live, each with
// the Scene it acted on.
func TestServeEventStreamOnSimulator(t *testing.T) {
	t.Parallel() // mostly waiting on the simulated phone or the browser
	a := startServedAPI(t, openTestSQLite(t), "realistic")
	task := postTask(t, a.url, "open Taobao and search Mac mini", "sim:sse")
	events, stop := followEvents(t, a.url, task.ID)
	defer stop()

	var steps []storage.Step
	var stepSeen []time.Time
	var end streamed
	timeout := time.After(60 * time.Second)
loop:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				break loop
			}
			switch ev.event {
			case "step_finished":
				var st storage.Step
				if err := json.Unmarshal([]byte(ev.data), &st); err != nil {
					t.Fatalf("step_finished data: %v", err)
				}
				steps = append(steps, st)
				stepSeen = append(stepSeen, ev.at)
			case "end":
				end = ev
			}
		case <-timeout:
			t.Fatal("the stream did not end within 60 s")
		}
	}
	if !strings.Contains(end.data, `"completed"`) {
		t.Fatalf("stream ended with %q, want completed", end.data)
	}
	if len(steps) < 3 {
		t.Fatalf("%d steps streamed, want at least 3", len(steps))
	}
	var final storage.Task
	getJSON(t, a.url+"/v1/tasks/"+task.ID, &final)
	if final.Finished == nil || !stepSeen[0].Before(*final.Finished) {
		t.Errorf("the first step reached the client at %v, not before the task finished at %v: not live", stepSeen[0], final.Finished)
	}
	for i, st := range steps {
		if st.Number != i+1 || st.Intent == "" || st.Call.Name == "" || len(st.Attempts) == 0 {
			t.Errorf("step %d = %+v", i+1, st.StepRecord)
		}
		var sc struct {
			Width, Height int
			Package       string
			Elements      []struct {
				Index  int    `json:"index"`
				Bounds [4]int `json:"bounds"`
			}
		}
		if err := json.Unmarshal(st.Scene, &sc); err != nil || sc.Width == 0 || len(sc.Elements) == 0 {
			t.Fatalf("step %d scene %.200s: %v", st.Number, st.Scene, err)
		}
		var args struct{ Element *int }
		json.Unmarshal(st.Call.Args, &args)
		if args.Element != nil && (*args.Element < 0 || *args.Element >= len(sc.Elements)) {
			t.Errorf("step %d acted on element %d, not in its Scene of %d elements", st.Number, *args.Element, len(sc.Elements))
		}
	}
	// What was streamed is what was stored.
	var stored struct{ Steps []storage.Step }
	getJSON(t, a.url+"/v1/tasks/"+task.ID+"/steps", &stored)
	if len(stored.Steps) != len(steps) {
		t.Errorf("%d steps stored, %d streamed", len(stored.Steps), len(steps))
	}
}

// runRecorded runs goal on a fresh simulator through a task service over
// store, as `phonepilot run` does, and waits for its records.
func runRecorded(t *testing.T, store storage.Store, goal string, onEvent func(runtime.Event)) (storage.Task, runtime.Result) {
	t.Helper()
	od, err := openDevice(t.Context(), "sim", deviceOptions{SimLocale: "en"})
	if err != nil {
		t.Fatal(err)
	}
	rr := &runtimeRunner{base: runtime.Defaults(), log: testlog.New(t)}
	runner := task.RunnerFunc(func(ctx context.Context, tk storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
		return rr.Run(ctx, tk, dev, func(e runtime.Event) {
			emit(e)
			if onEvent != nil {
				onEvent(e)
			}
		}, person)
	})
	svc, err := task.New(task.Config{Logger: testlog.New(t)}, store, nil, runner)
	if err != nil {
		t.Fatal(err)
	}
	tk, res, err := svc.RunNow(t.Context(), task.Request{Goal: goal, Device: "sim", Planner: "rule"}, od.Device)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	return tk, res
}

// A run is recorded through the one recorder: every step in order, each
// saved before its step_finished event, the task's statuses (queued,
// running, completed) and never the runtime's own status nor a whole Scene
// in an event.
func TestRecorderWritesStepsInOrder(t *testing.T) {
	store := openTestSQLite(t)
	tk, res := runRecorded(t, store, "open Taobao and search Mac mini", nil)
	got, _ := store.Task(t.Context(), tk.ID)
	if got.Status != lifecycle.Completed || got.Finished == nil || got.Reason == "" || len(got.FinalScene) == 0 {
		t.Errorf("recorded task = %+v", got)
	}
	steps, _ := store.Steps(t.Context(), tk.ID)
	if len(steps) != len(res.Steps) || len(steps) < 3 {
		t.Fatalf("%d steps stored for %d run", len(steps), len(res.Steps))
	}
	for i, st := range steps {
		if st.Number != i+1 || st.Intent != res.Steps[i].Intent {
			t.Errorf("stored step %d = %d %q, want %q", i+1, st.Number, st.Intent, res.Steps[i].Intent)
		}
	}
	events, _ := store.Events(t.Context(), tk.ID, 0, 0)
	var statuses []string
	for _, e := range events {
		if e.Type == lifecycle.EventStatus {
			var d task.StatusData
			_ = json.Unmarshal(e.Data, &d)
			statuses = append(statuses, string(d.Status))
		}
		if e.Type == lifecycle.EventSceneObserved && bytes.Contains(e.Data, []byte(`"elements":[`)) {
			t.Errorf("an event stores a whole Scene: %.100s", e.Data)
		}
	}
	if strings.Join(statuses, ",") != "queued,running,completed" {
		t.Errorf("status events %v, want queued, running, completed", statuses)
	}
	if last := events[len(events)-1]; last.Type != lifecycle.EventStatus {
		t.Errorf("last event %s, want the final status", last.Type)
	}
}

func ppCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

func TestTasksAndShowCommands(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pp.db")
	store, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := runRecorded(t, store, "open Taobao and search Mac mini", nil)
	store.CreateTask(t.Context(), storage.Task{Goal: "second", Device: "sim:b", Planner: "rule"})
	store.Close()

	out, err := ppCLI(t, "tasks", "--db", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "queued") || !strings.Contains(lines[2], task.ID) || !strings.Contains(lines[2], "completed") {
		t.Errorf("tasks output:\n%s", out)
	}
	out, _ = ppCLI(t, "tasks", "--db", path, "--status", "completed", "--json")
	var page storage.Page
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID {
		t.Errorf("tasks --json --status completed: %v\n%s", err, out)
	}
	if _, err := ppCLI(t, "tasks", "--db", path, "--status", "asleep"); err == nil || !strings.Contains(err.Error(), "--status") {
		t.Errorf("bad --status: %v", err)
	}

	out, err = ppCLI(t, "show", "--db", path, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{task.ID, "open Taobao and search Mac mini", "completed", "launch_app", "type_text", "Mac mini"} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
	out, _ = ppCLI(t, "show", "--db", path, "--json", task.ID)
	var doc struct {
		Task  storage.Task
		Steps []storage.Step
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Steps) < 3 || len(doc.Steps[0].Scene) == 0 {
		t.Errorf("show --json: %v (%d steps)", err, len(doc.Steps))
	}
	if _, err := ppCLI(t, "show", "--db", path, "nope"); err == nil || !strings.Contains(err.Error(), "no task") {
		t.Errorf("show missing: %v", err)
	}
}

// 50 tasks on 50 in-process simulators through the API all complete. The
// test logs throughput and the latency of the API calls.
func TestFiftyTasksOnFiftySimulators(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { fiftyTasks(t, openTestSQLite(t)) })
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("PHONEPILOT_TEST_POSTGRES")
		if dsn == "" {
			if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
				t.Fatal("PHONEPILOT_INTEGRATION=1 but PHONEPILOT_TEST_POSTGRES is unset (eval \"$(scripts/pg-start.sh)\")")
			}
			t.Skip("PHONEPILOT_TEST_POSTGRES not set (eval \"$(scripts/pg-start.sh)\")")
		}
		fiftyTasks(t, openTestPostgres(t, dsn))
	})
}

// openTestPostgres opens a store in a fresh schema of the test server.
func openTestPostgres(t testing.TB, dsn string) storage.Store {
	t.Helper()
	schema := fmt.Sprintf("pp_cmd_%d", time.Now().UnixNano())
	db, err := sql.Open("pgx", dsn) // the driver storage/postgres registers
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP SCHEMA " + schema + " CASCADE"); db.Close() })
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, err := postgres.Open(context.Background(), dsn+sep+"search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fiftyTasks(t *testing.T, store storage.Store) {
	const n = 50
	a := startServedAPIWith(t, store, "", warnLog(t))
	type call struct {
		kind string
		d    time.Duration
	}
	var (
		mu    sync.Mutex
		calls []call
	)
	timed := func(kind string, f func()) {
		start := time.Now()
		f()
		mu.Lock()
		calls = append(calls, call{kind, time.Since(start)})
		mu.Unlock()
	}
	start := time.Now()
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			timed("POST /v1/tasks", func() {
				ids[i] = postTask(t, a.url, "open Taobao and search Mac mini", fmt.Sprintf("sim:bench%02d", i)).ID
			})
		})
	}
	wg.Wait()
	final := make([]storage.Task, n)
	for i := range n {
		wg.Go(func() {
			deadline := time.Now().Add(90 * time.Second)
			for {
				var task storage.Task
				timed("GET /v1/tasks/{id}", func() { getJSON(t, a.url+"/v1/tasks/"+ids[i], &task) })
				if task.Status.Terminal() || time.Now().After(deadline) {
					final[i] = task
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	// Someone watching the list meanwhile.
	stopList := make(chan struct{})
	var lw sync.WaitGroup
	lw.Go(func() {
		for {
			select {
			case <-stopList:
				return
			case <-time.After(100 * time.Millisecond):
			}
			timed("GET /v1/tasks", func() { getJSON(t, a.url+"/v1/tasks?limit=50", nil) })
		}
	})
	wg.Wait()
	close(stopList)
	lw.Wait()
	elapsed := time.Since(start)

	completed := 0
	for i, task := range final {
		if task.Status == lifecycle.Completed {
			completed++
		} else {
			t.Errorf("task %d on sim:bench%02d: %s %q", i, i, task.Status, task.Reason)
		}
	}
	for _, id := range ids[:3] {
		var steps struct{ Steps []storage.Step }
		timed("GET /v1/tasks/{id}/steps", func() { getJSON(t, a.url+"/v1/tasks/"+id+"/steps", &steps) })
		if len(steps.Steps) < 3 {
			t.Errorf("task %s recorded %d steps", id, len(steps.Steps))
		}
	}
	byKind := map[string][]time.Duration{}
	var all []time.Duration
	for _, c := range calls {
		byKind[c.kind] = append(byKind[c.kind], c.d)
		all = append(all, c.d)
	}
	t.Logf("%d/%d tasks completed in %s: %.1f tasks/s; %d API calls, %.0f calls/s",
		completed, n, elapsed.Round(time.Millisecond), float64(completed)/elapsed.Seconds(), len(all), float64(len(all))/elapsed.Seconds())
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range append(kinds, "all") {
		ds := byKind[k]
		if k == "all" {
			ds = all
		}
		p50, p99 := percentile(ds, 50), percentile(ds, 99)
		t.Logf("  %-26s n=%-5d p50=%-10s p99=%s", k, len(ds), p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond))
	}
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// run, serve, tasks and show find the same database: --db, else the
// configuration, else the user's data directory.
func TestResolveDB(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	os.Unsetenv("PHONEPILOT_CONFIG")
	t.Setenv("PHONEPILOT_DB", "")
	os.Unsetenv("PHONEPILOT_DB")
	t.Chdir(t.TempDir())
	resolve := func(args ...string) string {
		t.Helper()
		cmd := newTasksCmd()
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		db, err := resolveDB(cmd, "")
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	if got := resolve(); got != "" {
		t.Errorf("nothing chosen: %q, want \"\" (the data directory)", got)
	}
	if got := resolve("--db", "/x/y.db"); got != "/x/y.db" {
		t.Errorf("--db: %q", got)
	}
	t.Setenv("PHONEPILOT_DB", "postgres://pp@db/pp")
	if got := resolve(); got != "postgres://pp@db/pp" {
		t.Errorf("PHONEPILOT_DB: %q", got)
	}
	os.Unsetenv("PHONEPILOT_DB")
	// The working directory's phonepilot.toml is not read (a cloned
	// repository could plant it); the user's config directory's is.
	os.WriteFile("phonepilot.toml", []byte("[storage]\ndb = \"/srv/planted.db\"\n"), 0o644)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	if got := resolve(); got != "" {
		t.Errorf("./phonepilot.toml was read: %q", got)
	}
	os.MkdirAll(filepath.Dir(userConfigFile(os.LookupEnv)), 0o755)
	os.WriteFile(userConfigFile(os.LookupEnv), []byte("[storage]\ndb = \"/srv/pp.db\"\n"), 0o644)
	if got := resolve(); got != "/srv/pp.db" {
		t.Errorf("the user's config file: %q", got)
	}
}

// A task that waited two minutes for a person's approval shows its whole
// time in show ("took 2m2s", the start kept through the wait) and how much
// of it was the wait; show --json carries waited_ns.
func TestShowSaysHowLongATaskWaitedForAPerson(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pp.db")
	store, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := store.CreateTask(t.Context(), storage.Task{Goal: "buy the AirPods", Device: "sim", Planner: "rule", MaxSteps: 30})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		from []lifecycle.Status
		to   lifecycle.Status
		at   time.Duration
	}{
		{[]lifecycle.Status{lifecycle.Queued}, lifecycle.Running, 0},
		{[]lifecycle.Status{lifecycle.Running}, lifecycle.WaitingApproval, time.Second},
		{[]lifecycle.Status{lifecycle.WaitingApproval}, lifecycle.Running, 121 * time.Second},
		{[]lifecycle.Status{lifecycle.Running}, lifecycle.Completed, 122 * time.Second},
	} {
		ch := storage.Change{From: c.from, To: c.to, At: t0.Add(c.at)}
		if c.to.Waiting() {
			ch.Pending = &storage.Pending{Kind: lifecycle.PendingApproval, Step: 3, Call: tools.NewCall(tools.Tap, tools.TapArgs{Element: 7}), Category: "payment"}
		}
		if _, err := store.UpdateStatus(t.Context(), tk.ID, ch); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(task.StatusData{Status: c.to})
		if _, err := store.AppendEvent(t.Context(), storage.Event{TaskID: tk.ID, Type: lifecycle.EventStatus, Time: t0.Add(c.at), Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	out, err := ppCLI(t, "show", "--db", path, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "took 2m2s (2m0s of it waiting for a person)") {
		t.Errorf("show: want took 2m2s with the 2m0s wait:\n%s", out)
	}
	out, _ = ppCLI(t, "show", "--db", path, "--json", tk.ID)
	var doc struct {
		Waited time.Duration `json:"waited_ns"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Waited != 2*time.Minute {
		t.Errorf("show --json waited_ns %v (%v); want 2m0s", doc.Waited, err)
	}
	// The list says it too: TOOK 2m2s, WAITED 2m0s.
	out, _ = ppCLI(t, "tasks", "--db", path)
	if !regexp.MustCompile(`(?m)WAITED.*\n` + tk.ID + `\s.*\s2m2s\s+2m0s\s+buy the AirPods`).MatchString(out) {
		t.Errorf("tasks: want the task's row with took 2m2s and waited 2m0s:\n%s", out)
	}
	out, _ = ppCLI(t, "tasks", "--db", path, "--json")
	var page struct {
		Tasks []struct {
			Waited time.Duration `json:"waited_ns"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Tasks) != 1 || page.Tasks[0].Waited != 2*time.Minute {
		t.Errorf("tasks --json: %+v (%v); want waited_ns of 2m0s", page.Tasks, err)
	}
}
