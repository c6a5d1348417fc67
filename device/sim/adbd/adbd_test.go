package adbd_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/adbd/adbdtest"
)

func TestHandshakeAnnouncesBannerAndLimits(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{Product: "p1", Model: "Sim Phone", Device: "d1"})
	h := dial(t, addr, 1<<20)
	h.send(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 1 << 20, data: []byte("host::features=shell_v2\x00")})
	p := h.recv()
	if p.cmd != tCNXN || p.arg0 != 0x01000001 || p.arg1 != 1<<20 {
		t.Fatalf("CNXN reply = %v, want version 0x01000001 and maxdata 1MiB", p)
	}
	want := "device::ro.product.name=p1;ro.product.model=Sim Phone;ro.product.device=d1;features=shell_v2,cmd,stat_v2"
	if string(p.data) != want {
		t.Errorf("banner = %q\nwant     %q", p.data, want)
	}
}

func TestAdvertisesOnlyConfiguredFeatures(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{Features: []string{adbd.FeatureCmd}})
	h := connect(t, addr, 1<<20)
	if !strings.HasSuffix(h.banner, ";features=cmd") {
		t.Errorf("banner %q should advertise only cmd", h.banner)
	}
	// Without shell_v2 advertised, a v2 request is refused rather than
	// answered in a framing the host does not expect.
	if dev := h.open(3, "shell,v2,raw:echo hi"); dev != 0 {
		t.Errorf("shell,v2 opened without the shell_v2 feature")
	}
	if got := string(h.run(5, "shell:echo hi")); got != "hi\n" {
		t.Errorf("shell: output %q", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []adbd.Config{
		{MaxData: 100},
		{MaxData: 2 << 20},
		{Features: []string{"delayed_ack"}},
		{Model: "a;b"},
		{HandshakeTimeout: -time.Second},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
		if _, err := adbd.New(adbdtest.New(), c); err == nil {
			t.Errorf("New(%+v) accepted an invalid config", c)
		}
	}
	if err := (adbd.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}

func TestWritesAreChunkedAtHostMaxDataAndWaitForOkay(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	const hostMax = 4096
	h := connect(t, addr, hostMax)
	dev := h.open(7, "exec:bytes 20000")

	// First WRTE: full-size, then silence until we OKAY it.
	p := h.recv()
	if p.cmd != tWRTE || len(p.data) != hostMax {
		t.Fatalf("first packet %v, want a WRTE of %d bytes", p, hostMax)
	}
	got := append([]byte(nil), p.data...)
	h.expectSilence()
	h.send(hpacket{cmd: tOKAY, arg0: 7, arg1: dev})
	rest, largest := h.readStream(7, dev)
	got = append(got, rest...)
	if largest > hostMax {
		t.Errorf("largest WRTE %d > host maxdata %d", largest, hostMax)
	}
	if !bytes.Equal(got, adbdtest.Pattern(20000)) {
		t.Errorf("got %d bytes, not the 20000 the command wrote", len(got))
	}
}

func TestWritesAreChunkedAtOwnMaxData(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{MaxData: 8192})
	h := connect(t, addr, 1<<20)
	if h.devMax != 8192 {
		t.Fatalf("CNXN maxdata %d, want 8192", h.devMax)
	}
	dev := h.open(9, "exec:bytes 100000")
	out, largest := h.readStream(9, dev)
	if largest != 8192 || !bytes.Equal(out, adbdtest.Pattern(100000)) {
		t.Errorf("largest WRTE %d (want 8192), %d bytes (want 100000 matching)", largest, len(out))
	}
}

func TestRawServicesHaveTTYAndNoExitStatus(t *testing.T) {
	phone := adbdtest.New()
	addr, _, _, _ := startServer(t, phone, adbd.Config{})
	h := connect(t, addr, 1<<20)
	for i, svc := range []string{"shell:tty", "exec:tty", "shell,raw:tty"} {
		if got := string(h.run(uint32(10+i), svc)); got != "/dev/pts/0\n" {
			t.Errorf("%s output %q, want a tty", svc, got)
		}
	}
	// Unknown command under legacy shell: message only, no status framing.
	if got := string(h.run(20, "shell:nosuch")); got != "sh: nosuch: not found\n" {
		t.Errorf("shell:nosuch output %q", got)
	}
}

func TestShellV2FramesOutputAndExitStatus(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := connect(t, addr, 1<<20)
	cases := []struct {
		svc            string
		stdout, stderr string
		exit           int
	}{
		{"shell,v2,TERM=xterm,raw:both", "out", "err", 3},
		{"shell,v2,TERM=xterm,raw:false", "", "", 1},
		{"shell,v2,TERM=xterm,raw:nosuch", "", "sh: nosuch: not found\n", 127},
		{"shell,v2,raw:exit 300", "", "", 300 & 0xff},
		{"shell,v2,raw:tty", "not a tty\n", "", 1}, // pipes, as on a phone
		{"shell,v2,pty:tty", "/dev/pts/0\n", "", 0},
		{"shell,v2,TERM=xterm:tty", "not a tty\n", "", 1}, // non-empty command defaults to raw
	}
	for i, c := range cases {
		out := h.run(uint32(100+i), c.svc)
		stdout, stderr, exit := v2Output(parseV2(t, out))
		if stdout != c.stdout || stderr != c.stderr || exit != c.exit {
			t.Errorf("%s: stdout %q stderr %q exit %d; want %q %q %d", c.svc, stdout, stderr, exit, c.stdout, c.stderr, c.exit)
		}
	}
}

func TestShellV2LargeOutputAndHostStdin(t *testing.T) {
	phone := adbdtest.New()
	phone.Block = make(chan struct{})
	addr, _, _, _ := startServer(t, phone, adbd.Config{})
	h := connect(t, addr, 1<<20)

	dev := h.open(30, "shell,v2,raw:block")
	// The host's stdin frames, split oddly across WRTEs, are each OKAYed.
	frames := []byte{0, 3, 0, 0, 0, 'a', 'b', 'c', 5, 4, 0, 0, 0, '1', 'x', '2', '0', 4, 0, 0, 0, 0}
	for _, part := range [][]byte{frames[:2], frames[2:9], frames[9:]} {
		h.write(30, dev, part)
	}
	close(phone.Block)
	out, _ := h.readStream(30, dev)
	if _, _, exit := v2Output(parseV2(t, out)); exit != 0 {
		t.Errorf("exit %d, want 0", exit)
	}

	out = h.run(32, "shell,v2,raw:bytes 3000000")
	stdout, _, exit := v2Output(parseV2(t, out))
	if exit != 0 || stdout != string(adbdtest.Pattern(3000000)) {
		t.Errorf("3 MB through v2: exit %d, %d stdout bytes intact=%v", exit, len(stdout), stdout == string(adbdtest.Pattern(3000000)))
	}
}

func TestRefusedOpenLeavesTransportUsable(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := connect(t, addr, 1<<20)
	for i, svc := range []string{"tcp:9008", "framebuffer:", "shell,v2", "reverse:list-forward", ""} {
		if dev := h.open(uint32(40+i), svc); dev != 0 {
			t.Errorf("OPEN %q accepted (dev id %d), want CLSE(0, id)", svc, dev)
		}
	}
	if got := string(h.run(50, "shell:echo still here")); got != "still here\n" {
		t.Errorf("after refusals: %q", got)
	}
}

func TestPacketsForUnknownStreamsAreIgnored(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := connect(t, addr, 1<<20)
	h.send(hpacket{cmd: tOKAY, arg0: 1, arg1: 999})
	h.send(hpacket{cmd: tWRTE, arg0: 1, arg1: 999, data: []byte("x")})
	h.send(hpacket{cmd: tCLSE, arg0: 1, arg1: 999})
	h.send(hpacket{cmd: "STLS", arg0: 1, arg1: 0})
	h.expectSilence()
	if got := string(h.run(60, "shell:echo ok")); got != "ok\n" {
		t.Errorf("after stray packets: %q", got)
	}
}

func TestConcurrentStreamsOnOneTransport(t *testing.T) {
	phone := adbdtest.New()
	phone.Block = make(chan struct{})
	addr, _, _, _ := startServer(t, phone, adbd.Config{})
	h := connect(t, addr, 4096)
	blocked := h.open(70, "shell,v2,raw:block")
	big := h.open(71, "exec:bytes 50000")
	// Interleave: collect the big stream while the other one stays open.
	var got []byte
	for {
		p := h.recv()
		if p.arg1 != 71 || p.arg0 != big {
			t.Fatalf("packet for the blocked stream before it finished: %v", p)
		}
		if p.cmd == tCLSE {
			break
		}
		got = append(got, p.data...)
		h.send(hpacket{cmd: tOKAY, arg0: 71, arg1: big})
	}
	if !bytes.Equal(got, adbdtest.Pattern(50000)) {
		t.Errorf("interleaved stream got %d bytes", len(got))
	}
	close(phone.Block)
	out, _ := h.readStream(70, blocked)
	if _, _, exit := v2Output(parseV2(t, out)); exit != 0 {
		t.Errorf("blocked stream exit %d", exit)
	}
}

func TestManyConnections(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	hosts := make([]*host, 5)
	for i := range hosts {
		hosts[i] = connect(t, addr, 1<<20)
	}
	done := make(chan string, len(hosts))
	for i, h := range hosts {
		go func() {
			dev := h.open(1, "shell:echo "+strings.Repeat("x", i+1))
			var out []byte
			for {
				p, err := h.tryRecv(5 * time.Second)
				if err != nil || p.cmd == tCLSE {
					break
				}
				out = append(out, p.data...)
				h.conn.Write(encodeHost(hpacket{cmd: tOKAY, arg0: 1, arg1: dev}))
			}
			done <- string(out)
		}()
	}
	seen := map[string]bool{}
	for range hosts {
		seen[<-done] = true
	}
	for i := range hosts {
		if want := strings.Repeat("x", i+1) + "\n"; !seen[want] {
			t.Errorf("no connection got %q; got %v", want, seen)
		}
	}
}

func TestHostCloseCancelsCommand(t *testing.T) {
	phone := adbdtest.New()
	phone.Block = make(chan struct{}) // never closed: only ctx ends it
	addr, _, _, _ := startServer(t, phone, adbd.Config{})
	h := connect(t, addr, 1<<20)
	dev := h.open(80, "shell,v2,raw:block")
	h.send(hpacket{cmd: tCLSE, arg0: 80, arg1: dev})
	// The daemon must not answer a host CLSE with its own packets for the
	// stream; the command is cancelled, and the transport still works.
	if got := string(h.run(81, "shell:echo after")); got != "after\n" {
		t.Errorf("after host close: %q", got)
	}
}

// sync helpers: requests written as the adb client does, but split into
// tiny WRTEs to prove the daemon buffers across them.
func syncReq(id string, payload []byte) []byte {
	b := make([]byte, 8+len(payload))
	copy(b, id)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(payload)))
	copy(b[8:], payload)
	return b
}

