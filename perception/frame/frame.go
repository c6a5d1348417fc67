// Package frame holds screenshot bytes. It is the only place pixels live:
// only device drivers (which make frames), the backend table that hands out
// a driver's camera (device/backend), the screenshot fitting of
// perception/shot, plan/ai and its providers (which send them to a model),
// mcpserver and cmd may import it. The architecture test enforces this (the
// Perception Boundary).
package frame

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"time"
)

// Frame is one screenshot: either encoded PNG bytes (a driver that gets a
// PNG from the phone) or raw pixels (a driver that reads the framebuffer,
// such as raw screencap, or the simulator), so that nothing is encoded on
// the phone only to be decoded again on the host. The contents are
// unexported so that a Frame cannot be serialised by accident
// (encoding/json sees no fields).
type Frame struct {
	png           []byte
	rgba          *image.RGBA
	width, height int
	taken         time.Time
}

// New wraps PNG bytes of the given size.
func New(png []byte, width, height int, taken time.Time) Frame {
	return Frame{png: png, width: width, height: height, taken: taken}
}

// NewRGBA wraps raw pixels. The Frame keeps img: the caller must not
// change it afterwards.
func NewRGBA(img *image.RGBA, taken time.Time) Frame {
	b := img.Bounds()
	return Frame{rgba: img, width: b.Dx(), height: b.Dy(), taken: taken}
}

// Empty reports a frame without pixels.
func (f Frame) Empty() bool { return len(f.png) == 0 && (f.rgba == nil || len(f.rgba.Pix) == 0) }

// Pixels returns the raw pixels of a raw frame, nil for an encoded one.
func (f Frame) Pixels() *image.RGBA { return f.rgba }

// PNG returns the frame as PNG: the bytes a driver got, or, for a raw
// frame, an encoding made now (nil if it fails).
func (f Frame) PNG() []byte {
	if f.png != nil || f.rgba == nil {
		return f.png
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if enc.Encode(&buf, f.rgba) != nil {
		return nil
	}
	return buf.Bytes()
}

// Image returns the pixels: a raw frame's own, or the PNG decoded.
func (f Frame) Image() (image.Image, error) {
	if f.rgba != nil {
		return f.rgba, nil
	}
	img, err := png.Decode(bytes.NewReader(f.png))
	if err != nil {
		return nil, fmt.Errorf("screenshot is not a PNG: %w", err)
	}
	return img, nil
}

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
