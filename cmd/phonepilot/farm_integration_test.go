package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"phonepilot/lifecycle"
)

// farmDB creates a fresh database on the test server and returns its DSN.
func farmDB(t *testing.T) string {
	t.Helper()
	if os.Getenv("PHONEPILOT_INTEGRATION") != "1" {
		t.Skip("PHONEPILOT_INTEGRATION=1 not set")
	}
	base := os.Getenv("PHONEPILOT_TEST_POSTGRES")
	if base == "" {
		t.Fatal("PHONEPILOT_INTEGRATION=1 but PHONEPILOT_TEST_POSTGRES is unset (eval \"$(scripts/pg-start.sh)\")")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("pp_farm_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// workerProcess is `phonepilot worker` as a child process.
type workerProcess struct {
	name   string
	args   []string
	cmd    *exec.Cmd
	stderr *safeBuffer
}

func startWorkerProcess(t *testing.T, bin, db, name string, extra ...string) *workerProcess {
	t.Helper()
	w := &workerProcess{name: name, args: append([]string{"worker", "--db", db, "--name", name}, extra...)}
	w.start(t, bin)
	return w
}

func (w *workerProcess) start(t *testing.T, bin string) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, w.args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "PHONEPILOT_CONFIG=")
	if w.stderr == nil {
		w.stderr = &safeBuffer{} // kept across restarts
	}
	cmd.Stderr = w.stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.cmd = cmd
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
	})
}

func (w *workerProcess) owner() string {
	h, _ := os.Hostname()
	return h + ":" + strconv.Itoa(w.cmd.Process.Pid)
}

type farmTask struct {
	ID       string            `json:"id"`
	Device   string            `json:"device"`
	Status   lifecycle.Status  `json:"status"`
	Cause    lifecycle.Cause   `json:"cause"`
	Reason   string            `json:"reason"`
	Owner    string            `json:"owner"`
	Created  time.Time         `json:"created"`
	Started  *time.Time        `json:"started"`
	Finished *time.Time        `json:"finished"`
	Labels   map[string]string `json:"-"`
}

func farmPost(t *testing.T, u string, body any, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Errorf("POST %s: %v", u, err)
		return 0
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Errorf("POST %s: %v: %s", u, err, data)
		}
	} else if resp.StatusCode >= 300 {
		t.Logf("POST %s: %d %s", u, resp.StatusCode, data)
	}
	return resp.StatusCode
}

