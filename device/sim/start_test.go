package sim

import (
	"context"
	"errors"
	"strings"
	"testing"

	"phonepilot/device"
)

func TestStartAppliedByNewAndReset(t *testing.T) {
	st := Start{
		Wifi: boolPtr(false), Bluetooth: boolPtr(true), Airplane: boolPtr(true), DarkTheme: boolPtr(true),
		Contacts: []StartContact{{Name: "Zoe Park", Phone: "555-0301"}, {Name: "Adam Li", Phone: "555-0302"}},
		Alarms:   []StartAlarm{{Hour: 19, Minute: 5, Enabled: true}, {Hour: 6, Minute: 40}},
		Messages: []StartMessage{{With: "Ann", Text: "hi"}, {With: "Ben", Text: "yo"}, {With: "Ann", Text: "hello back", Out: true}},
		Cart:     []string{"Desk lamp", "Desk lamp", "Notebook A5"},
	}
	p := newTestPhone(t, Config{Start: st})
	check := func(when string) {
		t.Helper()
		s := stateOf(t, p)
		set := s["settings"].(map[string]any)
		if set["wifi"] != false || set["bluetooth"] != true || set["airplane_mode"] != true || set["dark_theme"] != true {
			t.Errorf("%s: settings %v", when, set)
		}
		cs := s["contacts"].(map[string]any)["contacts"].([]any)
		if len(cs) != 2 || cs[0].(map[string]any)["name"] != "Adam Li" || cs[1].(map[string]any)["name"] != "Zoe Park" {
			t.Errorf("%s: contacts %v, want the Start's two sorted by name", when, cs)
		}
		al := s["clock"].(map[string]any)["alarms"].([]any)
		if len(al) != 2 || al[0].(map[string]any)["hour"] != 6.0 || al[1].(map[string]any)["enabled"] != true {
			t.Errorf("%s: alarms %v, want 6:40 off then 19:05 on", when, al)
		}
		convs := s["messages"].(map[string]any)["conversations"].([]any)
		if strings.Join(strs(convs), ",") != "Ann,Ben,"+injSender {
			t.Errorf("%s: conversations %v, want Ann, Ben and the steering one", when, convs)
		}
		cart := s["taobao"].(map[string]any)["cart"].([]any)
		if len(cart) != 2 || cart[0].(map[string]any)["title"] != "Desk lamp" || cart[0].(map[string]any)["qty"] != 2.0 {
			t.Errorf("%s: cart %v, want two Desk lamps and a notebook", when, cart)
		}
	}
	check("new")
	// Change everything the Start set, then Reset.
	sh(t, p, "settings put global wifi_on 1; settings put global bluetooth_on 0")
	v := &drive{t: t, d: p.Device()}
	v.launch("Contacts")
	v.tapID(ctid("floating_action_button"))
	v.typeText("Extra One")
	v.tapID(ctid("editor_menu_save_button"))
	p.Reset()
	check("after Reset")
}

func TestStartShowsOnScreen(t *testing.T) {
	v := newDrive(t, Config{Start: Start{
		Contacts: []StartContact{{Name: "Zoe Park", Phone: "555-0301"}},
		Messages: []StartMessage{{With: "Ann", Text: "Lunch tomorrow?"}},
		Cart:     []string{"Desk lamp"},
	}})
	v.launch("Contacts")
	if !v.has("Zoe Park") || v.has("Alice Chen") {
		t.Errorf("contacts list: %s", v.labels())
	}
	v.launch("Messages")
	if !v.has("Ann") || !v.has("Lunch tomorrow?") || v.has("Mom") {
		t.Errorf("messages list: %s", v.labels())
	}
	v.launch("Taobao")
	v.tapID(tbid("poplayer_close"))
	v.tapID(tbid("tab_cart"))
	if !v.has("Desk lamp") || !v.has("Checkout (1)") {
		t.Errorf("cart: %s", v.labels())
	}
}

