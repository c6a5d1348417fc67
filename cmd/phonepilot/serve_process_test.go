package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
)

// buildPhonepilot builds the binary once per test run into a temp dir.
var buildOnce struct {
	sync.Once
	path string
	err  error
	out  []byte
}

func buildPhonepilot(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "phonepilot-bin-")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "phonepilot")
		cmd := exec.Command("go", "build", "-o", buildOnce.path, ".")
		buildOnce.out, buildOnce.err = cmd.CombinedOutput()
	})
	if buildOnce.err != nil {
		t.Fatalf("go build: %v\n%s", buildOnce.err, buildOnce.out)
	}
	return buildOnce.path
}

// serveProcess is `phonepilot serve` running as a child process.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	stderr *safeBuffer
}

type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startServeProcess(t *testing.T, bin, db string, extra ...string) *serveProcess {
	t.Helper()
	home := t.TempDir()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = home // no ./phonepilot.toml
	cmd.Env = append(os.Environ(), "HOME="+home, "PHONEPILOT_CONFIG=", "PHONEPILOT_TOKEN=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sp := &serveProcess{cmd: cmd, stderr: &safeBuffer{}}
	cmd.Stderr = sp.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		_, addr, ok := strings.Cut(line, "serving on ")
		if !ok {
			t.Fatalf("serve printed %q", line)
		}
		sp.url = strings.TrimSuffix(addr, "/")
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start; stderr:\n%s", sp.stderr.String())
	}
	return sp
}

// Kill -9 the server mid-task and start it again: the task is interrupted,
// every step that had finished is there, and the database is intact.
func TestServeKilledMidTask(t *testing.T) {
	t.Parallel() // mostly waiting on the simulated phone or the browser
	bin := buildPhonepilot(t)
	db := filepath.Join(t.TempDir(), "phonepilot.db")
	sp := startServeProcess(t, bin, db, "--sim-profile", "realistic")
	task := postTask(t, sp.url, "open Taobao and search Mac mini", "sim:crash")

	events, stop := followEvents(t, sp.url, task.ID)
	seen := map[int]bool{}
	deadline := time.After(60 * time.Second)
	for len(seen) < 2 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended after %d steps; stderr:\n%s", len(seen), sp.stderr.String())
			}
			if ev.event == "step_finished" {
				var st storage.Step
				json.Unmarshal([]byte(ev.data), &st)
				seen[st.Number] = true
			}
			if ev.event == "end" {
				t.Fatalf("the task ended (%s) before the kill: make it slower", ev.data)
			}
		case <-deadline:
			t.Fatal("no two steps within 60 s")
		}
	}
	if err := sp.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sp.cmd.Wait()
	stop()

	sp2 := startServeProcess(t, bin, db)
	var got storage.Task
	if code := getJSON(t, sp2.url+"/v1/tasks/"+task.ID, &got); code != 200 {
		t.Fatalf("GET task after restart: %d", code)
	}
	if got.Status != lifecycle.Interrupted || !strings.Contains(got.Reason, "stopped") || got.Finished == nil {
		t.Errorf("after kill -9 and restart the task is %s (%q), want interrupted", got.Status, got.Reason)
	}
	var steps struct{ Steps []storage.Step }
	getJSON(t, sp2.url+"/v1/tasks/"+task.ID+"/steps", &steps)
	stored := map[int]bool{}
	for _, st := range steps.Steps {
		stored[st.Number] = true
		if len(st.Scene) == 0 || st.Status == "" {
			t.Errorf("step %d stored incomplete: %+v", st.Number, st.StepRecord)
		}
	}
	for n := range seen {
		if !stored[n] {
			t.Errorf("step %d finished before the kill but is not stored (stored %v)", n, stored)
		}
	}
	t.Logf("%d steps had finished before kill -9; %d stored; task %s: %s", len(seen), len(steps.Steps), got.Status, got.Reason)
	// The event stream of an interrupted task ends instead of waiting forever.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", sp2.url+"/v1/tasks/"+task.ID+"/events", nil)
	if r2, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("event stream after restart: %v", err)
	} else {
		body, _ := io.ReadAll(r2.Body)
		r2.Body.Close()
		if !strings.Contains(string(body), "event: end") || !strings.Contains(string(body), "interrupted") {
			t.Errorf("event stream of the interrupted task: %.300s", body)
		}
	}

	if err := sp2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := sp2.cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v; stderr:\n%s", err, sp2.stderr.String())
	}
	conn, err := sql.Open("sqlite", sqlite.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var check string
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("PRAGMA integrity_check = %q, %v", check, err)
	}
}

