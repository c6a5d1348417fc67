package apps

import (
	"testing"
	"unicode/utf8"
)

func TestAppTable(t *testing.T) {
	if len(Known) < 60 {
		t.Errorf("Known has %d apps; want at least 60", len(Known))
	}
	seen := map[string]string{}
	withChinese := 0
	for _, a := range Known {
		if len(a.Names) == 0 || len(a.Packages) == 0 {
			t.Errorf("incomplete entry %+v", a)
		}
		hasZh := false
		for _, n := range a.Names {
			key := Key(n)
			if prev, dup := seen[key]; dup {
				t.Errorf("name %q used by both %s and %s", n, prev, a.Packages[0])
			}
			seen[key] = a.Packages[0]
			for _, r := range n {
				if r > utf8.RuneSelf && r >= 0x4e00 && r <= 0x9fff {
					hasZh = true
				}
			}
		}
		if hasZh {
			withChinese++
		}
		for _, p := range a.Packages {
			if !LooksLikePackage(p) {
				t.Errorf("%q is not a package name", p)
			}
		}
	}
	if withChinese < 40 {
		t.Errorf("only %d apps have a Chinese name", withChinese)
	}
	for name, pkg := range map[string]string{
		"Taobao": "com.taobao.taobao", "淘宝": "com.taobao.taobao", "JD": "com.jingdong.app.mall", "京东": "com.jingdong.app.mall",
		"WeChat": "com.tencent.mm", "微信": "com.tencent.mm", "alipay": "com.eg.android.AlipayGphone", "支付宝": "com.eg.android.AlipayGphone",
		"Meituan": "com.sankuai.meituan", "美团": "com.sankuai.meituan", "Settings": "com.android.settings", "设置": "com.android.settings",
		"chrome": "com.android.chrome", "You Tube": "com.google.android.youtube", "google-maps": "com.google.android.apps.maps",
	} {
		a, ok := Lookup(name)
		if !ok || a.Packages[0] != pkg {
			t.Errorf("Lookup(%q) = %+v, %t; want %s", name, a, ok, pkg)
		}
	}
	if _, ok := Lookup("Nonexistent"); ok {
		t.Error("Lookup found a nonexistent app")
	}
}

func TestInFront(t *testing.T) {
	for _, c := range []struct {
		pkg, app string
		want     bool
	}{
		{"com.taobao.taobao", "Taobao", true},
		{"com.taobao.taobao", "淘宝", true},
		{"com.taobao.taobao", "com.taobao.taobao", true},
		{"com.jingdong.app.mall", "JD.com", true},
		{"com.android.contacts", "通讯录", true}, // a name no package spells: the table knows it
		{"com.google.android.apps.messaging", "信息", true},
		{"com.android.settings", "Taobao", false},
		{"com.taobao.idlefish", "Taobao", false}, // Xianyu is not Taobao, though its package says taobao
		{"md.obsidian", "Obsidian", true},
		{"org.example.notes", "Notes", true}, // not in the table: a package segment spells it
		{"org.example.notes", "com.example.notes", false},
		{"com.android.contacts", "com.google.android.contacts", true}, // the same app, another build
		{"com.android.settings", "com.google.android.contacts", false},
		{"", "Taobao", false},
		{"com.taobao.taobao", "", false},
	} {
		if got := InFront(c.pkg, c.app); got != c.want {
			t.Errorf("InFront(%q, %q) = %t; want %t", c.pkg, c.app, got, c.want)
		}
	}
}

// Every app said to have a search is in the table (a name the table does
// not know would silently drop out of CanSearch).
func TestSearchAppsAreKnown(t *testing.T) {
	for _, n := range withSearch {
		if _, ok := Lookup(n); !ok {
			t.Errorf("%q has a search but is not in the table", n)
		}
	}
	if !CanSearch("com.android.settings") || CanSearch("com.google.android.deskclock") {
		t.Error("Settings can search, Clock cannot")
	}
}