func TestStartUninstalled(t *testing.T) {
	p := newTestPhone(t, Config{Start: Start{Uninstalled: []string{"淘宝", "Clock"}}})
	ctx := context.Background()
	for _, name := range []string{"Taobao", "com.taobao.taobao", "时钟"} {
		if err := p.Device().LaunchApp(ctx, name); !errors.Is(err, device.ErrAppNotFound) {
			t.Errorf("launch %s: %v, want ErrAppNotFound", name, err)
		}
	}
	v := &drive{t: t, d: p.Device()}
	if v.has("Taobao") || v.has("Clock") || !v.has("Settings") {
		t.Errorf("launcher: %s", v.labels())
	}
	out, _, _ := sh(t, p, "pm list packages")
	if strings.Contains(out, taobaoPkg) || strings.Contains(out, deskClockPkg) || !strings.Contains(out, contactsPkg) {
		t.Errorf("pm list packages:\n%s", out)
	}
	if _, _, rc := sh(t, p, "monkey -p com.taobao.taobao 1"); rc == 0 {
		t.Error("monkey started an uninstalled app")
	}
	s := stateOf(t, p)
	if _, ok := s["taobao"]; ok {
		t.Error("state has a taobao section for an uninstalled Taobao")
	}
	var want []string // every installed app but the two uninstalled, in launcher order
	for _, sa := range installedApps {
		if sa.pkg != taobaoPkg && sa.pkg != deskClockPkg {
			want = append(want, sa.pkg)
		}
	}
	if got := strings.Join(strs(s["installed"].([]any)), ","); len(want) < 3 || got != strings.Join(want, ",") {
		t.Errorf("installed = %s, want %s", got, strings.Join(want, ","))
	}
	// pm clear rebuilds the right app though the list is shorter.
	sh(t, p, "settings put global bluetooth_on 1")
	if _, _, rc := sh(t, p, "pm clear com.android.settings"); rc != 0 {
		t.Fatal("pm clear com.android.settings failed")
	}
	s = stateOf(t, p)
	if _, ok := s["settings"].(map[string]any)["bluetooth"]; !ok || s["settings"].(map[string]any)["bluetooth"] != false {
		t.Errorf("after pm clear settings: %v", s["settings"])
	}
	if _, ok := s["contacts"]; !ok {
		t.Error("pm clear settings lost Contacts")
	}
}

func TestStartValidate(t *testing.T) {
	cases := []struct {
		st   Start
		want string
	}{
		{Start{Alarms: []StartAlarm{{Hour: 24}}}, "Alarms[0]"},
		{Start{Alarms: []StartAlarm{{Hour: 7, Minute: 60}}}, "Alarms[0]"},
		{Start{Contacts: []StartContact{{Name: "A"}, {}}}, "Contacts[1]"},
		{Start{Messages: []StartMessage{{With: "Ann"}}}, "Messages[0]"},
		{Start{Uninstalled: []string{"WeChat"}}, `Uninstalled[0] "WeChat"`},
		{Start{Cart: []string{" "}}, "Cart[0]"},
	}
	for _, c := range cases {
		_, err := New(Config{Start: c.st})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New with %+v: %v, want an error naming %s", c.st, err, c.want)
		}
	}
	if _, err := New(Config{Start: Start{Contacts: []StartContact{}}}); err != nil {
		t.Errorf("an empty address book: %v", err)
	}
}

// ResultTitles are the titles the results page shows, in both locales.
func TestResultTitlesMatchTheScreen(t *testing.T) {
	for _, loc := range []string{"en", "zh"} {
		v := newDrive(t, Config{Locale: loc})
		v.searchTaobao("Kindle")
		want := ResultTitles(loc, "Kindle")
		if len(want) != 20 {
			t.Fatalf("%s: %d titles", loc, len(want))
		}
		sc := v.scene()
		var shown []string
		for _, e := range sc.Elements {
			if e.ResourceID == tbid("item_title") && sc.Visible(e) {
				shown = append(shown, e.Text)
			}
		}
		if len(shown) < 2 || shown[0] != want[0] || shown[1] != want[1] {
			t.Errorf("%s: screen shows %q, ResultTitles starts %q", loc, shown, want[:2])
		}
	}
	if ResultTitles("en", " ") != nil {
		t.Error("titles for an empty query")
	}
}

func boolPtr(v bool) *bool { return &v }

func strs(vs []any) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.(string))
	}
	return out
}
