package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb"
	"phonepilot/internal/clock"
	"phonepilot/perception/frame"
	"phonepilot/scene"
)

func TestTaobaoPurchaseFlow(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("com.taobao.taobao")
	if !v.has("Double 11 red packet") {
		t.Fatalf("no launch promotion: %s", v.labels())
	}
	// the promotion blocks the page beneath it
	v.tapID("com.taobao.taobao:id/home_searchbar")
	if dig(v.state(), "taobao", "screen") != "home" {
		t.Fatal("a tap went through the promotion")
	}
	v.tapID("com.taobao.taobao:id/poplayer_close")
	v.searchTaobaoFromHome("Mac mini")
	sc := v.scene()
	first := findID(sc, "com.taobao.taobao:id/item_title")
	price := findID(sc, "com.taobao.taobao:id/item_price")
	if first == nil || !strings.HasPrefix(first.Text, "Mac mini") || !strings.HasPrefix(price.Text, "¥") {
		t.Fatalf("results: %s", v.labels())
	}
	// results are derived from the query: the same query, the same list
	again := newDrive(t, Config{})
	again.searchTaobao("Mac mini")
	if got := findID(again.scene(), "com.taobao.taobao:id/item_title").Text; got != first.Text {
		t.Errorf("same query gave %q then %q", first.Text, got)
	}
	// scrolling the results shows further products
	before := first.Text
	if err := v.d.Swipe(context.Background(), 540, 2000, 540, 700, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := findID(v.scene(), "com.taobao.taobao:id/item_title").Text; got == before {
		t.Errorf("swipe did not scroll the results (first title still %q)", got)
	}
	v.tapID("com.taobao.taobao:id/search_item")
	if dig(v.state(), "taobao", "screen") != "detail" {
		t.Fatalf("tap on a result did not open its detail: %v", v.state()["taobao"])
	}
	v.tapLabel("Add to cart")
	if !v.has("Added to cart") {
		t.Errorf("no toast after Add to cart")
	}
	cart, _ := dig(v.state(), "taobao", "cart").([]any)
	if len(cart) != 1 {
		t.Fatalf("cart = %v, want one item", cart)
	}
	v.tapLabel("Buy now")
	if dig(v.state(), "taobao", "screen") != "payment" {
		t.Fatal("Buy now did not open the payment confirmation")
	}
	// the cashier is FLAG_SECURE
	if _, err := v.d.Capture(context.Background()); !errors.Is(err, frame.ErrSecure) {
		t.Errorf("Capture on payment = %v, want frame.ErrSecure", err)
	}
	if _, errOut, rc := sh(t, v.d.p, "screencap -p"); rc == 0 || !strings.Contains(errOut, "Status: -1") {
		t.Errorf("screencap on payment rc=%d %q", rc, errOut)
	}
	// …and says so: in the Scene (the safety gate reads it) and in dumpsys
	// window, where the adb driver reads it on a real phone.
	if !v.scene().Secure {
		t.Errorf("the payment screen's Scene is not marked secure")
	}
	if out, _, _ := sh(t, v.d.p, "dumpsys window windows"); !adb.FocusedWindowSecure([]byte(out)) {
		t.Errorf("dumpsys window does not show the payment window with FLAG_SECURE:\n%s", out)
	}
	v.tapLabel("Pay now")
	if v.scene().Secure {
		t.Errorf("the screen after paying is still marked secure")
	}
	if out, _, _ := sh(t, v.d.p, "dumpsys window windows"); adb.FocusedWindowSecure([]byte(out)) {
		t.Errorf("dumpsys window shows FLAG_SECURE after paying:\n%s", out)
	}
	orders, _ := dig(v.state(), "taobao", "orders").([]any)
	if len(orders) != 1 || !v.has("Payment successful") {
		t.Fatalf("orders after paying: %v; screen %s", orders, v.labels())
	}
	// back twice: detail, results
	v.tapLabel("Done")
	if err := v.d.Key(context.Background(), device.KeyBack); err != nil {
		t.Fatal(err)
	}
	if dig(v.state(), "taobao", "screen") != "results" {
		t.Errorf("back from detail: %v", dig(v.state(), "taobao", "screen"))
	}
}

func (v *drive) searchTaobaoFromHome(q string) {
	v.t.Helper()
	v.tapID("com.taobao.taobao:id/home_searchbar")
	v.typeText(q)
	if err := v.d.Key(context.Background(), device.KeyEnter); err != nil {
		v.t.Fatal(err)
	}
	st := v.state()
	if dig(st, "taobao", "last_search") != q || dig(st, "taobao", "screen") != "results" {
		v.t.Fatalf("search %q: state %v", q, st["taobao"])
	}
}

func TestTaobaoCartCheckout(t *testing.T) {
	v := newDrive(t, Config{Locale: "zh"})
	v.searchTaobao("蓝牙耳机")
	v.tapID("com.taobao.taobao:id/search_item")
	v.tapLabel("加入购物车")
	v.tapLabel("加入购物车")
	v.d.Key(context.Background(), device.KeyBack)
	v.d.Key(context.Background(), device.KeyBack)
	v.tapID("com.taobao.taobao:id/tab_cart")
	if !v.has("购物车(2)") {
		t.Fatalf("cart title: %s", v.labels())
	}
	v.tapLabel("结算(2)")
	v.tapLabel("立即付款")
	st := v.state()
	if cart, _ := dig(st, "taobao", "cart").([]any); len(cart) != 0 {
		t.Errorf("cart after checkout: %v", cart)
	}
	orders, _ := dig(st, "taobao", "orders").([]any)
	if len(orders) != 1 {
		t.Fatalf("orders: %v", orders)
	}
	items := orders[0].(map[string]any)["items"].([]any)
	if items[0].(map[string]any)["qty"].(float64) != 2 {
		t.Errorf("order items %v, want qty 2", items)
	}
}

// Add to cart's "Added to cart" is in the toast queue, with Taobao's
// package, for the toast's 2 s: Device.Toasts reads it, and so does the adb
// driver from `dumpsys notification`; after it, the queue is empty.
func TestToastQueue(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC))
	v := newDrive(t, Config{Clock: clk})
	v.searchTaobao("Kindle")
	v.tapID("com.taobao.taobao:id/search_item")
	ts, err := v.d.Toasts(context.Background())
	if err != nil || len(ts) != 0 {
		t.Fatalf("toasts on the product page: %v, %v; want none", ts, err)
	}
	v.tapLabel("Add to cart")
	want := []device.Toast{{Package: "com.taobao.taobao", Text: "Added to cart"}}
	for _, at := range []time.Duration{0, 1900 * time.Millisecond} {
		clk.Advance(at)
		if ts, err := v.d.Toasts(context.Background()); err != nil || !reflect.DeepEqual(ts, want) {
			t.Errorf("%s after Add to cart: Toasts %v, %v; want %v", at, ts, err, want)
		}
		out, _, _ := sh(t, v.d.p, "dumpsys notification")
		if got := adb.ParseToasts([]byte(out)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after Add to cart: dumpsys notification read as %v; want %v:\n%s", at, got, want, out)
		}
	}
	clk.Advance(200 * time.Millisecond)
	if ts, _ := v.d.Toasts(context.Background()); len(ts) != 0 {
		t.Errorf("toasts 2.1 s after Add to cart: %v; want none", ts)
	}
	if out, _, _ := sh(t, v.d.p, "dumpsys notification"); strings.Contains(out, "Toast Queue") {
		t.Errorf("dumpsys notification 2.1 s after Add to cart:\n%s", out)
	}
}

