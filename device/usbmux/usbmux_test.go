package usbmux_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"howett.net/plist"

	"phonepilot/device/usbmux"
)

func TestParseAddress(t *testing.T) {
	for in, want := range map[string]usbmux.Address{
		"":                       {Network: "unix", Addr: "/var/run/usbmuxd"},
		"UNIX:/tmp/mux":          {Network: "unix", Addr: "/tmp/mux"},
		"unix:/tmp/mux":          {Network: "unix", Addr: "/tmp/mux"},
		"/run/usbmuxd":           {Network: "unix", Addr: "/run/usbmuxd"},
		"127.0.0.1:27015":        {Network: "tcp", Addr: "127.0.0.1:27015"},
		"  host.example:27015  ": {Network: "tcp", Addr: "host.example:27015"},
	} {
		got, err := usbmux.ParseAddress(in)
		if err != nil || got != want {
			t.Errorf("ParseAddress(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"usbmuxd", "tcp://x"} {
		if _, err := usbmux.ParseAddress(bad); err == nil {
			t.Errorf("ParseAddress(%q): no error", bad)
		}
	}
	t.Setenv(usbmux.EnvAddress, "nonsense")
	if _, err := usbmux.AddressFromEnv(); err == nil || !strings.Contains(err.Error(), usbmux.EnvAddress) {
		t.Errorf("a bad %s: %v", usbmux.EnvAddress, err)
	}
}

// The Connect message as usbmuxd reads it: a 16-byte little-endian header
// (length, version 1, type 8 = plist, tag) and a plist whose PortNumber is
// the port in network byte order (8100 = 0x1FA4 travels as 0xA41F = 42015).
func TestConnectOnTheWire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mux")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var h [16]byte
		if _, err := conn.Read(h[:]); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(h[:])
		body := make([]byte, n-16)
		_, _ = conn.Read(body)
		got <- append(h[:], body...)
		_ = usbmux.WriteMessage(conn, binary.LittleEndian.Uint32(h[12:]), map[string]any{"MessageType": "Result", "Number": 0})
		_, _ = conn.Write([]byte("tunnel"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := usbmux.New(usbmux.Address{Network: "unix", Addr: path}).Connect(ctx, 3, 8100)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg := <-got
	if v, typ := binary.LittleEndian.Uint32(msg[4:]), binary.LittleEndian.Uint32(msg[8:]); v != 1 || typ != 8 || int(binary.LittleEndian.Uint32(msg[0:])) != len(msg) {
		t.Errorf("header % x: want the length, version 1, type 8", msg[:16])
	}
	var m struct {
		MessageType string
		DeviceID    int
		PortNumber  int
	}
	if _, err := plist.Unmarshal(msg[16:], &m); err != nil {
		t.Fatal(err)
	}
	if m.MessageType != "Connect" || m.DeviceID != 3 || m.PortNumber != 42015 {
		t.Errorf("Connect message %+v, want DeviceID 3 and PortNumber 42015 (8100 in network byte order)", m)
	}
	if !bytes.Contains(msg[16:], []byte("<?xml")) {
		t.Errorf("body is not an XML plist: %q", msg[16:])
	}
	// What follows the Result is the tunnel's, byte for byte.
	b := make([]byte, 6)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(b); err != nil || string(b) != "tunnel" {
		t.Errorf("tunnel read %q %v", b, err)
	}
}

// A message in the old binary protocol (version 0) or larger than any
// usbmuxd sends is an error, not a huge allocation.
func TestReadMessageRefuses(t *testing.T) {
	hdr := func(n, version, typ uint32) []byte {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint32(b[0:], n)
		binary.LittleEndian.PutUint32(b[4:], version)
		binary.LittleEndian.PutUint32(b[8:], typ)
		return b
	}
	var ve *usbmux.VersionError
	if _, _, err := usbmux.ReadMessage(bytes.NewReader(hdr(16, 0, 3))); !errors.As(err, &ve) {
		t.Errorf("binary protocol: %v", err)
	}
	if _, _, err := usbmux.ReadMessage(bytes.NewReader(hdr(1<<30, 1, 8))); err == nil {
		t.Error("a 1 GiB message: no error")
	}
	if _, _, err := usbmux.ReadMessage(bytes.NewReader(hdr(8, 1, 8))); err == nil {
		t.Error("a message shorter than its header: no error")
	}
}
