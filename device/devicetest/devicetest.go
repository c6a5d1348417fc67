// Package devicetest is the conformance suite of device.Device drivers, in
// two parts. Contract (contract.go) is what every driver passes on any
// phone, with the skips its backend declares: the in-process simulator,
// the adb driver talking to the simulator through Debian's real adb server,
// a real phone (one command, README.md "A real phone"), and any new backend.
// SimulatorContent is the simulator's own content checks (Taobao's search,
// the launcher's icons, Settings' rows), run by every driver that drives
// the simulator: it assumes the phone behind the driver is a fresh
// simulator (device/sim, locale en, no realism profile) at the launcher
// home screen.
package devicetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/perception"
	"phonepilot/scene"
)

// Package names of the simulator's apps.
const (
	TaobaoPackage   = "com.taobao.taobao"
	SettingsPackage = "com.android.settings"
)

// LauncherLabels are the app labels the simulator's launcher shows (en).
var LauncherLabels = []string{"Taobao", "Settings", "Contacts", "Messages", "Clock"}

// SimulatorContent runs the simulator's content checks. open is called
// once per subtest and must return a Device over a fresh simulated phone at
// its launcher home.
func SimulatorContent(t *testing.T, open func(t *testing.T) device.Device) {
	t.Run("SceneShowsLauncher", func(t *testing.T) {
		d := open(t)
		sc := waitScene(t, d, "launcher icons", func(sc *scene.Scene) bool { return hasLabels(sc, LauncherLabels...) })
		if sc.Width <= 0 || sc.Height <= 0 {
			t.Errorf("scene size %dx%d, want a positive size", sc.Width, sc.Height)
		}
		if len(sc.Elements) < len(LauncherLabels) {
			t.Errorf("scene has %d elements, want at least %d", len(sc.Elements), len(LauncherLabels))
		}
		if sc.Package == TaobaoPackage || sc.Package == SettingsPackage {
			t.Errorf("fresh phone has %s in front, want the launcher", sc.Package)
		}
	})

	t.Run("LaunchAppByLabel", func(t *testing.T) {
		d := open(t)
		if err := d.LaunchApp(ctx(t), "Settings"); err != nil {
			t.Fatalf("LaunchApp(Settings): %v", err)
		}
		waitPackage(t, d, SettingsPackage)
	})

	t.Run("LaunchAppByPackage", func(t *testing.T) {
		d := open(t)
		if err := d.LaunchApp(ctx(t), TaobaoPackage); err != nil {
			t.Fatalf("LaunchApp(%s): %v", TaobaoPackage, err)
		}
		waitPackage(t, d, TaobaoPackage)
	})

	t.Run("LaunchUnknownApp", func(t *testing.T) {
		d := open(t)
		err := d.LaunchApp(ctx(t), "com.example.nosuchapp")
		if !errors.Is(err, device.ErrAppNotFound) {
			t.Fatalf("LaunchApp(unknown) = %v, want device.ErrAppNotFound", err)
		}
	})

	t.Run("TapIconOpensApp", func(t *testing.T) {
		d := open(t)
		sc := waitScene(t, d, "Taobao icon", func(sc *scene.Scene) bool { return find(sc, "Taobao") != nil })
		e := find(sc, "Taobao")
		x, y := e.Bounds.Center()
		if err := d.Tap(ctx(t), x, y); err != nil {
			t.Fatalf("Tap(%d,%d): %v", x, y, err)
		}
		waitPackage(t, d, TaobaoPackage)
	})

	t.Run("TypeTextReplacesFieldContent", func(t *testing.T) {
		d := open(t)
		OpenTaobaoSearch(t, d)
		for _, want := range []string{"hello", "Mac mini"} {
			if err := d.TypeText(ctx(t), want); err != nil {
				t.Fatalf("TypeText(%q): %v", want, err)
			}
			waitScene(t, d, "field holding "+want, func(sc *scene.Scene) bool { return focusedText(sc) == want })
		}
		uni := "苹果电脑 Mac mini 🍎"
		err := d.TypeText(ctx(t), uni)
		if errors.Is(err, device.ErrUnsupported) {
			t.Logf("TypeText(non-ASCII) unsupported here: %v", err)
			return
		}
		if err != nil {
			t.Fatalf("TypeText(%q): %v", uni, err)
		}
		waitScene(t, d, "field holding "+uni, func(sc *scene.Scene) bool { return focusedText(sc) == uni })
	})

	t.Run("KeyDeleteAndEnter", func(t *testing.T) {
		d := open(t)
		OpenTaobaoSearch(t, d)
		if err := d.TypeText(ctx(t), "Mac minix"); err != nil {
			t.Fatal(err)
		}
		waitScene(t, d, "field holding Mac minix", func(sc *scene.Scene) bool { return focusedText(sc) == "Mac minix" })
		if err := d.Key(ctx(t), device.KeyDelete); err != nil {
			t.Fatalf("Key(delete): %v", err)
		}
		waitScene(t, d, "field holding Mac mini after delete", func(sc *scene.Scene) bool { return focusedText(sc) == "Mac mini" })
		if err := d.Key(ctx(t), device.KeyEnter); err != nil {
			t.Fatalf("Key(enter): %v", err)
		}
		waitScene(t, d, "search results after enter", func(sc *scene.Scene) bool {
			return byID(sc, "com.taobao.taobao:id/search_item") != nil
		})
	})

	t.Run("LongPressOnRowClicksOnRelease", func(t *testing.T) {
		d := open(t)
		x, y := networkRow(t, d)
		if err := d.LongPress(ctx(t), x, y, 800*time.Millisecond); err != nil {
			t.Fatalf("LongPress: %v", err)
		}
		waitScene(t, d, "the Network & internet page", func(sc *scene.Scene) bool { return find(sc, "Airplane mode") != nil })
	})

	t.Run("AppSwitchShowsRecents", func(t *testing.T) {
		d := open(t)
		if err := d.LaunchApp(ctx(t), "Settings"); err != nil {
			t.Fatal(err)
		}
		waitPackage(t, d, SettingsPackage)
		if err := d.Key(ctx(t), device.KeyAppSwitch); err != nil {
			t.Fatalf("Key(app_switch): %v", err)
		}
		waitScene(t, d, "the recents screen", func(sc *scene.Scene) bool { return find(sc, "Clear all") != nil && find(sc, "Settings") != nil })
	})

	t.Run("TypeTextWithoutFocus", func(t *testing.T) {
		d := open(t)
		waitScene(t, d, "launcher", func(sc *scene.Scene) bool { return hasLabels(sc, LauncherLabels...) })
		if err := d.TypeText(ctx(t), "nowhere"); !errors.Is(err, device.ErrNoFocus) {
			t.Fatalf("TypeText on the launcher = %v, want device.ErrNoFocus", err)
		}
	})

	t.Run("KeyBackAndHome", func(t *testing.T) {
		d := open(t)
		x, y := networkRow(t, d)
		if err := d.Tap(ctx(t), x, y); err != nil {
			t.Fatal(err)
		}
		waitScene(t, d, "the Network & internet page", func(sc *scene.Scene) bool { return find(sc, "Airplane mode") != nil })
		if err := d.Key(ctx(t), device.KeyBack); err != nil {
			t.Fatalf("Key(back): %v", err)
		}
		waitScene(t, d, "back on the Settings list", func(sc *scene.Scene) bool {
			return sc.Package == SettingsPackage && find(sc, "Airplane mode") == nil && find(sc, "Network & internet") != nil
		})
		if err := d.Key(ctx(t), device.KeyHome); err != nil {
			t.Fatalf("Key(home): %v", err)
		}
		waitScene(t, d, "the launcher after home", func(sc *scene.Scene) bool {
			return sc.Package != SettingsPackage && hasLabels(sc, LauncherLabels...)
		})
	})

	t.Run("SwipeScrollsList", func(t *testing.T) {
		d := open(t)
		if err := d.LaunchApp(ctx(t), "Settings"); err != nil {
			t.Fatal(err)
		}
		before := waitPackage(t, d, SettingsPackage)
		seen := map[string]bool{}
		for _, l := range labels(before) {
			seen[l] = true
		}
		if seen["About phone"] {
			t.Fatalf("About phone visible before scrolling; the list should need a swipe: %v", labels(before))
		}
		x := before.Width / 2
		if err := d.Swipe(ctx(t), x, before.Height*3/4, x, before.Height/4, 400*time.Millisecond); err != nil {
			t.Fatalf("Swipe: %v", err)
		}
		after := waitScene(t, d, "new Settings rows after the swipe", func(sc *scene.Scene) bool {
			for _, l := range labels(sc) {
				if !seen[l] {
					return true
				}
			}
			return false
		})
		if find(after, "Network & internet") != nil && find(after, "About phone") == nil {
			t.Errorf("after swiping up the list did not move far: %v", labels(after))
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		d := open(t)
		c, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		if _, err := d.Scene(c); err == nil {
			t.Error("Scene with a cancelled context succeeded, want an error")
		}
		if err := d.Tap(c, 10, 10); err == nil {
			t.Error("Tap with a cancelled context succeeded, want an error")
		}
		if err := d.LaunchApp(c, "Settings"); err == nil {
			t.Error("LaunchApp with a cancelled context succeeded, want an error")
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("cancelled calls took %v, want prompt failure", el)
		}
	})
}

// OpenTaobaoSearch launches the simulator's Taobao, closes its launch
// promotion, and opens the search page with its field focused (the
// simulator's Target.Field: its Settings has no search page).
func OpenTaobaoSearch(t *testing.T, d device.Device) {
	t.Helper()
	if err := d.LaunchApp(ctx(t), "Taobao"); err != nil {
		t.Fatal(err)
	}
	sc := waitScene(t, d, "Taobao home", func(sc *scene.Scene) bool {
		return sc.Package == TaobaoPackage && byID(sc, "com.taobao.taobao:id/home_searchbar") != nil
	})
	if cl := byID(sc, "com.taobao.taobao:id/poplayer_close"); cl != nil {
		x, y := cl.Bounds.Center()
		if err := d.Tap(ctx(t), x, y); err != nil {
			t.Fatal(err)
		}
		sc = waitScene(t, d, "promotion closed", func(sc *scene.Scene) bool { return byID(sc, "com.taobao.taobao:id/poplayer_close") == nil })
	}
	bar := byID(sc, "com.taobao.taobao:id/home_searchbar")
	x, y := bar.Bounds.Center()
	if err := d.Tap(ctx(t), x, y); err != nil {
		t.Fatal(err)
	}
	waitScene(t, d, "a focused search field", func(sc *scene.Scene) bool { return focused(sc) != nil })
}

// SimIPhone is the contract's target for the simulated iPhone, whatever
// the way in (in process, WDA over HTTP, usbmux): Settings by its bundle
// id, the keys an iPhone has, Taobao's search field (its ids are the
// accessibility identifiers there) and no app versions (WDA tells none).
func SimIPhone(open func(t *testing.T) device.Device) Target {
	return Target{
		Open:       open,
		App:        "Settings",
		AppPackage: "com.apple.Preferences",
		Keys:       []device.Key{device.KeyHome, device.KeyEnter, device.KeyDelete},
		Field:      openIPhoneTaobaoSearch,
		Cannot: map[string]string{
			CheckFacts: "WebDriverAgent tells the locale but not an app's version",
		},
	}
}

// openIPhoneTaobaoSearch focuses Taobao's search field on the simulated
// iPhone.
func openIPhoneTaobaoSearch(t *testing.T, d device.Device) {
	t.Helper()
	if err := d.LaunchApp(ctx(t), "Taobao"); err != nil {
		t.Fatal(err)
	}
	sc := waitScene(t, d, "Taobao home", func(sc *scene.Scene) bool { return byID(sc, "home_searchbar") != nil })
	if cl := byID(sc, "poplayer_close"); cl != nil {
		x, y := cl.Bounds.Center()
		if err := d.Tap(ctx(t), x, y); err != nil {
			t.Fatal(err)
		}
		sc = waitScene(t, d, "promotion closed", func(sc *scene.Scene) bool { return byID(sc, "poplayer_close") == nil })
	}
	x, y := byID(sc, "home_searchbar").Bounds.Center()
	if err := d.Tap(ctx(t), x, y); err != nil {
		t.Fatal(err)
	}
	waitScene(t, d, "a focused search field", func(sc *scene.Scene) bool { return focused(sc) != nil })
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// waitScene polls the scene until cond holds. A fresh simulator without a
// profile settles at once; through adb a few polls may be needed.
func waitScene(t *testing.T, d device.Device, what string, cond func(*scene.Scene) bool) *scene.Scene {
	t.Helper()
	var last *scene.Scene
	var lastErr error
	for i := 0; i < 40; i++ {
		if i > 0 {
			time.Sleep(time.Duration(min(i, 5)) * 50 * time.Millisecond)
		}
		sc, err := d.Scene(ctx(t))
		if err != nil {
			lastErr = err
			if perception.Retryable(err) {
				continue
			}
			t.Fatalf("Scene while waiting for %s: %v", what, err)
		}
		last = sc
		if cond(sc) {
			return sc
		}
	}
	if last == nil {
		t.Fatalf("no scene while waiting for %s: %v", what, lastErr)
	}
	t.Fatalf("timed out waiting for %s; package %s, labels %v", what, last.Package, labels(last))
	return nil
}

// networkRow launches Settings and returns the centre of its
// "Network & internet" row.
func networkRow(t *testing.T, d device.Device) (x, y int) {
	t.Helper()
	if err := d.LaunchApp(ctx(t), "Settings"); err != nil {
		t.Fatal(err)
	}
	sc := waitPackage(t, d, SettingsPackage)
	row := find(sc, "Network & internet")
	if row == nil {
		t.Fatalf("Settings shows no %q: %v", "Network & internet", labels(sc))
	}
	return row.Bounds.Center()
}

func waitPackage(t *testing.T, d device.Device, pkg string) *scene.Scene {
	t.Helper()
	return waitScene(t, d, pkg+" in front", func(sc *scene.Scene) bool { return sc.Package == pkg })
}

func labels(sc *scene.Scene) []string {
	var out []string
	for _, e := range sc.Elements {
		if l := e.Label(); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func hasLabels(sc *scene.Scene, want ...string) bool {
	ls := labels(sc)
	for _, w := range want {
		if !slices.Contains(ls, w) {
			return false
		}
	}
	return true
}

// find returns the topmost-in-list element whose label is exactly s,
// preferring a clickable one.
func find(sc *scene.Scene, s string) *scene.Element {
	var found *scene.Element
	for i := range sc.Elements {
		e := &sc.Elements[i]
		if e.Label() != s {
			continue
		}
		if e.Clickable {
			return e
		}
		if found == nil {
			found = e
		}
	}
	// A label inside a clickable row: tap the row.
	if found != nil && !found.Clickable {
		for p := found.Parent; p >= 0 && p < len(sc.Elements); p = sc.Elements[p].Parent {
			if sc.Elements[p].Clickable {
				return &sc.Elements[p]
			}
		}
	}
	return found
}

func byID(sc *scene.Scene, id string) *scene.Element {
	for i := range sc.Elements {
		if sc.Elements[i].ResourceID == id {
			return &sc.Elements[i]
		}
	}
	return nil
}

func focused(sc *scene.Scene) *scene.Element {
	for i := range sc.Elements {
		if e := &sc.Elements[i]; e.Editable && e.Focused {
			return e
		}
	}
	return nil
}

func focusedText(sc *scene.Scene) string {
	if e := focused(sc); e != nil {
		return strings.TrimSpace(e.Text)
	}
	return ""
}
