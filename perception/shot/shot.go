// Package shot fits a screenshot to what a model (or an MCP client) takes:
// scaled down, never up, so that its long side and its area stay within
// limits, and encoded as JPEG or PNG. It is the one fitting function the
// AIPlanner and the MCP server share.
//
// The scaling is an exact area average in integer arithmetic that reads the
// source one row at a time: it needs no full-size intermediate buffer (the
// float buffer of a kernel resampler was 54 MB for a 1080×2400 frame), and
// averaging every source pixel keeps small text legible rather than
// aliased.
package shot

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"

	"phonepilot/perception/frame"
)

// Format is how the fitted image is encoded.
type Format string

// The encodings. Anthropic and OpenAI (and the OpenAI-compatible servers)
// take both; JPEG is several times smaller for a screenshot with pictures.
const (
	JPEG Format = "image/jpeg"
	PNG  Format = "image/png"
)

// Image is a fitted, encoded screenshot.
type Image struct {
	MediaType string // "image/jpeg", "image/png"
	Data      []byte
	// Width and Height are the sent size; SourceWidth and SourceHeight the
	// screenshot's size before scaling.
	Width, Height             int
	SourceWidth, SourceHeight int
}

// Options are the limits of a fitted image.
type Options struct {
	MaxEdge   int    // the long side, in pixels (0: no limit)
	MaxPixels int    // the area (0: no limit)
	MaxBytes  int    // the encoded size (0: no limit); the image shrinks until it fits
	Format    Format // JPEG unless PNG
	Quality   int    // JPEG quality, 1–100 (0: 80)
}

// DefaultQuality keeps text crisp at a fraction of PNG's size.
const DefaultQuality = 80

// Fit scales f down to fit o and encodes it. A PNG frame that already fits
// and is wanted as PNG is passed on unchanged.
func Fit(f frame.Frame, o Options) (*Image, error) {
	if f.Empty() {
		return nil, errors.New("the camera returned an empty frame")
	}
	sw, sh := f.Size()
	if raw := f.PNG; f.Pixels() == nil {
		if cfg, err := png.DecodeConfig(bytes.NewReader(raw())); err == nil {
			sw, sh = cfg.Width, cfg.Height
		}
	}
	if sw <= 0 || sh <= 0 {
		return nil, fmt.Errorf("screenshot has no pixels (%dx%d)", sw, sh)
	}
	w, h := Size(sw, sh, o.MaxEdge, o.MaxPixels)
	if o.Format == PNG && f.Pixels() == nil && w == sw && h == sh && (o.MaxBytes == 0 || len(f.PNG()) <= o.MaxBytes) {
		return &Image{MediaType: string(PNG), Data: f.PNG(), Width: w, Height: h, SourceWidth: sw, SourceHeight: sh}, nil
	}
	src, err := f.Image()
	if err != nil {
		return nil, err
	}
	for {
		img, err := encode(Downscale(src, w, h), o)
		if err != nil {
			return nil, err
		}
		if o.MaxBytes == 0 || len(img.Data) <= o.MaxBytes {
			img.SourceWidth, img.SourceHeight = sw, sh
			return img, nil
		}
		if max(w, h) < 64 {
			return nil, fmt.Errorf("the screenshot does not fit in %d bytes", o.MaxBytes)
		}
		// The encoded size goes with the area: shrink both sides by the
		// square root of the excess, and a little more.
		r := math.Sqrt(float64(o.MaxBytes)/float64(len(img.Data))) * 0.95
		w, h = max(1, int(float64(w)*r)), max(1, int(float64(h)*r))
	}
}

func encode(img *image.RGBA, o Options) (*Image, error) {
	var buf bytes.Buffer
	b := img.Bounds()
	if o.Format == PNG {
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, img); err != nil {
			return nil, fmt.Errorf("encode screenshot: %w", err)
		}
		return &Image{MediaType: string(PNG), Data: buf.Bytes(), Width: b.Dx(), Height: b.Dy()}, nil
	}
	q := o.Quality
	if q <= 0 || q > 100 {
		q = DefaultQuality
	}
	buf.Grow(b.Dx() * b.Dy() / 4)
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		return nil, fmt.Errorf("encode screenshot: %w", err)
	}
	return &Image{MediaType: string(JPEG), Data: buf.Bytes(), Width: b.Dx(), Height: b.Dy()}, nil
}