func TestSettingsToggles(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("Settings")
	v.tapLabel("Network & internet")
	v.tapLabel("Wi‑Fi")
	v.d.Key(context.Background(), device.KeyBack)
	v.tapLabel("Connected devices")
	v.tapLabel("Use Bluetooth")
	v.d.Key(context.Background(), device.KeyBack)
	if v.has("About phone") {
		t.Fatal("About phone visible without scrolling; the list is too short")
	}
	v.d.Swipe(context.Background(), 540, 1900, 540, 1500, 300*time.Millisecond)
	v.tapLabel("Display")
	v.tapLabel("Dark theme")
	st := v.state()
	if dig(st, "settings", "wifi") != false || dig(st, "settings", "bluetooth") != true || dig(st, "settings", "dark_theme") != true {
		t.Errorf("settings state %v, want wifi off, bluetooth on, dark theme on", st["settings"])
	}
	sc := v.scene()
	sw := findID(sc, "android:id/switch_widget")
	if sw == nil || !sw.Checked {
		t.Errorf("dark theme switch not shown checked")
	}
	// the status bar shows Bluetooth and no Wi‑Fi
	if findID(sc, "com.android.systemui:id/bluetooth") == nil || findID(sc, "com.android.systemui:id/wifi_signal") != nil {
		t.Errorf("status bar icons do not follow the toggles")
	}
}

