package ai

import (
	"context"
	"errors"

	"phonepilot/perception/frame"
	"phonepilot/perception/shot"
)

// Image limits for vision models: Claude scales anything larger down
// server-side (long side above 1568 px or more than about 1.15 megapixels),
// paying tokens for pixels it then throws away. OpenAI's high-detail tiling
// takes the same size.
const (
	MaxImageEdge   = 1568
	MaxImagePixels = 1_150_000
)

// DefaultImageEdge is the long side the planner sends a screenshot at: a
// 1080×2400 phone goes as 460×1024, about 630 tokens on Anthropic and 425
// (two tiles) on OpenAI, where 705×1568 cost 1474 and 1445. The listing
// carries every text of the screen; the picture adds layout, icons and
// images, which this size keeps. Config.ImageEdge changes it (up to
// MaxImageEdge).
const DefaultImageEdge = 1024

// Image is an encoded picture for the model (perception/shot's).
type Image = shot.Image

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
	case f.Empty():
		return nil, "the camera returned an empty frame"
	}
	img, err := shot.Fit(f, shot.Options{MaxEdge: p.cfg.ImageEdge, MaxPixels: MaxImagePixels, Format: shot.JPEG})
	if err != nil {
		return nil, err.Error()
	}
	return img, ""
}
