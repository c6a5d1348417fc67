package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, to read the task database as a file

	"phonepilot/plan/ai/aitest"
)

// Screenshots go to the model and nowhere else: with vision on, a task run
// through `serve` (HTTP API and event stream) and through `run` (its
// SQLite record) leaves no image bytes in any stored row, API body or
// streamed event, raw or encoded. The test reads only the public surfaces
// (HTTP, the database file, stdout), so it holds whatever the packages
// behind them look like.

// imageSignature is one form image bytes can take.
type imageSignature struct {
	name    string
	pattern []byte
	fold    bool // match case-insensitively (hex)
}

// imageSignatures are PNG and JPEG starts raw, in base64 (a PNG at every
// alignment, since an image can sit anywhere in an encoded blob; a JPEG's
// start is too short to look for off-alignment) and in hex.
func imageSignatures() []imageSignature {
	pngStart := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	sigs := []imageSignature{
		{name: "raw PNG", pattern: []byte("\x89PNG")},
		{name: "raw JPEG", pattern: []byte("\xff\xd8\xff")},
		// Raw bytes put through JSON lose the invalid-UTF-8 first byte but
		// keep the rest of the header, escaped or not.
		{name: "PNG header", pattern: []byte("PNG\r\n\x1a\n")},
		{name: "JSON-escaped PNG header", pattern: []byte(`PNG\r\n\u001a\n`), fold: true},
		{name: "base64 JPEG", pattern: []byte("/9j/")},
		{name: "hex PNG", pattern: []byte(hex.EncodeToString(pngStart[:8])), fold: true},
		{name: "hex JPEG", pattern: []byte("ffd8ffe"), fold: true},
		{name: "data URL", pattern: []byte("data:image/"), fold: true},
	}
	// After k bytes of anything, the base64 characters from skip[k] on
	// depend only on the PNG's bytes.
	skip := [3]int{0, 2, 3}
	for k := range 3 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			s := enc.EncodeToString(append(make([]byte, k), pngStart...))
			sigs = append(sigs, imageSignature{name: fmt.Sprintf("base64 PNG (offset %d)", k), pattern: []byte(s[skip[k] : skip[k]+12])})
		}
	}
	return sigs
}

// findImage says which image signature b holds, or "".
func findImage(b []byte) string {
	lower := bytes.ToLower(b)
	for _, s := range imageSignatures() {
		i := bytes.Index(b, s.pattern)
		if s.fold {
			i = bytes.Index(lower, bytes.ToLower(s.pattern))
		}
		if i >= 0 {
			return fmt.Sprintf("%s at byte %d", s.name, i)
		}
	}
	return ""
}

