package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/device/sim/simadb"
)

// lineWatcher is stdout for the command under test: it records output
// and reports the first match of a pattern.
type lineWatcher struct {
	mu    sync.Mutex
	buf   strings.Builder
	re    *regexp.Regexp
	found chan string
	once  sync.Once
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindStringSubmatch(w.buf.String()); m != nil {
		w.once.Do(func() { w.found <- m[1] })
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestSimCommandServesARealADBDevice runs `phonepilot sim` itself, then
// drives it with Debian's adb through a private adb server.
func TestSimCommandServesARealADBDevice(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &lineWatcher{re: regexp.MustCompile(`adb connect (\S+)\n`), found: make(chan string, 1)}
	root := newRootCmd()
	root.SetArgs([]string{"sim", "--adb", "127.0.0.1:0", "--control", "127.0.0.1:0", "--locale", "en", "--seed", "7"})
	root.SetOut(out)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	var adbAddr string
	select {
	case adbAddr = <-out.found:
	case err := <-done:
		t.Fatalf("phonepilot sim exited early: %v\n%s", err, out)
	case <-time.After(30 * time.Second):
		t.Fatalf("phonepilot sim printed no adb connect line:\n%s", out)
	}
	control := regexp.MustCompile(`curl http://(\S+)/state`).FindStringSubmatch(out.String())
	if control == nil {
		t.Fatalf("no control address printed:\n%s", out)
	}

	env := simadb.Attach(t, adbAddr)
	devices, err := env.ADB("devices", "-l")
	if err != nil || !strings.Contains(string(devices), adbAddr+" ") || !strings.Contains(string(devices), " device ") {
		t.Errorf("devices -l: %q, %v", devices, err)
	}
	if _, err := env.ADB("shell", "monkey", "-p", "com.taobao.taobao", "-c", "android.intent.category.LAUNCHER", "1"); err != nil {
		t.Fatal(err)
	}
	if fg := foreground(t, control[1]); fg != "com.taobao.taobao" {
		t.Errorf("GET /state foreground after launching Taobao: %q", fg)
	}
	if fg := dumpsysFocus(t, env); !strings.Contains(fg, "com.taobao.taobao") {
		t.Errorf("dumpsys window focus after monkey: %q", fg)
	}
	httpBody(t, http.MethodPost, "http://"+control[1]+"/reset")
	if fg := dumpsysFocus(t, env); strings.Contains(fg, "com.taobao.taobao") {
		t.Errorf("Taobao still in front after POST /reset: %q", fg)
	}
	if fg := foreground(t, control[1]); fg == "com.taobao.taobao" || fg == "" {
		t.Errorf("GET /state foreground after POST /reset: %q, want the launcher", fg)
	}

	cancel() // Ctrl-C
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("phonepilot sim after Ctrl-C: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("phonepilot sim did not stop after Ctrl-C")
	}
	if st, _ := env.ADB("get-state"); strings.TrimSpace(string(st)) == "device" {
		t.Errorf("adb still sees the phone after the simulator stopped")
	}
}

func dumpsysFocus(t *testing.T, env *simadb.Env) string {
	t.Helper()
	out, err := env.ADB("shell", "dumpsys", "window")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "mCurrentFocus") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// foreground reads the phone's foreground package from the control server.
func foreground(t *testing.T, controlAddr string) string {
	t.Helper()
	var st struct {
		Foreground string `json:"foreground"`
	}
	body := httpBody(t, http.MethodGet, "http://"+controlAddr+"/state")
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("GET /state is not JSON: %v\n%s", err, body)
	}
	return st.Foreground
}

func httpBody(t *testing.T, method, url string) string {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s %s", method, url, resp.Status, body)
	}
	return string(body)
}

func TestSimCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--size", "big"},
		{"sim", "--adb", "nonsense"},
		{"sim", "--adb", "127.0.0.1:0", "--locale", "fr"},
		{"sim", "--adb", "127.0.0.1:0", "--profile", "nosuch"},
	} {
		if code := run(t.Context(), args); code != 2 {
			t.Errorf("phonepilot %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}
