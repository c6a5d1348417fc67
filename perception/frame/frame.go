// Package frame holds screenshot bytes. It is the only place pixels live:
// only device drivers (which make frames), plan/ai and its providers (which
// send them to a model) and cmd may import it. The architecture test
// enforces this (the Perception Boundary).
package frame

import (
	"context"
	"errors"
	"time"
)

// Frame is one screenshot. The bytes are unexported so that a Frame cannot
// be serialised by accident (encoding/json sees no fields).
type Frame struct {
	png           []byte
	width, height int
	taken         time.Time
}

// New wraps PNG bytes of the given size.
func New(png []byte, width, height int, taken time.Time) Frame {
	return Frame{png: png, width: width, height: height, taken: taken}
}

// PNG returns the encoded image.
func (f Frame) PNG() []byte { return f.png }

// Size is the image size in pixels.
func (f Frame) Size() (width, height int) { return f.width, f.height }

// Taken is when the screenshot was captured.
func (f Frame) Taken() time.Time { return f.taken }

// Camera captures the current screen.
type Camera interface {
	Capture(ctx context.Context) (Frame, error)
}

var (
	// ErrSecure: the screen is FLAG_SECURE (payment, passwords) or black.
	ErrSecure = errors.New("screen is secure or black; no screenshot")
	// ErrNoCamera: no camera is configured.
	ErrNoCamera = errors.New("no camera configured")
)
