package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/simadb"
	"phonepilot/device/sim/simusbmux"
	"phonepilot/device/usbmux"
	"phonepilot/internal/npmtest"
)

// usbIPhone runs `phonepilot sim --usbmuxd PATH` (the simulated iPhone on
// a simulated usbmuxd, WDA on its port 8100), points USBMUXD_SOCKET_ADDRESS
// at it as a user would, and returns the UDID it printed and its control
// server's address. The simulator stops when the test ends.
func usbIPhone(t *testing.T, args ...string) (udid, control string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "usbmuxd")
	ctx, cancel := context.WithCancel(context.Background())
	// The control line comes after the iPhone's: wait for both.
	out := &lineWatcher{re: regexp.MustCompile(`(?s)iPhone \(USB\): +(\S+) on usbmuxd.*curl http://\S+/state`), found: make(chan string, 1)}
	root := newRootCmd()
	root.SetArgs(append([]string{"sim", "--usbmuxd", path, "--control", "127.0.0.1:0"}, args...))
	root.SetOut(out)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("phonepilot sim --usbmuxd after Ctrl-C: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("phonepilot sim --usbmuxd did not stop")
		}
	})
	select {
	case udid = <-out.found:
	case err := <-done:
		t.Fatalf("phonepilot sim --usbmuxd exited early: %v\n%s", err, out)
	case <-time.After(30 * time.Second):
		t.Fatalf("phonepilot sim --usbmuxd printed no iPhone line:\n%s", out)
	}
	if !strings.Contains(out.String(), "USBMUXD_SOCKET_ADDRESS=unix:"+path+" phonepilot run --device ios:"+udid) {
		t.Errorf("the simulator does not say how to reach it:\n%s", out)
	}
	m := regexp.MustCompile(`curl http://(\S+)/state`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no control address printed:\n%s", out)
	}
	t.Setenv(usbmux.EnvAddress, "unix:"+path)
	return udid, m[1]
}

// controlState is the simulator's state from its control server.
func controlState(t *testing.T, control string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(httpBody(t, http.MethodGet, "http://"+control+"/state")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// run --device ios:UDID drives the simulated iPhone through usbmuxd, as
// it would an iPhone on a USB cable: the search is made (the simulator's
// state says so) in English and, on a Chinese phone, in Chinese; press_key
// back is refused with what to do instead.
func TestRunOnAnIPhoneOverUSB(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	for _, tc := range []struct{ locale, goal string }{
		{"en", "open Taobao and search Mac mini"},
		{"zh", "打开淘宝搜索Mac mini"},
	} {
		udid, control := usbIPhone(t, "--locale", tc.locale)
		// On the home screen there is no back button to tap.
		code, out, stderr := capture(t, context.Background(), "run", "--no-record", "--device", "ios:"+udid, "go back")
		if code != 1 || !strings.Contains(out+stderr, "an iPhone has no back key: tap the screen's back button") {
			t.Errorf("%s: go back on the home screen: exit %d\n%s\n%s", tc.locale, code, out, stderr)
		}
		code, out, stderr = capture(t, context.Background(), "run", "--no-record", "--device", "ios:"+udid, tc.goal)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", tc.locale, code, out, stderr)
		}
		for _, want := range []string{"launch_app", "type_text", "completed"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q:\n%s", tc.locale, want, out)
			}
		}
		if tb := controlState(t, control)["taobao"].(map[string]any); tb["last_search"] != "Mac mini" {
			t.Errorf("%s: Taobao's last search %v, want Mac mini", tc.locale, tb["last_search"])
		}
	}
}

// `phonepilot devices` lists the iPhone on usbmuxd beside the adb phones,
// with its labels.
func TestDevicesListsIPhonesOnUSB(t *testing.T) {
	env := simadb.StartDevice(t, sizePhone{"Physical size: 1080x2400\n"}, adbd.Config{Model: "One"})
	udid, _ := usbIPhone(t, "--locale", "zh")
	out, _, err := runCLI(t, "devices", "--json", "--adb-server", env.ServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	var rows []deviceRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
		if r.Name == "ios:"+udid {
			if r.Kind != "ios" || r.State != "device" || r.Width != 1080 || r.Labels["platform"] != "ios" || r.Labels["locale"] != "zh" {
				t.Errorf("the iPhone's row: %+v", r)
			}
		}
	}
	if strings.Join(names, " ") != "adb:"+env.Serial+" ios:"+udid {
		t.Errorf("devices lists %v, want the adb phone and ios:%s", names, udid)
	}
}

// With no adb server to ask, `phonepilot devices` still lists the iPhone on
// usbmuxd, and says on stderr what adb could not answer.
func TestDevicesListsIPhonesWithoutAnADBServer(t *testing.T) {
	udid, _ := usbIPhone(t)
	out, errOut, err := runCLI(t, "devices", "--json", "--adb-server", "127.0.0.1:1")
	if err != nil {
		t.Fatalf("devices without an adb server: %v (stderr %q)", err, errOut)
	}
	var rows []deviceRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Name != "ios:"+udid || rows[0].State != "device" {
		t.Errorf("devices lists %+v, want ios:%s alone", rows, udid)
	}
	if !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("stderr %q does not say the adb server at 127.0.0.1:1 did not answer", errOut)
	}
}

