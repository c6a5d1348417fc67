package adb

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
)

func noPhone(serial, service, cmd string) reply { return reply{out: []byte("ok\n")} }

func TestParseServerAddress(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"", DefaultServer, ""},
		{"tcp:127.0.0.1:5137", "127.0.0.1:5137", ""},
		{"tcp:localhost:5137", "127.0.0.1:5137", ""},
		{"10.0.0.2:5037", "10.0.0.2:5037", ""},
		{"5138", "127.0.0.1:5138", ""},
		{":5139", "127.0.0.1:5139", ""},
		{"tcp:host", "", "want host:port"},
		{"localfilesystem:/tmp/adb", "", "only tcp"},
		{"1.2.3.4:99999", "", "port"},
	}
	for _, c := range cases {
		got, err := ParseServerAddress(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseServerAddress(%q) = %q, %v; want error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseServerAddress(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestClientVersionDevicesFeatures(t *testing.T) {
	s := newFakeServer(t, noPhone)
	s.setDevices(
		DeviceInfo{Serial: "emulator-5554", State: "device", Product: "sdk", Model: "Pixel_7", DeviceName: "panther", TransportID: "1"},
		DeviceInfo{Serial: "R58M123", State: "unauthorized", TransportID: "2"},
		DeviceInfo{Serial: "192.168.1.9:5555", State: "offline", TransportID: "3"},
	)
	c, err := NewClient(s.addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, err := c.Version(ctx)
	if err != nil || v != 41 {
		t.Fatalf("Version = %d, %v; want 41", v, err)
	}
	list, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("Devices = %+v; want 3", list)
	}
	if list[0].Serial != "emulator-5554" || list[0].State != "device" || list[0].Model != "Pixel_7" {
		t.Errorf("first device = %+v", list[0])
	}
	if list[1].State != "unauthorized" || list[2].Serial != "192.168.1.9:5555" || list[2].State != "offline" {
		t.Errorf("devices = %+v", list)
	}
	f, err := c.Features(ctx, "emulator-5554")
	if err != nil || strings.Join(f, ",") != "shell_v2,cmd,stat_v2" {
		t.Errorf("Features = %v, %v", f, err)
	}
	_, err = c.State(ctx, "nosuch")
	if !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("State(nosuch) = %v; want ErrDisconnected", err)
	}
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "not found") {
		t.Errorf("State(nosuch) error %v does not carry the server's message", err)
	}
}

func TestParseDevicesLNoPermissions(t *testing.T) {
	got := parseDevicesL("0123456789ABCDEF       no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:4\n")
	if len(got) != 1 || got[0].State != "no permissions" || got[0].TransportID != "4" {
		t.Errorf("parseDevicesL = %+v", got)
	}
}

func TestShellV2ExitCodeAndLegacyShell(t *testing.T) {
	s := newFakeServer(t, func(serial, service, cmd string) reply {
		if cmd == "false" {
			return reply{stderr: []byte("nope\n"), exit: 1}
		}
		return reply{out: []byte("hi\n"), stderr: []byte("warn\n")}
	})
	c, _ := NewClient(s.addr())
	ctx := context.Background()
	res, err := c.Shell(ctx, "fake-1", "echo hi", true)
	if err != nil || string(res.Stdout) != "hi\n" || string(res.Stderr) != "warn\n" || !res.HasExitCode || res.ExitCode != 0 {
		t.Errorf("Shell v2 = %+v, %v", res, err)
	}
	res, err = c.Shell(ctx, "fake-1", "false", true)
	if err != nil || res.ExitCode != 1 {
		t.Errorf("Shell v2 false = %+v, %v; want exit 1", res, err)
	}
	res, err = c.Shell(ctx, "fake-1", "echo hi", false)
	if err != nil || string(res.Stdout) != "hi\nwarn\n" || res.HasExitCode {
		t.Errorf("legacy Shell = %+v, %v", res, err)
	}
	got := s.opened()
	want := []string{"shell,v2,raw:echo hi", "shell,v2,raw:false", "shell:echo hi"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("services = %q; want %q", got, want)
	}
}

func TestCallsHaveDeadlines(t *testing.T) {
	s := newFakeServer(t, func(serial, service, cmd string) reply { return reply{hang: true} })
	c, _ := NewClient(s.addr())
	c.DefaultTimeout = 200 * time.Millisecond

	// No deadline on ctx: the client's default applies.
	start := time.Now()
	_, err := c.Exec(context.Background(), "fake-1", "sleep 100")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec on a hung device = %v; want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("hung call took %v", el)
	}

	// Cancellation interrupts a blocked read.
	ctx, cancel := context.WithCancel(context.Background())
	c.DefaultTimeout = time.Minute
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = c.Shell(ctx, "fake-1", "sleep 100", true)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Shell after cancel = %v; want context.Canceled", err)
	}
}

func TestServerDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c, _ := NewClient(addr)
	_, err := c.Devices(context.Background())
	if !errors.Is(err, ErrServerUnavailable) || !strings.Contains(err.Error(), "adb start-server") {
		t.Errorf("Devices with no server = %v; want ErrServerUnavailable with a hint", err)
	}
}

func TestTransportErrorsMapToDisconnected(t *testing.T) {
	s := newFakeServer(t, noPhone)
	c, _ := NewClient(s.addr())
	s.setDevices(DeviceInfo{Serial: "fake-1", State: "offline"})
	_, err := c.Exec(context.Background(), "fake-1", "true")
	if !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("offline device: %v; want ErrDisconnected", err)
	}
	_, err = c.Exec(context.Background(), "gone", "true")
	if !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("unknown device: %v; want ErrDisconnected", err)
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Message != "device 'gone' not found" {
		t.Errorf("error lost the server message: %v", err)
	}
	unauth := &ServerError{Message: "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"}
	if !errors.Is(unauth, ErrUnauthorized) || errors.Is(unauth, device.ErrDisconnected) {
		t.Errorf("unauthorized mapping wrong for %v", unauth)
	}
}

func TestIsNetworkSerial(t *testing.T) {
	for s, want := range map[string]bool{
		"192.168.1.20:5555": true, "127.0.0.1:40111": true, "[::1]:5555": true, "phone.local:5555": true,
		"emulator-5554": false, "R58M123ABC": false, "host:": false, ":5555": false, "a:b": false,
		"adb-R58M123-abc._adb-tls-connect._tcp": false,
	} {
		if got := isNetworkSerial(s); got != want {
			t.Errorf("isNetworkSerial(%q) = %t", s, got)
		}
	}
}
