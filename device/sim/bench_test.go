package sim

import (
	"bytes"
	"context"
	"testing"
)

// BenchmarkDump is Device.Scene in process: dump XML + perception.Parse.
func BenchmarkSceneInProcess(b *testing.B) {
	for _, screen := range []string{"launcher", "taobao_results"} {
		b.Run(screen, func(b *testing.B) {
			p := newTestPhone(b, Config{})
			if screen == "taobao_results" {
				sh(b, p, "monkey -p com.taobao.taobao 1")
				p.mu.Lock()
				a := p.app(taobaoPkg).(*taobaoApp)
				a.promo = false
				a.submit("Mac mini")
				p.mu.Unlock()
			}
			d := p.Device()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Scene(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "dumps/s")
		})
	}
}

// BenchmarkDumpXML is the shell's `uiautomator dump /dev/tty` alone.
func BenchmarkDumpXML(b *testing.B) {
	p := newTestPhone(b, Config{})
	ctx := context.Background()
	var o, e bytes.Buffer
	for b.Loop() {
		o.Reset()
		p.Exec(ctx, "uiautomator dump /dev/tty", true, &o, &e)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "dumps/s")
}

// BenchmarkScreenshot is Device.Capture in process: "fresh" draws and
// encodes (PNG, BestSpeed) every time, as after each action; "unchanged"
// captures a screen that has not changed since the last capture.
func BenchmarkScreenshot(b *testing.B) {
	for _, screen := range []string{"launcher", "settings"} {
		for _, fresh := range []bool{true, false} {
			name := screen + "/unchanged"
			if fresh {
				name = screen + "/fresh"
			}
			b.Run(name, func(b *testing.B) {
				p := newTestPhone(b, Config{})
				if screen == "settings" {
					p.Device().LaunchApp(context.Background(), "Settings")
				}
				d := p.Device()
				ctx := context.Background()
				if _, err := d.Capture(ctx); err != nil { // fonts load once
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if fresh {
						shots.mu.Lock()
						shots.kept = nil
						shots.mu.Unlock()
					}
					if _, err := d.Capture(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screenshots/s")
			})
		}
	}
}
