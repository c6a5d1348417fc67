package adbd_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim/adbd"
	"phonepilot/internal/testlog"
)

// This file is a hand-written adb host: it encodes packets on its own (not
// with the package's code) so the tests check the wire, not a round trip
// through the same functions.

const (
	tCNXN = "CNXN"
	tAUTH = "AUTH"
	tOPEN = "OPEN"
	tOKAY = "OKAY"
	tWRTE = "WRTE"
	tCLSE = "CLSE"
)

type hpacket struct {
	cmd        string
	arg0, arg1 uint32
	data       []byte
}

func (p hpacket) String() string {
	return fmt.Sprintf("%s(%#x,%#x,%q)", p.cmd, p.arg0, p.arg1, truncate(p.data))
}

func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func cmdValue(s string) uint32 { return binary.LittleEndian.Uint32([]byte(s)) }

func encodeHost(p hpacket) []byte {
	b := make([]byte, 24+len(p.data))
	c := cmdValue(p.cmd)
	binary.LittleEndian.PutUint32(b[0:], c)
	binary.LittleEndian.PutUint32(b[4:], p.arg0)
	binary.LittleEndian.PutUint32(b[8:], p.arg1)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(p.data)))
	binary.LittleEndian.PutUint32(b[16:], 0xdeadbeef) // adb never checks it; neither may the daemon
	binary.LittleEndian.PutUint32(b[20:], c^0xffffffff)
	copy(b[24:], p.data)
	return b
}

type host struct {
	t       testing.TB
	conn    net.Conn
	r       *bufio.Reader
	maxData uint32
	banner  string
	devMax  uint32
}

// startServer serves phone on a loopback port until the test ends.
// done is closed when Serve returns, and *serveErr then holds its result.
func startServer(t testing.TB, phone adbd.Phone, cfg adbd.Config) (addr string, cancel context.CancelFunc, done <-chan struct{}, serveErr *error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testlog.New(t)
	}
	srv, err := adbd.New(phone, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan struct{})
	serveErr = new(error)
	go func() { *serveErr = srv.Serve(ctx, ln); close(ch) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return ln.Addr().String(), cancel, ch, serveErr
}

// dial connects without a handshake.
func dial(t testing.TB, addr string, maxData uint32) *host {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &host{t: t, conn: conn, r: bufio.NewReader(conn), maxData: maxData}
}

// connect dials and completes CNXN as adb 29 does.
func connect(t testing.TB, addr string, maxData uint32) *host {
	t.Helper()
	h := dial(t, addr, maxData)
	h.send(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: maxData, data: []byte("host::features=shell_v2,cmd,stat_v2\x00")})
	p := h.recv()
	if p.cmd != tCNXN {
		t.Fatalf("handshake: got %v, want CNXN", p)
	}
	h.banner, h.devMax = string(p.data), p.arg1
	return h
}

func (h *host) send(p hpacket) {
	h.t.Helper()
	if _, err := h.conn.Write(encodeHost(p)); err != nil {
		h.t.Fatalf("send %v: %v", p, err)
	}
}

// tryRecv reads one packet within d.
func (h *host) tryRecv(d time.Duration) (hpacket, error) {
	h.conn.SetReadDeadline(time.Now().Add(d))
	defer h.conn.SetReadDeadline(time.Time{})
	var hd [24]byte
	if _, err := io.ReadFull(h.r, hd[:]); err != nil {
		return hpacket{}, err
	}
	c := binary.LittleEndian.Uint32(hd[0:])
	if binary.LittleEndian.Uint32(hd[20:]) != c^0xffffffff {
		return hpacket{}, errors.New("bad magic from daemon")
	}
	n := binary.LittleEndian.Uint32(hd[12:])
	if n > h.maxData {
		return hpacket{}, fmt.Errorf("daemon sent %d bytes, more than host maxdata %d", n, h.maxData)
	}
	var name [4]byte
	copy(name[:], hd[:4])
	p := hpacket{cmd: string(name[:]), arg0: binary.LittleEndian.Uint32(hd[4:]), arg1: binary.LittleEndian.Uint32(hd[8:])}
	p.data = make([]byte, n)
	if _, err := io.ReadFull(h.r, p.data); err != nil {
		return hpacket{}, err
	}
	return p, nil
}

func (h *host) recv() hpacket {
	h.t.Helper()
	p, err := h.tryRecv(10 * time.Second)
	if err != nil {
		h.t.Fatalf("recv: %v", err)
	}
	return p
}

// expectSilence asserts the daemon sends nothing for a moment; used to
// check it waits for our OKAY before the next WRTE.
func (h *host) expectSilence() {
	h.t.Helper()
	if p, err := h.tryRecv(150 * time.Millisecond); err == nil {
		h.t.Fatalf("daemon sent %v while it should wait for our OKAY", p)
	}
}