// What `run --device ios:UDID` says when usbmuxd is not there, when no
// iPhone has the UDID, and when the iPhone runs no WDA.
func TestRunOnAnIPhoneOverUSBErrors(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	const udid = "00008110-0001A2B3C4D5E6F7"
	runOn := func(name string) (int, string) {
		t.Helper()
		code, out, stderr := capture(t, context.Background(), "run", "--no-record", "--device", name, "open Settings")
		return code, out + stderr
	}

	t.Setenv(usbmux.EnvAddress, "unix:"+filepath.Join(t.TempDir(), "none"))
	if code, out := runOn("ios:" + udid); code == 0 || !strings.Contains(out, "usbmuxd is not running at") || !strings.Contains(out, usbmux.EnvAddress) {
		t.Errorf("no usbmuxd: exit %d\n%s", code, out)
	}

	got, _ := usbIPhone(t)
	if code, out := runOn("ios:00008101-FFFFFFFFFFFFFFFF"); code == 0 || !strings.Contains(out, "lists "+got+", not 00008101-FFFFFFFFFFFFFFFF") {
		t.Errorf("unknown UDID: exit %d\n%s", code, out)
	}

	// An iPhone on usbmuxd without WebDriverAgent running.
	path := filepath.Join(t.TempDir(), "usbmuxd")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	mux := simusbmux.New([]simusbmux.Device{{UDID: udid}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = mux.Serve(ctx, ln); close(done) }()
	defer func() { cancel(); <-done; mux.Close() }()
	t.Setenv(usbmux.EnvAddress, path)
	if code, out := runOn("ios:" + udid); code == 0 || !strings.Contains(out, "nothing listens on the iPhone's port 8100: start WebDriverAgent on it") {
		t.Errorf("no WDA: exit %d\n%s", code, out)
	}
}

// TestThirdPartyUsbmuxClient: appium-ios-device's usbmux client (what
// appium-xcuitest-driver uses to reach a real iPhone; pinned through the
// driver in device/sim/simwda/clients/package-lock.json, installed by npm ci
// under PHONEPILOT_INTEGRATION=1) lists the iPhone `phonepilot sim
// --usbmuxd` plays, tunnels to WDA on its port 8100 and drives it (the
// simulator's state is checked), and gets usbmuxd's refusals.
func TestThirdPartyUsbmuxClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node: not under -short")
	}
	dir := npmtest.Dir(t, "wdaclients", filepath.Join("..", "..", "device", "sim", "simwda", "clients"),
		[]string{"package.json", "package-lock.json", "usbmux.mjs"}, "appium-xcuitest-driver")
	udid, control := usbIPhone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "usbmux.mjs"), udid)
	cmd.Dir = dir // USBMUXD_SOCKET_ADDRESS is in the environment (usbIPhone)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("usbmux.mjs: %v\n%s\n%s", err, outb, stderr.String())
	}
	type call struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	calls := map[string]call{}
	for _, line := range strings.Split(strings.TrimSpace(string(outb)), "\n") {
		var c struct {
			Call string `json:"call"`
			call
		}
		if json.Unmarshal([]byte(line), &c) != nil {
			continue
		}
		t.Logf("%-40s ok=%v %.200s%s", c.Call, c.OK, c.Result, c.Error)
		calls[c.Call] = c.call
	}
	result := func(name string, v any) {
		t.Helper()
		c, ok := calls[name]
		if !ok || !c.OK {
			t.Errorf("%s: ran %v, error %q", name, ok, c.Error)
			return
		}
		if err := json.Unmarshal(c.Result, v); err != nil {
			t.Errorf("%s: %v in %s", name, err, c.Result)
		}
	}
	var udids []string
	result("getConnectedDevices", &udids)
	if len(udids) != 1 || udids[0] != udid {
		t.Errorf("getConnectedDevices %v, want [%s]", udids, udid)
	}
	var dev struct {
		DeviceID   int
		Properties struct {
			SerialNumber, ConnectionType string
			DeviceID                     int
		}
	}
	result("findDevice", &dev)
	if dev.Properties.SerialNumber != udid || dev.Properties.ConnectionType != "USB" || dev.DeviceID != dev.Properties.DeviceID {
		t.Errorf("findDevice %+v", dev)
	}
	type reply struct {
		Status int
		Body   struct {
			Value     json.RawMessage
			SessionID string
		}
	}
	var status reply
	result("GET /status through a tunnel to 8100", &status)
	if status.Status != http.StatusOK || !strings.Contains(string(status.Body.Value), `"ready":true`) {
		t.Errorf("/status through the tunnel: %+v %s", status, status.Body.Value)
	}
	var launch, front reply
	result("launch Settings through a tunnel", &launch)
	result("active app through a tunnel", &front)
	if launch.Status != http.StatusOK || !strings.Contains(string(front.Body.Value), `"com.apple.Preferences"`) {
		t.Errorf("launch %+v, active app %s", launch, front.Body.Value)
	}
	if fg := controlState(t, control)["foreground"]; fg != "com.android.settings" {
		t.Errorf("after the launch through usbmux the simulator shows %v, want Settings", fg)
	}
	for name, want := range map[string]string{
		"connect to port 9100 (nothing there)": "Connection was refused to port 9100",
		"connect to device 99 (not attached)":  `"Number":2`, // usbmuxd's BADDEV
	} {
		if c := calls[name]; c.OK || !strings.Contains(c.Error, want) {
			t.Errorf("%s: ok=%v %q, want an error with %q", name, c.OK, c.Error, want)
		}
	}
	if c := calls["findDevice unknown UDID"]; !c.OK || string(c.Result) != "null" {
		t.Errorf("findDevice of an unknown UDID: ok=%v %s %s, want nothing found", c.OK, c.Result, c.Error)
	}
}
