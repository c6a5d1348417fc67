package adb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"

	"phonepilot/device/adb/helper"
	"phonepilot/perception/frame"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// ErrBadPNG: screencap returned something that is not a whole PNG.
var ErrBadPNG = errors.New("screenshot is not a valid PNG")

// Capture takes a screenshot with raw `exec:screencap` (no -p): the phone
// copies its framebuffer instead of spending 1.5–2 s deflating a PNG, and
// the host scales and encodes only what it sends (perception/shot). A
// phone whose screencap answers with a PNG anyway is read as one: PNG
// signature, IHDR size, and an IEND chunk at the end (a transport that dies
// mid-transfer leaves a truncated file, and adb still reports success). A
// FLAG_SECURE screen ("Status: -1", or an empty or all-black image) is
// frame.ErrSecure.
func (d *Device) Capture(ctx context.Context) (frame.Frame, error) {
	var img *image.RGBA
	if used, err := d.viaHelper(ctx, "screenshot", d.cfg.Timeouts.Screenshot, func(ctx context.Context, c *helper.Client) error {
		var err error
		img, err = c.Screenshot(ctx)
		return err
	}); used {
		if err != nil {
			return frame.Frame{}, err
		}
		return d.encodeFrame(img)
	}
	out, err := d.exec(ctx, d.cfg.Timeouts.Screenshot, "screencap")
	if err != nil {
		return frame.Frame{}, err
	}
	if !bytes.HasPrefix(out, pngSignature) {
		if img, rerr := ParseRawScreencap(out); rerr == nil {
			if allBlack(img) {
				return frame.Frame{}, fmt.Errorf("adb screencap: all black: %w", frame.ErrSecure)
			}
			return frame.NewRGBA(img, d.clk.Now()), nil
		}
	}
	w, h, err := CheckPNG(out)
	if err != nil {
		if len(out) == 0 || !bytes.HasPrefix(out, pngSignature) {
			// Nothing, or a text message instead of an image. A vanished
			// device produces nothing too, so ask before blaming the app.
			if gerr := d.disconnectedIfGone(ctx, "screencap", nil); gerr != nil {
				return frame.Frame{}, gerr
			}
			if bytes.Contains(out, []byte("Status: -1")) || len(bytes.TrimSpace(out)) == 0 {
				return frame.Frame{}, fmt.Errorf("adb screencap: %w", frame.ErrSecure)
			}
		}
		return frame.Frame{}, d.disconnectedIfGone(ctx, "screencap", fmt.Errorf("adb screencap: %w", err))
	}
	if black, err := isBlackPNG(out, w, h); err != nil {
		return frame.Frame{}, fmt.Errorf("adb screencap: %w: %v", ErrBadPNG, err)
	} else if black {
		return frame.Frame{}, fmt.Errorf("adb screencap: all black: %w", frame.ErrSecure)
	}
	return frame.New(out, w, h, d.clk.Now()), nil
}

// encodeFrame hands the helper's raw pixels on as they are: the host
// scales and encodes only what it sends (perception/shot; the phone's PNG
// encoder is what makes `screencap -p` slow). A secure window comes out
// black: frame.ErrSecure.
func (d *Device) encodeFrame(img *image.RGBA) (frame.Frame, error) {
	if blackPix(img.Pix, 4) {
		return frame.Frame{}, fmt.Errorf("adb helper screenshot: all black: %w", frame.ErrSecure)
	}
	return frame.NewRGBA(img, d.clk.Now()), nil
}

// ErrBadRaw: raw screencap output that is not a whole frame.
var ErrBadRaw = errors.New("raw screencap output is not a whole frame")

// Pixel formats of raw screencap (android.graphics.PixelFormat).
const (
	pixelRGBA8888 = 1
	pixelRGBX8888 = 2
)

// ParseRawScreencap reads raw screencap output: a little-endian header of
// width, height, pixel format and, since Android 9, a colour space (12 or
// 16 bytes: the pixel data's size tells which), then the pixels. The
// pixels are used in place, not copied.
func ParseRawScreencap(b []byte) (*image.RGBA, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadRaw, len(b))
	}
	w := int(binary.LittleEndian.Uint32(b[0:]))
	h := int(binary.LittleEndian.Uint32(b[4:]))
	format := binary.LittleEndian.Uint32(b[8:])
	if w <= 0 || h <= 0 || w > 1<<15 || h > 1<<15 {
		return nil, fmt.Errorf("%w: implausible size %dx%d", ErrBadRaw, w, h)
	}
	if format != pixelRGBA8888 && format != pixelRGBX8888 {
		return nil, fmt.Errorf("%w: pixel format %d is not RGBA_8888", ErrBadRaw, format)
	}
	header := len(b) - 4*w*h
	if header != 12 && header != 16 {
		return nil, fmt.Errorf("%w: %d bytes for %dx%d", ErrBadRaw, len(b), w, h)
	}
	img := &image.RGBA{Pix: b[header:], Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}
	if format == pixelRGBX8888 {
		for i := 3; i < len(img.Pix); i += 4 {
			img.Pix[i] = 0xff
		}
	}
	return img, nil
}

