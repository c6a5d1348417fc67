package adbd

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"
)

// errTransportClosed is the reason streams see when their transport ends.
var errTransportClosed = errors.New("adbd: transport closed")

// maxStreams bounds the streams open at once on one transport; OPENs past
// it are refused, so a runaway host cannot make unbounded goroutines.
const maxStreams = 1024

// maxQueuedWrites bounds the WRTEs a host may send on one stream without
// waiting for our OKAY; a compliant host has at most one in flight.
const maxQueuedWrites = 64

// transport is one TCP connection from an adb server.
type transport struct {
	srv  *Server
	conn net.Conn
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelCauseFunc

	wmu      sync.Mutex // serialises packet writes
	checksum bool       // send data_check byte sums (peer is version 0x01000000)

	mu       sync.Mutex
	online   bool
	chunk    int // WRTE payload limit: min(host maxdata, own)
	streams  map[uint32]*stream
	lastID   uint32
	token    []byte
	handlers sync.WaitGroup

	closeOnce sync.Once
}

// newTransport wraps conn; the transport ends when ctx does.
func newTransport(ctx context.Context, s *Server, conn net.Conn) *transport {
	t := &transport{
		srv:      s,
		conn:     conn,
		log:      s.log.With("remote", conn.RemoteAddr().String()),
		streams:  map[uint32]*stream{},
		checksum: true,
	}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	return t
}

// run reads packets until the connection fails, garbage arrives, or ctx
// ends; then it closes every stream and waits for their handlers.
func (t *transport) run() {
	stop := context.AfterFunc(t.ctx, func() { t.conn.Close() })
	defer stop()
	t.log.Debug("adb host connected")

	r := bufio.NewReaderSize(t.conn, 64<<10)
	t.conn.SetReadDeadline(time.Now().Add(t.srv.cfg.HandshakeTimeout))
	var err error
	for {
		var p packet
		p, err = readPacket(r, t.srv.cfg.MaxData)
		if err != nil {
			break
		}
		if err = t.handle(p); err != nil {
			break
		}
	}
	if cause := context.Cause(t.ctx); cause != nil {
		err = cause
	}
	t.close(err)
	t.handlers.Wait()
}

// close ends the transport once, logging why.
func (t *transport) close(reason error) {
	t.closeOnce.Do(func() {
		var pe *protocolError
		switch {
		case errors.As(reason, &pe):
			t.log.Warn("closing adb transport", "reason", reason)
		case reason == nil || errors.Is(reason, io.EOF) || errors.Is(reason, net.ErrClosed) ||
			errors.Is(reason, context.Canceled) || errors.Is(reason, ErrServerClosed):
			t.log.Info("adb transport closed", "reason", fmt.Sprint(reason))
		default:
			t.log.Info("adb transport closed", "reason", reason)
		}
		if reason == nil {
			reason = errTransportClosed
		}
		t.cancel(reason)
		t.conn.Close()
		t.mu.Lock()
		streams := t.streams
		t.streams = map[uint32]*stream{}
		t.mu.Unlock()
		for _, s := range streams {
			s.abort()
		}
	})
}

// send writes one packet; writes from all streams are serialised here.
func (t *transport) send(p packet) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.ctx.Err() != nil {
		return errTransportClosed
	}
	if _, err := t.conn.Write(p.encode(t.checksum)); err != nil {
		t.close(fmt.Errorf("write: %w", err))
		return errTransportClosed
	}
	return nil
}

func (t *transport) handle(p packet) error {
	switch p.cmd {
	case cmdCNXN:
		return t.handleCNXN(p)
	case cmdAUTH:
		return t.handleAUTH(p)
	}
	t.mu.Lock()
	online := t.online
	t.mu.Unlock()
	if !online {
		// adbd drops everything but CNXN/AUTH before the handshake.
		t.log.Debug("ignoring packet before handshake", "packet", p.String())
		return nil
	}
	switch p.cmd {
	case cmdOPEN:
		return t.handleOPEN(p)
	case cmdOKAY:
		if s := t.stream(p.arg1); s != nil && s.remote == p.arg0 {
			s.okayed()
		}
	case cmdWRTE:
		if s := t.stream(p.arg1); s != nil && s.remote == p.arg0 {
			if !s.deliver(p.data) {
				return &protocolError{fmt.Sprintf("host sent more than %d WRTEs on stream %d without waiting for OKAY", maxQueuedWrites, p.arg1)}
			}
		}
		// WRTE for an unknown stream: ignored, as adbd does.
	case cmdCLSE:
		// adb 29 echoes CLSE(host, dev) after ours; the id is gone by then.
		if s := t.stream(p.arg1); s != nil && s.remote == p.arg0 {
			t.forget(s.local)
			s.hostClosed()
		}
	default:
		t.log.Debug("ignoring unknown packet", "packet", p.String())
	}
	return nil
}