func farmGet(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

type farmDeviceRow struct {
	Name   string            `json:"name"`
	State  string            `json:"state"`
	Worker string            `json:"worker"`
	Labels map[string]string `json:"labels"`
}

func farmDevicesOf(t *testing.T, front string) []farmDeviceRow {
	var out struct {
		Devices []farmDeviceRow `json:"devices"`
	}
	farmGet(t, front+"/v1/devices", &out)
	return out.Devices
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

// TestFarm is the farm's acceptance test: 3 workers with 10 simulated
// phones each, 2 fronts, 300 tasks through both (named devices and "any"
// with labels), one worker killed with -9 mid-run and started again once
// its tasks were marked (as systemd would), cancels from the other front.
func TestFarm(t *testing.T) {
	db := farmDB(t)
	bin := buildPhonepilot(t)
	const perWorker, total = 10, 300
	// A short lease, so the kill is noticed in seconds; not so short that a
	// live worker starved of CPU (2 cores, 35 processes) loses its own.
	fast := []string{"--heartbeat", "300ms", "--lease", "3s", "--sim-profile", "realistic"}
	sims := func(w string) string {
		var s []string
		for i := range perWorker {
			s = append(s, fmt.Sprintf("sim:%s-%d", w, i))
		}
		return strings.Join(s, ",")
	}
	workers := map[string]*workerProcess{}
	for _, w := range []struct{ name, locale string }{{"w1", "en"}, {"w2", "en"}, {"w3", "zh"}} {
		args := append([]string{"--devices", sims(w.name), "--sim-locale", w.locale, "--label", "rack=" + w.name}, fast...)
		workers[w.name] = startWorkerProcess(t, bin, db, w.name, args...)
	}
	fronts := []*serveProcess{startServeProcess(t, bin, db), startServeProcess(t, bin, db)}
	a, b := fronts[0].url, fronts[1].url
	waitFor(t, "30 idle devices", 60*time.Second, func() bool {
		n := 0
		for _, d := range farmDevicesOf(t, b) {
			if d.State == "idle" {
				n++
			}
		}
		return n == 3*perWorker
	})
	for _, d := range farmDevicesOf(t, a) {
		if want := map[string]string{"w1": "en", "w2": "en", "w3": "zh"}[d.Worker]; d.Labels["locale"] != want || d.Labels["rack"] != d.Worker || d.Labels["model"] == "" || d.Labels["screen"] != "1080x2400" {
			t.Errorf("device %s of %s: labels %v", d.Name, d.Worker, d.Labels)
		}
	}

	// Submit 300 tasks, alternating fronts: a third on named devices, a
	// third on any zh phone, a third on any phone at all.
	goals := []string{"open Settings", "open Taobao and search Mac mini", "open Settings, then go home"}
	type submitted struct {
		id, front string
		labels    map[string]string
		named     string
	}
	subs := make([]submitted, total)
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := make([]map[string]any, total)
	for i := range total {
		req := map[string]any{"goal": goals[i%len(goals)]}
		switch i % 3 {
		case 0:
			w := []string{"w1", "w2", "w3"}[rng.IntN(3)]
			req["device"] = fmt.Sprintf("sim:%s-%d", w, rng.IntN(perWorker))
		case 1:
			req["device"], req["labels"] = "any", map[string]string{"locale": "zh"}
		default:
			req["device"] = "any"
		}
		reqs[i] = req
	}
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := range 6 {
		wg.Go(func() {
			for i := g; i < total; i += 6 {
				front := []string{a, b}[i%2]
				var got farmTask
				if code := farmPost(t, front+"/v1/tasks", reqs[i], &got); code != http.StatusAccepted {
					t.Errorf("submit %d: status %d", i, code)
					continue
				}
				s := submitted{id: got.ID, front: front}
				if l, ok := reqs[i]["labels"].(map[string]string); ok {
					s.labels = l
				}
				if reqs[i]["device"] != "any" {
					s.named = reqs[i]["device"].(string)
				}
				mu.Lock()
				subs[i] = s
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	submitTook := time.Since(start)

	running := func(front string) []farmTask {
		var page struct {
			Tasks []farmTask `json:"tasks"`
		}
		farmGet(t, front+"/v1/tasks?status=running&limit=500", &page)
		return page.Tasks
	}
	// Kill w2 with -9 while it runs tasks.
	victim := workers["w2"]
	waitFor(t, "w2 running tasks", 60*time.Second, func() bool {
		for _, rt := range running(a) {
			if rt.Owner == victim.owner() {
				return true
			}
		}
		return false
	})
	victimOwner := victim.owner()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = victim.cmd.Wait()

	// Cancel, from front b, tasks front a submitted that run on live workers.
	byFront := map[string]string{}
	for _, s := range subs {
		byFront[s.id] = s.front
	}
	var cancelLat []time.Duration
	cancelled := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(cancelLat) < 10 && time.Now().Before(deadline) {
		for _, rt := range running(b) {
			if byFront[rt.ID] != a || rt.Owner == victimOwner || cancelled[rt.ID] || len(cancelLat) >= 10 {
				continue
			}
			t0 := time.Now()
			var got farmTask
			code := farmPost(t, b+"/v1/tasks/"+rt.ID+"/cancel", nil, &got)
			lat := time.Since(t0)
			if code == http.StatusConflict {
				continue // it finished first
			}
			if code != http.StatusOK || got.Status != lifecycle.Cancelled {
				t.Errorf("cancel %s from the other front: %d %s", rt.ID, code, got.Status)
				continue
			}
			cancelled[rt.ID] = true
			cancelLat = append(cancelLat, lat)
			if lat > time.Second {
				t.Errorf("cancel of %s took %s across hosts (want < 1 s)", rt.ID, lat)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(cancelLat) < 5 {
		t.Errorf("only %d cancels of running tasks landed", len(cancelLat))
	}

	// The killed worker's tasks are marked once its lease expires.
	var marked time.Duration
	waitFor(t, "the killed worker's tasks marked", 30*time.Second, func() bool {
		for _, rt := range running(a) {
			if rt.Owner == victimOwner {
				return false
			}
		}
		var page struct {
			Tasks []farmTask `json:"tasks"`
		}
		for _, st := range []string{"waiting_approval", "waiting_user"} {
			farmGet(t, a+"/v1/tasks?status="+st+"&limit=500", &page)
			for _, wt := range page.Tasks {
				if wt.Owner == victimOwner {
					return false
				}
			}
		}
		marked = time.Since(killed)
		return true
	})
	// systemd starts it again; its named tasks waited for it.
	victim.start(t, bin)

	sqldb, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	var last time.Time
	for end := time.Now().Add(4 * time.Minute); ; {
		var open int
		if err := sqldb.QueryRow(`SELECT count(*) FROM tasks WHERE status NOT IN ('completed','failed','cancelled','interrupted')`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		if time.Now().After(end) {
			rows, _ := sqldb.Query(`SELECT t.id, t.device, t.status, t.owner, COALESCE(j.queue, ''), COALESCE(j.state::text, '')
				FROM tasks t LEFT JOIN river_job j ON j.args->>'task_id' = t.id
				WHERE t.status NOT IN ('completed','failed','cancelled','interrupted') LIMIT 20`)
			for rows != nil && rows.Next() {
				var id, dev, st, owner, q, js string
				_ = rows.Scan(&id, &dev, &st, &owner, &q, &js)
				t.Logf("not final: %s %s %s owner %s job %s/%s", id, dev, st, owner, q, js)
				for name, w := range workers {
					for _, line := range strings.Split(w.stderr.String(), "\n") {
						if strings.Contains(line, id) {
							t.Logf("  %s: %s", name, line)
						}
					}
				}
			}
			for name, w := range workers {
				t.Logf("worker %s stderr (tail):\n%s", name, tail(w.stderr.String(), 15))
			}
			t.Fatalf("%d tasks not final after 4 minutes", open)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var lastUS int64
	_ = sqldb.QueryRow(`SELECT max(finished_us) FROM tasks`).Scan(&lastUS)
	last = time.UnixMicro(lastUS)

	// Check the record.
	rows, err := sqldb.Query(`SELECT id, device, status, cause, reason, owner, created_us, COALESCE(started_us, 0), COALESCE(finished_us, 0) FROM tasks`)
	if err != nil {
		t.Fatal(err)
	}
	tasks := map[string]farmTask{}
	for rows.Next() {
		var ft farmTask
		var created, started, finished int64
		if err := rows.Scan(&ft.ID, &ft.Device, &ft.Status, &ft.Cause, &ft.Reason, &ft.Owner, &created, &started, &finished); err != nil {
			t.Fatal(err)
		}
		if finished > 0 {
			f := time.UnixMicro(finished)
			ft.Finished = &f
		}
		ft.Created = time.UnixMicro(created)
		if started > 0 {
			s := time.UnixMicro(started)
			ft.Started = &s
		}
		tasks[ft.ID] = ft
	}
	rows.Close()
	if len(tasks) != total {
		t.Errorf("%d tasks stored, want %d", len(tasks), total)
	}
	statuses := map[lifecycle.Status]int{}
	for _, s := range subs {
		ft, ok := tasks[s.id]
		switch {
		case s.id == "":
			continue
		case !ok:
			t.Errorf("task %s lost", s.id)
			continue
		case !ft.Status.Terminal():
			t.Errorf("task %s ended %s", s.id, ft.Status)
		}
		statuses[ft.Status]++
		if ft.Status == lifecycle.Interrupted && ft.Owner != victimOwner {
			t.Errorf("task %s interrupted but ran in %s, not in the killed worker %s (%s)", s.id, ft.Owner, victimOwner, ft.Reason)
		}
		if s.named != "" && ft.Device != s.named {
			t.Errorf("task %s for %s ran on %s", s.id, s.named, ft.Device)
		}
		if s.labels["locale"] == "zh" && ft.Started != nil && !strings.HasPrefix(ft.Device, "sim:w3-") {
			t.Errorf("task %s for any zh phone ran on %s", s.id, ft.Device)
		}
		if ft.Started != nil && ft.Device == "any" {
			t.Errorf("task %s started on no device", s.id)
		}
	}

	// From the stored events: no task ran twice, no device ran two at once.
	// (A final status event follows its status by milliseconds.)
	time.Sleep(time.Second)
	evs, err := sqldb.Query(`SELECT task_id, type, time_us, data FROM events ORDER BY task_id, seq`)
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		id         string
		start, end time.Time
	}
	runs := map[string]*span{}
	starts := map[string]int{}
	for evs.Next() {
		var (
			id, typ string
			at      int64
			data    []byte
		)
		if err := evs.Scan(&id, &typ, &at, &data); err != nil {
			t.Fatal(err)
		}
		if typ == string(lifecycle.EventTaskStarted) {
			starts[id]++
		}
		if typ != string(lifecycle.EventStatus) {
			continue
		}
		var d struct {
			Status lifecycle.Status `json:"status"`
		}
		_ = json.Unmarshal(data, &d)
		ts := time.UnixMicro(at)
		switch {
		case d.Status == lifecycle.Running && runs[id] == nil:
			runs[id] = &span{id: id, start: ts}
		case d.Status.Terminal() && runs[id] != nil:
			runs[id].end = ts
		}
	}
	evs.Close()
	for id, n := range starts {
		if n > 1 {
			t.Errorf("task %s started %d times", id, n)
		}
	}
	perDevice := map[string][]*span{}
	for id, sp := range runs {
		if sp.end.IsZero() {
			t.Errorf("task %s ran but has no final status event", id)
			continue
		}
		perDevice[tasks[id].Device] = append(perDevice[tasks[id].Device], sp)
	}
	for dev, spans := range perDevice {
		sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
		for i := 1; i < len(spans); i++ {
			if spans[i].start.Before(spans[i-1].end) {
				t.Errorf("device %s ran %s (%s–%s) and %s (from %s) at once", dev, spans[i-1].id, spans[i-1].start.Format("15:04:05.000"),
					spans[i-1].end.Format("15:04:05.000"), spans[i].id, spans[i].start.Format("15:04:05.000"))
			}
		}
	}
	if statuses[lifecycle.Interrupted] == 0 {
		t.Errorf("no task was interrupted by the kill (statuses %v)", statuses)
	}

	// Submit → start on an idle device, one task at a time.
	var idle []time.Duration
	for i := range 30 {
		req := map[string]any{"goal": "open Settings", "device": fmt.Sprintf("sim:w1-%d", i%perWorker)}
		if i%2 == 1 {
			req = map[string]any{"goal": "open Settings", "device": "any", "labels": map[string]string{"locale": "zh"}}
		}
		var got farmTask
		if code := farmPost(t, []string{a, b}[i%2]+"/v1/tasks", req, &got); code != http.StatusAccepted {
			t.Fatalf("submit: %d", code)
		}
		var done farmTask
		waitFor(t, "idle task final", 30*time.Second, func() bool {
			farmGet(t, a+"/v1/tasks/"+got.ID, &done)
			return done.Status.Terminal()
		})
		if done.Started != nil {
			idle = append(idle, done.Started.Sub(done.Created))
		}
	}

	// Death to marked, from the stored ends of the killed worker's tasks.
	var lastMarked time.Time
	for _, ft := range tasks {
		if ft.Status == lifecycle.Interrupted && ft.Owner == victimOwner && ft.Finished != nil && ft.Finished.After(lastMarked) {
			lastMarked = *ft.Finished
		}
	}
	marked = lastMarked.Sub(killed)
	failed := 0
	for _, ft := range tasks {
		if ft.Status == lifecycle.Failed && failed < 5 {
			failed++
			t.Logf("failed: %s on %s: %s (%s)", ft.ID, ft.Device, ft.Cause, ft.Reason)
		}
	}

	t.Logf("farm figures (3 workers x %d simulators, 2 fronts, 2 cores shared):", perWorker)
	t.Logf("  statuses: %v; submit of %d tasks took %s", statuses, total, submitTook.Round(time.Millisecond))
	t.Logf("  throughput: %.1f tasks/s across the farm (%d tasks, first submit to last end %s)", float64(total)/last.Sub(start).Seconds(), total, last.Sub(start).Round(time.Millisecond))
	t.Logf("  submit to start on an idle device: p50 %s, p99 %s (%d tasks: named and any+labels)", pct(idle, 0.5).Round(time.Millisecond/10), pct(idle, 0.99).Round(time.Millisecond/10), len(idle))
	t.Logf("  cancel from the other front to cancelled: p50 %s, max %s (%d cancels)", pct(cancelLat, 0.5).Round(time.Millisecond/10), pct(cancelLat, 1).Round(time.Millisecond/10), len(cancelLat))
	t.Logf("  kill -9 of a worker to its last task marked interrupted: %s (lease 3 s; from the stored end times)", marked.Round(time.Millisecond))
	if t.Failed() {
		for name, w := range workers {
			t.Logf("worker %s stderr (tail):\n%s", name, tail(w.stderr.String(), 30))
		}
	}
}

func tail(s string, n int) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
