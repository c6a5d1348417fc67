package helper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"strings"
	"sync"
	"time"
)

// Conn is the byte stream to the helper (a localabstract: stream through
// the adb server, or a pipe in tests). SetDeadline is used when present.
type Conn interface {
	io.ReadWriteCloser
}

type deadliner interface {
	SetDeadline(time.Time) error
}

// Client speaks the protocol to one helper. Requests are serialised; each
// honours its ctx deadline (the stream is closed when ctx ends, so a
// helper that stopped answering fails the call instead of hanging it).
type Client struct {
	mu    sync.Mutex
	conn  Conn
	hello Hello
	dead  error
}

// Dial reads the helper's hello on conn (the first bytes prove it
// listens: adb may accept a localabstract: stream before anyone does).
func Dial(ctx context.Context, conn Conn) (*Client, error) {
	c := &Client{conn: conn}
	var hello Hello
	err := c.withCtx(ctx, func() error {
		op, payload, err := readFrame(conn, MaxReply)
		if err != nil {
			return fmt.Errorf("helper: no hello: %w", err)
		}
		if op != OpHello {
			return fmt.Errorf("helper: first frame is %q, not a hello", byte(op))
		}
		hello, err = ParseHello(string(payload))
		return err
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.hello = hello
	return c, nil
}

// Hello is what the helper said when the client connected.
func (c *Client) Hello() Hello { return c.hello }

// Close closes the stream (the helper stays up until idle or stopped).
func (c *Client) Close() error { return c.conn.Close() }

// withCtx runs do with the stream's deadline set from ctx, and closes the
// stream if ctx is cancelled meanwhile.
func (c *Client) withCtx(ctx context.Context, do func() error) error {
	if d, ok := c.conn.(deadliner); ok {
		dl, _ := ctx.Deadline()
		d.SetDeadline(dl)
		defer d.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.conn.Close() })
	err := do()
	if !stop() && ctx.Err() != nil {
		return fmt.Errorf("helper: %w", context.Cause(ctx))
	}
	return err
}

// call sends one request and returns the reply payload. A transport
// failure leaves the client dead (every later call fails at once); an
// error reply (*Error) does not.
func (c *Client) call(ctx context.Context, op Op, payload []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead != nil {
		return nil, c.dead
	}
	if len(payload)+1 > MaxRequest {
		return nil, &Error{Code: CodeTooLarge, Message: fmt.Sprintf("request of %d bytes is over the limit of %d", len(payload)+1, MaxRequest)}
	}
	var reply []byte
	err := c.withCtx(ctx, func() error {
		if err := writeFrame(c.conn, op, payload); err != nil {
			return fmt.Errorf("helper: send %c: %w", op, err)
		}
		rop, rp, err := readFrame(c.conn, MaxReply)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("helper: reply to %c: %w", op, err)
		}
		switch {
		case rop == opError && len(rp) >= 1:
			return &Error{Code: Code(rp[0]), Message: string(rp[1:])}
		case rop != op:
			return fmt.Errorf("helper: reply to %c has type %q", op, byte(rop))
		}
		reply = rp
		return nil
	})
	var he *Error
	if err != nil && !errors.As(err, &he) {
		c.dead = err
		c.conn.Close()
	}
	return reply, err
}

// Broken reports whether the stream failed (the helper must be reconnected or restarted).
func (c *Client) Broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead != nil
}

// TreeForm chooses the tree's attributes.
type TreeForm int

const (
	// TreeDefault: what the phone's own `uiautomator dump` writes, as the helper judges by API level.
	TreeDefault TreeForm = iota
	// TreeClassic: the attributes up to bounds.
	TreeClassic
	// TreeExtras: drawing-order and hint after bounds.
	TreeExtras
)

// Tree returns the active window as `uiautomator dump` XML and the change
// counter at which it was read.
func (c *Client) Tree(ctx context.Context, form TreeForm) (xml []byte, changes uint64, err error) {
	var p []byte
	switch form {
	case TreeClassic:
		p = ints(treeExplicit)
	case TreeExtras:
		p = ints(treeExplicit | treeExtras)
	}
	r, err := c.call(ctx, OpTree, p)
	if err != nil {
		return nil, 0, err
	}
	if len(r) < 8 {
		return nil, 0, fmt.Errorf("helper: tree reply of %d bytes has no counter", len(r))
	}
	return r[8:], binary.BigEndian.Uint64(r), nil
}