// Size scales w×h down (never up), keeping the aspect ratio, so that the
// long side is at most maxEdge and the area at most maxPixels (a limit of
// 0 is none).
func Size(w, h, maxEdge, maxPixels int) (int, int) {
	scale := 1.0
	if long := max(w, h); maxEdge > 0 && long > maxEdge {
		scale = float64(maxEdge) / float64(long)
	}
	if area := float64(w) * float64(h) * scale * scale; maxPixels > 0 && area > float64(maxPixels) {
		scale *= math.Sqrt(float64(maxPixels) / area)
	}
	if scale >= 1 {
		return w, h
	}
	return max(1, int(math.Floor(float64(w)*scale))), max(1, int(math.Floor(float64(h)*scale)))
}

// span is the source pixels one destination pixel covers along one axis,
// with the length of each overlap in units of 1/dst of a source pixel (the
// weights of one span add up to the source length).
type span struct {
	first int
	w     []uint64
}

func spans(src, dst int) []span {
	out := make([]span, dst)
	for i := range out {
		lo, hi := i*src, (i+1)*src // in units of 1/dst source pixel
		first := lo / dst
		var w []uint64
		for j := first; j*dst < hi; j++ {
			a, b := max(lo, j*dst), min(hi, (j+1)*dst)
			w = append(w, uint64(b-a))
		}
		out[i] = span{first: first, w: w}
	}
	return out
}

// Downscale averages src over a w×h grid (w and h at most src's size). It
// reads src a row at a time: the memory it needs beside the result is a few
// rows.
func Downscale(src image.Image, w, h int) *image.RGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	w, h = min(max(w, 1), sw), min(max(h, 1), sh)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xs, ys := spans(sw, w), spans(sh, h)
	row := make([]byte, 4*sw)
	hrow := make([]uint64, 3*w)
	acc := make([]uint64, 3*w)
	norm := uint64(sw) * uint64(sh)
	for dy, sy := range ys {
		clear(acc)
		for k, wy := range sy.w {
			readRow(src, b.Min.Y+sy.first+k, row)
			for dx, sx := range xs {
				var r, g, bl uint64
				p := 4 * sx.first
				for _, wx := range sx.w {
					r += wx * uint64(row[p])
					g += wx * uint64(row[p+1])
					bl += wx * uint64(row[p+2])
					p += 4
				}
				hrow[3*dx], hrow[3*dx+1], hrow[3*dx+2] = r, g, bl
			}
			for i, v := range hrow {
				acc[i] += v * wy
			}
		}
		out := dst.Pix[dy*dst.Stride:]
		for dx := range w {
			out[4*dx] = uint8((acc[3*dx] + norm/2) / norm)
			out[4*dx+1] = uint8((acc[3*dx+1] + norm/2) / norm)
			out[4*dx+2] = uint8((acc[3*dx+2] + norm/2) / norm)
			out[4*dx+3] = 0xff
		}
	}
	return dst
}

// readRow copies row y of src into row as RGBA bytes (a screen is opaque:
// alpha is not kept).
func readRow(src image.Image, y int, row []byte) {
	b := src.Bounds()
	switch m := src.(type) {
	case *image.RGBA:
		copy(row, m.Pix[m.PixOffset(b.Min.X, y):])
	case *image.NRGBA:
		copy(row, m.Pix[m.PixOffset(b.Min.X, y):])
	default:
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := src.At(x, y).RGBA()
			i := 4 * (x - b.Min.X)
			row[i], row[i+1], row[i+2], row[i+3] = uint8(r>>8), uint8(g>>8), uint8(bl>>8), 0xff
		}
	}
}
