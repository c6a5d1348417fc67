package adb

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"

	"phonepilot/device"
)

// Excerpts of `dumpsys window` as different Android versions print it.
var windowDumps = []struct {
	name, out, pkg, act string
}{
	{"android 6", `
  mCurrentFocus=Window{41f0e2b8 u0 com.android.launcher/com.android.launcher2.Launcher}
  mFocusedApp=AppWindowToken{4209d3a0 token=Token{41ad4e28 ActivityRecord{41c0d9e0 u0 com.android.launcher/com.android.launcher2.Launcher t1}}}
`, "com.android.launcher", "com.android.launcher2.Launcher"},
	{"android 9", `
  mCurrentFocus=Window{f1c3b9e u0 com.tencent.mm/com.tencent.mm.ui.LauncherUI}
  mFocusedApp=AppWindowToken{3c5a2f3 token=Token{8a6e622 ActivityRecord{2d4b9ed u0 com.tencent.mm/.ui.LauncherUI t27}}}
`, "com.tencent.mm", "com.tencent.mm.ui.LauncherUI"},
	{"android 10 relative activity", `
    mCurrentFocus=Window{9e2c5a1 u0 com.android.settings/com.android.settings.SubSettings}
  mFocusedApp=ActivityRecord{d7a1c1b u0 com.android.settings/.SubSettings t334}
`, "com.android.settings", "com.android.settings.SubSettings"},
	{"android 13 notification shade over app", `
  mCurrentFocus=Window{2f0a5d4 u0 NotificationShade}
  mFocusedApp=ActivityRecord{61d1e0 u0 com.taobao.taobao/com.taobao.tao.welcome.Welcome t52}
`, "com.taobao.taobao", "com.taobao.tao.welcome.Welcome"},
	{"android 12 null focus", `
  mCurrentFocus=null
  mFocusedApp=ActivityRecord{5c0ffee u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity t2}
`, "com.google.android.apps.nexuslauncher", "com.google.android.apps.nexuslauncher.NexusLauncherActivity"},
	{"app window without activity", `
  mCurrentFocus=Window{7a7a7a7 u0 com.eg.android.AlipayGphone}
  mFocusedApp=ActivityRecord{1 u0 com.eg.android.AlipayGphone/com.eg.android.AlipayGphone.AlipayLogin t9}
`, "com.eg.android.AlipayGphone", "com.eg.android.AlipayGphone.AlipayLogin"},
	{"two displays", `
  mCurrentFocus=Window{aa u10 com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity}
  mFocusedApp=ActivityRecord{bb u10 com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity t4}
  mCurrentFocus=Window{cc u0 com.android.systemui/.Other}
`, "com.android.chrome", "org.chromium.chrome.browser.ChromeTabbedActivity"},
	{"nothing", "WINDOW MANAGER WINDOWS (dumpsys window windows)\n", "", ""},
}

func TestParseWindowFocus(t *testing.T) {
	for _, c := range windowDumps {
		got := ParseWindowFocus([]byte(c.out))
		if got.Package != c.pkg || got.Activity != c.act {
			t.Errorf("%s: got %s/%s; want %s/%s", c.name, got.Package, got.Activity, c.pkg, c.act)
		}
	}
}

func TestParseResumedActivity(t *testing.T) {
	cases := []struct {
		name, out, pkg, act string
	}{
		{"android 9", `
    mResumedActivity: ActivityRecord{7ee8f9b u0 com.android.settings/.Settings t27}
    mLastPausedActivity: ActivityRecord{1 u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity t1}
`, "com.android.settings", "com.android.settings.Settings"},
		{"android 11", `
  topResumedActivity=ActivityRecord{3a9c1e u0 com.jingdong.app.mall/.main.MainActivity t88}
  mLastResumedActivity: ActivityRecord{2 u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity t1}
`, "com.jingdong.app.mall", "com.jingdong.app.mall.main.MainActivity"},
		{"android 13", `
    ResumedActivity: ActivityRecord{c0ffee u0 com.sankuai.meituan/com.meituan.android.pt.homepage.activity.MainActivity t101}
`, "com.sankuai.meituan", "com.meituan.android.pt.homepage.activity.MainActivity"},
		{"android 7 focused activity", `
  mFocusedActivity: ActivityRecord{9 u0 com.android.chrome/com.google.android.apps.chrome.Main t3}
`, "com.android.chrome", "com.google.android.apps.chrome.Main"},
		{"none", "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n", "", ""},
	}
	for _, c := range cases {
		got := ParseResumedActivity([]byte(c.out))
		if got.Package != c.pkg || got.Activity != c.act {
			t.Errorf("%s: got %s/%s; want %s/%s", c.name, got.Package, got.Activity, c.pkg, c.act)
		}
	}
}

