package adbd

import (
	"context"
	"errors"
	"io"
	"sync"
)

// errStreamClosed is what writers see once the host closed the stream or
// the transport went away.
var errStreamClosed = errors.New("adbd: stream closed")

// stream is one service connection multiplexed on a transport. It is an
// io.ReadWriteCloser: Read returns what the host WRTEs (OKAYing each WRTE
// as it is consumed, which is the host's flow control), Write sends WRTEs
// of at most the negotiated chunk size, waiting for the host's OKAY after
// each, Close sends CLSE unless the host closed first.
type stream struct {
	t             *transport
	local, remote uint32
	ctx           context.Context
	cancel        context.CancelFunc
	okay          chan struct{} // the host's OKAY for our outstanding WRTE

	mu         sync.Mutex
	queue      [][]byte // host WRTEs not yet read
	cur        []byte   // unread rest of the WRTE being read
	ready      chan struct{}
	peerClosed bool
	closed     bool
}

func newStream(t *transport, local, remote uint32) *stream {
	ctx, cancel := context.WithCancel(t.ctx)
	return &stream{
		t: t, local: local, remote: remote,
		ctx: ctx, cancel: cancel,
		okay:  make(chan struct{}, 1),
		ready: make(chan struct{}, 1),
	}
}

// okayed records the host's OKAY for our last WRTE.
func (s *stream) okayed() {
	select {
	case s.okay <- struct{}{}:
	default:
	}
}

// deliver queues a host WRTE; false means the host ignores flow control.
func (s *stream) deliver(data []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.peerClosed {
		return true
	}
	if len(s.queue) >= maxQueuedWrites {
		return false
	}
	s.queue = append(s.queue, data)
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return true
}

// hostClosed handles the host's CLSE: no more reads, writes fail, and we
// must not send CLSE back.
func (s *stream) hostClosed() {
	s.mu.Lock()
	s.peerClosed = true
	s.mu.Unlock()
	s.cancel()
}

// abort ends the stream because the transport is gone.
func (s *stream) abort() { s.hostClosed() }

func (s *stream) Read(p []byte) (int, error) {
	for {
		s.mu.Lock()
		if len(s.cur) > 0 {
			n := copy(p, s.cur)
			s.cur = s.cur[n:]
			s.mu.Unlock()
			return n, nil
		}
		if len(s.queue) > 0 {
			s.cur = s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			// The WRTE is now ours: let the host send the next one.
			if err := s.t.send(packet{cmd: cmdOKAY, arg0: s.local, arg1: s.remote}); err != nil {
				return 0, io.EOF
			}
			continue
		}
		done := s.peerClosed || s.closed || s.ctx.Err() != nil
		s.mu.Unlock()
		if done {
			return 0, io.EOF
		}
		select {
		case <-s.ready:
		case <-s.ctx.Done():
		}
	}
}

func (s *stream) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), s.t.chunkSize())
		select { // an OKAY left over from before is not for this WRTE
		case <-s.okay:
		default:
		}
		if s.ctx.Err() != nil {
			return written, errStreamClosed
		}
		if err := s.t.send(packet{cmd: cmdWRTE, arg0: s.local, arg1: s.remote, data: p[:n]}); err != nil {
			return written, errStreamClosed
		}
		select {
		case <-s.okay:
		case <-s.ctx.Done():
			return written, errStreamClosed
		}
		p = p[n:]
		written += n
	}
	return written, nil
}

// Close ends the stream from the device side.
func (s *stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	peerClosed := s.peerClosed
	s.queue, s.cur = nil, nil
	s.mu.Unlock()
	s.t.forget(s.local)
	if !peerClosed {
		s.t.send(packet{cmd: cmdCLSE, arg0: s.local, arg1: s.remote})
	}
	s.cancel()
	return nil
}