// open opens svc as host stream id and returns the daemon's id, or 0 if
// the daemon refused with CLSE(0, id).
func (h *host) open(id uint32, svc string) uint32 {
	h.t.Helper()
	h.send(hpacket{cmd: tOPEN, arg0: id, data: []byte(svc + "\x00")})
	p := h.recv()
	switch {
	case p.cmd == tOKAY && p.arg1 == id && p.arg0 != 0:
		return p.arg0
	case p.cmd == tCLSE && p.arg0 == 0 && p.arg1 == id:
		return 0
	}
	h.t.Fatalf("OPEN %q: got %v", svc, p)
	return 0
}

// readStream collects the daemon's WRTEs on (id, dev) until its CLSE,
// OKAYing each, and checks ids and chunk sizes. It returns the bytes and
// the largest WRTE seen.
func (h *host) readStream(id, dev uint32) (data []byte, largest int) {
	h.t.Helper()
	for {
		p := h.recv()
		if p.arg0 != dev || p.arg1 != id {
			h.t.Fatalf("packet for another stream: %v (want %d→%d)", p, dev, id)
		}
		switch p.cmd {
		case tWRTE:
			data = append(data, p.data...)
			largest = max(largest, len(p.data))
			h.send(hpacket{cmd: tOKAY, arg0: id, arg1: dev})
		case tCLSE:
			// adb 29 echoes CLSE; the daemon must tolerate it.
			h.send(hpacket{cmd: tCLSE, arg0: id, arg1: dev})
			return data, largest
		default:
			h.t.Fatalf("unexpected %v", p)
		}
	}
}

// write sends one WRTE and waits for the daemon's OKAY.
func (h *host) write(id, dev uint32, data []byte) {
	h.t.Helper()
	h.send(hpacket{cmd: tWRTE, arg0: id, arg1: dev, data: data})
	p := h.recv()
	if p.cmd != tOKAY || p.arg0 != dev || p.arg1 != id {
		h.t.Fatalf("after WRTE: got %v, want OKAY(%d,%d)", p, dev, id)
	}
}

// run opens svc, reads it to the end and returns the output.
func (h *host) run(id uint32, svc string) []byte {
	h.t.Helper()
	dev := h.open(id, svc)
	if dev == 0 {
		h.t.Fatalf("OPEN %q refused", svc)
	}
	out, _ := h.readStream(id, dev)
	return out
}

// v2frame is one shell-protocol packet.
type v2frame struct {
	id   byte
	data string
}

func parseV2(t testing.TB, b []byte) []v2frame {
	t.Helper()
	var out []v2frame
	for len(b) > 0 {
		if len(b) < 5 {
			t.Fatalf("truncated v2 header: %q", b)
		}
		n := binary.LittleEndian.Uint32(b[1:])
		if int(n) > len(b)-5 {
			t.Fatalf("v2 frame id %d claims %d bytes, %d left", b[0], n, len(b)-5)
		}
		out = append(out, v2frame{b[0], string(b[5 : 5+n])})
		b = b[5+n:]
	}
	return out
}

// v2Output merges frames into stdout, stderr and the exit code (-1 if none).
func v2Output(frames []v2frame) (stdout, stderr string, exit int) {
	var o, e strings.Builder
	exit = -1
	for _, f := range frames {
		switch f.id {
		case 1:
			o.WriteString(f.data)
		case 2:
			e.WriteString(f.data)
		case 3:
			exit = int(f.data[0])
		}
	}
	return o.String(), e.String(), exit
}

// session is a stream where both sides talk at once (an interactive
// shell): writes collect whatever the daemon sends meanwhile.
type session struct {
	h       *host
	id, dev uint32
	out     []byte
	closed  bool
}

// write sends one WRTE and waits for its OKAY, collecting (and OKAYing)
// the daemon's WRTEs that arrive first.
func (s *session) write(data []byte) {
	s.h.t.Helper()
	s.h.send(hpacket{cmd: tWRTE, arg0: s.id, arg1: s.dev, data: data})
	for {
		p := s.h.recv()
		switch {
		case p.cmd == tOKAY && p.arg0 == s.dev && p.arg1 == s.id:
			return
		case p.cmd == tWRTE && p.arg0 == s.dev && p.arg1 == s.id:
			s.out = append(s.out, p.data...)
			s.h.send(hpacket{cmd: tOKAY, arg0: s.id, arg1: s.dev})
		case p.cmd == tCLSE && p.arg0 == s.dev && p.arg1 == s.id:
			s.closed = true
			return
		default:
			s.h.t.Fatalf("session %d: unexpected %v", s.id, p)
		}
	}
}

// finish reads to the daemon's CLSE and returns everything received.
func (s *session) finish() []byte {
	s.h.t.Helper()
	if !s.closed {
		rest, _ := s.h.readStream(s.id, s.dev)
		s.out = append(s.out, rest...)
	}
	return s.out
}

// quietLogger drops logs, for tests that make thousands of connections.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