func TestParseWMSize(t *testing.T) {
	cases := []struct {
		out       string
		w, h      int
		overriden bool
		err       bool
	}{
		{"Physical size: 1080x2400\n", 1080, 2400, false, false},
		{"Physical size: 1440x3200\nOverride size: 1080x2400\n", 1080, 2400, true, false},
		{"Override size: 720x1280\r\nPhysical size: 1080x1920\r\n", 720, 1280, true, false},
		{"", 0, 0, false, true},
		{"Error: no display\n", 0, 0, false, true},
	}
	for _, c := range cases {
		got, err := ParseWMSize([]byte(c.out))
		if c.err {
			if err == nil {
				t.Errorf("ParseWMSize(%q) = %+v; want error", c.out, got)
			}
			continue
		}
		if err != nil || got.Width != c.w || got.Height != c.h || got.Overridden != c.overriden {
			t.Errorf("ParseWMSize(%q) = %+v, %v; want %dx%d override=%t", c.out, got, err, c.w, c.h, c.overriden)
		}
	}
}

// pngChunk builds a chunk with a correct CRC.
func pngChunk(typ string, data []byte) []byte {
	b := make([]byte, 8, 12+len(data))
	binary.BigEndian.PutUint32(b, uint32(len(data)))
	copy(b[4:], typ)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

func TestCheckPNG(t *testing.T) {
	good := noisyPNG(t, 33, 47)
	if w, h, err := CheckPNG(good); err != nil || w != 33 || h != 47 {
		t.Fatalf("CheckPNG(good) = %d, %d, %v", w, h, err)
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, 10)
	binary.BigEndian.PutUint32(ihdr[4:], 20)
	ihdr[8], ihdr[9] = 8, 6
	zeroSize := append([]byte{}, pngSignature...)
	zeroSize = append(zeroSize, pngChunk("IHDR", make([]byte, 13))...)
	zeroSize = append(zeroSize, pngChunk("IEND", nil)...)
	noIEND := append(append([]byte{}, pngSignature...), pngChunk("IHDR", ihdr)...)
	badCRC := append([]byte{}, good...)
	badCRC[len(badCRC)-1] ^= 0xff
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "signature"},
		{"wrong signature", append([]byte("\x89PNX\r\n\x1a\n"), good[8:]...), "signature"},
		{"text", []byte("Status: -1"), "signature"},
		{"truncated by one byte", good[:len(good)-1], "truncated"},
		{"truncated mid-data", good[:len(good)/2], "truncated"},
		{"header only", good[:33], "truncated"},
		{"no IHDR", append(append([]byte{}, pngSignature...), pngChunk("IEND", nil)...), "IHDR"},
		{"zero size", zeroSize, "size"},
		{"no IEND", noIEND, "IEND"},
		{"bad IEND crc", badCRC, "checksum"},
		{"trailing junk", append(append([]byte{}, good...), "\r\n"...), "stray"},
	}
	for _, c := range cases {
		_, _, err := CheckPNG(c.b)
		if !errors.Is(err, ErrBadPNG) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckPNG = %v; want ErrBadPNG mentioning %q", c.name, err, c.want)
		}
	}
}

func TestQuoteRoundTripsThroughSh(t *testing.T) {
	for _, s := range []string{
		"plain", "", "with space", `Mac mini & "quotes" $HOME; rm -rf /`, "it's", "''", `\`, "a'b\"c`d$(e)",
		"tab\there", "*?[]{}~#!", "com.android.adbkeyboard/.AdbIME",
	} {
		words, meta := shSplit("cmd " + Quote(s))
		if meta || len(words) != 2 || words[1] != s {
			t.Errorf("Quote(%q) = %s → sh gives %q (unquoted meta %t)", s, Quote(s), words, meta)
		}
	}
}