func TestFindImageSeesEveryForm(t *testing.T) {
	img := aitest.PNG(t, 4, 4)
	for name, b := range map[string][]byte{
		"raw":            append([]byte("x"), img...),
		"base64":         []byte(base64.StdEncoding.EncodeToString(img)),
		"base64 shift 1": []byte(base64.StdEncoding.EncodeToString(append([]byte("a"), img...))),
		"base64 shift 2": []byte(base64.StdEncoding.EncodeToString(append([]byte("ab"), img...))),
		"base64 in JSON": fmt.Appendf(nil, `{"s":%q}`, base64.RawURLEncoding.EncodeToString(append([]byte("abc"), img...))),
		"hex":            []byte(strings.ToUpper(hex.EncodeToString(img))),
		"through JSON":   mustJSON(t, string(img)),
		"decoded JSON":   []byte(strings.ToValidUTF8(string(img), "\ufffd")),
		"data URL":       []byte("data:image/png;base64,xyz"),
		"JPEG base64":    []byte(base64.StdEncoding.EncodeToString([]byte("\xff\xd8\xff\xe0\x00\x10JFIF"))),
	} {
		if findImage(b) == "" {
			t.Errorf("%s: image not found", name)
		}
	}
	if got := findImage([]byte(`{"goal":"open Taobao and search Mac mini","steps":[{"tool":"tap","args":{"element":7}}]}`)); got != "" {
		t.Errorf("plain task JSON reported as an image: %s", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scanDatabase checks every row of every table of the SQLite file and
// returns the number of rows per table.
func scanDatabase(t *testing.T, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatalf("list tables of %s: %v", path, err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	counts := map[string]int{}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatalf("read table %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			counts[table]++
			for i, v := range vals {
				var b []byte
				switch v := v.(type) {
				case []byte:
					b = v
				case string:
					b = []byte(v)
				default:
					continue
				}
				if where := findImage(b); where != "" {
					t.Errorf("table %s row %d column %s holds image bytes: %s", table, counts[table], cols[i], where)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return counts
}

// requireRows fails unless the task's tables were written at all, so an
// empty database cannot pass as a clean one.
func requireRows(t *testing.T, counts map[string]int) {
	t.Helper()
	for _, table := range []string{"tasks", "steps", "events"} {
		if counts[table] == 0 {
			t.Errorf("table %s has no rows (tables: %v): nothing was scanned", table, counts)
		}
	}
}

// requireScreenshotsSent fails unless the model really got a screenshot
// with every decision: otherwise there was nothing to leak.
func requireScreenshotsSent(t *testing.T, srv *aitest.ModelServer) {
	t.Helper()
	turns := srv.Turns()
	if len(turns) < 3 {
		t.Fatalf("%d model turns; want a task of several decisions", len(turns))
	}
	for _, tr := range turns {
		if tr.Images != 1 || findImage(tr.Body) == "" {
			t.Errorf("turn %d sent %d images; want the screenshot with every decision (vision on)", tr.N, tr.Images)
		}
	}
}

// aiEnviron is the environment of a phonepilot child process using the
// scripted model with vision on.
func aiEnviron(home, modelURL string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PHONEPILOT_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "OPENAI_") || k == "HOME" || k == "XDG_DATA_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"ANTHROPIC_API_KEY=sk-ant-leaktest-0123456789", "PHONEPILOT_AI_BASE_URL="+modelURL, "PHONEPILOT_AI_VISION=true")
}

func TestScreenshotsNeverReachStorageOrTheAPI(t *testing.T) {
	bin := buildPhonepilot(t)

	t.Run("serve", func(t *testing.T) {
		srv := aitest.NewModelServer(t, taobaoModel)
		home := t.TempDir()
		db := filepath.Join(home, "phonepilot.db")
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db, "--planner", "ai", "--provider", "anthropic")
		cmd.Dir = home
		cmd.Env = aiEnviron(home, srv.URL)
		stderr := &safeBuffer{}
		cmd.Stderr = stderr
		out := &lineWatcher{re: regexp.MustCompile(`serving on (\S+)\n`), found: make(chan string, 1)}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		var base string
		select {
		case base = <-out.found:
			base = strings.TrimSuffix(base, "/")
		case <-exited:
			t.Fatalf("serve exited at start:\n%s%s", out, stderr)
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not start:\n%s", stderr)
		}
		api := newSurfaceClient(t, base)
		id := api.submit(aiGoal, "sim", nil)

		// The whole event stream, from the first event to the end.
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/tasks/"+id+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("event stream: %v (read %d bytes)", err, len(stream))
		}
		if !bytes.Contains(stream, []byte("step_finished")) || !bytes.Contains(stream, []byte("event: end")) {
			t.Fatalf("the event stream has no finished step or no end:\n%.2000s", stream)
		}
		task := api.waitFinal(id, time.Minute)
		if str(task, "status") != "completed" {
			t.Fatalf("task: %s; want completed (stderr:\n%s)", describeTask(task), stderr)
		}
		requireScreenshotsSent(t, srv)

		bodies := map[string][]byte{"event stream": stream}
		for _, path := range []string{"/v1/tasks/" + id, "/v1/tasks/" + id + "/steps", "/v1/tasks", "/v1/devices"} {
			code, body := api.do(http.MethodGet, path, nil)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d: %s", path, code, body)
			}
			bodies["GET "+path] = body
		}
		for what, body := range bodies {
			if where := findImage(body); where != "" {
				t.Errorf("%s holds image bytes: %s", what, where)
			}
		}
		if !bytes.Contains(bodies["GET /v1/tasks/"+id+"/steps"], []byte("type_text")) {
			t.Errorf("the steps body does not list the task's steps: nothing was scanned:\n%.1000s", bodies["GET /v1/tasks/"+id+"/steps"])
		}

		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop on SIGTERM")
		}
		counts := scanDatabase(t, db)
		t.Logf("scanned rows per table: %v", counts)
		requireRows(t, counts)
	})

	t.Run("run", func(t *testing.T) {
		srv := aitest.NewModelServer(t, taobaoModel)
		home := t.TempDir()
		db := filepath.Join(home, "phonepilot.db")
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "run", "--device", "sim", "--db", db, "--planner", "ai", "--provider", "anthropic", "--json", aiGoal)
		cmd.Dir = home
		cmd.Env = aiEnviron(home, srv.URL)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("phonepilot run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		requireScreenshotsSent(t, srv)
		for what, b := range map[string][]byte{"run --json stdout": stdout.Bytes(), "run stderr": stderr.Bytes()} {
			if where := findImage(b); where != "" {
				t.Errorf("%s holds image bytes: %s", what, where)
			}
		}
		counts := scanDatabase(t, db)
		t.Logf("scanned rows per table: %v", counts)
		requireRows(t, counts)
	})
}
