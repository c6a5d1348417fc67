package adb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"phonepilot/device"
)

// DefaultServer is where the adb server listens unless told otherwise.
const DefaultServer = "127.0.0.1:5037"

// maxOutput caps what one command may return, so a runaway command cannot
// exhaust memory (a 4K screenshot is ~30 MB uncompressed-ish PNG at worst).
const maxOutput = 64 << 20

var (
	// ErrServerUnavailable: nothing answers at the adb server address. It is
	// wrapped together with device.ErrDisconnected by device operations.
	ErrServerUnavailable = errors.New("adb server not reachable")
	// ErrUnauthorized: the phone has not accepted this computer's key yet.
	ErrUnauthorized = errors.New("device unauthorized: accept the USB debugging prompt on the phone")
	// ErrProtocol: the server sent something the host protocol does not allow.
	ErrProtocol = errors.New("adb protocol error")
)

// ServerError is a FAIL answer from the adb server, carrying its message.
type ServerError struct {
	Service string // the request that failed, e.g. "host:transport:emulator-5554"
	Message string // the server's text, e.g. "device offline"
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("adb server refused %q: %s", e.Service, e.Message)
}

// Is lets errors.Is see a FAIL about a missing or offline device as
// device.ErrDisconnected, and an unauthorized one as ErrUnauthorized.
func (e *ServerError) Is(target error) bool {
	switch target {
	case device.ErrDisconnected:
		return messageMeansGone(e.Message)
	case ErrUnauthorized:
		return strings.Contains(e.Message, "unauthorized")
	}
	return false
}

// messageMeansGone reports FAIL messages the server uses for a device that
// is not (or no longer) there.
func messageMeansGone(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"not found", "offline", "no devices", "no emulators"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// ParseServerAddress accepts "host:port", ":port", "port" or the
// ADB_SERVER_SOCKET form "tcp:host:port" and returns a dialable host:port.
// Empty means DefaultServer.
func ParseServerAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultServer, nil
	}
	if rest, ok := strings.CutPrefix(s, "tcp:"); ok {
		s = rest
	} else if strings.HasPrefix(s, "localfilesystem:") || strings.HasPrefix(s, "localabstract:") {
		return "", fmt.Errorf("adb server address %q: only tcp: sockets are supported", s)
	}
	if _, err := strconv.Atoi(s); err == nil {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("adb server address %q: want host:port or tcp:host:port: %w", s, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("adb server address %q: port %q is not a number in 1..65535", s, port)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Client speaks the adb server's host ("smart socket") protocol. Each
// request is its own TCP connection to the server, as the adb tool does; no
// process is spawned. Every method honours ctx, and applies DefaultTimeout
// when ctx has no deadline, so no call can hang.
type Client struct {
	addr string
	// DefaultTimeout bounds a call whose ctx has no deadline.
	DefaultTimeout time.Duration
	dialer         net.Dialer
}

// NewClient returns a client for the server at addr (see ParseServerAddress).
func NewClient(addr string) (*Client, error) {
	a, err := ParseServerAddress(addr)
	if err != nil {
		return nil, err
	}
	return &Client{addr: a, DefaultTimeout: 30 * time.Second}, nil
}

// Addr is the server's host:port.
func (c *Client) Addr() string { return c.addr }

// conn is one connection to the server with ctx wired to its deadline.
type conn struct {
	net.Conn
	r       *bufio.Reader
	stop    func() bool
	cancel  context.CancelFunc
	ctx     context.Context
	service string
}

// dial connects to the server. The returned conn's I/O fails as soon as ctx
// is done or its deadline passes.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok && c.DefaultTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.DefaultTimeout)
	}
	nc, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		defer cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to adb server %s: %w", c.addr, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s (is it running? `adb start-server`): %w", ErrServerUnavailable, c.addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	// Cancellation without a deadline change still has to interrupt a
	// blocked read: push the deadline into the past.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	return &conn{Conn: nc, r: bufio.NewReaderSize(nc, 64<<10), stop: stop, cancel: cancel, ctx: ctx}, nil
}

func (cn *conn) Close() error {
	cn.stop()
	cn.cancel()
	return cn.Conn.Close()
}

// wrap names the failing service and turns a timeout caused by ctx into
// ctx's own error, so callers can use errors.Is(err, context.DeadlineExceeded).
func (cn *conn) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := cn.ctx.Err(); cerr != nil {
		return fmt.Errorf("%s %q: %w", op, cn.service, cerr)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s %q: %w", op, cn.service, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s %q: %w", op, cn.service, err)
}

// send writes one request and reads the OKAY/FAIL status.
func (cn *conn) send(service string) error {
	cn.service = service
	if len(service) > 0xffff {
		return fmt.Errorf("adb request too long (%d bytes)", len(service))
	}
	if _, err := fmt.Fprintf(cn.Conn, "%04x%s", len(service), service); err != nil {
		return cn.wrap("send", err)
	}
	return cn.status()
}

