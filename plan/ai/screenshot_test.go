package ai_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	_ "image/jpeg"
	"image/png"
	"sync"
	"testing"
	"time"

	"phonepilot/perception/frame"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	"phonepilot/scene"
	"phonepilot/task/lifecycle"
)

// screenPhone is a phone whose screen the test moves on between decisions;
// its camera shows the screen that is up when Capture is called. Screen n
// is a solid colour that survives the planner's downscaling.
type screenPhone struct {
	t      *testing.T
	mu     sync.Mutex
	screen int
	frames map[int][]byte
}

func screenColour(n int) color.RGBA { return color.RGBA{uint8(40 * n), 200, uint8(255 - 40*n), 255} }

func (p *screenPhone) show(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.screen = n
	if p.frames == nil {
		p.frames = map[int][]byte{}
	}
	if _, ok := p.frames[n]; !ok {
		img := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
		c := screenColour(n)
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			p.t.Fatal(err)
		}
		p.frames[n] = buf.Bytes()
	}
}

func (p *screenPhone) Capture(context.Context) (frame.Frame, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return frame.New(p.frames[p.screen], 1080, 2400, time.Unix(int64(p.screen), 0)), nil
}

// screenOf tells which screen an image sent to the model shows (0: none).
func screenOf(t *testing.T, img *ai.Image) int {
	t.Helper()
	m, _, err := image.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("image sent to the model does not decode: %v", err)
	}
	r, g, b, _ := m.At(m.Bounds().Dx()/2, m.Bounds().Dy()/2).RGBA()
	near := func(a uint32, b uint8) bool { return max(a>>8, uint32(b))-min(a>>8, uint32(b)) <= 6 } // JPEG
	for n := 1; n <= 5; n++ {
		c := screenColour(n)
		if near(r, c.R) && near(g, c.G) && near(b, c.B) {
			return n
		}
	}
	return 0
}

// Each decision sends the screenshot of the screen it decides on: the
// frame taken for that turn, never one kept from an earlier turn, and the
// re-ask inside a turn carries the same turn's frame.
func TestScreenshotSentWithADecisionIsThatTurnsFrame(t *testing.T) {
	phone := &screenPhone{t: t}
	fp := &fakeProvider{script: []func(ai.Request) (ai.Reply, error){
		answer(`tap {"element":2}`),  // turn 1
		answer(`tap {"element":99}`), // turn 2: not listed, re-asked
		answer(`tap {"element":7}`),  // turn 2, re-ask
		answer(`tap {"element":7}`),  // turn 3
	}}
	p, _ := newPlanner(t, fp, func(c *ai.Config) { c.Camera = phone })

	turns := []struct {
		screen int
		sc     *scene.Scene
	}{{1, aitest.TaobaoHome()}, {2, aitest.TaobaoResults()}, {3, aitest.TaobaoResults()}}
	wantScreens := []int{1, 2, 2, 3} // one per provider request
	var history []plan.StepRecord
	for i, tn := range turns {
		phone.show(tn.screen)
		if _, err := p.Plan(context.Background(), input(tn.sc, history...)); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		history = append(history, step(i+1, `tap {"element":2}`, lifecycle.StepSucceeded, true))
	}
	// The phone moves on after the last decision; nothing may reach back.
	phone.show(4)

	if len(fp.reqs) != len(wantScreens) {
		t.Fatalf("%d provider requests, want %d", len(fp.reqs), len(wantScreens))
	}
	for i, req := range fp.reqs {
		n, img := images(req)
		if n != 1 {
			t.Errorf("request %d carries %d images, want exactly the current one", i+1, n)
			continue
		}
		if got := screenOf(t, img); got != wantScreens[i] {
			t.Errorf("request %d carries the frame of screen %d, want screen %d (the screen of its own turn)", i+1, got, wantScreens[i])
		}
	}
}
