package ai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"

	"golang.org/x/image/draw"

	"phonepilot/perception/frame"
)

// Image limits for vision models: Claude scales anything larger down
// server-side (long edge above 1568 px or more than about 1.15 megapixels),
// paying tokens for pixels it then throws away. OpenAI's high-detail tiling
// is comfortable with the same size.
const (
	MaxImageEdge   = 1568
	MaxImagePixels = 1_150_000
)

// screenshot asks the Camera for the current frame and prepares it for the
// model. It never fails the decision: when no image can be had it returns
// nil and the reason, and the planner plans from the Scene alone.
func (p *Planner) screenshot(ctx context.Context) (*Image, string) {
	if !p.cfg.Vision {
		return nil, "vision is switched off"
	}
	if p.cfg.Camera == nil {
		return nil, "no camera configured"
	}
	f, err := p.cfg.Camera.Capture(ctx)
	switch {
	case errors.Is(err, frame.ErrSecure):
		return nil, "the screen is secure (FLAG_SECURE) or black"
	case errors.Is(err, frame.ErrNoCamera):
		return nil, "no camera configured"
	case err != nil:
		return nil, "capture failed: " + err.Error()
	case len(f.PNG()) == 0:
		return nil, "the camera returned an empty frame"
	}
	img, err := fitImage(f.PNG(), MaxImageEdge, MaxImagePixels)
	if err != nil {
		return nil, err.Error()
	}
	return img, ""
}

// fitImage returns the PNG unchanged when it is within the limits, and a
// CatmullRom-downscaled PNG (kept legible for small text) otherwise.
func fitImage(data []byte, maxEdge, maxPixels int) (*Image, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("screenshot is not a PNG: %w", err)
	}
	w, h := cfg.Width, cfg.Height
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("screenshot has no pixels (%dx%d)", w, h)
	}
	nw, nh := fitSize(w, h, maxEdge, maxPixels)
	if nw == w && nh == h {
		return &Image{MediaType: "image/png", Data: data, Width: w, Height: h, SourceWidth: w, SourceHeight: h}, nil
	}
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("screenshot is not a PNG: %w", err)
	}
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, dst); err != nil {
		return nil, fmt.Errorf("encode screenshot: %w", err)
	}
	return &Image{MediaType: "image/png", Data: buf.Bytes(), Width: nw, Height: nh, SourceWidth: w, SourceHeight: h}, nil
}

// fitSize scales w×h down (never up), keeping the aspect ratio, so that the
// long edge is at most maxEdge and the area at most maxPixels.
func fitSize(w, h, maxEdge, maxPixels int) (int, int) {
	scale := 1.0
	if long := max(w, h); long > maxEdge {
		scale = float64(maxEdge) / float64(long)
	}
	if area := float64(w) * float64(h) * scale * scale; area > float64(maxPixels) {
		scale *= math.Sqrt(float64(maxPixels) / area)
	}
	if scale >= 1 {
		return w, h
	}
	nw := max(1, int(math.Floor(float64(w)*scale)))
	nh := max(1, int(math.Floor(float64(h)*scale)))
	return nw, nh
}