func (cn *conn) status() error {
	var st [4]byte
	if _, err := io.ReadFull(cn.r, st[:]); err != nil {
		return cn.wrap("read status of", err)
	}
	switch string(st[:]) {
	case "OKAY":
		return nil
	case "FAIL":
		msg, err := cn.readHexString()
		if err != nil {
			return err
		}
		return &ServerError{Service: cn.service, Message: msg}
	default:
		return fmt.Errorf("%w: status %q for %q", ErrProtocol, st[:], cn.service)
	}
}

// readHexString reads a %04x length-prefixed payload.
func (cn *conn) readHexString() (string, error) {
	var hx [4]byte
	if _, err := io.ReadFull(cn.r, hx[:]); err != nil {
		return "", cn.wrap("read length of", err)
	}
	n, err := strconv.ParseUint(string(hx[:]), 16, 32)
	if err != nil {
		return "", fmt.Errorf("%w: bad length %q for %q", ErrProtocol, hx[:], cn.service)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(cn.r, buf); err != nil {
		return "", cn.wrap("read reply of", err)
	}
	return string(buf), nil
}

// readAll reads until the server closes the stream.
func (cn *conn) readAll() ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(cn.r, maxOutput+1))
	if err != nil {
		return buf.Bytes(), cn.wrap("read output of", err)
	}
	if n > maxOutput {
		return nil, fmt.Errorf("output of %q exceeds %d bytes", cn.service, maxOutput)
	}
	return buf.Bytes(), nil
}

// query runs a host request whose answer is a length-prefixed string.
func (c *Client) query(ctx context.Context, service string) (string, error) {
	cn, err := c.dial(ctx)
	if err != nil {
		return "", err
	}
	defer cn.Close()
	if err := cn.send(service); err != nil {
		return "", err
	}
	return cn.readHexString()
}

// Version is the server's protocol version (41 for adb 29/1.0.41).
func (c *Client) Version(ctx context.Context) (int, error) {
	s, err := c.query(ctx, "host:version")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: host:version answered %q", ErrProtocol, s)
	}
	return int(v), nil
}

// DeviceInfo is one line of `adb devices -l`.
type DeviceInfo struct {
	Serial      string `json:"serial"`
	State       string `json:"state"` // device, unauthorized, offline, recovery, …
	Product     string `json:"product,omitempty"`
	Model       string `json:"model,omitempty"` // as the server sanitises it (spaces → _)
	DeviceName  string `json:"device,omitempty"`
	TransportID string `json:"transport_id,omitempty"`
}

// Devices lists the devices the server knows, in its order.
func (c *Client) Devices(ctx context.Context) ([]DeviceInfo, error) {
	s, err := c.query(ctx, "host:devices-l")
	if err != nil {
		return nil, err
	}
	return parseDevicesL(s), nil
}

// parseDevicesL parses host:devices-l output. Lines look like
// "emulator-5554          device product:sdk model:Pixel device:gen transport_id:1";
// a serial never contains spaces, the state is one word ("no permissions"
// is the exception, followed by a bracketed hint).
func parseDevicesL(s string) []DeviceInfo {
	var out []DeviceInfo
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		d := DeviceInfo{Serial: fields[0], State: fields[1]}
		rest := fields[2:]
		if d.State == "no" && len(rest) > 0 && rest[0] == "permissions" {
			d.State = "no permissions"
			rest = rest[1:]
		}
		for _, f := range rest {
			k, v, ok := strings.Cut(f, ":")
			if !ok {
				continue
			}
			switch k {
			case "product":
				d.Product = v
			case "model":
				d.Model = v
			case "device":
				d.DeviceName = v
			case "transport_id":
				d.TransportID = v
			}
		}
		out = append(out, d)
	}
	return out
}

// State is the device's state as the server sees it ("device", "offline",
// "unauthorized", …). A serial the server does not know is an error that
// matches device.ErrDisconnected.
func (c *Client) State(ctx context.Context, serial string) (string, error) {
	return c.query(ctx, "host-serial:"+serial+":get-state")
}

