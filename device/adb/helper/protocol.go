package helper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ProtocolVersion is the newest version this package speaks (Protocol.java
// VERSION). 1: the first set of requests; 2: adds OpLaunch and the codes
// CodeRefused and CodeUnsupported; 3: adds OpToasts.
const ProtocolVersion = 3

// MinProtocolVersion is the oldest helper this package still talks to: it
// sends such a helper only what its version serves (Client.Launch answers
// ErrNotServed instead of sending OpLaunch to a version-1 helper).
const MinProtocolVersion = 1

// LaunchVersion is the first version that serves OpLaunch.
const LaunchVersion = 2

// ToastsVersion is the first version that serves OpToasts.
const ToastsVersion = 3

// MaxToasts is how many toast events a helper keeps (Toasts.java KEEP):
// a reply carries at most this many.
const MaxToasts = 16

// Op is a request (and its reply's) type byte.
type Op byte

// The requests (Protocol.java).
const (
	OpHello      Op = 'H'
	OpTree       Op = 'T'
	OpScreenshot Op = 'S'
	OpSetText    Op = 'X'
	OpTap        Op = 'P'
	OpLongPress  Op = 'L'
	OpSwipe      Op = 'W'
	OpKey        Op = 'K'
	OpFrontApp   Op = 'A'
	OpChanges    Op = 'C'
	OpLaunch     Op = 'O' // version 2
	OpToasts     Op = 'N' // version 3
	OpQuit       Op = 'Q'
	opError      Op = 'E'
)

// Code is an error reply's code.
type Code byte

// Error codes (Protocol.java E_*).
const (
	CodeBadRequest Code = 1
	CodeTooLarge   Code = 2
	CodeNoFocus    Code = 3
	CodeNoWindow   Code = 4
	CodeFailed     Code = 5
	CodeNotFound   Code = 6
	// CodeRefused (version 2): the system refused what was asked (an
	// activity start: the activity manager's result or SecurityException).
	CodeRefused Code = 7
	// CodeUnsupported (version 2): this Android build lacks a framework
	// member the request needs (found by reflection).
	CodeUnsupported Code = 8
)

func (c Code) String() string {
	switch c {
	case CodeBadRequest:
		return "bad request"
	case CodeTooLarge:
		return "too large"
	case CodeNoFocus:
		return "no focus"
	case CodeNoWindow:
		return "no window"
	case CodeFailed:
		return "failed"
	case CodeNotFound:
		return "not found"
	case CodeRefused:
		return "refused"
	case CodeUnsupported:
		return "unsupported"
	}
	return "code " + strconv.Itoa(int(c))
}

// Size limits, the same on both sides.
const (
	MaxRequest = 1 << 20
	MaxReply   = 64 << 20
)

// Tree request flags (Protocol.java TREE_*).
const (
	treeExtras   = 1
	treeExplicit = 1 << 31
)

// Error is the helper's error reply: the request reached it and it said no.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return "helper: " + e.Code.String() + ": " + e.Message }

// ErrNotServed: the helper's protocol version predates the request (it
// was not sent).
var ErrNotServed = errors.New("helper: request not served by this helper's protocol version")

// ErrFrameTooLarge: a frame announced a length past the limit.
var ErrFrameTooLarge = errors.New("helper: frame over the size limit")

// writeFrame writes one frame: 4-byte big-endian length, type, payload.
func writeFrame(w io.Writer, op Op, payload []byte) error {
	buf := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(len(payload)+1))
	buf[4] = byte(op)
	copy(buf[5:], payload)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame of at most max bytes.
func readFrame(r io.Reader, max int) (Op, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:4]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n < 1 || n > uint32(max) {
		return 0, nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrFrameTooLarge, n, max)
	}
	if _, err := io.ReadFull(r, h[4:5]); err != nil {
		return 0, nil, unexpected(err)
	}
	payload := make([]byte, n-1)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, unexpected(err)
	}
	return Op(h[4]), payload, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func writeError(w io.Writer, code Code, msg string) error {
	return writeFrame(w, opError, append([]byte{byte(code)}, msg...))
}

func ints(v ...int) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint32(b[4*i:], uint32(int32(x)))
	}
	return b
}

// Hello is what the helper says first.
type Hello struct {
	Proto int
	SDK   int
	PID   int
}

// ParseHello reads "phonepilot-helper proto=1 sdk=34 pid=1234".
func ParseHello(s string) (Hello, error) {
	f := strings.Fields(s)
	if len(f) == 0 || f[0] != "phonepilot-helper" {
		return Hello{}, fmt.Errorf("helper: not a phonepilot helper hello: %q", clip(s))
	}
	var h Hello
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			return Hello{}, fmt.Errorf("helper: bad hello field %q", kv)
		}
		switch k {
		case "proto":
			h.Proto = n
		case "sdk":
			h.SDK = n
		case "pid":
			h.PID = n
		}
	}
	if h.Proto < MinProtocolVersion || h.Proto > ProtocolVersion {
		return h, fmt.Errorf("helper: speaks protocol %d, phonepilot speaks %d to %d", h.Proto, MinProtocolVersion, ProtocolVersion)
	}
	return h, nil
}

func (h Hello) String() string {
	return fmt.Sprintf("phonepilot-helper proto=%d sdk=%d pid=%d", h.Proto, h.SDK, h.PID)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
