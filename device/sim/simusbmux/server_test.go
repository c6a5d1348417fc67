package simusbmux_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim/simusbmux"
	"phonepilot/device/usbmux"
)

// serveUsbmuxd serves devs on a fresh unix socket and returns its address.
func serveUsbmuxd(t *testing.T, devs []simusbmux.Device) usbmux.Address {
	t.Helper()
	path := filepath.Join(t.TempDir(), "usbmuxd")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := simusbmux.New(devs, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return usbmux.Address{Network: "unix", Addr: path}
}

// A usbmux client lists the simulated iPhone, tunnels to its port 8100
// (an HTTP server there answers through the tunnel), and gets usbmuxd's
// answers for a port nothing listens on, a device that is not there, a
// UDID no device has, and no usbmuxd at all.
func TestClientAgainstTheSimulatedUsbmuxd(t *testing.T) {
	serve, stop := simusbmux.HTTPPort(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "wda "+r.URL.Path)
	}))
	defer stop()
	const udid = "00008110-0001A2B3C4D5E6F7"
	addr := serveUsbmuxd(t, []simusbmux.Device{
		{UDID: udid, Ports: map[int]func(net.Conn){8100: serve}},
		{UDID: "00008030-000000000000BEEF"}, // attached, WDA not running
	})
	c := usbmux.New(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	list, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].UDID != udid || list[0].ID != 1 || list[0].ConnectionType != "USB" || list[0].ProductID != 0x12a8 {
		t.Fatalf("ListDevices: %+v", list)
	}
	d, err := c.Find(ctx, udid)
	if err != nil || d.ID != 1 {
		t.Fatalf("Find: %+v %v", d, err)
	}
	for range 2 { // each Connect is a tunnel of its own
		conn, err := c.Connect(ctx, d.ID, 8100)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, "GET /status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != 200 || string(body) != "wda /status" {
			t.Errorf("through the tunnel: %d %q", resp.StatusCode, body)
		}
	}

	if _, err := c.Connect(ctx, d.ID, 9100); !errors.Is(err, usbmux.ErrRefused) {
		t.Errorf("Connect to a port nothing serves: %v, want ErrRefused", err)
	}
	other, _ := c.Find(ctx, "00008030-000000000000BEEF")
	if _, err := c.Connect(ctx, other.ID, 8100); !errors.Is(err, usbmux.ErrRefused) {
		t.Errorf("Connect to 8100 on a phone without WDA: %v, want ErrRefused", err)
	}
	if _, err := c.Connect(ctx, 7, 8100); !errors.Is(err, usbmux.ErrNoDevice) {
		t.Errorf("Connect to device 7: %v, want ErrNoDevice", err)
	}
	if _, err := c.Find(ctx, "00008101-FFFFFFFFFFFFFFFF"); !errors.Is(err, usbmux.ErrNoDevice) || !strings.Contains(err.Error(), udid) {
		t.Errorf("Find an unknown UDID: %v, want ErrNoDevice naming the attached ones", err)
	}
	gone := usbmux.New(usbmux.Address{Network: "unix", Addr: filepath.Join(t.TempDir(), "none")})
	if _, err := gone.Devices(ctx); !errors.Is(err, usbmux.ErrNoDaemon) || !strings.Contains(err.Error(), usbmux.EnvAddress) {
		t.Errorf("no usbmuxd: %v, want ErrNoDaemon saying how to point elsewhere", err)
	}
}

// An unknown message gets Result BADCOMMAND and the connection goes on;
// Listen reports the attached devices.
func TestUnknownMessagesAndListen(t *testing.T) {
	addr := serveUsbmuxd(t, []simusbmux.Device{{UDID: "u1"}})
	conn, err := net.Dial(addr.Network, addr.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	exchange := func(tag uint32, msg map[string]any) string {
		t.Helper()
		if err := usbmux.WriteMessage(conn, tag, msg); err != nil {
			t.Fatal(err)
		}
		got, body, err := usbmux.ReadMessage(conn)
		if err != nil || got != tag {
			t.Fatalf("%v: tag %d err %v", msg, got, err)
		}
		return string(body)
	}
	if b := exchange(5, map[string]any{"MessageType": "ReadPairRecord", "PairRecordID": "u1"}); !strings.Contains(b, "<integer>1</integer>") {
		t.Errorf("ReadPairRecord: %s, want Result 1", b)
	}
	if b := exchange(6, map[string]any{"MessageType": "Listen"}); !strings.Contains(b, "<integer>0</integer>") {
		t.Errorf("Listen: %s, want Result 0", b)
	}
	_, body, err := usbmux.ReadMessage(conn)
	if err != nil || !strings.Contains(string(body), "Attached") || !strings.Contains(string(body), "u1") {
		t.Errorf("after Listen: %s %v, want u1 Attached", body, err)
	}
}