// CheckPNG verifies that b is one whole PNG file: the signature, an IHDR
// first chunk with a non-zero size, and an IEND chunk ending the data with a
// correct CRC. It returns the image size. It reads only the chunk headers,
// not the pixels.
func CheckPNG(b []byte) (width, height int, err error) {
	if !bytes.HasPrefix(b, pngSignature) {
		return 0, 0, fmt.Errorf("%w: no PNG signature (got %q)", ErrBadPNG, clip(b[:min(len(b), 40)]))
	}
	p := len(pngSignature)
	// IHDR: length 13, type, 13 bytes, CRC.
	if len(b) < p+8+13+4 || string(b[p+4:p+8]) != "IHDR" || binary.BigEndian.Uint32(b[p:]) != 13 {
		return 0, 0, fmt.Errorf("%w: missing IHDR chunk", ErrBadPNG)
	}
	w := binary.BigEndian.Uint32(b[p+8:])
	h := binary.BigEndian.Uint32(b[p+12:])
	if w == 0 || h == 0 || w > 1<<15 || h > 1<<15 {
		return 0, 0, fmt.Errorf("%w: implausible size %dx%d", ErrBadPNG, w, h)
	}
	// Walk the chunks: each is length, type, data, CRC. The last must be
	// IEND and must end exactly at the end of b.
	for p < len(b) {
		if len(b)-p < 12 {
			return 0, 0, fmt.Errorf("%w: truncated at byte %d of %d", ErrBadPNG, p, len(b))
		}
		n := int(binary.BigEndian.Uint32(b[p:]))
		typ := string(b[p+4 : p+8])
		end := p + 12 + n
		if n < 0 || end > len(b) || end < p {
			return 0, 0, fmt.Errorf("%w: truncated: chunk %q at byte %d needs %d bytes, %d left", ErrBadPNG, typ, p, n+12, len(b)-p)
		}
		if typ == "IEND" {
			if crc32.ChecksumIEEE(b[p+4:p+8+n]) != binary.BigEndian.Uint32(b[p+8+n:]) {
				return 0, 0, fmt.Errorf("%w: bad IEND checksum", ErrBadPNG)
			}
			if end != len(b) {
				return 0, 0, fmt.Errorf("%w: %d stray bytes after IEND", ErrBadPNG, len(b)-end)
			}
			return int(w), int(h), nil
		}
		p = end
	}
	return 0, 0, fmt.Errorf("%w: truncated: no IEND chunk", ErrBadPNG)
}

// isBlackPNG reports an image whose every pixel is (near) black: what a
// secure surface looks like on many phones. A uniform image deflates about
// 1000:1 (an all-black 1080x2400 RGBA PNG is ~13 KB), so only files under
// about one byte per 100 pixels can be black; real screenshots are larger
// and are not decoded at all.
func isBlackPNG(b []byte, w, h int) (bool, error) {
	if len(b) > w*h/100+2048 {
		return false, nil
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return false, err
	}
	return allBlack(img), nil
}

// nearBlack is the brightest 8-bit channel value still counted as black
// (dithering and panel noise).
const nearBlack = 8

func allBlack(img image.Image) bool {
	switch m := img.(type) {
	case *image.RGBA:
		return blackPix(m.Pix, 4)
	case *image.NRGBA:
		return blackPix(m.Pix, 4)
	case *image.Gray:
		return blackPix(m.Pix, 1)
	}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr > nearBlack*257 || cg > nearBlack*257 || cb > nearBlack*257 {
				return false
			}
		}
	}
	return true
}

// blackPix checks the colour channels of packed pixels (alpha ignored).
func blackPix(pix []byte, stride int) bool {
	channels := min(stride, 3)
	for i := 0; i+channels <= len(pix); i += stride {
		for c := range channels {
			if pix[i+c] > nearBlack {
				return false
			}
		}
	}
	return true
}
