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

	"phonepilot/lifecycle"
	"phonepilot/perception/frame"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	"phonepilot/scene"
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

// countingCamera is a screenPhone's camera that counts its captures and
// says when one starts.
type countingCamera struct {
	*screenPhone
	mu      sync.Mutex
	shots   int
	started chan struct{}
}

func (c *countingCamera) Capture(ctx context.Context) (frame.Frame, error) {
	c.mu.Lock()
	c.shots++
	c.mu.Unlock()
	select {
	case c.started <- struct{}{}:
	default:
	}
	return c.screenPhone.Capture(ctx)
}

func (c *countingCamera) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shots
}

// The screenshot is taken beside the screen read, not after it (issue 25):
// BesideRead starts the capture as the read starts, and the decision on the
// Scene that read returned sends that frame without capturing again. A
// decision on a Scene no read was tied to captures its own.
func TestScreenshotIsTakenBesideTheRead(t *testing.T) {
	phone := &screenPhone{t: t}
	cam := &countingCamera{screenPhone: phone, started: make(chan struct{}, 1)}
	fp := &fakeProvider{script: []func(ai.Request) (ai.Reply, error){
		answer(`tap {"element":2}`), answer(`tap {"element":2}`),
	}}
	p, _ := newPlanner(t, fp, func(c *ai.Config) { c.Camera = cam })
	ctx := context.Background()

	phone.show(1)
	done := p.BesideRead(ctx) // the read starts
	if done == nil {
		t.Fatal("BesideRead took nothing with vision on and a camera")
	}
	select {
	case <-cam.started: // the capture runs while the dump does
	case <-time.After(5 * time.Second):
		t.Fatal("no capture started beside the read")
	}
	sc := aitest.TaobaoHome()
	done(sc) // the read returns
	phone.show(2)
	if _, err := p.Plan(ctx, input(sc)); err != nil {
		t.Fatal(err)
	}
	if n := cam.count(); n != 1 {
		t.Errorf("%d captures for one read and its decision, want 1 (the one beside the read)", n)
	}
	if _, img := images(fp.reqs[0]); img == nil || screenOf(t, img) != 1 {
		t.Errorf("the decision did not send the frame taken beside its read (screen 1)")
	}

	// A Scene from no read beside which a frame was taken: capture now.
	if _, err := p.Plan(ctx, input(aitest.TaobaoResults(), step(1, `tap {"element":2}`, lifecycle.StepSucceeded, true))); err != nil {
		t.Fatal(err)
	}
	if n := cam.count(); n != 2 {
		t.Errorf("%d captures after a decision on a Scene with no frame beside it, want 2", n)
	}
	if _, img := images(fp.reqs[1]); img == nil || screenOf(t, img) != 2 {
		t.Errorf("the second decision did not send the screen it decides on (screen 2)")
	}

	// Vision off: nothing is taken beside reads.
	off, _ := newPlanner(t, fp, func(c *ai.Config) { c.Camera, c.Vision = cam, false })
	if off.BesideRead(ctx) != nil {
		t.Error("BesideRead took a frame with vision off")
	}
}