func writeSplit(h *host, id, dev uint32, b []byte, rng *rand.Rand) {
	for len(b) > 0 {
		n := min(len(b), 1+rng.IntN(7))
		h.write(id, dev, b[:n])
		b = b[n:]
	}
}

// syncReply reads daemon WRTEs (OKAYing them) until n bytes arrived.
func syncReply(h *host, id, dev uint32, buf *[]byte, n int) []byte {
	h.t.Helper()
	for len(*buf) < n {
		p := h.recv()
		if p.cmd != tWRTE {
			h.t.Fatalf("waiting for %d sync bytes: got %v", n, p)
		}
		*buf = append(*buf, p.data...)
		h.send(hpacket{cmd: tOKAY, arg0: id, arg1: dev})
	}
	out := (*buf)[:n]
	*buf = (*buf)[n:]
	return out
}

func TestSyncPushStatListPullQuit(t *testing.T) {
	phone := adbdtest.New()
	addr, _, _, _ := startServer(t, phone, adbd.Config{})
	h := connect(t, addr, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	const id = 90
	dev := h.open(id, "sync:")
	var pending []byte

	// SEND: path,mode then DATA chunks and DONE; all split across WRTEs.
	content := adbdtest.Pattern(150000)
	req := syncReq("SEND", []byte("/sdcard/f.bin,33261")) // 0100755
	for off := 0; off < len(content); off += 65536 {
		req = append(req, syncReq("DATA", content[off:min(off+65536, len(content))])...)
	}
	done := syncReq("DONE", nil)
	binary.LittleEndian.PutUint32(done[4:], 1700000000)
	req = append(req, done...)
	h.write(id, dev, req[:3])
	writeSplit(h, id, dev, req[3:40], rng)
	for off := 40; off < len(req); off += 4096 {
		h.write(id, dev, req[off:min(off+4096, len(req))])
	}
	if r := syncReply(h, id, dev, &pending, 8); string(r[:4]) != "OKAY" {
		t.Fatalf("SEND reply %q, want OKAY", r)
	}
	if got, _ := phone.ReadFile("/sdcard/f.bin"); !bytes.Equal(got, content) || phone.Mode("/sdcard/f.bin") != 0o755 {
		t.Fatalf("pushed file: %d bytes, mode %v", len(got), phone.Mode("/sdcard/f.bin"))
	}

	// STAT and STA2 of the file and of a missing path.
	writeSplit(h, id, dev, syncReq("STAT", []byte("/sdcard/f.bin")), rng)
	st := syncReply(h, id, dev, &pending, 16)
	if string(st[:4]) != "STAT" || binary.LittleEndian.Uint32(st[4:]) != 0o100755 || binary.LittleEndian.Uint32(st[8:]) != 150000 {
		t.Errorf("STAT reply %x", st)
	}
	writeSplit(h, id, dev, syncReq("STA2", []byte("/sdcard/f.bin")), rng)
	st2 := syncReply(h, id, dev, &pending, 72)
	if string(st2[:4]) != "STA2" || binary.LittleEndian.Uint32(st2[4:]) != 0 ||
		binary.LittleEndian.Uint32(st2[24:]) != 0o100755 || binary.LittleEndian.Uint64(st2[40:]) != 150000 {
		t.Errorf("STA2 reply %x", st2)
	}
	writeSplit(h, id, dev, syncReq("LST2", []byte("/nope")), rng)
	if st2 := syncReply(h, id, dev, &pending, 72); string(st2[:4]) != "LST2" || binary.LittleEndian.Uint32(st2[4:]) != 2 {
		t.Errorf("LST2 of a missing path: %x, want errno 2", st2)
	}
	writeSplit(h, id, dev, syncReq("STAT", []byte("/nope")), rng)
	if st := syncReply(h, id, dev, &pending, 16); !bytes.Equal(st[4:], make([]byte, 12)) {
		t.Errorf("STAT of a missing path: %x, want zeros", st)
	}

	// LIST of the directory.
	phone.WriteFile("/sdcard/a.txt", []byte("hello"), 0o644)
	writeSplit(h, id, dev, syncReq("LIST", []byte("/sdcard")), rng)
	var names []string
	for {
		d := syncReply(h, id, dev, &pending, 20)
		if string(d[:4]) == "DONE" {
			break
		}
		if string(d[:4]) != "DENT" {
			t.Fatalf("LIST entry %q", d[:4])
		}
		n := int(binary.LittleEndian.Uint32(d[16:]))
		names = append(names, string(syncReply(h, id, dev, &pending, n)))
	}
	if strings.Join(names, ",") != "a.txt,f.bin" {
		t.Errorf("LIST names %v", names)
	}

	// RECV: DATA chunks of at most 64 KiB, then DONE.
	writeSplit(h, id, dev, syncReq("RECV", []byte("/sdcard/f.bin")), rng)
	var got []byte
	for {
		hd := syncReply(h, id, dev, &pending, 8)
		n := int(binary.LittleEndian.Uint32(hd[4:]))
		if string(hd[:4]) == "DONE" {
			break
		}
		if string(hd[:4]) != "DATA" || n > 65536 {
			t.Fatalf("RECV chunk header %q len %d", hd[:4], n)
		}
		got = append(got, syncReply(h, id, dev, &pending, n)...)
	}
	if !bytes.Equal(got, content) {
		t.Errorf("RECV returned %d bytes, not the pushed content", len(got))
	}

	// QUIT ends the stream with the daemon's CLSE.
	writeSplit(h, id, dev, syncReq("QUIT", nil), rng)
	if p := h.recv(); p.cmd != tCLSE || p.arg0 != dev || p.arg1 != id {
		t.Errorf("after QUIT: %v, want CLSE", p)
	}
}

func TestSyncRecvMissingFileFails(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := connect(t, addr, 1<<20)
	dev := h.open(95, "sync:")
	h.write(95, dev, syncReq("RECV", []byte("/sdcard/none.xml")))
	out, _ := h.readStream(95, dev)
	if !bytes.HasPrefix(out, []byte("FAIL")) || !strings.Contains(string(out[8:]), "No such file or directory") {
		t.Errorf("RECV of a missing file: %q", out)
	}
}

func TestSyncGarbageClosesOnlyTheStream(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := connect(t, addr, 1<<20)
	dev := h.open(96, "sync:")
	h.write(96, dev, []byte("ZZZZ\x05\x00\x00\x00hello"))
	out, _ := h.readStream(96, dev)
	if !bytes.HasPrefix(out, []byte("FAIL")) {
		t.Errorf("unknown sync request answered %q, want FAIL", out)
	}
	dev = h.open(97, "sync:")
	h.write(97, dev, syncReq("STAT", bytes.Repeat([]byte("a"), 5000))[:8]) // path too long
	if out, _ := h.readStream(97, dev); !bytes.HasPrefix(out, []byte("FAIL")) {
		t.Errorf("oversized path answered %q, want FAIL", out)
	}
	if got := string(h.run(98, "shell:echo fine")); got != "fine\n" {
		t.Errorf("transport after sync garbage: %q", got)
	}
}

func TestGarbageClosesTransportNotServer(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := map[string][]byte{
		"random bytes": func() []byte {
			b := make([]byte, 300)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return b
		}(),
		"bad magic": func() []byte {
			b := encodeHost(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 4096})
			b[20] ^= 1
			return b
		}(),
		"oversized payload": func() []byte {
			b := encodeHost(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 4096})
			binary.LittleEndian.PutUint32(b[12:], 1<<30)
			return b
		}(),
		"old version":          encodeHost(hpacket{cmd: tCNXN, arg0: 0x00000001, arg1: 4096}),
		"truncated":            encodeHost(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 4096, data: []byte("host::")})[:27],
		"OPEN id 0 after CNXN": append(encodeHost(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 4096}), encodeHost(hpacket{cmd: tOPEN, data: []byte("shell:echo\x00")})...),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			h := dial(t, addr, 1<<20)
			h.conn.Write(in)
			if name == "truncated" {
				h.conn.(*net.TCPConn).CloseWrite()
			}
			for {
				p, err := h.tryRecv(5 * time.Second)
				if err != nil {
					if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") {
						t.Fatalf("want the daemon to close the connection, got %v", err)
					}
					break
				}
				if p.cmd != tCNXN {
					t.Fatalf("daemon answered garbage with %v", p)
				}
			}
		})
	}
	if got := string(connect(t, addr, 1<<20).run(1, "shell:echo alive")); got != "alive\n" {
		t.Errorf("server after garbage: %q", got)
	}
}