// Changes is the number of accessibility events the helper has seen (the
// screen has not changed while it stays the same) and how long ago the
// last one was, as the phone measures it.
func (c *Client) Changes(ctx context.Context) (n uint64, since time.Duration, err error) {
	r, err := c.call(ctx, OpChanges, nil)
	if err != nil {
		return 0, 0, err
	}
	if len(r) != 16 {
		return 0, 0, fmt.Errorf("helper: changes reply of %d bytes", len(r))
	}
	return binary.BigEndian.Uint64(r), time.Duration(binary.BigEndian.Uint64(r[8:])) * time.Millisecond, nil
}

// Screenshot returns the screen's raw pixels (encoded on the host).
func (c *Client) Screenshot(ctx context.Context) (*image.RGBA, error) {
	r, err := c.call(ctx, OpScreenshot, nil)
	if err != nil {
		return nil, err
	}
	return DecodeFrame(r)
}

// DecodeFrame reads a screenshot reply: width, height, RGBA rows.
func DecodeFrame(r []byte) (*image.RGBA, error) {
	if len(r) < 8 {
		return nil, fmt.Errorf("helper: screenshot reply of %d bytes", len(r))
	}
	w, h := int(int32(binary.BigEndian.Uint32(r))), int(int32(binary.BigEndian.Uint32(r[4:])))
	if w <= 0 || h <= 0 || w > 1<<14 || h > 1<<14 || len(r)-8 != 4*w*h {
		return nil, fmt.Errorf("helper: screenshot %dx%d with %d pixel bytes", w, h, len(r)-8)
	}
	return &image.RGBA{Pix: r[8:], Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}, nil
}

