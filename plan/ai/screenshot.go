package ai

import (
	"context"
	"errors"
	goruntime "runtime"

	"phonepilot/perception/frame"
	"phonepilot/perception/shot"
	"phonepilot/scene"
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

// frameSlots bounds the full-size frames the process holds at once: a raw
// 1080×2400 frame is 10 MB until it is fitted, and `serve` with 20 phones
// capturing together held hundreds of them (issue 25: 2.87 GiB). A capture
// and its fitting take a slot; the rest wait their turn (the fitting is
// CPU-bound, so more at once would not finish sooner).
var frameSlots = make(chan struct{}, max(4, goruntime.GOMAXPROCS(0)))

// CameraOf is d's camera when the device takes screenshots: for a caller
// outside the Perception Boundary (phonebench) that only hands it on to the
// planner's Config and never sees a frame.
func CameraOf(d any) (frame.Camera, bool) {
	c, ok := d.(frame.Camera)
	return c, ok && c != nil
}

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
	select {
	case frameSlots <- struct{}{}:
		defer func() { <-frameSlots }()
	case <-ctx.Done():
		return nil, "capture failed: " + ctx.Err().Error()
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

// besideShot is a screenshot taken beside one screen read: started as the
// read started, so that the frame is ready when the dump is (issue 25).
type besideShot struct {
	ready chan struct{} // closed when img and why are set
	img   *Image
	why   string
	scene *scene.Scene // what the read returned; nil while it runs or when it failed
}

// BesideRead starts a screenshot as a screen read starts (the runtime calls
// it; see runtime.BesideReads) and returns what ties it to the Scene read.
// The frame is fitted for the model at once, so only the small image is
// kept. With vision off or no camera it takes nothing.
func (p *Planner) BesideRead(ctx context.Context) func(*scene.Scene) {
	if !p.cfg.Vision || p.cfg.Camera == nil {
		return nil
	}
	p.shotMu.Lock()
	if p.taking {
		// The last read's capture is still running (reads back to back
		// while the screen settles): one at a time. A Scene read without
		// one is captured when it is planned on.
		p.shotMu.Unlock()
		return nil
	}
	p.taking = true
	p.shotMu.Unlock()
	s := &besideShot{ready: make(chan struct{})}
	go func() {
		defer close(s.ready)
		s.img, s.why = p.screenshot(ctx)
		p.shotMu.Lock()
		p.taking = false
		p.shotMu.Unlock()
	}()
	return func(sc *scene.Scene) {
		if sc == nil {
			return
		}
		p.shotMu.Lock()
		s.scene, p.shot = sc, s
		p.shotMu.Unlock()
	}
}

// shotFor is the screenshot of sc: the one taken beside the read that
// returned sc, or, when there is none (sc came from elsewhere, a later read
// replaced it), one taken now.
func (p *Planner) shotFor(ctx context.Context, sc *scene.Scene) (*Image, string) {
	p.shotMu.Lock()
	s := p.shot
	p.shot = nil
	p.shotMu.Unlock()
	if s != nil && s.scene == sc {
		select {
		case <-s.ready:
			return s.img, s.why
		case <-ctx.Done():
			return nil, "capture failed: " + ctx.Err().Error()
		}
	}
	return p.screenshot(ctx)
}
