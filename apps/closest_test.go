package apps

import (
	"strings"
	"testing"
)

func TestClosestNamesTheNearestInstalledApps(t *testing.T) {
	installed := []Installed{
		{Package: "com.taobao.taobao", Names: []string{"Taobao", "淘宝"}},
		{Package: "com.android.settings", Names: []string{"Settings", "设置"}},
		{Package: "com.android.contacts", Names: []string{"Contacts", "通讯录"}},
		{Package: "com.google.android.apps.messaging", Names: []string{"Messages", "信息"}},
		{Package: "com.google.android.deskclock", Names: []string{"Clock", "时钟"}},
	}
	cases := map[string]string{
		"Setings":        "com.android.settings",
		"settigns":       "com.android.settings",
		"Taobao app":     "com.taobao.taobao",
		"淘宝网":            "com.taobao.taobao",
		"Contact":        "com.android.contacts",
		"Message":        "com.google.android.apps.messaging",
		"Clocks":         "com.google.android.deskclock",
		"com.taobao.tao": "com.taobao.taobao",
	}
	for name, want := range cases {
		got := Closest(name, installed, 3)
		if len(got) == 0 || got[0].Package != want {
			t.Errorf("Closest(%q) = %v, want %s first", name, got, want)
		}
	}
	for _, far := range []string{"Bluetooth", "微信", "WeChat", "x"} {
		if got := Closest(far, installed, 3); len(got) != 0 {
			t.Errorf("Closest(%q) = %v; nothing installed is close", far, got)
		}
	}
	if s := ClosestText("Setings", installed); !strings.Contains(s, "Settings (com.android.settings)") {
		t.Errorf("ClosestText = %q", s)
	}
	if s := ClosestText("微信", installed); !strings.Contains(s, "no installed app") || !strings.Contains(s, "Clock (com.google.android.deskclock)") {
		t.Errorf("ClosestText for a far name = %q; want none close and the few installed listed", s)
	}
}