// EncodeFrame is DecodeFrame's inverse (for a simulated helper).
func EncodeFrame(img *image.RGBA) []byte {
	b := img.Bounds()
	out := make([]byte, 8, 8+4*b.Dx()*b.Dy())
	binary.BigEndian.PutUint32(out, uint32(b.Dx()))
	binary.BigEndian.PutUint32(out[4:], uint32(b.Dy()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		i := img.PixOffset(b.Min.X, y)
		out = append(out, img.Pix[i:i+4*b.Dx()]...)
	}
	return out
}

// SetText replaces the text of the focused field (selector "") or of the
// field with that resource-id, with any Unicode text: no keyboard app.
func (c *Client) SetText(ctx context.Context, selector, text string) error {
	p := append(ints(len(selector)), selector...)
	_, err := c.call(ctx, OpSetText, append(p, text...))
	return err
}

// Tap, LongPress, Swipe and Key inject input directly.
func (c *Client) Tap(ctx context.Context, x, y int) error {
	_, err := c.call(ctx, OpTap, ints(x, y))
	return err
}

func (c *Client) LongPress(ctx context.Context, x, y int, d time.Duration) error {
	_, err := c.call(ctx, OpLongPress, ints(x, y, int(d.Milliseconds())))
	return err
}

func (c *Client) Swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error {
	_, err := c.call(ctx, OpSwipe, ints(x1, y1, x2, y2, int(d.Milliseconds())))
	return err
}

func (c *Client) Key(ctx context.Context, keycode int) error {
	_, err := c.call(ctx, OpKey, ints(keycode))
	return err
}

// FrontApp is the package of the active window.
func (c *Client) FrontApp(ctx context.Context) (string, error) {
	r, err := c.call(ctx, OpFrontApp, nil)
	return string(r), err
}

// Serves reports whether the helper's protocol version serves op.
func (c *Client) Serves(op Op) bool {
	return servedBy(op, c.hello.Proto)
}

func servedBy(op Op, proto int) bool {
	switch op {
	case OpLaunch:
		return proto >= LaunchVersion
	case OpToasts:
		return proto >= ToastsVersion
	}
	return true
}

// Launch starts the package's launcher activity inside the helper, through
// the activity manager (no `monkey` or `am` process on the phone), and
// returns the component it started ("pkg/class"). A package with no
// launcher activity (not installed) is CodeNotFound; a start the system
// refused is CodeRefused with its reason; a build whose framework lacks the
// members is CodeUnsupported. A helper older than LaunchVersion is not
// asked: ErrNotServed.
func (c *Client) Launch(ctx context.Context, pkg string) (string, error) {
	if !c.Serves(OpLaunch) {
		return "", fmt.Errorf("%w (launch needs %d, the helper speaks %d)", ErrNotServed, LaunchVersion, c.hello.Proto)
	}
	r, err := c.call(ctx, OpLaunch, []byte(pkg))
	if err != nil {
		return "", err
	}
	component, _, _ := strings.Cut(string(r), " ")
	return component, nil
}

// ToastEvent is one toast the helper heard announced (an accessibility
// event of type TYPE_NOTIFICATION_STATE_CHANGED from android.widget.Toast
// or its inner class Toast$TN, sent when the toast shows).
type ToastEvent struct {
	// Seq is its number: 1 for the first toast this helper heard, growing by one.
	Seq uint64
	// Ago is how long before the reply the helper heard it, as the phone measures.
	Ago time.Duration
	// Package is the app that showed it; Text what it says ("" for a view without text).
	Package, Text string
}

// Toasts returns the helper's toast sequence now (the number of the last
// toast it heard, 0 for none) and the toasts it heard after sequence
// number after that it still keeps (the last MaxToasts), oldest first. A
// helper older than ToastsVersion is not asked: ErrNotServed.
func (c *Client) Toasts(ctx context.Context, after uint64) (now uint64, events []ToastEvent, err error) {
	if !c.Serves(OpToasts) {
		return 0, nil, fmt.Errorf("%w (toasts need %d, the helper speaks %d)", ErrNotServed, ToastsVersion, c.hello.Proto)
	}
	r, err := c.call(ctx, OpToasts, binary.BigEndian.AppendUint64(nil, after))
	if err != nil {
		return 0, nil, err
	}
	return DecodeToasts(r)
}

// DecodeToasts reads a toasts reply: the sequence now (int64), a count
// (int32), and per event its sequence (int64), age in ms (int64), package
// and text (each an int32 byte length and UTF-8).
func DecodeToasts(r []byte) (uint64, []ToastEvent, error) {
	bad := func(why string) (uint64, []ToastEvent, error) {
		return 0, nil, fmt.Errorf("helper: toasts reply of %d bytes: %s", len(r), why)
	}
	if len(r) < 12 {
		return bad("no header")
	}
	now, n := binary.BigEndian.Uint64(r), int(int32(binary.BigEndian.Uint32(r[8:])))
	if n < 0 || n > MaxToasts {
		return bad(fmt.Sprintf("%d events (at most %d)", n, MaxToasts))
	}
	r2 := r[12:]
	str := func() (string, bool) {
		if len(r2) < 4 {
			return "", false
		}
		l := int(int32(binary.BigEndian.Uint32(r2)))
		if l < 0 || l > len(r2)-4 {
			return "", false
		}
		s := string(r2[4 : 4+l])
		r2 = r2[4+l:]
		return s, true
	}
	events := make([]ToastEvent, 0, n)
	for i := 0; i < n; i++ {
		if len(r2) < 16 {
			return bad(fmt.Sprintf("event %d cut short", i))
		}
		ev := ToastEvent{Seq: binary.BigEndian.Uint64(r2), Ago: time.Duration(binary.BigEndian.Uint64(r2[8:])) * time.Millisecond}
		r2 = r2[16:]
		var ok1, ok2 bool
		ev.Package, ok1 = str()
		ev.Text, ok2 = str()
		if !ok1 || !ok2 {
			return bad(fmt.Sprintf("event %d cut short", i))
		}
		if ev.Seq > now || (i > 0 && ev.Seq <= events[i-1].Seq) {
			return bad(fmt.Sprintf("event %d has sequence %d (now %d)", i, ev.Seq, now))
		}
		events = append(events, ev)
	}
	if len(r2) != 0 {
		return bad(fmt.Sprintf("%d bytes after the events", len(r2)))
	}
	return now, events, nil
}

// EncodeToasts is DecodeToasts's inverse (for a simulated helper).
func EncodeToasts(now uint64, events []ToastEvent) []byte {
	out := binary.BigEndian.AppendUint64(nil, now)
	out = binary.BigEndian.AppendUint32(out, uint32(len(events)))
	for _, ev := range events {
		out = binary.BigEndian.AppendUint64(out, ev.Seq)
		out = binary.BigEndian.AppendUint64(out, uint64(ev.Ago.Milliseconds()))
		out = binary.BigEndian.AppendUint32(out, uint32(len(ev.Package)))
		out = append(out, ev.Package...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(ev.Text)))
		out = append(out, ev.Text...)
	}
	return out
}

// Quit asks the helper to exit.
func (c *Client) Quit(ctx context.Context) error {
	_, err := c.call(ctx, OpQuit, nil)
	c.Close()
	return err
}
