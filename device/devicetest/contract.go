package devicetest

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/scene"
)

// Target is a phone the contract runs against, and what its backend
// declares about it.
type Target struct {
	// Open returns the device over a phone at its home screen; called once
	// per check.
	Open func(t *testing.T) device.Device
	// App is an installed app's name as a user knows it, and AppPackage
	// its package ("Settings", "com.android.settings" by default). Its
	// first screen must scroll.
	App, AppPackage string
	// Field opens a screen with an editable field and focuses it; nil
	// means SearchField(App): tap the App's search box.
	Field func(t *testing.T, d device.Device)
	// Keys are the keys the backend declares (device.Keys when nil); the
	// others must fail with device.ErrUnsupported.
	Keys []device.Key
	// Vanish makes the phone behind d go away (stopped, unplugged); nil
	// when the backend cannot (the check is skipped, with Cannot's
	// reason).
	Vanish func(t *testing.T, d device.Device)
	// Cannot are the checks the backend declares it cannot pass, by name
	// (a Check* constant), with the reason shown for the skip.
	Cannot map[string]string
}

// The contract's checks whose skip a backend may declare in
// Target.Cannot.
const (
	CheckTypeUnicode = "TypeUnicode" // CJK and emoji (adb without ADB Keyboard)
	CheckVanish      = "Vanish"      // a device that goes away (an in-process phone cannot)
	CheckFacts       = "Facts"       // device.Facts: locale and app versions
	CheckStopApp     = "StopApp"     // device.AppStopper
)