func TestPacketsBeforeHandshakeAreIgnored(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := dial(t, addr, 1<<20)
	h.send(hpacket{cmd: tOPEN, arg0: 5, data: []byte("shell:echo early\x00")})
	h.expectSilence()
	h.send(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 1 << 20, data: []byte("host::\x00")})
	if p := h.recv(); p.cmd != tCNXN {
		t.Fatalf("got %v, want CNXN", p)
	}
}

func TestHandshakeTimeoutClosesSilentConnections(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{HandshakeTimeout: 100 * time.Millisecond})
	h := dial(t, addr, 1<<20)
	if _, err := h.tryRecv(5 * time.Second); !errors.Is(err, io.EOF) {
		t.Errorf("silent connection: %v, want EOF from the daemon", err)
	}
}

func TestAuthAcceptsAnySignature(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{Auth: true})
	for _, answer := range []uint32{2, 3} {
		h := dial(t, addr, 1<<20)
		h.send(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 1 << 20, data: []byte("host::\x00")})
		p := h.recv()
		if p.cmd != tAUTH || p.arg0 != 1 || len(p.data) != 20 {
			t.Fatalf("want AUTH(TOKEN) with 20 bytes, got %v", p)
		}
		h.send(hpacket{cmd: tAUTH, arg0: answer, data: bytes.Repeat([]byte{7}, 256)})
		if p := h.recv(); p.cmd != tCNXN {
			t.Fatalf("after AUTH(%d): %v, want CNXN", answer, p)
		}
		if got := string(h.run(1, "shell:echo authed")); got != "authed\n" {
			t.Errorf("after auth: %q", got)
		}
	}
}

