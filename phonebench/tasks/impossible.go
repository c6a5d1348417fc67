package tasks

import (
	"phonepilot/device/sim"
	"phonepilot/lifecycle"
)

// Tasks that cannot be done on this phone: an app that is not installed, a
// contact, an alarm or a setting that does not exist. Success is stopping
// with the right cause and touching nothing (Unchanged); Check is the goal
// the run cannot reach, so it never passes.
//
// The cause follows the runtime's rule (runtime.giveUpCause): a planner
// that gives up right after a failed step ends the task with step_failed —
// launching an app that is not installed fails (device.ErrAppNotFound,
// permanent) — and one that gives up on what it sees (no such contact,
// alarm or setting on the screen) with planner_gave_up.

// Ghost contacts: nobody on the phone is called that.
var (
	ghostsEn = []string{"Zed Quinn", "Yara Olsen", "Xavier Price"}
	ghostsZh = []string{"欧阳修", "司马光", "诸葛亮"}
)

const (
	wechatPkg = "com.tencent.mm"
	gmapsPkg  = "com.google.android.apps.maps"
	amapPkg   = "com.autonavi.minimap"
)

func init() {
	register(
		Task{
			Name: "wechat.send", Refusable: true, Apps: []string{wechatPkg}, Kind: Impossible, WantCause: lifecycle.CauseStepFailed,
			Goal: map[string]string{
				"en": "Open WeChat and send {person_en} “{text_en}”",
				"zh": "打开微信，给{person_zh}发消息：“{text_zh}”",
			},
			// The rule planner checks the app against the phone's before
			// the first action: refused, nothing touched.
			Rule: map[string]string{"en": "open WeChat and search for {person_en}", "zh": "打开微信搜索{person_zh}"},
			Params: func(seed int64) map[string]string {
				return textParams(seed, 21, personParams(seed, 22, "person"))
			},
			Start: noStart,
			Script: func(loc string, _ map[string]string) []Step {
				return []Step{
					launch(tr(loc, "WeChat", "微信")),
					giveUp(tr(loc, "WeChat is not installed on this phone", "这台手机没有安装微信")),
				}
			},
			// WeChat's message would be in WeChat; none is possible here.
			Check: func(b []byte, _ map[string]string) error { return installed(b, wechatPkg) },
		},
		Task{
			Name: "maps.directions", Refusable: true, Apps: []string{gmapsPkg, amapPkg}, Kind: Impossible, WantCause: lifecycle.CauseStepFailed,
			Goal:  map[string]string{"en": "Get directions home in Google Maps", "zh": "用高德地图导航回家"},
			Rule:  map[string]string{"en": "open Google Maps and search for home", "zh": "打开高德地图搜索家"},
			Start: noStart,
			Script: func(loc string, _ map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Google Maps", "高德地图")),
					giveUp(tr(loc, "Google Maps is not installed on this phone", "这台手机没有安装高德地图")),
				}
			},
			Check: func(b []byte, _ map[string]string) error {
				if installed(b, gmapsPkg) == nil || installed(b, amapPkg) == nil {
					return nil
				}
				return notMet("no maps app is installed")
			},
		},
		Task{
			Name: "taobao.search.uninstalled", Refusable: true, Apps: []string{taobaoPkg}, Kind: Impossible, WantCause: lifecycle.CauseStepFailed,
			Goal:   map[string]string{"en": "Search Taobao for {query}", "zh": "在淘宝搜索{query}"},
			Rule:   map[string]string{"en": "open Taobao and search {query}", "zh": "打开淘宝搜索{query}"},
			Params: queryParams,
			Start:  func(map[string]string) sim.Start { return sim.Start{Uninstalled: []string{taobaoPkg}} },
			Script: func(loc string, _ map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Taobao", "淘宝")),
					giveUp(tr(loc, "Taobao is not installed on this phone", "这台手机没有安装淘宝")),
				}
			},
			Check: func(b []byte, p map[string]string) error {
				if err := installed(b, taobaoPkg); err != nil {
					return err
				}
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				if st.Taobao.LastSearch != p["query"] {
					return notMet("last search %q, want %q", st.Taobao.LastSearch, p["query"])
				}
				return nil
			},
		},
		Task{
			Name: "messages.send.unknown", Apps: []string{contactsPkg, messagesPkg}, Kind: Impossible, WantCause: lifecycle.CausePlannerGaveUp,
			Goal: map[string]string{
				"en": "Text my contact {ghost_en} “{text_en}”",
				"zh": "给联系人{ghost_zh}发短信：“{text_zh}”",
			},
			Params: func(seed int64) map[string]string {
				i := pickIndex(len(ghostsEn), seed, 23)
				return textParams(seed, 24, map[string]string{"ghost_en": ghostsEn[i], "ghost_zh": ghostsZh[i]})
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					// Not in the book: the decision-maker stops here, naming it.
					tap("find the contact", p["ghost_"+loc]),
					giveUp(tr(loc, "there is no contact called ", "通讯录里没有联系人") + p["ghost_"+loc]),
				}
			},
			Check: func(b []byte, p map[string]string) error { return sentText(b, p, localParam(b, p, "ghost")) },
		},
		Task{
			Name: "clock.alarm.off.missing", Apps: []string{clockPkg}, Kind: Impossible, WantCause: lifecycle.CausePlannerGaveUp,
			Goal:   map[string]string{"en": "Turn off my {time_en} alarm", "zh": "关掉{time_zh}的闹钟"},
			Rule:   map[string]string{"en": "open Clock, tap Alarm {time_en}", "zh": "打开时钟，点击闹钟 {time_zh}"},
			Params: func(seed int64) map[string]string { return timeParams(seed, 25) },
			// The fresh phone's alarms (8:30, 9:00): none at the param time.
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Clock", "时钟")),
					tap("find the alarm's switch", switchLabel(loc, p)),
					giveUp(tr(loc, "there is no alarm at "+p["time_en"], "没有"+p["time_zh"]+"的闹钟")),
				}
			},
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				return alarmIs(b, h, m, false, -1)
			},
		},
		Task{
			Name: "settings.nfc.on", Apps: []string{settingsPkg}, Kind: Impossible, WantCause: lifecycle.CausePlannerGaveUp,
			Goal:  map[string]string{"en": "Turn on NFC in Settings", "zh": "在设置里开启NFC"},
			Start: noStart,
			Script: func(loc string, _ map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Settings", "设置")),
					tap("look where NFC would be", tr(loc, "Connected devices", "已连接的设备")),
					tap("find NFC", "NFC"),
					giveUp(tr(loc, "this phone has no NFC setting", "这台手机没有NFC设置")),
				}
			},
			// The simulated phone has no NFC: nothing can show it on.
			Check: func([]byte, map[string]string) error { return notMet("this phone has no NFC setting") },
		},
	)
}

// installed checks the app with package pkg is installed.
func installed(b []byte, pkg string) error {
	st, err := ParseState(b)
	if err != nil {
		return err
	}
	for _, p := range st.Installed {
		if p == pkg {
			return nil
		}
	}
	return notMet("%s is not installed (installed: %v)", pkg, st.Installed)
}