func TestContactsAdd(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("com.android.contacts")
	v.tapLabel("Create contact") // content-desc of the FAB
	v.typeText("Zoe Park")
	v.tapID("com.android.contacts:id/phone_edit")
	v.typeText("555-0199")
	v.tapLabel("Save")
	if !v.has("Zoe Park") || !v.has("555-0199") {
		t.Fatalf("detail after save: %s", v.labels())
	}
	list, _ := dig(v.state(), "contacts", "contacts").([]any)
	found := false
	for _, c := range list {
		m := c.(map[string]any)
		found = found || (m["name"] == "Zoe Park" && m["phone"] == "555-0199")
	}
	if !found {
		t.Errorf("contacts state lacks the new contact: %v", list)
	}
	v.d.Key(context.Background(), device.KeyBack)
	if !v.has("Zoe Park") {
		t.Errorf("list lacks the new contact: %s", v.labels())
	}
}

func TestMessagesSend(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("Messages")
	v.tapLabel("Start chat")
	v.typeText("bob martinez")
	v.tapID("com.google.android.apps.messaging:id/compose_message_text")
	v.typeText("Running late")
	v.tapLabel("Send SMS")
	sent, _ := dig(v.state(), "messages", "sent").([]any)
	if len(sent) != 1 {
		t.Fatalf("sent = %v", sent)
	}
	m := sent[0].(map[string]any)
	if m["to"] != "Bob Martinez" || m["text"] != "Running late" {
		t.Errorf("sent %v, want to Bob Martinez (resolved from the contact) 'Running late'", m)
	}
	if !v.has("Running late") || dig(v.state(), "messages", "screen") != "conversation" {
		t.Errorf("conversation not shown: %s", v.labels())
	}
}

func TestClockAlarms(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("Clock")
	v.tapLabel("Add alarm")
	v.typeText("6")
	v.tapID("com.google.android.deskclock:id/material_minute_text_input")
	v.typeText("45")
	v.tapLabel("OK")
	alarms, _ := dig(v.state(), "clock", "alarms").([]any)
	if len(alarms) != 3 {
		t.Fatalf("alarms %v", alarms)
	}
	a := alarms[0].(map[string]any)
	if a["hour"].(float64) != 6 || a["minute"].(float64) != 45 || a["enabled"] != true {
		t.Errorf("first alarm %v, want 6:45 enabled", a)
	}
	if !v.has("6:45 AM") {
		t.Errorf("6:45 AM not listed: %s", v.labels())
	}
	// the switch turns an alarm off
	v.tapLabel("Alarm 6:45 AM")
	alarms, _ = dig(v.state(), "clock", "alarms").([]any)
	if alarms[0].(map[string]any)["enabled"] != false {
		t.Errorf("switch did not turn the alarm off")
	}
}

func TestLaunchByLabelInEitherLocale(t *testing.T) {
	for _, name := range []string{"Taobao", "taobao", "淘宝", "com.taobao.taobao"} {
		v := newDrive(t, Config{Locale: "en"})
		if err := v.d.LaunchApp(context.Background(), name); err != nil {
			t.Errorf("LaunchApp(%q): %v", name, err)
			continue
		}
		if sc := v.scene(); sc.Package != "com.taobao.taobao" {
			t.Errorf("LaunchApp(%q) put %s in front", name, sc.Package)
		}
	}
	v := newDrive(t, Config{Locale: "zh"})
	for _, l := range []string{"淘宝", "设置", "通讯录", "信息", "时钟"} {
		if !v.has(l) {
			t.Errorf("zh launcher lacks %q: %s", l, v.labels())
		}
	}
	if err := v.d.LaunchApp(context.Background(), "Settings"); err != nil {
		t.Errorf("English label on a zh phone: %v", err)
	}
	if err := v.d.LaunchApp(context.Background(), "微信"); !errors.Is(err, device.ErrAppNotFound) {
		t.Errorf("unknown app: %v", err)
	}
}

func TestBackStackAndAppSwitch(t *testing.T) {
	v := newDrive(t, Config{})
	ctx := context.Background()
	v.searchTaobao("shoes")
	v.d.Key(ctx, device.KeyHome)
	v.launch("Settings")
	v.d.Key(ctx, device.KeyAppSwitch)
	sc := v.scene()
	if sc.Activity != recentsActivity {
		t.Fatalf("APP_SWITCH shows %s/%s", sc.Package, sc.Activity)
	}
	v.tapLabel("Taobao")
	// a warm start keeps the back stack: still on the results, no promotion
	st := v.state()
	if st["foreground"] != "com.taobao.taobao" || dig(st, "taobao", "screen") != "results" || dig(st, "taobao", "popup") != false {
		t.Errorf("after switching back: %v %v", st["foreground"], st["taobao"])
	}
	v.d.Key(ctx, device.KeyBack)
	v.d.Key(ctx, device.KeyBack)
	if st := v.state(); st["foreground"] != launcherPkg {
		t.Errorf("back past the root left %v in front", st["foreground"])
	}
}

