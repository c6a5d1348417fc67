package adbd

import (
	"bufio"
	"encoding/binary"
	"io"
	"strings"
	"sync"
)

// Shell protocol v2 packet ids (shell_protocol.h).
const (
	v2Stdin      = 0
	v2Stdout     = 1
	v2Stderr     = 2
	v2Exit       = 3
	v2CloseStdin = 4
	v2WindowSize = 5
	// v2MaxFrame keeps each output frame modest, as adbd's own buffer does.
	v2MaxFrame = 64 << 10
)

// handlerFunc serves one opened stream; the stream is closed after it returns.
type handlerFunc func(s *stream)

// service resolves an OPEN's service name, or returns nil to refuse it.
func (srv *Server) service(name string) handlerFunc {
	switch {
	case name == "sync:":
		return srv.serveSync
	case strings.HasPrefix(name, "exec:"):
		// exec-out: raw bytes over a PTY in raw mode, no exit status.
		cmd := strings.TrimPrefix(name, "exec:")
		return func(s *stream) { srv.serveRaw(s, cmd, true) }
	case strings.HasPrefix(name, "localabstract:"):
		ap, ok := srv.phone.(AbstractSockets)
		if !ok {
			return nil
		}
		conn, err := ap.DialAbstract(strings.TrimPrefix(name, "localabstract:"))
		if err != nil {
			srv.log.Debug("localabstract refused", "service", name, "err", err)
			return nil
		}
		return func(s *stream) { bridge(s, conn) }
	case strings.HasPrefix(name, "shell:"):
		// Legacy shell: also a raw-mode PTY on adbd, so /dev/tty exists.
		cmd := strings.TrimPrefix(name, "shell:")
		return func(s *stream) { srv.serveRaw(s, cmd, true) }
	case strings.HasPrefix(name, "shell,"):
		args, cmd, ok := strings.Cut(strings.TrimPrefix(name, "shell,"), ":")
		if !ok {
			return nil
		}
		v2, tty := parseShellArgs(args, cmd)
		if !v2 {
			// Without the shell protocol adbd always uses a PTY.
			return func(s *stream) { srv.serveRaw(s, cmd, true) }
		}
		if !srv.cfg.has(FeatureShellV2) {
			return nil
		}
		return func(s *stream) { srv.serveV2(s, cmd, tty) }
	}
	return nil
}

// parseShellArgs reads "v2,TERM=xterm,raw" the way adbd's ShellService
// does: a PTY for an interactive (empty) command and pipes otherwise,
// overridden by the last of "raw"/"pty".
func parseShellArgs(args, cmd string) (v2, tty bool) {
	tty = cmd == ""
	for _, a := range strings.Split(args, ",") {
		switch a {
		case "v2":
			v2 = true
		case "raw":
			tty = false
		case "pty":
			tty = true
		}
	}
	return v2, tty
}

// bridge copies between a stream and a phone-side socket until either ends.
func bridge(s *stream, conn io.ReadWriteCloser) {
	done := make(chan struct{})
	go func() {
		io.Copy(conn, s)
		conn.Close()
		close(done)
	}()
	io.Copy(s, conn)
	conn.Close()
	s.Close() // the socket's end is the stream's: the host must see it now, not at its next write
	<-done
}

// lockedWriter lets stdout and stderr share one buffered stream.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Flush sends what is buffered: a long-running command (the helper's
// READY line) must be heard before it ends.
func (l lockedWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// serveRaw runs cmd with stdout and stderr merged into the stream and no
// exit status, as the "none" shell protocol does.
func (srv *Server) serveRaw(s *stream, cmd string, tty bool) {
	bw := bufio.NewWriterSize(s, s.t.chunkSize())
	out := lockedWriter{mu: new(sync.Mutex), w: bw}
	flush := func() error {
		out.mu.Lock()
		defer out.mu.Unlock()
		return bw.Flush()
	}
	defer flush()
	if strings.TrimSpace(cmd) == "" {
		sh := srv.newInteractive(out, tty, flush)
		sh.run(s.ctx, s)
		return
	}
	go io.Copy(io.Discard, s) // keep OKAYing stdin the commands never read
	srv.phone.Exec(s.ctx, cmd, tty, out, out)
}

func (srv *Server) newInteractive(out io.Writer, tty bool, flush func() error) *interactiveShell {
	return &interactiveShell{phone: srv.phone, prompt: srv.cfg.Device + ":/ $ ", tty: tty, out: out, flush: flush}
}

// v2Writer frames writes as shell protocol packets of one id.
type v2Writer struct {
	mu *sync.Mutex
	w  *bufio.Writer
	id byte
}

func (v v2Writer) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	written := 0
	for len(p) > 0 {
		n := min(len(p), v2MaxFrame)
		if err := writeV2Frame(v.w, v.id, p[:n]); err != nil {
			return written, err
		}
		p = p[n:]
		written += n
	}
	return written, nil
}

// Flush sends what is buffered (see lockedWriter.Flush).
func (v v2Writer) Flush() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.w.Flush()
}

func writeV2Frame(w io.Writer, id byte, data []byte) error {
	var h [5]byte
	h[0] = id
	binary.LittleEndian.PutUint32(h[1:], uint32(len(data)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// serveV2 runs cmd under the shell protocol: stdout and stderr framed
// separately, then the exit status.
func (srv *Server) serveV2(s *stream, cmd string, tty bool) {
	bw := bufio.NewWriterSize(s, s.t.chunkSize())
	mu := new(sync.Mutex)
	stdout := v2Writer{mu: mu, w: bw, id: v2Stdout}
	stderr := v2Writer{mu: mu, w: bw, id: v2Stderr}
	var code int
	if strings.TrimSpace(cmd) == "" {
		stdinR, stdinW := io.Pipe()
		defer stdinR.Close()
		go srv.readV2Input(s, stdinW)
		flush := func() error {
			mu.Lock()
			defer mu.Unlock()
			return bw.Flush()
		}
		code = srv.newInteractive(stdout, tty, flush).run(s.ctx, stdinR)
	} else {
		go srv.readV2Input(s, nil)
		code = srv.phone.Exec(s.ctx, cmd, tty, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if writeV2Frame(bw, v2Exit, []byte{byte(code)}) == nil {
		bw.Flush()
	}
}

// readV2Input consumes the host's side of a v2 stream: stdin goes to stdin
// when non-nil (closed at close-stdin or the end), window sizes are
// ignored. A malformed frame stops parsing; the rest is drained so the
// host is never stalled.
func (srv *Server) readV2Input(s *stream, stdin *io.PipeWriter) {
	defer io.Copy(io.Discard, s)
	if stdin != nil {
		defer stdin.Close()
	}
	r := bufio.NewReader(s)
	var h [5]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(h[1:])
		if n > srv.cfg.MaxData {
			srv.log.Warn("shell v2: oversized input frame; ignoring the rest of stdin", "id", h[0], "len", n)
			return
		}
		dst := io.Discard
		switch h[0] {
		case v2Stdin:
			if stdin != nil {
				dst = stdin
			}
		case v2CloseStdin:
			if stdin != nil {
				stdin.Close()
				stdin = nil
			}
		case v2WindowSize:
		default:
			srv.log.Debug("shell v2: unknown input frame", "id", h[0], "len", n)
		}
		copied, err := io.CopyN(dst, r, int64(n))
		if err != nil {
			if dst == io.Discard {
				return
			}
			// The shell has exited: skip the rest of this frame and drop
			// further input.
			stdin = nil
			if _, err := io.CopyN(io.Discard, r, int64(n)-copied); err != nil {
				return
			}
		}
	}
}