func TestInputTextChunks(t *testing.T) {
	for _, s := range []string{
		"hello world", "100%sure", "%s", "a %s b", "% s", "%%s%", strings.Repeat("ab %s ", 100),
		strings.Repeat("x", 1000), `Mac mini & "quotes" $HOME; rm -rf /`,
	} {
		chunks := inputTextChunks(s)
		var got strings.Builder
		for _, c := range chunks {
			if strings.Contains(c, " ") {
				t.Errorf("chunk %q of %q has a raw space", c, s)
			}
			if len(c) > inputTextChunk+2 {
				t.Errorf("chunk of %d bytes for %q", len(c), s)
			}
			got.WriteString(inputTextDecode(c))
		}
		if got.String() != s {
			t.Errorf("chunks %q of %q decode to %q", chunks, s, got.String())
		}
	}
}

func TestASCIITypeable(t *testing.T) {
	for s, want := range map[string]bool{
		"Mac mini & $HOME": true, "": true, "~": true,
		"苹果电脑": false, "🍎": false, "line\nbreak": false, "tab\t": false, "café": false,
	} {
		if got := asciiTypeable(s); got != want {
			t.Errorf("asciiTypeable(%q) = %t", s, got)
		}
	}
}

func TestResolveApp(t *testing.T) {
	installed := []string{"com.android.settings", "com.android.chrome", "org.mozilla.firefox", "com.example.notes", "com.other.notes", "com.google.android.apps.photos"}
	cases := []struct{ app, want, err string }{
		{"Settings", "com.android.settings", ""},
		{"com.android.chrome", "com.android.chrome", ""},
		{"Firefox", "org.mozilla.firefox", ""},
		{"Gallery", "com.google.android.apps.photos", ""},
		{"notes", "", "several"},
		{"Taobao", "", "not installed"},
		{"com.not.there", "", "not installed"},
		{"Quux", "", "no installed app"},
	}
	for _, c := range cases {
		got, err := ResolveApp(c.app, installed)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ResolveApp(%q) = %q, %v; want error with %q", c.app, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ResolveApp(%q) = %q, %v; want %q", c.app, got, err, c.want)
		}
	}
	// Not installed: still device.ErrAppNotFound, naming the closest
	// installed apps by the table's names.
	for app, want := range map[string]string{"Setings": "Settings (com.android.settings)", "FireFox Beta": "Firefox (org.mozilla.firefox)",
		"Quux": "no installed app has a name close to"} {
		_, err := ResolveApp(app, installed)
		if !errors.Is(err, device.ErrAppNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveApp(%q) = %v; want device.ErrAppNotFound naming %q", app, err, want)
		}
	}
}

func TestParseToasts(t *testing.T) {
	cases := []struct {
		name, out string
		want      []device.Toast
	}{
		{"android 11+ text toast", `Current Notification Manager state:
  Toast Queue:
    TextToastRecord{9f1c2a 4321:com.taobao.taobao/u0a123 token=android.os.BinderProxy@5e6f7a text=已加入购物车 duration=0}
    TextToastRecord{1b2c3d 987:com.android.settings/1000 token=android.os.Binder@11 text=Wi-Fi off, duration=here duration=1}
  
  Notification List:
    NotificationRecord(0x0a1b2c3d: pkg=com.tencent.mm user=UserHandle{0} id=1 tag=null importance=4 key=0|com.tencent.mm|1|null|10234: Notification(channel=msg))
`, []device.Toast{{Package: "com.taobao.taobao", Text: "已加入购物车"}, {Package: "com.android.settings", Text: "Wi-Fi off, duration=here"}}},
		{"custom toast", `  Toast Queue:
    CustomToastRecord{77aa 555:com.jingdong.app.mall/u0a88 token=android.os.BinderProxy@1 duration=1}
`, []device.Toast{{Package: "com.jingdong.app.mall"}}},
		{"before android 11", `  Toast Queue:
    ToastRecord{c0ffee pkg=com.sankuai.meituan callback=android.app.ITransientNotification$Stub$Proxy@2 duration=0}
`, []device.Toast{{Package: "com.sankuai.meituan"}}},
		{"none", "Current Notification Manager state:\n  Notification List:\n    NotificationRecord(0x1: pkg=com.x user=UserHandle{0} id=1)\n", nil},
	}
	for _, c := range cases {
		if got := ParseToasts([]byte(c.out)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v; want %+v", c.name, got, c.want)
		}
	}
}
