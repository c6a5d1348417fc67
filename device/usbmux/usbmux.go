// Package usbmux speaks usbmuxd's protocol, the daemon (Apple's on macOS,
// libimobiledevice's usbmuxd on Linux) that multiplexes TCP connections to
// the iPhones attached by USB: list the attached devices and open a raw
// tunnel to one port on one of them. phonepilot uses it to reach
// WebDriverAgent's port 8100 for `ios:UDID` device names without iproxy.
//
// The wire (public: libimobiledevice/usbmuxd, libusbmuxd): every message
// is a 16-byte little-endian header (total length, version 1, message
// type 8 = plist, a tag the reply echoes) and an XML property list. A
// connection that has sent Connect and got Result 0 stops being usbmuxd's:
// from then on it is a raw byte stream to the device's port.
package usbmux

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"howett.net/plist"
)

// DefaultSocket is where usbmuxd listens on Linux and macOS.
const DefaultSocket = "/var/run/usbmuxd"

// EnvAddress names the environment variable that points at another usbmuxd,
// as libusbmuxd and appium-ios-device read it: "UNIX:/path", "/path" or
// "HOST:PORT".
const EnvAddress = "USBMUXD_SOCKET_ADDRESS"

// The header's fields this package sends and accepts.
const (
	headerLen   = 16
	versionXML  = 1
	typePlist   = 8
	maxFrameLen = 4 << 20
)

// Result numbers of a "Result" message (usbmuxd's usbmuxd-proto.h).
const (
	ResultOK         = 0
	ResultBadCommand = 1
	ResultBadDevice  = 2
	ResultRefused    = 3
	ResultBadVersion = 6
)

// Errors a caller can test with errors.Is.
var (
	// ErrNoDaemon: nothing answers at usbmuxd's address.
	ErrNoDaemon = errors.New("usbmuxd is not running")
	// ErrNoDevice: no attached device has that UDID (or that device id).
	ErrNoDevice = errors.New("no such device attached")
	// ErrRefused: the device is attached but nothing listens on the port.
	ErrRefused = errors.New("connection refused by the device")
)

// Address is where a usbmuxd listens: a network ("unix" or "tcp") and an
// address.
type Address struct {
	Network, Addr string
}

func (a Address) String() string {
	if a.Network == "unix" {
		return a.Addr
	}
	return a.Network + ":" + a.Addr
}

// ParseAddress reads a usbmuxd address as USBMUXD_SOCKET_ADDRESS gives it
// ("UNIX:/path", "/path" or "HOST:PORT"); "" is DefaultSocket.
func ParseAddress(s string) (Address, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Address{"unix", DefaultSocket}, nil
	}
	if len(s) > 5 && strings.EqualFold(s[:5], "unix:") {
		return Address{"unix", s[5:]}, nil
	}
	if strings.HasPrefix(s, "/") {
		return Address{"unix", s}, nil
	}
	if _, port, err := net.SplitHostPort(s); err != nil || !isPort(port) {
		return Address{}, fmt.Errorf("usbmuxd address %q: want UNIX:/path, /path or HOST:PORT", s)
	}
	return Address{"tcp", s}, nil
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n <= 0xffff
}

// AddressFromEnv is $USBMUXD_SOCKET_ADDRESS, or DefaultSocket when unset.
func AddressFromEnv() (Address, error) {
	a, err := ParseAddress(os.Getenv(EnvAddress))
	if err != nil {
		return Address{}, fmt.Errorf("%s: %w", EnvAddress, err)
	}
	return a, nil
}

// Device is one device usbmuxd lists.
type Device struct {
	ID             int    // usbmuxd's DeviceID, what Connect takes
	UDID           string // Properties.SerialNumber
	ConnectionType string // "USB" or "Network"
	ProductID      int
}

// Client talks to one usbmuxd. Every call opens a connection of its own,
// as usbmuxd expects (a Connect consumes its connection).
type Client struct {
	addr Address
	prog string
}

// New is a client of the usbmuxd at addr.
func New(addr Address) *Client { return &Client{addr: addr, prog: "phonepilot"} }

// Address is the usbmuxd's address.
func (c *Client) Address() Address { return c.addr }

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, c.addr.Network, c.addr.Addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w at %s (attach the iPhone and start usbmuxd, or set %s): %v", ErrNoDaemon, c.addr, EnvAddress, err)
	}
	return conn, nil
}

// request sends one plist message and decodes the reply into out.
func (c *Client) request(ctx context.Context, conn net.Conn, msg map[string]any, out any) error {
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(aLongTimeAgo) })
	defer stop()
	msg["ProgName"] = c.prog
	msg["ClientVersionString"] = c.prog
	if err := WriteMessage(conn, 1, msg); err != nil {
		return c.wireErr(ctx, msg, err)
	}
	tag, body, err := ReadMessage(conn)
	if err != nil {
		return c.wireErr(ctx, msg, err)
	}
	if tag != 1 {
		return fmt.Errorf("usbmuxd at %s answered %s with tag %d, want 1", c.addr, msg["MessageType"], tag)
	}
	if _, err := plist.Unmarshal(body, out); err != nil {
		return fmt.Errorf("usbmuxd at %s: %s's reply: %v", c.addr, msg["MessageType"], err)
	}
	if !stop() {
		return ctx.Err() // cancelled while the reply came: the deadline is spent
	}
	_ = conn.SetDeadline(noDeadline) // a tunnel's reads wait as long as its user does
	return nil
}

