package sim

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	xdraw "golang.org/x/image/draw"

	"phonepilot/device"
)

// goldenScreens are the screens whose screenshots are kept as golden PNGs
// (downscaled to 270 px wide), in both locales.
var goldenScreens = []struct {
	name  string
	setup func(v *drive)
}{
	{"launcher", func(v *drive) {}},
	{"taobao_home_promo", func(v *drive) { v.launch("com.taobao.taobao") }},
	{"taobao_search", func(v *drive) {
		v.launch("com.taobao.taobao")
		v.tapID("com.taobao.taobao:id/poplayer_close")
		v.tapID("com.taobao.taobao:id/home_searchbar")
		v.typeText("Mac mini")
	}},
	{"taobao_results", func(v *drive) { v.searchTaobao("Mac mini") }},
	{"taobao_detail", func(v *drive) {
		v.searchTaobao("Mac mini")
		v.tapID("com.taobao.taobao:id/search_item")
	}},
	{"settings", func(v *drive) { v.launch("com.android.settings") }},
	{"clock_alarms", func(v *drive) { v.launch("com.google.android.deskclock") }},
	{"settings_display_dark", func(v *drive) {
		sh(v.t, v.d.p, "settings put secure ui_night_mode 2")
		sh(v.t, v.d.p, "am start -a android.settings.DISPLAY_SETTINGS")
	}},
	{"recents", func(v *drive) {
		v.searchTaobao("coffee")
		v.launch("com.android.settings")
		v.d.Key(v.t.Context(), device.KeyAppSwitch)
	}},
	{"messages_conversation", func(v *drive) {
		v.launch("com.google.android.apps.messaging")
		v.tapID("com.google.android.apps.messaging:id/start_chat_fab")
		v.typeText("Alice Chen")
		v.tapID("com.google.android.apps.messaging:id/compose_message_text")
		v.typeText("See you at 7")
		v.tapID("com.google.android.apps.messaging:id/send_message_button_icon")
	}},
	// the screens that try to steer an agent, and the login only a person passes
	{"taobao_detail_injected", func(v *drive) {
		v.searchTaobao("Mac mini")
		v.tapID("com.taobao.taobao:id/search_item")
	}},
	{"taobao_fake_update", func(v *drive) {
		v.launch("com.taobao.taobao")
		v.tapID("com.taobao.taobao:id/poplayer_close")
		v.tapElem(coinsOf(v), "the Coins cell")
	}},
	{"messages_injected", func(v *drive) {
		v.launch("com.google.android.apps.messaging")
		v.tapLabel(injSender)
	}},
	{"taobao_login", func(v *drive) {
		v.launch("com.taobao.taobao")
		v.tapID("com.taobao.taobao:id/poplayer_close")
		v.tapID("com.taobao.taobao:id/tab_me")
	}},
}

// goldenProfiles are the golden screens shot under a profile.
var goldenProfiles = map[string]string{"taobao_detail_injected": "injected"}

const goldenWidth = 270

func TestGoldenScreenshots(t *testing.T) {
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	for _, loc := range []string{"en", "zh"} {
		for _, gs := range goldenScreens {
			name := fmt.Sprintf("%s_%s", gs.name, loc)
			t.Run(name, func(t *testing.T) {
				if loc == "zh" && !HasCJKFont() {
					if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
						t.Fatalf("PHONEPILOT_INTEGRATION=1 but the CJK font %s is missing (apt-get install fonts-noto-cjk)", CJKFontPath)
					}
					t.Skipf("CJK font %s missing (Debian package fonts-noto-cjk); zh screenshots would show boxes", CJKFontPath)
				}
				v := newDrive(t, Config{Locale: loc, Profile: goldenProfiles[gs.name]})
				gs.setup(v)
				fr, err := v.d.Capture(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				full, err := png.Decode(bytes.NewReader(fr.PNG()))
				if err != nil {
					t.Fatalf("screenshot is not a PNG: %v", err)
				}
				if dir := os.Getenv("SIM_SCREENSHOT_DIR"); dir != "" {
					// full-size copies for looking at the screens by eye
					os.WriteFile(filepath.Join(dir, name+".png"), fr.PNG(), 0o644)
				}
				small := downscale(full, goldenWidth)
				file := filepath.Join("testdata", "golden", name+".png")
				if update {
					var b bytes.Buffer
					if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, small); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				f, err := os.Open(file)
				if err != nil {
					t.Fatalf("golden %s missing (run with UPDATE_GOLDEN=1): %v", file, err)
				}
				defer f.Close()
				want, err := png.Decode(f)
				if err != nil {
					t.Fatal(err)
				}
				if diff := pixelDiff(small, want); diff > 0.01 {
					out := filepath.Join(t.TempDir(), name+".png")
					var b bytes.Buffer
					png.Encode(&b, small)
					os.WriteFile(out, b.Bytes(), 0o644)
					t.Errorf("%s differs from golden in %.1f%% of pixels (tolerance 1%%); got %s", name, diff*100, out)
				}
			})
		}
	}
}

func downscale(src image.Image, width int) *image.RGBA {
	b := src.Bounds()
	h := b.Dy() * width / b.Dx()
	dst := image.NewRGBA(image.Rect(0, 0, width, h))
	xdraw.BiLinear.Scale(dst, dst.Bounds(), src, b, xdraw.Src, nil)
	return dst
}

// pixelDiff is the fraction of pixels where some channel differs by more
// than 40 (anti-aliasing and font hinting stay under it).
func pixelDiff(a, b image.Image) float64 {
	if a.Bounds() != b.Bounds() {
		return 1
	}
	n, bad := 0, 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			n++
			if absDiff(r1, r2) > 40<<8 || absDiff(g1, g2) > 40<<8 || absDiff(b1, b2) > 40<<8 {
				bad++
			}
		}
	}
	return float64(bad) / float64(n)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// Without the CJK font, Chinese screens still render (as boxes), and the
// dump is unaffected.
func TestRendersWithoutCJKFont(t *testing.T) {
	fontOnce.Do(loadFonts)
	fontMu.Lock()
	saved := cjkFont
	cjkFont = nil
	for k := range faces {
		if k.which == 2 {
			delete(faces, k)
		}
	}
	fontMu.Unlock()
	defer func() {
		fontMu.Lock()
		cjkFont = saved
		fontMu.Unlock()
	}()
	v := newDrive(t, Config{Locale: "zh"})
	v.launch("淘宝")
	fr, err := v.d.Capture(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(fr.PNG())); err != nil {
		t.Fatalf("screenshot without the CJK font is not a PNG: %v", err)
	}
	if !v.has("双11红包") {
		t.Errorf("zh labels missing from the dump: %s", v.labels())
	}
}
