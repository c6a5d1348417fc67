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

// BenchmarkScreenshot is Device.Capture in process: draw + PNG (BestSpeed).
func BenchmarkScreenshot(b *testing.B) {
	for _, screen := range []string{"launcher", "settings"} {
		b.Run(screen, func(b *testing.B) {
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
				if _, err := d.Capture(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screenshots/s")
		})
	}
}
