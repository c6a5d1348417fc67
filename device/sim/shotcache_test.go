package sim

import (
	"bytes"
	"context"
	"testing"

	"phonepilot/device"
)

// A reused rendering must be exactly what painting afresh gives, through a
// walk that changes the screen in every way an agent does: launch, popup,
// focus, typing, scrolling, a toggle, back, home.
func TestScreenshotCacheMatchesAFreshRendering(t *testing.T) {
	v := newDrive(t, Config{})
	p := v.d.p
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		p.mu.Lock()
		defer p.mu.Unlock()
		cached, _ := p.screenshotLocked()
		again, _ := p.screenshotLocked()
		fresh := encodePNG(p.paint(p.windowsAt(p.now(), false)))
		if !bytes.Equal(cached, fresh) {
			t.Fatalf("after %s: the screenshot differs from a fresh rendering", step)
		}
		if &again[0] != &cached[0] {
			t.Errorf("after %s: an unchanged screen was rendered again", step)
		}
	}
	check("start")
	act := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		check(step)
	}
	act("launch Taobao", v.d.LaunchApp(ctx, "Taobao"))
	v.tapElem(findLabel(v.scene(), "Close"), "popup close")
	check("close popup")
	v.tapElem(findID(v.scene(), "com.taobao.taobao:id/home_searchbar"), "search bar")
	check("focus search")
	act("type", v.d.TypeText(ctx, "Mac mino"))
	act("retype one letter", v.d.TypeText(ctx, "Mac mini"))
	act("submit", v.d.Key(ctx, device.KeyEnter))
	act("scroll", v.d.Swipe(ctx, 540, 1800, 540, 600, 300e6))
	act("back", v.d.Key(ctx, device.KeyBack))
	act("launch Settings", v.d.LaunchApp(ctx, "Settings"))
	v.tapLabel("Network & internet")
	check("open Network & internet")
	v.tapLabel("Wi‑Fi")
	check("toggle Wi-Fi")
	act("home", v.d.Key(ctx, device.KeyHome))
}