func (t *transport) handleCNXN(p packet) error {
	if p.arg0 < versionMin {
		return &protocolError{fmt.Sprintf("CNXN version %#x older than %#x", p.arg0, versionMin)}
	}
	if p.arg1 == 0 {
		return &protocolError{"CNXN with maxdata 0"}
	}
	if !strings.HasPrefix(string(p.data), "host:") {
		t.log.Debug("CNXN from a peer that is not a host", "banner", string(p.data))
	}
	chunk := min(p.arg1, t.srv.cfg.MaxData)
	t.mu.Lock()
	wasOnline := t.online
	t.chunk = int(chunk)
	t.online = false
	old := t.streams
	t.streams = map[uint32]*stream{}
	t.mu.Unlock()
	if wasOnline {
		// A second CNXN is a reconnect on the same socket: drop old streams.
		for _, s := range old {
			s.abort()
		}
	}
	if t.srv.cfg.Auth {
		token := make([]byte, 20)
		rand.Read(token)
		t.mu.Lock()
		t.token = token
		t.mu.Unlock()
		return t.send(packet{cmd: cmdAUTH, arg0: authToken, data: token})
	}
	return t.goOnline(p.arg0)
}

func (t *transport) handleAUTH(p packet) error {
	t.mu.Lock()
	asked := t.token != nil
	t.mu.Unlock()
	if !asked {
		t.log.Debug("ignoring AUTH we did not ask for", "packet", p.String())
		return nil
	}
	switch p.arg0 {
	case authSignature, authRSAPublicKey:
		// Any key is accepted: the simulated user always taps "Allow".
		return t.goOnline(versionSkipChecksum)
	default:
		return &protocolError{fmt.Sprintf("AUTH type %d from host", p.arg0)}
	}
}

// goOnline answers CNXN and lets streams open. hostVersion decides whether
// our later packets carry checksums.
func (t *transport) goOnline(hostVersion uint32) error {
	banner := t.srv.cfg.banner()
	if err := t.send(packet{cmd: cmdCNXN, arg0: versionSkipChecksum, arg1: t.srv.cfg.MaxData, data: []byte(banner)}); err != nil {
		return err
	}
	t.wmu.Lock()
	t.checksum = min(hostVersion, versionSkipChecksum) < versionSkipChecksum
	t.wmu.Unlock()
	t.mu.Lock()
	t.online = true
	t.token = nil
	t.mu.Unlock()
	t.conn.SetReadDeadline(time.Time{})
	t.log.Info("adb host online", "banner", banner)
	return nil
}

func (t *transport) handleOPEN(p packet) error {
	if p.arg0 == 0 {
		return &protocolError{"OPEN with local id 0"}
	}
	name := strings.TrimRight(string(p.data), "\x00")
	handler := t.srv.service(name)
	if handler == nil {
		t.log.Info("refusing service", "service", name)
		return t.send(packet{cmd: cmdCLSE, arg0: 0, arg1: p.arg0})
	}
	t.mu.Lock()
	full := len(t.streams) >= maxStreams
	t.mu.Unlock()
	if full {
		t.log.Warn("refusing service: too many open streams", "service", name, "open", maxStreams)
		return t.send(packet{cmd: cmdCLSE, arg0: 0, arg1: p.arg0})
	}
	s := t.newStream(p.arg0)
	if err := t.send(packet{cmd: cmdOKAY, arg0: s.local, arg1: s.remote}); err != nil {
		return err
	}
	t.log.Debug("stream opened", "service", name, "local", s.local, "remote", s.remote)
	t.handlers.Add(1)
	go func() {
		defer t.handlers.Done()
		defer s.Close()
		handler(s)
	}()
	return nil
}

func (t *transport) newStream(remote uint32) *stream {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Ids only grow (skipping 0 and live ones) so a late CLSE echo for a
	// closed stream can never hit a new one.
	for {
		t.lastID++
		if _, busy := t.streams[t.lastID]; t.lastID != 0 && !busy {
			break
		}
	}
	s := newStream(t, t.lastID, remote)
	t.streams[s.local] = s
	return s
}

func (t *transport) stream(local uint32) *stream {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.streams[local]
}

func (t *transport) forget(local uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.streams, local)
}

func (t *transport) chunkSize() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.chunk
}
