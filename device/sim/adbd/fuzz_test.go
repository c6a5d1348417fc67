package adbd_test

import (
	"io"
	"net"
	"testing"
	"time"

	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/adbd/adbdtest"
)

// FuzzTransport feeds a connected daemon sequences of packets built from
// the input (and raw garbage); whatever arrives, the daemon must not panic
// and must keep serving other connections.
//
// Input format, repeated: kind, arg0, arg1, len, data[len]. kind picks a
// command (CNXN, AUTH, OPEN, OKAY, WRTE, CLSE) or, past those, raw bytes.
func FuzzTransport(f *testing.F) {
	pkt := func(kind, a0, a1 byte, data string) []byte {
		return append([]byte{kind, a0, a1, byte(len(data))}, data...)
	}
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	f.Add(cat(pkt(2, 1, 0, "sync:\x00"), pkt(4, 1, 1, "STAT\x05\x00\x00\x00/sdca"), pkt(4, 1, 1, "rdSEND\xff\xff\xff\xff")))
	f.Add(cat(pkt(2, 1, 0, "shell,v2,raw:echo x\x00"), pkt(4, 1, 1, "\x00\xff\xff\xff\x7f"), pkt(3, 1, 1, "")))
	f.Add(cat(pkt(2, 1, 0, "shell,v2,pty:\x00"), pkt(4, 1, 1, "\x00\x03\x00\x00\x00ls\r"), pkt(5, 1, 1, "")))
	f.Add(cat(pkt(2, 1, 0, "sync:\x00"), pkt(4, 1, 1, "SEND\x0b\x00\x00\x00/x/y,33188DATA\x00\x00\x01\x00")))
	f.Add(cat(pkt(0, 0, 0, "host::"), pkt(2, 0, 0, "shell:\x00"), pkt(1, 9, 9, "sig")))
	f.Add(cat(pkt(9, 0, 0, "\x43\x4e\x58\x4e\xff\xff")))
	f.Add(cat(pkt(2, 3, 0, "exec:bytes 99999\x00"), pkt(5, 3, 1, ""), pkt(3, 3, 1, "")))

	phone := adbdtest.New()
	addr, _, _, _ := startServer(f, phone, adbd.Config{MaxData: 4096, HandshakeTimeout: 2 * time.Second, Logger: quietLogger()})
	cmds := []string{tCNXN, tAUTH, tOPEN, tOKAY, tWRTE, tCLSE}

	f.Fuzz(func(t *testing.T, in []byte) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go io.Copy(io.Discard, conn) // never OKAY: the daemon must not care
		conn.Write(encodeHost(hpacket{cmd: tCNXN, arg0: 0x01000001, arg1: 4096, data: []byte("host::\x00")}))
		for len(in) >= 4 {
			kind, a0, a1, n := in[0], uint32(in[1]), uint32(in[2]), int(in[3])
			in = in[4:]
			n = min(n, len(in))
			data := in[:n]
			in = in[n:]
			if int(kind) < len(cmds) {
				conn.Write(encodeHost(hpacket{cmd: cmds[kind], arg0: a0, arg1: a1, data: data}))
			} else {
				conn.Write(data)
			}
		}
		conn.Close()

		h := connect(t, addr, 1<<20)
		if got := string(h.run(1, "shell:echo alive")); got != "alive\n" {
			t.Fatalf("daemon after fuzz input: %q", got)
		}
		h.conn.Close()
	})
}
