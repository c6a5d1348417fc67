package adb

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is a hand-written adb server on a loopback port: it speaks the
// host protocol (version, devices-l, host-serial, transport) and hands
// device services to a phone function, which answers like a phone would.
type fakeServer struct {
	t  testing.TB
	ln net.Listener

	mu       sync.Mutex
	devices  []DeviceInfo
	features string
	phone    func(serial, service, cmd string) reply
	services []string // every device service opened, in order
	hang     chan struct{}
	conns    []net.Conn
}

// reply is what a device service answers.
type reply struct {
	fail    string        // FAIL message instead of OKAY (service refused)
	out     []byte        // exec:/shell: raw output, or v2 stdout
	stderr  []byte        // v2 only
	exit    int           // v2 only
	hang    bool          // accept, then never answer until the test ends
	silent  bool          // never answer the open (a frozen phone: no OKAY either)
	delay   time.Duration // answer after this long (a slow but living phone)
	cut     bool          // close the stream before finishing (no v2 exit packet)
	cutHalf bool          // send half of out, then close
}

func newFakeServer(t testing.TB, phone func(serial, service, cmd string) reply) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{
		t: t, ln: ln, phone: phone, hang: make(chan struct{}),
		devices:  []DeviceInfo{{Serial: "fake-1", State: "device", Product: "fp", Model: "Fake_Phone", DeviceName: "fake", TransportID: "1"}},
		features: "shell_v2,cmd,stat_v2",
	}
	go s.serve()
	t.Cleanup(func() {
		close(s.hang)
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) setDevices(d ...DeviceInfo) {
	s.mu.Lock()
	s.devices = d
	s.mu.Unlock()
}

func (s *fakeServer) setFeatures(f string) {
	s.mu.Lock()
	s.features = f
	s.mu.Unlock()
}

// opened returns the device services opened so far.
func (s *fakeServer) opened() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.services...)
}

func (s *fakeServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go s.handle(c)
	}
}

func readRequest(r *bufio.Reader) (string, error) {
	var hx [4]byte
	if _, err := io.ReadFull(r, hx[:]); err != nil {
		return "", err
	}
	n, err := strconv.ParseUint(string(hx[:]), 16, 16)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return string(b), err
}

func okayString(w io.Writer, s string) {
	fmt.Fprintf(w, "OKAY%04x%s", len(s), s)
}

func fail(w io.Writer, msg string) {
	fmt.Fprintf(w, "FAIL%04x%s", len(msg), msg)
}

func (s *fakeServer) device(serial string) (DeviceInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.Serial == serial {
			return d, true
		}
	}
	return DeviceInfo{}, false
}

func (s *fakeServer) handle(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	req, err := readRequest(r)
	if err != nil {
		return
	}
	switch {
	case req == "host:version":
		okayString(c, "0029")
		return
	case req == "host:devices-l":
		s.mu.Lock()
		var b strings.Builder
		for _, d := range s.devices {
			fmt.Fprintf(&b, "%-22s %s", d.Serial, d.State)
			if d.Product != "" {
				fmt.Fprintf(&b, " product:%s model:%s device:%s", d.Product, d.Model, d.DeviceName)
			}
			fmt.Fprintf(&b, " transport_id:%s\n", d.TransportID)
		}
		s.mu.Unlock()
		okayString(c, b.String())
		return
	case strings.HasPrefix(req, "host-serial:"):
		rest := strings.TrimPrefix(req, "host-serial:")
		i := strings.LastIndex(rest, ":")
		serial, what := rest[:i], rest[i+1:]
		d, ok := s.device(serial)
		if !ok {
			fail(c, "device '"+serial+"' not found")
			return
		}
		switch what {
		case "get-state":
			okayString(c, d.State)
		case "features":
			s.mu.Lock()
			f := s.features
			s.mu.Unlock()
			okayString(c, f)
		default:
			fail(c, "unknown host-serial request")
		}
		return
	case strings.HasPrefix(req, "host:transport:"):
		serial := strings.TrimPrefix(req, "host:transport:")
		d, ok := s.device(serial)
		if !ok {
			fail(c, "device '"+serial+"' not found")
			return
		}
		if d.State == "offline" {
			fail(c, "device offline")
			return
		}
		io.WriteString(c, "OKAY")
		svc, err := readRequest(r)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.services = append(s.services, svc)
		s.mu.Unlock()
		s.deviceService(c, r, serial, svc)
	default:
		fail(c, "unknown host service")
	}
}

func (s *fakeServer) deviceService(c net.Conn, r *bufio.Reader, serial, svc string) {
	v2 := false
	var cmd string
	switch {
	case strings.HasPrefix(svc, "shell,v2,raw:"):
		v2, cmd = true, strings.TrimPrefix(svc, "shell,v2,raw:")
	case strings.HasPrefix(svc, "shell:"):
		cmd = strings.TrimPrefix(svc, "shell:")
	case strings.HasPrefix(svc, "exec:"):
		cmd = strings.TrimPrefix(svc, "exec:")
	default:
		fail(c, "closed")
		return
	}
	rep := s.phone(serial, svc, cmd)
	if rep.silent {
		<-s.hang
		return
	}
	if rep.delay > 0 {
		select {
		case <-time.After(rep.delay):
		case <-s.hang:
			return
		}
	}
	if rep.fail != "" {
		fail(c, rep.fail)
		return
	}
	io.WriteString(c, "OKAY")
	if rep.hang {
		<-s.hang
		return
	}
	if rep.cutHalf {
		c.Write(rep.out[:len(rep.out)/2])
		return
	}
	if !v2 {
		c.Write(rep.out)
		c.Write(rep.stderr)
		return
	}
	frame := func(id byte, b []byte) {
		var h [5]byte
		h[0] = id
		binary.LittleEndian.PutUint32(h[1:], uint32(len(b)))
		c.Write(h[:])
		c.Write(b)
	}
	if len(rep.out) > 0 {
		frame(1, rep.out)
	}
	if len(rep.stderr) > 0 {
		frame(2, rep.stderr)
	}
	if rep.cut {
		return
	}
	frame(3, []byte{byte(rep.exit)})
}
