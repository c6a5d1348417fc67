package adb

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os/exec"
	"strconv"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/simadb"
	"phonepilot/perception"
	"phonepilot/scene"
)

// The benchmarks run the same operations against the simulator through the
// real adb server two ways: with this package's host-protocol client, and
// by exec'ing the adb tool per command as many agents do. Run with
//
//	go test ./device/adb -run '^$' -bench ThroughADB -benchtime 50x

func benchEnv(b *testing.B) (*simadb.Env, *Device) {
	b.Helper()
	env := simadb.Start(b, sim.Config{})
	d, err := Open(b.Context(), Config{Server: env.ServerAddr, Serial: env.Serial})
	if err != nil {
		b.Fatal(err)
	}
	return env, d
}

// adbExec runs the adb tool against the Env's private server and phone.
func adbExec(b *testing.B, env *simadb.Env, args ...string) []byte {
	full := append([]string{"-P", strconv.Itoa(env.ServerPort), "-s", env.Serial}, args...)
	cmd := exec.CommandContext(b.Context(), env.ADBPath, full...)
	cmd.Env = env.Environ()
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("adb %v: %v", args, err)
	}
	return out
}

// blankPoint finds a point no clickable element covers, so taps leave the
// screen as it is.
func blankPoint(b *testing.B, sc *scene.Scene) (int, int) {
	for y := sc.Height / 3; y < sc.Height; y += 37 {
		for x := 5; x < sc.Width; x += 41 {
			hit := false
			for _, e := range sc.Elements {
				if (e.Clickable || e.LongClickable || e.Scrollable) && e.Bounds.Contains(x, y) {
					hit = true
					break
				}
			}
			if !hit {
				return x, y
			}
		}
	}
	b.Fatal("no blank point on the screen")
	return 0, 0
}

func BenchmarkThroughADB(b *testing.B) {
	b.Run("Observe/hostprotocol", func(b *testing.B) {
		_, d := benchEnv(b)
		for b.Loop() {
			if _, err := d.Scene(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Observe/exec-adb", func(b *testing.B) {
		env, _ := benchEnv(b)
		for b.Loop() {
			// The same work Scene does: dump and dumpsys in parallel, parse.
			fg := make(chan Focus, 1)
			go func() { fg <- ParseWindowFocus(adbExec(b, env, "shell", "dumpsys", "window", "windows")) }()
			raw := adbExec(b, env, "exec-out", "uiautomator", "dump", "/dev/tty")
			sc, err := perception.Parse(trimDump(raw), perception.Options{})
			if err != nil {
				b.Fatal(err)
			}
			f := <-fg
			sc.Package, sc.Activity = f.Package, f.Activity
		}
	})
	b.Run("Screenshot/hostprotocol", func(b *testing.B) {
		_, d := benchEnv(b)
		for b.Loop() {
			if _, err := d.Capture(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Screenshot/exec-adb", func(b *testing.B) {
		env, _ := benchEnv(b)
		for b.Loop() {
			if _, _, err := CheckPNG(adbExec(b, env, "exec-out", "screencap", "-p")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Tap/hostprotocol", func(b *testing.B) {
		_, d := benchEnv(b)
		sc, err := d.Scene(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		x, y := blankPoint(b, sc)
		for b.Loop() {
			if err := d.Tap(context.Background(), x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Tap/exec-adb", func(b *testing.B) {
		env, d := benchEnv(b)
		sc, err := d.Scene(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		x, y := blankPoint(b, sc)
		for b.Loop() {
			adbExec(b, env, "shell", "input", "tap", strconv.Itoa(x), strconv.Itoa(y))
		}
	})
}

// BenchmarkScreenshotTransport isolates the transport: a phone that answers
// screencap with a ready-made 1080x2400 PNG of about 2.5 MB, like a photo-rich
// real screenshot (no rendering), fetched with the
// host-protocol client and by exec'ing adb.
func BenchmarkScreenshotTransport(b *testing.B) {
	p := newFakePhone(b)
	p.screencap = photoLikePNG(b, 1080, 2400)
	b.Logf("PNG of %d bytes", len(p.screencap))
	env := simadb.StartDevice(b, adbdPhone{p}, adbd.Config{})
	d, err := Open(b.Context(), Config{Server: env.ServerAddr, Serial: env.Serial})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hostprotocol", func(b *testing.B) {
		b.SetBytes(int64(len(p.screencap)))
		for b.Loop() {
			if _, err := d.Capture(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exec-adb", func(b *testing.B) {
		b.SetBytes(int64(len(p.screencap)))
		for b.Loop() {
			if _, _, err := CheckPNG(adbExec(b, env, "exec-out", "screencap", "-p")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// photoLikePNG has incompressible noise on every fourth row, which puts it
// in the size range of real screenshots with photos.
func photoLikePNG(b *testing.B, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	x := uint32(2463534242)
	for y := 0; y < h; y += 4 {
		row := img.Pix[y*img.Stride : y*img.Stride+w*4]
		for i := range row {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			row[i] = byte(x)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