// SIGTERM while a client follows a running task: the task is marked
// interrupted first, then the open stream sends that status and its end
// event before the server exits.
func TestServeSIGTERMEndsStreamsWithEnd(t *testing.T) {
	t.Parallel()
	bin := buildPhonepilot(t)
	db := filepath.Join(t.TempDir(), "phonepilot.db")
	sp := startServeProcess(t, bin, db, "--sim-profile", "slow")
	task := postTask(t, sp.url, "open Taobao and search Mac mini", "sim:term")
	events, stop := followEvents(t, sp.url, task.ID)
	defer stop()
	deadline := time.After(60 * time.Second)
	for started := false; !started; {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended early; stderr:\n%s", sp.stderr.String())
			}
			started = ev.event == "step_started"
			if ev.event == "end" {
				t.Fatalf("the task ended (%s) before SIGTERM: make it slower", ev.data)
			}
		case <-deadline:
			t.Fatal("no step started within 60 s")
		}
	}
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var last []streamed
	for ev := range events {
		last = append(last, ev)
	}
	if err := sp.cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
	n := len(last)
	if n < 2 || last[n-1].event != "end" || !strings.Contains(last[n-1].data, `"interrupted"`) ||
		last[n-2].event != "status" || !strings.Contains(last[n-2].data, `"interrupted"`) {
		t.Fatalf("the stream after SIGTERM ended with %+v, want a status interrupted then end", last)
	}
}

// chromiumPath finds Debian's chromium, or skips (fails under
// PHONEPILOT_INTEGRATION=1).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PHONEPILOT_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
		t.Fatal("PHONEPILOT_INTEGRATION=1 but chromium is not installed (apt-get install chromium)")
	}
	t.Skip("chromium not installed (apt-get install chromium); the web page test needs it")
	return ""
}

