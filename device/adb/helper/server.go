package helper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Backend is the phone a simulated helper serves (device/sim's phone).
// Errors of type *Error go back as that error reply; any other error is
// CodeFailed with its message.
type Backend interface {
	// Tree is the active window as `uiautomator dump` XML.
	Tree(extras bool) ([]byte, error)
	// Screenshot is width, height and RGBA rows (EncodeFrame).
	Screenshot() ([]byte, error)
	SetText(selector, text string) error
	Tap(x, y int) error
	LongPress(x, y int, d time.Duration) error
	Swipe(x1, y1, x2, y2 int, d time.Duration) error
	Key(keycode int) error
	FrontApp() (string, error)
	// Changes counts the screen's changes (the helper counts accessibility
	// events) and says how long ago the last one was.
	Changes() (uint64, time.Duration)
	// Launch starts the package's launcher activity and returns the
	// component ("pkg/class"); an unknown package is a CodeNotFound *Error.
	Launch(pkg string) (string, error)
	// Toasts is the toast sequence now and the toasts heard after
	// sequence after, the last MaxToasts at most, oldest first (Toasts.java).
	Toasts(after uint64) (uint64, []ToastEvent, error)
}

// ErrQuit is returned by Serve when the client asked the helper to exit.
var ErrQuit = errors.New("helper: quit requested")

// Serve plays the helper on one client stream, as Server.java does: the
// hello first, then one reply per request, with the same error replies and
// size limits. A hello with an older protocol version plays that
// version's helper (requests it did not serve are unknown types). It returns nil when the client closes the stream, ErrQuit
// after a quit request, and the stream's error otherwise.
func Serve(rw io.ReadWriter, hello Hello, b Backend, extrasByDefault bool) error {
	if err := writeFrame(rw, OpHello, []byte(hello.String())); err != nil {
		return err
	}
	for {
		op, p, err := readFrame(rw, MaxRequest)
		if errors.Is(err, ErrFrameTooLarge) {
			writeError(rw, CodeTooLarge, err.Error())
			return err
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		reply, err := serveOne(op, p, hello, b, extrasByDefault)
		var he *Error
		switch {
		case errors.As(err, &he):
			err = writeError(rw, he.Code, he.Message)
		case err != nil:
			err = writeError(rw, CodeFailed, err.Error())
		case len(reply)+1 > MaxReply:
			err = writeError(rw, CodeTooLarge, fmt.Sprintf("reply of %d bytes is over the limit of %d", len(reply), MaxReply))
		default:
			err = writeFrame(rw, op, reply)
		}
		if err != nil {
			return err
		}
		if op == OpQuit {
			return ErrQuit
		}
	}
}

type payload struct {
	b   []byte
	err error
}

func (p *payload) int32() int {
	if len(p.b) < 4 {
		if p.err == nil {
			p.err = &Error{Code: CodeBadRequest, Message: "payload too short"}
		}
		return 0
	}
	v := int(int32(binary.BigEndian.Uint32(p.b)))
	p.b = p.b[4:]
	return v
}

func serveOne(op Op, raw []byte, hello Hello, b Backend, extrasByDefault bool) ([]byte, error) {
	p := &payload{b: raw}
	if !servedBy(op, hello.Proto) {
		// An older helper does not know the request (Server.java's default).
		return nil, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("unknown request type %d", byte(op))}
	}
	ms := func(v int) (time.Duration, error) {
		if v < 0 || v > 60000 {
			return 0, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("duration %d ms is outside 0..60000", v)}
		}
		return time.Duration(v) * time.Millisecond, nil
	}
	switch op {
	case OpHello:
		return []byte(hello.String()), nil
	case OpTree:
		extras := extrasByDefault
		if len(p.b) > 0 {
			if f := p.int32(); f&treeExplicit != 0 {
				extras = f&treeExtras != 0
			}
		}
		if p.err != nil {
			return nil, p.err
		}
		n, _ := b.Changes()
		xml, err := b.Tree(extras)
		if err != nil {
			return nil, err
		}
		out := binary.BigEndian.AppendUint64(nil, n)
		return append(out, xml...), nil
	case OpScreenshot:
		return b.Screenshot()
	case OpSetText:
		n := p.int32()
		if p.err != nil {
			return nil, p.err
		}
		if n < 0 || n > len(p.b) {
			return nil, &Error{Code: CodeBadRequest, Message: "payload too short: selector"}
		}
		return nil, b.SetText(string(p.b[:n]), string(p.b[n:]))
	case OpTap:
		x, y := p.int32(), p.int32()
		if p.err != nil {
			return nil, p.err
		}
		return nil, b.Tap(x, y)
	case OpLongPress:
		x, y, v := p.int32(), p.int32(), p.int32()
		if p.err != nil {
			return nil, p.err
		}
		d, err := ms(v)
		if err != nil {
			return nil, err
		}
		return nil, b.LongPress(x, y, d)
	case OpSwipe:
		x1, y1, x2, y2, v := p.int32(), p.int32(), p.int32(), p.int32(), p.int32()
		if p.err != nil {
			return nil, p.err
		}
		d, err := ms(v)
		if err != nil {
			return nil, err
		}
		return nil, b.Swipe(x1, y1, x2, y2, d)
	case OpKey:
		k := p.int32()
		if p.err != nil {
			return nil, p.err
		}
		return nil, b.Key(k)
	case OpFrontApp:
		s, err := b.FrontApp()
		return []byte(s), err
	case OpChanges:
		n, since := b.Changes()
		out := binary.BigEndian.AppendUint64(nil, n)
		return binary.BigEndian.AppendUint64(out, uint64(since.Milliseconds())), nil
	case OpLaunch:
		if len(p.b) == 0 {
			return nil, &Error{Code: CodeBadRequest, Message: "no package named"}
		}
		component, err := b.Launch(string(p.b))
		if err != nil {
			return nil, err
		}
		// As Starter.java: the component and the activity manager's result (START_SUCCESS).
		return []byte(component + " 0"), nil
	case OpToasts:
		if len(p.b) < 8 {
			return nil, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("payload too short: need 8 bytes, got %d", len(p.b))}
		}
		now, evs, err := b.Toasts(binary.BigEndian.Uint64(p.b))
		if err != nil {
			return nil, err
		}
		if len(evs) > MaxToasts {
			evs = evs[len(evs)-MaxToasts:]
		}
		return EncodeToasts(now, evs), nil
	case OpQuit:
		return nil, nil
	}
	return nil, &Error{Code: CodeBadRequest, Message: fmt.Sprintf("unknown request type %d", byte(op))}
}