// Contract is the suite every device.Device driver passes, whatever phone
// is behind it: observe, tap, long press, swipe, type (CJK and emoji too),
// the keys it declares, launch, facts, errors for a vanished device and
// honoured contexts. What the backend declares it cannot do is skipped
// with its reason; anything else that fails is a failure. It assumes no
// content but an app that scrolls and has a search box (Settings on any
// Android phone).
//
// Against a real phone: PHONEPILOT_CONTRACT_DEVICE=adb:SERIAL go test
// ./device/adb -run TestContractOnRealPhone -v (docs/devices.md).
func Contract(t *testing.T, tg Target) {
	if tg.App == "" {
		tg.App, tg.AppPackage = "Settings", SettingsPackage
	}
	keys := tg.Keys
	if keys == nil {
		keys = device.Keys
	}
	skip := func(t *testing.T, check string) {
		t.Helper()
		if why, ok := tg.Cannot[check]; ok {
			t.Skipf("the backend declares it cannot: %s", why)
		}
	}
	field := tg.Field
	if field == nil {
		field = func(t *testing.T, d device.Device) { SearchField(t, d, tg.App, tg.AppPackage) }
	}

	t.Run("Observe", func(t *testing.T) {
		d := tg.Open(t)
		sc := waitScene(t, d, "a screen with elements", func(sc *scene.Scene) bool { return len(sc.Elements) > 0 })
		if sc.Width <= 0 || sc.Height <= 0 {
			t.Errorf("scene size %dx%d, want a positive size", sc.Width, sc.Height)
		}
		if sc.Package == "" {
			t.Error("scene names no app in front")
		}
	})

	t.Run("Launch", func(t *testing.T) {
		d := tg.Open(t)
		if err := d.LaunchApp(ctx(t), tg.App); err != nil {
			t.Fatalf("LaunchApp(%s): %v", tg.App, err)
		}
		waitPackage(t, d, tg.AppPackage)
		if err := d.Key(ctx(t), device.KeyHome); err != nil {
			t.Fatalf("Key(home): %v", err)
		}
		waitScene(t, d, "home, away from "+tg.AppPackage, func(sc *scene.Scene) bool { return sc.Package != tg.AppPackage })
		if err := d.LaunchApp(ctx(t), tg.AppPackage); err != nil {
			t.Fatalf("LaunchApp(%s): %v", tg.AppPackage, err)
		}
		waitPackage(t, d, tg.AppPackage)
		if err := d.LaunchApp(ctx(t), "com.example.nosuchapp"); !errors.Is(err, device.ErrAppNotFound) {
			t.Errorf("LaunchApp(an app that is not installed) = %v, want device.ErrAppNotFound", err)
		}
	})

	t.Run("TapOpensWhatItHits", func(t *testing.T) {
		d := tg.Open(t)
		if err := d.LaunchApp(ctx(t), tg.App); err != nil {
			t.Fatal(err)
		}
		before := waitPackage(t, d, tg.AppPackage)
		row := firstRow(before)
		if row == nil {
			t.Fatalf("%s shows no clickable row with a label: %v", tg.App, labels(before))
		}
		x, y := find(before, row.Label()).Bounds.Center()
		if err := d.Tap(ctx(t), x, y); err != nil {
			t.Fatalf("Tap(%d,%d) on %q: %v", x, y, row.Label(), err)
		}
		waitScene(t, d, "the screen after tapping "+row.Label(), func(sc *scene.Scene) bool { return !slices.Equal(labels(sc), labels(before)) })
	})

	t.Run("LongPress", func(t *testing.T) {
		d := tg.Open(t)
		if err := d.LaunchApp(ctx(t), tg.App); err != nil {
			t.Fatal(err)
		}
		sc := waitPackage(t, d, tg.AppPackage)
		x, y := sc.Width/2, sc.Height/2
		if err := d.LongPress(ctx(t), x, y, 800*time.Millisecond); err != nil {
			t.Fatalf("LongPress(%d,%d): %v", x, y, err)
		}
		waitScene(t, d, "a screen after the long press", func(sc *scene.Scene) bool { return len(sc.Elements) > 0 })
	})

	t.Run("SwipeScrolls", func(t *testing.T) {
		d := tg.Open(t)
		if err := d.LaunchApp(ctx(t), tg.App); err != nil {
			t.Fatal(err)
		}
		before := waitPackage(t, d, tg.AppPackage)
		x := before.Width / 2
		if err := d.Swipe(ctx(t), x, before.Height*3/4, x, before.Height/4, 400*time.Millisecond); err != nil {
			t.Fatalf("Swipe: %v", err)
		}
		seen := labels(before)
		waitScene(t, d, "rows that were not shown before the swipe", func(sc *scene.Scene) bool {
			for _, l := range labels(sc) {
				if !slices.Contains(seen, l) {
					return true
				}
			}
			return false
		})
	})

	t.Run("TypeText", func(t *testing.T) {
		d := tg.Open(t)
		field(t, d)
		for _, want := range []string{"hello", "Mac mini"} {
			if err := d.TypeText(ctx(t), want); err != nil {
				t.Fatalf("TypeText(%q): %v", want, err)
			}
			waitScene(t, d, "field holding "+want, func(sc *scene.Scene) bool { return focusedText(sc) == want })
		}
		if slices.Contains(keys, device.KeyDelete) {
			if err := d.Key(ctx(t), device.KeyDelete); err != nil {
				t.Fatalf("Key(delete): %v", err)
			}
			waitScene(t, d, "field holding Mac min after delete", func(sc *scene.Scene) bool { return focusedText(sc) == "Mac min" })
		}
		if err := d.TypeText(ctx(t), ""); err != nil {
			t.Fatalf("TypeText(\"\") (clear): %v", err)
		}
		waitScene(t, d, "an empty field", func(sc *scene.Scene) bool {
			f := focused(sc)
			return f != nil && (f.Text == "" || f.Text == f.Hint) // an empty field shows its hint as its text
		})
	})

	t.Run(CheckTypeUnicode, func(t *testing.T) {
		skip(t, CheckTypeUnicode)
		d := tg.Open(t)
		field(t, d)
		for _, want := range []string{"苹果电脑", "Mac mini 🍎", "苹果 Mac mini 🍎✓"} {
			if err := d.TypeText(ctx(t), want); err != nil {
				t.Fatalf("TypeText(%q): %v (a backend that cannot type it declares %s)", want, err, CheckTypeUnicode)
			}
			waitScene(t, d, "field holding "+want, func(sc *scene.Scene) bool { return focusedText(sc) == want })
		}
	})

	t.Run("TypeTextWithoutFocus", func(t *testing.T) {
		d := tg.Open(t)
		if err := d.LaunchApp(ctx(t), tg.App); err != nil {
			t.Fatal(err)
		}
		sc := waitPackage(t, d, tg.AppPackage)
		if focused(sc) != nil {
			t.Skipf("%s opens with a focused field", tg.App)
		}
		if err := d.TypeText(ctx(t), "nowhere"); !errors.Is(err, device.ErrNoFocus) {
			t.Fatalf("TypeText with no focused field = %v, want device.ErrNoFocus", err)
		}
	})

	t.Run("Keys", func(t *testing.T) {
		d := tg.Open(t)
		for _, k := range device.Keys {
			if slices.Contains(keys, k) {
				continue
			}
			if err := d.Key(ctx(t), k); !errors.Is(err, device.ErrUnsupported) {
				t.Errorf("Key(%s), which the backend does not declare, = %v; want device.ErrUnsupported", k, err)
			}
		}
		if slices.Contains(keys, device.KeyBack) {
			if err := d.LaunchApp(ctx(t), tg.App); err != nil {
				t.Fatal(err)
			}
			before := waitPackage(t, d, tg.AppPackage)
			row := firstRow(before)
			if row == nil {
				t.Fatalf("%s shows no clickable row: %v", tg.App, labels(before))
			}
			x, y := find(before, row.Label()).Bounds.Center()
			if err := d.Tap(ctx(t), x, y); err != nil {
				t.Fatal(err)
			}
			waitScene(t, d, "the page "+row.Label()+" opens", func(sc *scene.Scene) bool { return !slices.Equal(labels(sc), labels(before)) })
			if err := d.Key(ctx(t), device.KeyBack); err != nil {
				t.Fatalf("Key(back): %v", err)
			}
			waitScene(t, d, "back on "+tg.App+"'s first screen", func(sc *scene.Scene) bool {
				return sc.Package == tg.AppPackage && find(sc, row.Label()) != nil
			})
		}
		for _, k := range []device.Key{device.KeyAppSwitch, device.KeyEnter, device.KeyHome} {
			if !slices.Contains(keys, k) {
				continue
			}
			if err := d.Key(ctx(t), k); err != nil {
				t.Errorf("Key(%s): %v", k, err)
			}
		}
		if slices.Contains(keys, device.KeyHome) {
			waitScene(t, d, "home", func(sc *scene.Scene) bool { return sc.Package != tg.AppPackage })
		}
	})

	t.Run(CheckFacts, func(t *testing.T) {
		skip(t, CheckFacts)
		d := tg.Open(t)
		f, ok := d.(device.Facts)
		if !ok {
			t.Fatalf("%T is not a device.Facts (a backend without it declares %s)", d, CheckFacts)
		}
		l, err := f.Locale(ctx(t))
		if err != nil || !bcp47.MatchString(l) {
			t.Errorf("Locale = %q, %v; want a BCP 47 tag", l, err)
		}
		name, code, err := f.AppVersion(ctx(t), tg.AppPackage)
		if err != nil || name == "" && code == 0 {
			t.Errorf("AppVersion(%s) = %q, %d, %v; want its version", tg.AppPackage, name, code, err)
		}
		if _, _, err := f.AppVersion(ctx(t), "com.example.nosuchapp"); !errors.Is(err, device.ErrAppNotFound) {
			t.Errorf("AppVersion(an app that is not installed) = %v, want device.ErrAppNotFound", err)
		}
	})

	t.Run(CheckStopApp, func(t *testing.T) {
		skip(t, CheckStopApp)
		d := tg.Open(t)
		s, ok := d.(device.AppStopper)
		if !ok {
			t.Fatalf("%T is not a device.AppStopper (a backend without it declares %s)", d, CheckStopApp)
		}
		if err := d.LaunchApp(ctx(t), tg.App); err != nil {
			t.Fatal(err)
		}
		waitPackage(t, d, tg.AppPackage)
		if err := s.StopApp(ctx(t), tg.AppPackage); err != nil {
			t.Fatalf("StopApp(%s): %v", tg.AppPackage, err)
		}
		waitScene(t, d, tg.AppPackage+" gone from the front", func(sc *scene.Scene) bool { return sc.Package != tg.AppPackage })
		if err := s.StopApp(ctx(t), "not a package"); err == nil {
			t.Error("StopApp(\"not a package\") succeeded, want an error")
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		d := tg.Open(t)
		c, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		calls := map[string]func() error{
			"Scene":     func() error { _, err := d.Scene(c); return err },
			"Tap":       func() error { return d.Tap(c, 10, 10) },
			"LongPress": func() error { return d.LongPress(c, 10, 10, time.Second) },
			"Swipe":     func() error { return d.Swipe(c, 10, 500, 10, 100, 300*time.Millisecond) },
			"TypeText":  func() error { return d.TypeText(c, "x") },
			"Key":       func() error { return d.Key(c, device.KeyHome) },
			"LaunchApp": func() error { return d.LaunchApp(c, tg.App) },
		}
		for name, call := range calls {
			if err := call(); err == nil {
				t.Errorf("%s with a cancelled context succeeded, want an error", name)
			}
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("cancelled calls took %v, want prompt failure", el)
		}
		// A deadline already passed is honoured like a cancellation.
		dc, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer dcancel()
		if err := d.LongPress(dc, 10, 10, 5*time.Second); err == nil {
			t.Error("LongPress under a passed deadline succeeded, want an error")
		}
	})

	t.Run(CheckVanish, func(t *testing.T) {
		skip(t, CheckVanish)
		if tg.Vanish == nil {
			t.Fatalf("the target has no Vanish and does not declare %s", CheckVanish)
		}
		d := tg.Open(t)
		waitScene(t, d, "a screen", func(sc *scene.Scene) bool { return len(sc.Elements) > 0 })
		tg.Vanish(t, d)
		deadline := time.Now().Add(15 * time.Second)
		var err error
		for time.Now().Before(deadline) {
			if _, err = d.Scene(ctx(t)); errors.Is(err, device.ErrDisconnected) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !errors.Is(err, device.ErrDisconnected) {
			t.Fatalf("Scene after the phone went away = %v; want device.ErrDisconnected", err)
		}
		start := time.Now()
		if err := d.Tap(ctx(t), 10, 10); !errors.Is(err, device.ErrDisconnected) {
			t.Errorf("Tap after the phone went away = %v; want device.ErrDisconnected", err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("Tap on a vanished phone took %v; want within 5 s", el)
		}
	})
}

// bcp47 is a language tag as Locale reports it ("en-US", "zh-CN", "en").
var bcp47 = regexp.MustCompile(`^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*$`)

// firstRow is the first element of the app in front with a label that is
// clickable or inside a clickable row, below the top fifth of the screen
// (a list row, not the title bar or a search box). The row is returned, with
// the label it shows.
func firstRow(sc *scene.Scene) *scene.Element {
	for i := range sc.Elements {
		e := &sc.Elements[i]
		l := e.Label()
		if e.Package != sc.Package || e.Editable || l == "" || strings.Contains(strings.ToLower(l), "search") {
			continue
		}
		if _, y := e.Bounds.Center(); y <= sc.Height/5 {
			continue
		}
		if r := find(sc, l); r != nil && r.Clickable {
			return e
		}
	}
	return nil
}

// SearchField launches app (package pkg) and focuses its search box: an
// element whose label says "search", tapped until an editable field has
// focus.
func SearchField(t *testing.T, d device.Device, app, pkg string) {
	t.Helper()
	if err := d.LaunchApp(ctx(t), app); err != nil {
		t.Fatal(err)
	}
	sc := waitPackage(t, d, pkg)
	if focused(sc) != nil {
		return
	}
	var box *scene.Element
	for i := range sc.Elements {
		if e := &sc.Elements[i]; strings.Contains(strings.ToLower(e.Label()), "search") {
			box = e
			break
		}
	}
	if box == nil {
		t.Fatalf("%s shows no search box: %v", app, labels(sc))
	}
	x, y := box.Bounds.Center()
	if err := d.Tap(ctx(t), x, y); err != nil {
		t.Fatal(err)
	}
	waitScene(t, d, "a focused search field", func(sc *scene.Scene) bool { return focused(sc) != nil })
}
