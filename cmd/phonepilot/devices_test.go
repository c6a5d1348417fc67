package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb"
	"phonepilot/device/backend"
	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/simadb"
)

// sizePhone is the least a phone must answer for `phonepilot devices`.
type sizePhone struct{ size string }

func (p sizePhone) Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int {
	if cmdline == "wm size" {
		io.WriteString(stdout, p.size)
		return 0
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", cmdline)
	return 127
}
func (sizePhone) ReadFile(name string) ([]byte, error)        { return nil, fs.ErrNotExist }
func (sizePhone) WriteFile(string, []byte, fs.FileMode) error { return fs.ErrPermission }
func (sizePhone) Stat(name string) (fs.FileInfo, error)       { return nil, fs.ErrNotExist }
func (sizePhone) ReadDir(name string) ([]fs.FileInfo, error)  { return nil, fs.ErrNotExist }

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

func TestDevicesCommand(t *testing.T) {
	env := simadb.StartDevice(t, sizePhone{"Physical size: 1440x3200\nOverride size: 720x1600\n"}, adbd.Config{Model: "Pixel 9 Pro"})
	out, _, err := runCLI(t, "devices", "--adb-server", env.ServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Fields(lines[0])[0] != "NAME" {
		t.Fatalf("table:\n%s", out)
	}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != "adb:"+env.Serial+" device Pixel_9_Pro 720x1600" {
		t.Errorf("row = %q; want the device name, state, model, the override size", got)
	}

	out, _, err = runCLI(t, "devices", "--json", "--adb-server", "tcp:"+env.ServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	var rows []deviceRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("json %q: %v", out, err)
	}
	if r := rows[0]; r.Name != "adb:"+env.Serial || r.Kind != "adb" || r.State != "device" || r.Model != "Pixel_9_Pro" || r.Width != 720 || r.Height != 1600 {
		t.Errorf("json row = %+v", r)
	}
}

func TestDevicesCommandWithoutServer(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, _, err := runCLI(t, "devices", "--adb-server", addr)
	if !errors.Is(err, adb.ErrServerUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("devices with no server = %v; want a clear error naming %s", err, addr)
	}
	_, _, err = runCLI(t, "devices", "--adb-server", "nonsense")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("bad --adb-server = %v; want exit status 2", err)
	}
}

func TestOpenDeviceADBForms(t *testing.T) {
	env := simadb.StartDevice(t, sizePhone{"Physical size: 1080x2400\n"}, adbd.Config{Model: "One"})
	ctx := t.Context()
	o := deviceOptions{ADBServer: env.ServerAddr}

	od, err := openDevice(ctx, "adb", o)
	if err != nil {
		t.Fatal(err)
	}
	if od.Name != "adb:"+env.Serial || od.Camera == nil || od.State != nil || od.Close() != nil {
		t.Errorf("adb opened = %+v", od)
	}
	od, err = openDevice(ctx, "adb:"+env.Serial, o)
	if err != nil || od.Name != "adb:"+env.Serial {
		t.Errorf("adb:SERIAL = %+v, %v", od, err)
	}
	if _, err := openDevice(ctx, "adb:nosuch", o); err == nil || !strings.Contains(err.Error(), env.Serial) {
		t.Errorf("adb:nosuch = %v; want an error listing the attached phone", err)
	}
	for _, bad := range []string{"", "usb", "adb:", "simulator"} {
		_, err := openDevice(ctx, bad, o)
		if !errors.Is(err, errDeviceSpec) || !strings.Contains(err.Error(), "adb:SERIAL") {
			t.Errorf("openDevice(%q) = %v; want errDeviceSpec listing the forms", bad, err)
		}
	}

	// A second phone on the same server: plain "adb" must refuse and name both.
	env2 := simadb.StartDevice(t, sizePhone{"Physical size: 720x1280\n"}, adbd.Config{Model: "Two"})
	c, _ := adb.NewClient(env.ServerAddr)
	if _, err := c.Connect(ctx, env2.Serial); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := c.State(ctx, env2.Serial)
		if err == nil && st == "device" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second phone not ready: %q %v", st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err = openDevice(ctx, "adb", o)
	if err == nil || !strings.Contains(err.Error(), env.Serial) || !strings.Contains(err.Error(), env2.Serial) {
		t.Errorf("adb with two phones = %v; want an error naming both", err)
	}
	if od, err := openDevice(ctx, "adb:"+env2.Serial, o); err != nil || od.Name != "adb:"+env2.Serial {
		t.Errorf("adb:%s = %v", env2.Serial, err)
	}
	out, _, err := runCLI(t, "devices", "--adb-server", env.ServerAddr)
	if err != nil || !strings.Contains(out, "720x1280") || !strings.Contains(out, "1080x2400") {
		t.Errorf("devices with two phones:\n%s(%v)", out, err)
	}
}

func TestOpenDeviceADBServerSocketEnv(t *testing.T) {
	t.Setenv("ADB_SERVER_SOCKET", "tcp:127.0.0.1:5999")
	a, err := adbServerAddress("")
	if err != nil || a != "127.0.0.1:5999" {
		t.Errorf("from env = %q, %v", a, err)
	}
	if a, _ := adbServerAddress("127.0.0.1:6111"); a != "127.0.0.1:6111" {
		t.Errorf("flag should win over env, got %q", a)
	}
	t.Setenv("ADB_SERVER_SOCKET", "bogus")
	if _, err := adbServerAddress(""); err == nil || !strings.Contains(err.Error(), "ADB_SERVER_SOCKET") {
		t.Errorf("bad env = %v; want an error naming ADB_SERVER_SOCKET", err)
	}
}

func TestOpenDeviceSim(t *testing.T) {
	od, err := openDevice(t.Context(), "sim", deviceOptions{SimLocale: "zh", SimWidth: 720, SimHeight: 1600, SimSeed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer od.Close()
	if od.Name != "sim" || od.Camera == nil || od.State == nil {
		t.Fatalf("sim opened = %+v; want a camera and a state reporter", od)
	}
	sc, err := od.Device.Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sc.Width != 720 || sc.Height != 1600 {
		t.Errorf("sim scene %dx%d; want the --sim-width/--sim-height 720x1600", sc.Width, sc.Height)
	}
	st, err := od.State.State(t.Context())
	if err != nil || !strings.Contains(string(st), `"locale":"zh"`) {
		t.Errorf("state = %s, %v; want locale zh", st, err)
	}
	if _, err := openDevice(t.Context(), "sim", deviceOptions{SimLocale: "fr"}); !errors.Is(err, errDeviceSpec) || !strings.Contains(err.Error(), "fr") {
		t.Errorf("sim with locale fr = %v; want errDeviceSpec naming the locale", err)
	}
}

// TestDevicesListsEveryBackend: devices loops over the backend table, so a
// backend that can list its phones shows them with no edit here.
func TestDevicesListsEveryBackend(t *testing.T) {
	env := simadb.StartDevice(t, sizePhone{"Physical size: 1080x2400\n"}, adbd.Config{Model: "One"})
	fake := &backend.Backend{
		Kind: "fakebk",
		List: func(context.Context, backend.Options) ([]backend.Listed, error) {
			return []backend.Listed{{Name: "fakebk:one", Kind: "fakebk", State: "device", Model: "Fake"}}, nil
		},
		Labels: func(context.Context, backend.Options, backend.Listed, device.Device) map[string]string {
			return map[string]string{"screen": "100x200"}
		},
	}
	old := backend.Table
	backend.Table = append(append([]*backend.Backend(nil), old...), fake)
	t.Cleanup(func() { backend.Table = old })
	out, _, err := runCLI(t, "devices", "--adb-server", env.ServerAddr)
	if err != nil || !strings.Contains(out, "adb:"+env.Serial) || !regexp.MustCompile(`fakebk:one +device +Fake +100x200`).MatchString(out) {
		t.Errorf("devices with a third backend:\n%s(%v)", out, err)
	}
}
