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

// Capture takes a screenshot with `exec:screencap -p` and checks it before
// handing it out: PNG signature, IHDR size, and an IEND chunk at the end (a
// transport that dies mid-transfer leaves a truncated file, and adb still
// reports success). A FLAG_SECURE screen ("Status: -1", or an empty or
// all-black image) is frame.ErrSecure.
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
	out, err := d.exec(ctx, d.cfg.Timeouts.Screenshot, "screencap -p")
	if err != nil {
		return frame.Frame{}, err
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

// encodeFrame encodes the helper's raw pixels on the host (the phone's
// PNG encoder is what makes `screencap -p` slow). A secure window comes out
// black: frame.ErrSecure.
func (d *Device) encodeFrame(img *image.RGBA) (frame.Frame, error) {
	if blackPix(img.Pix, 4) {
		return frame.Frame{}, fmt.Errorf("adb helper screenshot: all black: %w", frame.ErrSecure)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return frame.Frame{}, fmt.Errorf("adb helper screenshot: encode: %w", err)
	}
	b := img.Bounds()
	return frame.New(buf.Bytes(), b.Dx(), b.Dy(), d.clk.Now()), nil
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