func TestServeCancelClosesTransports(t *testing.T) {
	phone := adbdtest.New()
	phone.Block = make(chan struct{})
	addr, cancel, done, serveErr := startServer(t, phone, adbd.Config{})
	h := connect(t, addr, 1<<20)
	h.open(1, "shell,v2,raw:block") // a command in flight must not hold Serve
	cancel()
	select {
	case <-done:
		if *serveErr != nil {
			t.Errorf("Serve after cancel = %v, want nil", *serveErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := h.tryRecv(5 * time.Second); err == nil {
		t.Errorf("client read after cancel: %v, want the connection closed", err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Errorf("listener still accepts after cancel")
	}
}

func TestCloseStopsServe(t *testing.T) {
	srv, err := adbd.New(adbdtest.New(), adbd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), ln) }()
	h := connect(t, ln.Addr().String(), 1<<20)
	srv.Close()
	if err := <-done; !errors.Is(err, adbd.ErrServerClosed) {
		t.Errorf("Serve after Close = %v, want ErrServerClosed", err)
	}
	if _, err := h.tryRecv(5 * time.Second); err == nil {
		t.Errorf("transport still open after Close")
	}
}

func v2In(id byte, data string) []byte {
	b := make([]byte, 5+len(data))
	b[0] = id
	binary.LittleEndian.PutUint32(b[1:], uint32(len(data)))
	copy(b[5:], data)
	return b
}

func TestInteractiveShellOverV2WithPTY(t *testing.T) {
	phone := adbdtest.New()
	addr, _, _, _ := startServer(t, phone, adbd.Config{Device: "simdev"})
	h := connect(t, addr, 1<<20)
	s := &session{h: h, id: 200, dev: h.open(200, "shell,v2,TERM=xterm-256color,pty:")}
	// Keys as a raw-mode terminal sends them: a typo fixed with backspace,
	// an arrow key (ignored), Enter as "\r".
	s.write(v2In(0, "echo hx\x7fi\x1b[A\r"))
	s.write(v2In(0, "exit\r"))
	out := s.finish()
	stdout, _, exit := v2Output(parseV2(t, out))
	want := "simdev:/ $ echo hx\b \bi\r\nhi\r\nsimdev:/ $ exit\r\n"
	if stdout != want || exit != 0 {
		t.Errorf("interactive session:\n got %q exit %d\nwant %q exit 0", stdout, exit, want)
	}
	if cmds := phone.Commands(); len(cmds) != 1 || cmds[0] != "echo hi" {
		t.Errorf("commands run: %q, want [echo hi]", cmds)
	}
}

func TestInteractiveShellWithPipedStdin(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{})
	h := connect(t, addr, 1<<20)
	s := &session{h: h, id: 210, dev: h.open(210, "shell,v2,raw:")}
	s.write(append(v2In(0, "echo a\necho b\nfal"), v2In(0, "se\n")...))
	s.write(v2In(4, ""))
	out := s.finish()
	stdout, _, exit := v2Output(parseV2(t, out))
	if stdout != "a\nb\n" || exit != 1 {
		t.Errorf("piped session: %q exit %d, want \"a\\nb\\n\" exit 1 (from false)", stdout, exit)
	}
}

func TestInteractiveLegacyShell(t *testing.T) {
	addr, _, _, _ := startServer(t, adbdtest.New(), adbd.Config{Device: "d"})
	h := connect(t, addr, 1<<20)
	s := &session{h: h, id: 220, dev: h.open(220, "shell:")}
	s.write([]byte("echo one\r"))
	s.write([]byte{4}) // Ctrl-D
	out := s.finish()
	if want := "d:/ $ echo one\r\none\r\nd:/ $ \r\n"; string(out) != want {
		t.Errorf("legacy interactive:\n got %q\nwant %q", out, want)
	}
}

func TestClosingTheListenerClosesTransports(t *testing.T) {
	srv, err := adbd.New(adbdtest.New(), adbd.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), ln) }()
	h := connect(t, ln.Addr().String(), 1<<20)
	ln.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Serve after the listener closed = %v, want an error wrapping net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its listener closed")
	}
	if _, err := h.tryRecv(5 * time.Second); err == nil {
		t.Errorf("transport still open after the listener closed")
	}
	if n := srv.Connections(); n != 0 {
		t.Errorf("%d transports left", n)
	}
}

func TestListenAndServe(t *testing.T) {
	srv, err := adbd.New(adbdtest.New(), adbd.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addrs <- a.String() }) }()
	h := connect(t, <-addrs, 1<<20)
	if got := string(h.run(1, "exec:echo up")); got != "up\n" {
		t.Errorf("exec:echo up = %q", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe after cancel = %v, want nil", err)
	}
	if err := srv.ListenAndServe(t.Context(), "256.0.0.1:1", nil); err == nil {
		t.Errorf("ListenAndServe on a bad address succeeded")
	}
}

func TestOpenStreamsAreBounded(t *testing.T) {
	phone := adbdtest.New()
	phone.Block = make(chan struct{})
	defer close(phone.Block)
	addr, _, _, _ := startServer(t, phone, adbd.Config{Logger: quietLogger()})
	h := connect(t, addr, 1<<20)
	refused := 0
	for id := uint32(1); id <= 1100; id++ {
		if h.open(id, "shell,v2,raw:block") == 0 {
			refused++
		}
	}
	if refused != 1100-1024 {
		t.Errorf("%d of 1100 concurrent OPENs refused, want %d (the cap is 1024)", refused, 1100-1024)
	}
}
