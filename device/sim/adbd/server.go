// Package adbd is the device side of the ADB transport protocol: it lets
// Debian's adb server `adb connect` to a simulated phone over TCP and run
// shell, exec and sync (push/pull) services against it.
//
// The wire rules it follows are those of ADB-FACTS.md: CNXN handshake
// (optionally with an AUTH round that accepts any key), stream ids relative
// to the sender, one outstanding WRTE per stream, an OKAY for every WRTE the
// host sends, chunks no larger than min(host maxdata, own maxdata). What the
// commands do is up to the Phone behind it.
package adbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Phone is what the daemon needs from the device behind it.
type Phone interface {
	// Exec runs cmdline as `sh -c` would, writing to stdout and stderr, and
	// returns the exit status. tty tells whether a controlling terminal
	// exists (so /dev/tty works). It must return soon after ctx ends.
	Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int
	// ReadFile returns fs.ErrNotExist (wrapped) for a missing file.
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, data []byte, mode fs.FileMode) error
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.FileInfo, error)
}

// AbstractSockets is a Phone with abstract-namespace Unix sockets that
// adbd's localabstract:NAME service connects to (the simulator's helper).
// Optional: found by type assertion.
type AbstractSockets interface {
	DialAbstract(name string) (io.ReadWriteCloser, error)
}

// Feature names the daemon can advertise. Advertising a feature is a
// promise: the adb client changes its requests (and aborts on bad answers),
// so only these implemented ones are accepted.
const (
	FeatureShellV2 = "shell_v2" // shell,v2 service with exit codes
	FeatureCmd     = "cmd"      // the device has the `cmd` tool
	FeatureStatV2  = "stat_v2"  // sync STA2/LST2
)

// DefaultFeatures is what a modern phone advertises, restricted to what is
// implemented here.
var DefaultFeatures = []string{FeatureShellV2, FeatureCmd, FeatureStatV2}

// Config configures a Server. The zero value is usable after defaults.
type Config struct {
	// Banner properties shown by `adb devices -l`.
	Product, Model, Device string
	// Features advertised in the banner; nil means DefaultFeatures.
	Features []string
	// MaxData is the largest payload this side accepts and sends, between
	// 4096 and 1 MiB; 0 means DefaultMaxData.
	MaxData uint32
	// Auth makes the daemon ask for AUTH before CNXN; any signature or
	// public key is accepted (as a phone whose user always taps "Allow").
	Auth bool
	// HandshakeTimeout closes connections that do not complete CNXN in
	// time; 0 means 10 s (what the adb server itself waits).
	HandshakeTimeout time.Duration
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.MaxData != 0 && (c.MaxData < maxPayloadV1 || c.MaxData > DefaultMaxData) {
		return fmt.Errorf("adbd config: MaxData %d out of range [%d, %d]", c.MaxData, maxPayloadV1, DefaultMaxData)
	}
	for _, f := range c.Features {
		if !slices.Contains(DefaultFeatures, f) {
			return fmt.Errorf("adbd config: feature %q is not implemented (have %s)", f, strings.Join(DefaultFeatures, ","))
		}
	}
	for name, v := range map[string]string{"Product": c.Product, "Model": c.Model, "Device": c.Device} {
		if strings.ContainsAny(v, ";=\x00") {
			return fmt.Errorf("adbd config: %s %q must not contain ';', '=' or NUL", name, v)
		}
	}
	if c.HandshakeTimeout < 0 {
		return fmt.Errorf("adbd config: HandshakeTimeout %v is negative", c.HandshakeTimeout)
	}
	if len(c.banner()) > maxPayloadV1 {
		return fmt.Errorf("adbd config: banner longer than %d bytes", maxPayloadV1)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Product == "" {
		c.Product = "simphone"
	}
	if c.Model == "" {
		c.Model = "Sim Phone"
	}
	if c.Device == "" {
		c.Device = "simdev"
	}
	if c.Features == nil {
		c.Features = DefaultFeatures
	}
	if c.MaxData == 0 {
		c.MaxData = DefaultMaxData
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// banner is the CNXN payload: state "device", empty serial, properties.
func (c Config) banner() string {
	return fmt.Sprintf("device::ro.product.name=%s;ro.product.model=%s;ro.product.device=%s;features=%s",
		c.Product, c.Model, c.Device, strings.Join(c.Features, ","))
}

func (c Config) has(feature string) bool { return slices.Contains(c.Features, feature) }

// Server accepts adb host connections and serves a Phone on each.
type Server struct {
	phone Phone
	cfg   Config
	log   *slog.Logger

	mu         sync.Mutex
	transports map[*transport]struct{}
	listeners  map[net.Listener]struct{}
	closed     bool
}

// New returns a Server for phone.
func New(phone Phone, cfg Config) (*Server, error) {
	if phone == nil {
		return nil, errors.New("adbd: nil phone")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Server{
		phone:      phone,
		cfg:        cfg,
		log:        cfg.Logger,
		transports: map[*transport]struct{}{},
		listeners:  map[net.Listener]struct{}{},
	}, nil
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("adbd: server closed")

// Serve accepts connections on ln until ctx ends, the listener fails or is
// closed, or Close is called. Then it closes the listener and every
// transport it accepted (so adb sees the device vanish) and waits for
// them. It returns nil when ctx ended, ErrServerClosed after Close, and
// the accept error otherwise.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			ln.Close()
		case <-stopped:
		}
	}()
	defer func() {
		close(stopped)
		ln.Close()
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		cancel() // ends every transport started by this Serve
		wg.Wait()
	}()
	s.log.Info("adbd listening", "addr", ln.Addr().String())
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("adbd: accept: %w", err)
		}
		t := newTransport(ctx, s, conn)
		if !s.track(t) {
			conn.Close()
			return ErrServerClosed
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.untrack(t)
			t.run()
		}()
	}
}

// ListenAndServe listens on addr (host:port; "127.0.0.1:0" picks a port)
// and serves until ctx ends. ready, when non-nil, is called with the bound
// address before the first Accept.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("adbd: listen %s: %w", addr, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}

// Close stops every Serve call and closes all transports.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	lns := make([]net.Listener, 0, len(s.listeners))
	for ln := range s.listeners {
		lns = append(lns, ln)
	}
	ts := make([]*transport, 0, len(s.transports))
	for t := range s.transports {
		ts = append(ts, t)
	}
	s.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, t := range ts {
		t.close(ErrServerClosed)
	}
	return nil
}

// Connections is the number of open transports (for tests and status).
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.transports)
}

func (s *Server) track(t *transport) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.transports[t] = struct{}{}
	return true
}

func (s *Server) untrack(t *transport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.transports, t)
}