func TestLongPressAndNavBar(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("Settings")
	sc := v.scene()
	row := findLabel(sc, "Network & internet")
	x, y := row.Bounds.Center()
	// a long press on a row without a long-press action clicks on release
	if err := v.d.LongPress(context.Background(), x, y, time.Second); err != nil {
		t.Fatal(err)
	}
	if !v.has("Airplane mode") {
		t.Fatalf("long press did not open the row: %s", v.labels())
	}
	// the navigation bar's Back button
	v.tapElem(findLabel(v.scene(), "Back"), "nav back")
	if v.has("Airplane mode") {
		t.Errorf("nav-bar Back did not go back")
	}
}

func TestControlHandler(t *testing.T) {
	p := newTestPhone(t, Config{})
	srv := httptest.NewServer(p.ControlHandler())
	defer srv.Close()
	p.Device().LaunchApp(context.Background(), "Settings")
	res, err := http.Get(srv.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(b.String(), `"foreground":"com.android.settings"`) {
		t.Fatalf("GET /state: %d %s", res.StatusCode, b.String())
	}
	res, err = http.Post(srv.URL+"/reset", "", nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST /reset: %v %v", res, err)
	}
	res.Body.Close()
	if st := stateOf(t, p); st["foreground"] != launcherPkg {
		t.Errorf("after reset foreground = %v", st["foreground"])
	}
	res, _ = http.Get(srv.URL + "/reset")
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /reset = %d, want 405", res.StatusCode)
	}
	res.Body.Close()
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{Locale: "fr"}, {Profile: "turbo"}, {Width: 10, Height: 10}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted a bad config", c)
		}
	}
}

// Four goroutines drive one phone at once (dumps, shell taps, screenshots,
// state and keys): every call answers as it would alone — a Scene or the
// transient error of a screen in motion, a decodable screenshot of the
// phone's size, a state that is JSON, keys and shell commands that succeed
// — and the phone is whole afterwards (go test -race checks the locking).
func TestConcurrentUse(t *testing.T) {
	p := newTestPhone(t, Config{Profile: "realistic", Seed: 3})
	d := p.Device()
	ctx := context.Background()
	w, h := p.Size()
	errs := make(chan error, 4*5*2)
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 5; i++ {
				switch g {
				case 0:
					if sc, err := d.Scene(ctx); err == nil && (sc.Width != w || len(sc.Elements) == 0) {
						errs <- fmt.Errorf("scene %dx%d with %d elements", sc.Width, sc.Height, len(sc.Elements))
					}
				case 1:
					if _, stderr, rc := sh(t, p, "input tap 540 1500 && uiautomator dump /sdcard/w.xml && cat /sdcard/w.xml > /dev/null"); rc != 0 && !strings.Contains(stderr, "ERROR") {
						errs <- fmt.Errorf("shell exit %d: %s", rc, stderr)
					}
				case 2:
					f, err := d.Capture(ctx)
					if err != nil {
						errs <- fmt.Errorf("capture: %w", err)
						continue
					}
					if cfg, err := png.DecodeConfig(bytes.NewReader(f.PNG())); err != nil || cfg.Width != w || cfg.Height != h {
						errs <- fmt.Errorf("screenshot %dx%d: %v", cfg.Width, cfg.Height, err)
					}
				case 3:
					if raw, err := p.State(); err != nil || !json.Valid(raw) {
						errs <- fmt.Errorf("state: %v %.80s", err, raw)
					}
					if err := d.Key(ctx, device.KeyHome); err != nil {
						errs <- fmt.Errorf("home: %w", err)
					}
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Whole afterwards: home goes home, and the screen reads.
	if err := d.Key(ctx, device.KeyHome); err != nil {
		t.Fatal(err)
	}
	var sc *scene.Scene
	var err error
	for range 20 {
		if sc, err = d.Scene(ctx); err == nil {
			break
		}
	}
	if err != nil || !strings.Contains(sc.Package, "launcher") {
		t.Errorf("after the concurrent use: %v, app in front %v", err, sc)
	}
}

func TestContactTextOpensMessages(t *testing.T) {
	v := newDrive(t, Config{})
	v.launch("Contacts")
	v.tapLabel("Carol Wang")
	v.tapLabel("Text")
	if sc := v.scene(); sc.Package != messagesPkg {
		t.Fatalf("Text opened %s", sc.Package)
	}
	v.typeText("Hi Carol")
	v.tapLabel("Send SMS")
	sent, _ := dig(v.state(), "messages", "sent").([]any)
	if len(sent) != 1 || sent[0].(map[string]any)["to"] != "Carol Wang" {
		t.Errorf("sent = %v", sent)
	}
}