// The web page in a real browser: start the Taobao task on the simulator
// from the form, watch it run live and complete, and see the step
// wireframes with the acted-on element highlighted.
func TestWebPageInChromium(t *testing.T) {
	t.Parallel() // mostly waiting on the simulated phone or the browser
	chromium := chromiumPath(t)
	a := startServedAPI(t, openTestSQLite(t), "realistic")

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	err := chromedp.Do(ctx,
		chromedp.Navigate(a.url+"/"),
		chromedp.WaitVisible(chromedp.ID("goal")),
		chromedp.SendKeys(chromedp.ID("goal"), "open Taobao and search Mac mini"),
		chromedp.SetValue(chromedp.ID("device"), "sim:web"),
		chromedp.Click(chromedp.ID("start")),
	)
	if err != nil {
		t.Fatalf("browser: start the task: %v", err)
	}
	// Live: a step is on the page while the task still runs.
	liveSteps, err := chromedp.Run(ctx, chromedp.Poll[int](`(() => { const n = document.querySelectorAll("li.step").length;
		return document.getElementById("task-status").textContent === "running" && n >= 1 ? n : 0; })()`,
		chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("browser: no step shown while the task ran: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#task-status[data-status=completed]"))); err != nil {
		t.Fatalf("browser: task never shown completed: %v", err)
	}
	count := func(expr string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("browser: %s: %v", expr, err)
		}
		return n
	}
	steps := count(`document.querySelectorAll("li.step svg.wireframe").length`)
	acted := count(`document.querySelectorAll("svg.wireframe rect.acted").length`)
	rects := count(`document.querySelectorAll("svg.wireframe rect.el").length`)
	path, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	status, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("task-status")))
	// The final screen (the screen after the last action) is the last card.
	finalBoxes, err := chromedp.Run(ctx, chromedp.Poll[int](`(() => { const f = document.getElementById("final-screen");
		const cards = document.querySelectorAll("#steps > li");
		return f && cards[cards.length-1] === f ? f.querySelectorAll("svg.wireframe rect.el").length : 0; })()`,
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil || finalBoxes < 5 {
		t.Errorf("browser: the final screen is not drawn as the last card (%d boxes): %v", finalBoxes, err)
	}
	chromedp.Do(ctx, chromedp.Sleep(2500*time.Millisecond)) // the list refreshes every 2 s
	listText, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("task-list")))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("browser: screenshot: %v", err)
	}
	chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("final-screen")?.scrollIntoView({block: "end"})`))
	finalPNG, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("browser: screenshot of the final screen: %v", err)
	}
	t.Logf("live steps seen while running: %d; steps %d, acted highlights %d, element boxes %d", liveSteps, steps, acted, rects)
	if status != "completed" {
		t.Errorf("task status on the page %q", status)
	}
	if steps < 3 {
		t.Errorf("%d step wireframes on the page, want at least 3", steps)
	}
	if acted < 2 {
		t.Errorf("%d highlighted acted-on elements, want one per step that targets an element (at least 2)", acted)
	}
	if rects < steps*5 {
		t.Errorf("only %d element boxes in %d wireframes", rects, steps)
	}
	if !strings.HasPrefix(path, "/tasks/") {
		t.Errorf("page URL %q, want /tasks/{id}", path)
	}
	if !strings.Contains(listText, "open Taobao and search Mac mini") || !strings.Contains(listText, "completed") {
		t.Errorf("task list: %q", listText)
	}
	if !regexp.MustCompile(`ran \d{1,2}:\d\d:\d\d.*took \d+(\.\d)? (ms|s)`).MatchString(listText) {
		t.Errorf("task list does not say when the task ran and how long it took: %q", listText)
	}
	id := strings.TrimPrefix(path, "/tasks/")
	if task, err := a.store.Task(t.Context(), id); err != nil || task.Status != lifecycle.Completed || task.Device != "sim:web" {
		t.Errorf("stored task %+v, %v", task, err)
	}

	// The cancel button: a second task, cancelled from the page while it runs.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("goal").value = ""`),
		chromedp.SendKeys(chromedp.ID("goal"), "open Settings and tap Display then go back then open Contacts"),
		chromedp.SetValue(chromedp.ID("device"), "sim:web2"),
		chromedp.Click(chromedp.ID("start")),
		chromedp.WaitVisible(chromedp.CSS("#task-status[data-status=running]")),
		chromedp.Click(chromedp.ID("cancel")),
		chromedp.WaitVisible(chromedp.CSS("#task-status[data-status=cancelled]")),
	)
	if err != nil {
		t.Fatalf("browser: cancel from the page: %v", err)
	}
	path2, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if task, err := a.store.Task(t.Context(), strings.TrimPrefix(path2, "/tasks/")); err != nil || task.Status != lifecycle.Cancelled {
		t.Errorf("task cancelled from the page is stored as %+v, %v", task, err)
	}

	out := filepath.Join(t.TempDir(), "web-ui.png")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		out = filepath.Join("..", "..", "docs", "web-ui.png")
	}
	for name, img := range map[string][]byte{out: png, strings.TrimSuffix(out, ".png") + "-final.png": finalPNG} {
		if len(img) > 200<<10 {
			t.Errorf("screenshot is %d KB, want < 200 KB", len(img)>>10)
		}
		if err := os.WriteFile(name, img, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot (%d KB) saved to %s", len(img)>>10, name)
	}
}
