package simwda_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
	"phonepilot/internal/npmtest"
)

// TestThirdPartyClients drives the simulated iPhone with someone else's
// code: Appium 3 with appium-xcuitest-driver (through webdriverio) and
// mobile-mcp's WebDriverAgent class, pinned by clients/package-lock.json
// and installed with npm ci under PHONEPILOT_INTEGRATION=1 (internal/npmtest). It checks what each call did
// on the simulator's state, not only that the call answered.
func TestThirdPartyClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Appium (~10-30 s): not under -short")
	}
	dir := npmtest.Dir(t, "wdaclients", "clients", []string{"package.json", "package-lock.json", "clients.mjs"}, "appium-xcuitest-driver")
	appium := filepath.Join(dir, "node_modules", ".bin", "appium")
	p, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	wda := httptest.NewServer(simwda.New(p))
	defer wda.Close()
	control := httptest.NewServer(p.ControlHandler())
	defer control.Close()

	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, appium, "--address", "127.0.0.1", "--port", fmt.Sprint(port), "--log-level", "error")
	srv.Env = append(os.Environ(), "APPIUM_HOME="+dir)
	var srvLog bytes.Buffer
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	waitFor(t, ctx, fmt.Sprintf("http://127.0.0.1:%d/status", port), &srvLog)

	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "clients.mjs"), fmt.Sprint(port), wda.URL, control.URL)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("clients.mjs: %v\n%s\n%s", err, outb, stderr.String())
	}
	calls := map[string]struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}{}
	sc := bufio.NewScanner(bytes.NewReader(outb))
	for sc.Scan() {
		var c struct {
			Client, Call string
			OK           bool            `json:"ok"`
			Result       json.RawMessage `json:"result"`
			Error        string          `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			continue
		}
		t.Logf("%-10s %-36s ok=%v %s%s", c.Client, c.Call, c.OK, c.Result, c.Error)
		calls[c.Client+": "+c.Call] = struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
			Error  string          `json:"error"`
		}{c.OK, c.Result, c.Error}
	}
	result := func(name string, v any) {
		t.Helper()
		c, ok := calls[name]
		if !ok || !c.OK {
			t.Errorf("%s: %v %s", name, ok, c.Error)
			return
		}
		if v != nil {
			if err := json.Unmarshal(c.Result, v); err != nil {
				t.Errorf("%s: %v in %s", name, err, c.Result)
			}
		}
	}
	var rect struct{ X, Y, Width, Height int }
	result("appium: find Network row, rect in points", &rect)
	if rect.Width <= 0 || rect.X+rect.Width > 360 || rect.Y+rect.Height > 800 {
		t.Errorf("Network row rect %+v: want points inside the 360×800 screen", rect)
	}
	var sw struct{ Before string }
	result("appium: tap the Wi-Fi switch", &sw)
	var st struct {
		Foreground string
		Settings   struct{ Wifi bool }
		Taobao     json.RawMessage
		Granted    []struct{ App, Permission string }
	}
	if err := json.Unmarshal(must(p.State()), &st); err != nil {
		t.Fatal(err)
	}
	if want := sw.Before != "1"; st.Settings.Wifi != want {
		t.Errorf("wifi %v after Appium tapped the switch (it read %q before)", st.Settings.Wifi, sw.Before)
	}
	var front struct{ BundleID string }
	result("appium: active app after home", &front)
	if front.BundleID != "com.apple.springboard" {
		t.Errorf("after home the app in front is %q, want SpringBoard", front.BundleID)
	}
	result("appium: drag to scroll", nil)
	var state int
	result("appium: Contacts state after terminate", &state)
	if state != 1 {
		t.Errorf("Contacts state %d after terminate, want 1 (not running)", state)
	}
	var value string
	result("appium: field value", &value)
	if value != "苹果手机" || !strings.Contains(string(st.Taobao), "苹果手机") {
		t.Errorf("typed 苹果手机: the field reads %q, Taobao's state %s", value, st.Taobao)
	}
	var shot struct{ Width, Height int }
	result("appium: screenshot", &shot)
	if shot.Width != 360*sim.IOSScale || shot.Height != 800*sim.IOSScale {
		t.Errorf("screenshot %dx%d, want points × scale %dx%d", shot.Width, shot.Height, 360*sim.IOSScale, 800*sim.IOSScale)
	}
	if c := calls["appium: no alert: getAlertText"]; c.OK || !strings.Contains(c.Error, "modal dialog when one was not open") {
		t.Errorf("alert text with no alert open: ok=%v %q, want WDA's no such alert", c.OK, c.Error)
	}
	var text string
	result("appium: alert text", &text)
	if !strings.Contains(text, "notifications") {
		t.Errorf("alert text %q", text)
	}
	result("appium: accept alert", nil)
	granted := false
	for _, g := range st.Granted {
		granted = granted || strings.Contains(g.Permission, "NOTIFICATIONS")
	}
	if !granted {
		t.Errorf("accepting the alert granted nothing: %+v", st.Granted)
	}
	var size struct{ Width, Height, Scale int }
	result("mobile-mcp: getScreenSize", &size)
	if size.Width != 360 || size.Height != 800 || size.Scale != sim.IOSScale {
		t.Errorf("mobile-mcp screen size %+v", size)
	}
	result("mobile-mcp: tap Settings icon", nil)
	if st.Foreground != "com.android.settings" {
		t.Errorf("after mobile-mcp tapped the Settings icon the simulator shows %q", st.Foreground)
	}
	var shot2 struct{ Width, Height int }
	result("mobile-mcp: getScreenshot", &shot2)
	if shot2.Width != 1080 {
		t.Errorf("mobile-mcp screenshot %+v", shot2)
	}
	var stale struct {
		Status int
		Value  struct{ Error string }
	}
	result("raw: call with a stale session", &stale)
	if stale.Status != http.StatusNotFound || stale.Value.Error != "invalid session id" {
		t.Errorf("stale session: %+v, want 404 invalid session id", stale)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t *testing.T, ctx context.Context, url string, log *bytes.Buffer) {
	t.Helper()
	for {
		if r, err := http.Get(url); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Appium did not start: %s", log.String())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
