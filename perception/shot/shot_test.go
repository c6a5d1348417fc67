package shot

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"testing"
	"time"

	"phonepilot/perception/frame"
)

func TestSize(t *testing.T) {
	for _, c := range []struct{ w, h, edge, px, ww, wh int }{
		{1080, 2400, 1568, 1_150_000, 705, 1568}, // phone: long side
		{720, 1612, 1568, 1_150_000, 700, 1568},
		{2560, 1600, 1568, 1_150_000, 1356, 847}, // tablet: area cap
		{600, 1200, 1568, 1_150_000, 600, 1200},  // small: never upscaled
		{1080, 2400, 1024, 0, 460, 1024},
		{1080, 2400, 0, 0, 1080, 2400},
	} {
		if w, h := Size(c.w, c.h, c.edge, c.px); w != c.ww || h != c.wh {
			t.Errorf("Size(%d,%d,%d,%d) = %dx%d, want %dx%d", c.w, c.h, c.edge, c.px, w, h, c.ww, c.wh)
		}
	}
}

// Downscale is an area average: every output pixel is the mean of the
// source area it covers, fractional overlaps weighted by their size.
func TestDownscaleAveragesTheArea(t *testing.T) {
	// 3x1 → 2x1: output 0 covers source 0 and half of 1, output 1 the
	// other half of 1 and 2.
	src := image.NewRGBA(image.Rect(0, 0, 3, 1))
	src.Set(0, 0, color.RGBA{0, 0, 0, 255})
	src.Set(1, 0, color.RGBA{90, 90, 90, 255})
	src.Set(2, 0, color.RGBA{210, 210, 210, 255})
	dst := Downscale(src, 2, 1)
	if got := dst.RGBAAt(0, 0).R; got != 30 { // (0 + 0.5*90) / 1.5
		t.Errorf("pixel 0 = %d, want 30", got)
	}
	if got := dst.RGBAAt(1, 0).R; got != 170 { // (0.5*90 + 210) / 1.5
		t.Errorf("pixel 1 = %d, want 170", got)
	}
	// A one-pixel checkerboard halved is flat grey, not aliased stripes.
	chk := image.NewNRGBA(image.Rect(0, 0, 100, 100))
	for y := range 100 {
		for x := range 100 {
			v := uint8(255 * ((x + y) % 2))
			chk.Set(x, y, color.NRGBA{v, v, v, 255})
		}
	}
	half := Downscale(chk, 50, 50)
	for _, p := range []image.Point{{0, 0}, {25, 17}, {49, 49}} {
		if c := half.RGBAAt(p.X, p.Y); c.R != 128 || c.A != 255 {
			t.Errorf("pixel %v = %v, want grey 128", p, c)
		}
	}
}

func rgbaPhone(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(x*7+y), uint8(y/3), uint8(x^y), 255
		}
	}
	return img
}

func TestFitRawAndPNGFramesAlike(t *testing.T) {
	raw := rgbaPhone(1080, 2400)
	var buf bytes.Buffer
	if err := png.Encode(&buf, raw); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]frame.Frame{
		"raw": frame.NewRGBA(raw, time.Unix(0, 0)),
		"png": frame.New(buf.Bytes(), 1080, 2400, time.Unix(0, 0)),
	} {
		img, err := Fit(f, Options{MaxEdge: 1024, MaxPixels: 1_150_000})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(img.Data))
		if err != nil || img.MediaType != "image/jpeg" || cfg.Width != 460 || cfg.Height != 1024 || img.Width != 460 || img.SourceHeight != 2400 {
			t.Errorf("%s: %s %dx%d (%v), image %+v; want a 460x1024 JPEG from 1080x2400", name, img.MediaType, cfg.Width, cfg.Height, err, *img)
		}
	}
	// A PNG that fits and is wanted as PNG goes on as it is.
	small := buf.Bytes()
	img, err := Fit(frame.New(small, 1080, 2400, time.Time{}), Options{MaxEdge: 2400, Format: PNG})
	if err != nil || !bytes.Equal(img.Data, small) {
		t.Errorf("a fitting PNG was re-encoded (err %v)", err)
	}
}

func TestFitShrinksUntilItFitsItsBytes(t *testing.T) {
	img, err := Fit(frame.NewRGBA(rgbaPhone(1080, 2400), time.Time{}), Options{MaxEdge: 1568, MaxBytes: 60_000, Format: PNG})
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Data) > 60_000 || img.Height >= 1568 {
		t.Errorf("%d bytes at %dx%d, want at most 60000 and smaller than 1568", len(img.Data), img.Width, img.Height)
	}
	if _, err := Fit(frame.Frame{}, Options{}); err == nil {
		t.Errorf("an empty frame fitted")
	}
}

// BenchmarkFit is one turn's screenshot work on the host for a 1080×2400
// phone: from a raw frame (raw screencap, the simulator) and from a PNG
// (screencap -p, the previous path), to the planner's 460×1024 JPEG and to
// its former 705×1568 size.
func BenchmarkFit(b *testing.B) {
	src := rgbaPhone(1080, 2400)
	if data, err := os.ReadFile("testdata/taobao_results_1080x2400.png"); err == nil {
		if m, err := png.Decode(bytes.NewReader(data)); err == nil {
			src = image.NewRGBA(m.Bounds())
			for y := range m.Bounds().Dy() {
				for x := range m.Bounds().Dx() {
					src.Set(x, y, m.At(x, y))
				}
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, src)
	for _, c := range []struct {
		name string
		f    frame.Frame
		edge int
	}{
		{"raw/1024", frame.NewRGBA(src, time.Time{}), 1024},
		{"raw/1568", frame.NewRGBA(src, time.Time{}), 1568},
		{"png/1024", frame.New(buf.Bytes(), 1080, 2400, time.Time{}), 1024},
		{"png/1568", frame.New(buf.Bytes(), 1080, 2400, time.Time{}), 1568},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := Fit(c.f, Options{MaxEdge: c.edge, MaxPixels: 1_150_000}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