// Features lists the features shared by the server and the device
// (shell_v2, cmd, stat_v2, …).
func (c *Client) Features(ctx context.Context, serial string) ([]string, error) {
	s, err := c.query(ctx, "host-serial:"+serial+":features")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range strings.Split(strings.TrimSpace(s), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

// Connect asks the server to connect to a device over TCP ("host:port").
func (c *Client) Connect(ctx context.Context, hostport string) (string, error) {
	return c.query(ctx, "host:connect:"+hostport)
}

// Disconnect asks the server to drop a TCP device.
func (c *Client) Disconnect(ctx context.Context, hostport string) (string, error) {
	return c.query(ctx, "host:disconnect:"+hostport)
}

// openService switches a fresh connection to serial's transport and opens
// a device service on it.
func (c *Client) openService(ctx context.Context, serial, service string) (*conn, error) {
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := cn.send("host:transport:" + serial); err != nil {
		cn.Close()
		return nil, err
	}
	if err := cn.send(service); err != nil {
		cn.Close()
		return nil, err
	}
	return cn, nil
}

// Exec runs cmd through the exec: service: raw bytes, no shell protocol,
// binary-safe (screencap), and no exit status. cmd is parsed by the
// device's sh, so quote arguments yourself (Quote).
func (c *Client) Exec(ctx context.Context, serial, cmd string) ([]byte, error) {
	cn, err := c.openService(ctx, serial, "exec:"+cmd)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	return cn.readAll()
}

// ShellResult is what a shell command produced.
type ShellResult struct {
	Stdout, Stderr []byte
	// ExitCode is the command's status; meaningful only when HasExitCode
	// (the device speaks shell protocol v2).
	ExitCode    int
	HasExitCode bool
}

// ErrNoExitStatus marks a shell v2 stream that ended without an exit
// packet: the transport died under the command.
var ErrNoExitStatus = errors.New("shell stream ended without exit status")

// Shell runs cmd under the device's sh. With v2 it uses the shell protocol
// (`shell,v2,raw:`: separate stdout/stderr and an exit code); otherwise the
// legacy `shell:` service (merged output, no exit code).
func (c *Client) Shell(ctx context.Context, serial, cmd string, v2 bool) (ShellResult, error) {
	if !v2 {
		cn, err := c.openService(ctx, serial, "shell:"+cmd)
		if err != nil {
			return ShellResult{}, err
		}
		defer cn.Close()
		out, err := cn.readAll()
		return ShellResult{Stdout: out}, err
	}
	cn, err := c.openService(ctx, serial, "shell,v2,raw:"+cmd)
	if err != nil {
		return ShellResult{}, err
	}
	defer cn.Close()
	// We send no stdin: say so, as the adb client does, so commands that
	// read stdin see EOF instead of waiting.
	if _, err := cn.Write([]byte{shellCloseStdin, 0, 0, 0, 0}); err != nil {
		return ShellResult{}, cn.wrap("close stdin of", err)
	}
	return readShellV2(cn)
}

// Shell protocol v2 packet ids (adb shell_protocol.h).
const (
	shellStdin      = 0
	shellStdout     = 1
	shellStderr     = 2
	shellExit       = 3
	shellCloseStdin = 4
)

func readShellV2(cn *conn) (ShellResult, error) {
	var res ShellResult
	var hdr [5]byte
	var stdout, stderr bytes.Buffer
	total := 0
	for {
		if _, err := io.ReadFull(cn.r, hdr[:]); err != nil {
			res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
			if errors.Is(err, io.EOF) && cn.ctx.Err() == nil {
				// A clean close before the exit packet: the device side
				// went away mid-command.
				return res, fmt.Errorf("shell %q: %w", cn.service, ErrNoExitStatus)
			}
			return res, cn.wrap("read output of", err)
		}
		n := int(binary.LittleEndian.Uint32(hdr[1:]))
		total += n
		if total > maxOutput {
			return res, fmt.Errorf("output of %q exceeds %d bytes", cn.service, maxOutput)
		}
		var dst io.Writer = io.Discard
		switch hdr[0] {
		case shellStdout:
			dst = &stdout
		case shellStderr:
			dst = &stderr
		case shellExit:
			var b bytes.Buffer
			dst = &b
			if _, err := io.CopyN(dst, cn.r, int64(n)); err != nil {
				return res, cn.wrap("read exit status of", err)
			}
			res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
			if b.Len() > 0 {
				res.ExitCode = int(b.Bytes()[0])
			}
			res.HasExitCode = true
			return res, nil
		}
		if _, err := io.CopyN(dst, cn.r, int64(n)); err != nil {
			res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
			if errors.Is(err, io.EOF) && cn.ctx.Err() == nil {
				return res, fmt.Errorf("shell %q: %w", cn.service, ErrNoExitStatus)
			}
			return res, cn.wrap("read output of", err)
		}
	}
}

// isConnectionLoss reports errors that mean the server or the transport
// went away under a call (as opposed to a command failing).
func isConnectionLoss(err error) bool {
	// "closed" is how the server refuses a stream on a transport that is
	// going away (or a device that refused the service): ask whether the
	// device is still there.
	var se *ServerError
	if errors.As(err, &se) && se.Message == "closed" {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, ErrNoExitStatus) || errors.Is(err, ErrServerUnavailable)
}

// ScreenSize asks a device for `wm size` without opening a Device (for
// listings): the shell protocol is chosen from the device's features.
func (c *Client) ScreenSize(ctx context.Context, serial string) (ScreenSize, error) {
	feats, err := c.Features(ctx, serial)
	if err != nil {
		return ScreenSize{}, err
	}
	v2 := false
	for _, f := range feats {
		v2 = v2 || f == "shell_v2"
	}
	res, err := c.Shell(ctx, serial, "wm size", v2)
	if err != nil {
		return ScreenSize{}, err
	}
	return ParseWMSize(append(res.Stdout, res.Stderr...))
}