func (c *Client) wireErr(ctx context.Context, msg map[string]any, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("usbmuxd at %s: %s: %w", c.addr, msg["MessageType"], err)
}

// Devices lists the attached devices.
func (c *Client) Devices(ctx context.Context) ([]Device, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var reply struct {
		DeviceList []struct {
			DeviceID   int
			Properties struct {
				SerialNumber   string
				ConnectionType string
				ProductID      int
			}
		}
		MessageType string
		Number      int
	}
	if err := c.request(ctx, conn, map[string]any{"MessageType": "ListDevices"}, &reply); err != nil {
		return nil, err
	}
	if reply.MessageType == "Result" {
		return nil, resultErr(c.addr, "ListDevices", reply.Number)
	}
	out := make([]Device, 0, len(reply.DeviceList))
	for _, d := range reply.DeviceList {
		out = append(out, Device{ID: d.DeviceID, UDID: d.Properties.SerialNumber, ConnectionType: d.Properties.ConnectionType, ProductID: d.Properties.ProductID})
	}
	return out, nil
}

// Find is the attached device with udid; the error wraps ErrNoDevice and
// names the attached ones.
func (c *Client) Find(ctx context.Context, udid string) (Device, error) {
	list, err := c.Devices(ctx)
	if err != nil {
		return Device{}, err
	}
	var seen []string
	for _, d := range list {
		if strings.EqualFold(d.UDID, udid) {
			return d, nil
		}
		seen = append(seen, d.UDID)
	}
	if len(seen) == 0 {
		return Device{}, fmt.Errorf("%w: usbmuxd at %s lists no device (is the iPhone plugged in and trusted?), so not %s", ErrNoDevice, c.addr, udid)
	}
	return Device{}, fmt.Errorf("%w: usbmuxd at %s lists %s, not %s", ErrNoDevice, c.addr, strings.Join(seen, ", "), udid)
}

// Connect opens a raw byte stream to port on the device usbmuxd calls id.
// The error wraps ErrRefused when nothing listens there and ErrNoDevice
// when the device has gone.
func (c *Client) Connect(ctx context.Context, id, port int) (net.Conn, error) {
	if port <= 0 || port > 0xffff {
		return nil, fmt.Errorf("usbmux: port %d out of range", port)
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	var reply struct {
		MessageType string
		Number      int
	}
	// The port travels in network byte order inside a plist integer.
	swapped := int(port>>8 | (port&0xff)<<8)
	if err := c.request(ctx, conn, map[string]any{"MessageType": "Connect", "DeviceID": id, "PortNumber": swapped}, &reply); err != nil {
		conn.Close()
		return nil, err
	}
	if reply.MessageType != "Result" || reply.Number != ResultOK {
		conn.Close()
		if reply.MessageType != "Result" {
			return nil, fmt.Errorf("usbmuxd at %s answered Connect with %q, want Result", c.addr, reply.MessageType)
		}
		return nil, fmt.Errorf("port %d: %w", port, resultErr(c.addr, "Connect", reply.Number))
	}
	return conn, nil
}

func resultErr(a Address, what string, n int) error {
	switch n {
	case ResultRefused:
		return ErrRefused
	case ResultBadDevice:
		return fmt.Errorf("%w (usbmuxd at %s: %s: the device is gone)", ErrNoDevice, a, what)
	}
	return fmt.Errorf("usbmuxd at %s: %s: result %d", a, what, n)
}

// ReadMessage reads one message: its tag and its plist body. It reads
// exactly the message's bytes, so that what follows a Connect's Result is
// the tunnel's.
func ReadMessage(r io.Reader) (tag uint32, body []byte, err error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(h[0:])
	version := binary.LittleEndian.Uint32(h[4:])
	typ := binary.LittleEndian.Uint32(h[8:])
	tag = binary.LittleEndian.Uint32(h[12:])
	if n < headerLen || n > maxFrameLen {
		return tag, nil, fmt.Errorf("usbmux: a message of %d bytes", n)
	}
	if version != versionXML || typ != typePlist {
		return tag, nil, &VersionError{Version: version, Type: typ}
	}
	body = make([]byte, n-headerLen)
	if _, err := io.ReadFull(r, body); err != nil {
		return tag, nil, err
	}
	return tag, body, nil
}

// VersionError is a message in the binary protocol (version 0) or of a
// type other than plist, which this package does not speak.
type VersionError struct{ Version, Type uint32 }

func (e *VersionError) Error() string {
	return fmt.Sprintf("usbmux: protocol version %d, message type %d: only the plist protocol (version 1, type 8) is spoken", e.Version, e.Type)
}

// WriteMessage writes v as one plist message with tag.
func WriteMessage(w io.Writer, tag uint32, v any) error {
	body, err := plist.Marshal(v, plist.XMLFormat)
	if err != nil {
		return err
	}
	buf := make([]byte, headerLen, headerLen+len(body))
	binary.LittleEndian.PutUint32(buf[0:], uint32(headerLen+len(body)))
	binary.LittleEndian.PutUint32(buf[4:], versionXML)
	binary.LittleEndian.PutUint32(buf[8:], typePlist)
	binary.LittleEndian.PutUint32(buf[12:], tag)
	_, err = w.Write(append(buf, body...))
	return err
}

var (
	aLongTimeAgo = time.Unix(1, 0)
	noDeadline   time.Time
)
