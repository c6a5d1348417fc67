package tasks

import "phonepilot/device/sim"

const settingsPkg = "com.android.settings"

// toggle is one Settings switch: where it is and what it is called.
type toggle struct {
	key            string // the task name's part: wifi, bluetooth, dark, airplane
	state          string // its key in the state JSON's settings section
	pageEn, pageZh string // the main-page row that opens its page
	rowEn, rowZh   string // its row on that page
	nameEn, nameZh string // what a person calls it in a goal
	set            func(*sim.Start, bool)
}

var toggles = []toggle{
	{"wifi", "wifi", "Network & internet", "网络和互联网", "Wi‑Fi", "WLAN", "Wi-Fi", "WLAN",
		func(s *sim.Start, v bool) { s.Wifi = boolp(v) }},
	{"bluetooth", "bluetooth", "Connected devices", "已连接的设备", "Use Bluetooth", "使用蓝牙", "Bluetooth", "蓝牙",
		func(s *sim.Start, v bool) { s.Bluetooth = boolp(v) }},
	{"dark", "dark_theme", "Display", "显示", "Dark theme", "深色主题", "dark theme", "深色主题",
		func(s *sim.Start, v bool) { s.DarkTheme = boolp(v) }},
	{"airplane", "airplane_mode", "Network & internet", "网络和互联网", "Airplane mode", "飞行模式", "airplane mode", "飞行模式",
		func(s *sim.Start, v bool) { s.Airplane = boolp(v) }},
}

// toggleTask switches one setting to on (or off) from the opposite state:
// Settings → its page → its row. The rule planner reads the same path
// spelled out ("open Settings, tap Display, tap Dark theme").
func toggleTask(tg toggle, on bool) Task {
	verbEn, verbZh, word := "Turn off", "关闭", "off"
	if on {
		verbEn, verbZh, word = "Turn on", "开启", "on"
	}
	return Task{
		Name: "settings." + tg.key + "." + word, Apps: []string{settingsPkg}, Kind: Normal,
		Goal: map[string]string{
			"en": verbEn + " " + tg.nameEn + " in Settings",
			"zh": "在设置里" + verbZh + tg.nameZh,
		},
		Rule: map[string]string{
			"en": "open Settings, tap " + tg.pageEn + ", tap " + tg.rowEn,
			"zh": "打开设置，点击" + tg.pageZh + "，点击" + tg.rowZh,
		},
		Start: func(map[string]string) sim.Start {
			var s sim.Start
			tg.set(&s, !on)
			return s
		},
		Script: func(loc string, _ map[string]string) []Step {
			return []Step{
				launch(tr(loc, "Settings", "设置")),
				tap("open "+tg.pageEn, tr(loc, tg.pageEn, tg.pageZh)),
				tap("switch "+tg.nameEn+" "+word, tr(loc, tg.rowEn, tg.rowZh)),
				doneShowing(tg.nameEn+" is "+word, tr(loc, tg.rowEn, tg.rowZh)),
			}
		},
		Check: func(b []byte, _ map[string]string) error { return settingIs(b, tg.state, on) },
	}
}

// alreadyTask asks for the state the setting is already in: the right
// move is to look and stop, and a blind tap undoes it.
func alreadyTask(tg toggle, on bool) Task {
	verbZh, word := "关闭", "off"
	if on {
		verbZh, word = "开启", "on"
	}
	return Task{
		Name: "settings." + tg.key + ".already_" + word, Apps: []string{settingsPkg}, Kind: AlreadyDone,
		Goal: map[string]string{
			"en": "Make sure " + tg.nameEn + " is " + word + " in Settings",
			"zh": "确认设置里的" + tg.nameZh + "已" + verbZh,
		},
		// The rule planner looks at the switch and stops: it taps only a
		// switch in the other state.
		Rule: map[string]string{
			"en": "make sure " + tg.nameEn + " is " + word,
			"zh": "确认" + tg.nameZh + "已" + verbZh,
		},
		Start: func(map[string]string) sim.Start {
			var s sim.Start
			tg.set(&s, on)
			return s
		},
		Script: func(loc string, _ map[string]string) []Step {
			return []Step{
				launch(tr(loc, "Settings", "设置")),
				tap("open "+tg.pageEn+" to look", tr(loc, tg.pageEn, tg.pageZh)),
				doneShowing(tg.nameEn+" was already "+word+"; nothing to change", tr(loc, tg.rowEn, tg.rowZh)),
			}
		},
		Check: func(b []byte, _ map[string]string) error { return settingIs(b, tg.state, on) },
	}
}

// pageTask opens a main-page row far enough down that it needs scrolling.
func pageTask(name, screen, rowEn, rowZh string) Task {
	return Task{
		Name: "settings." + name + ".open", Apps: []string{settingsPkg}, Kind: Normal,
		Goal:  map[string]string{"en": "Open the " + rowEn + " page in Settings", "zh": "打开设置里的“" + rowZh + "”页面"},
		Rule:  map[string]string{"en": "open Settings, tap " + rowEn, "zh": "打开设置，点击" + rowZh},
		Start: func(map[string]string) sim.Start { return sim.Start{} },
		Script: func(loc string, _ map[string]string) []Step {
			return []Step{
				launch(tr(loc, "Settings", "设置")),
				tap("scroll to "+rowEn+" and open it", tr(loc, rowEn, rowZh)),
				done(rowEn + " is open"),
			}
		},
		Check: func(b []byte, _ map[string]string) error {
			st, err := ParseState(b)
			if err != nil {
				return err
			}
			if st.Foreground != settingsPkg || st.Settings == nil || st.Settings.Screen != screen {
				return notMet("in front: %s, Settings on %q; want Settings on %q", st.Foreground, settingsScreen(st), screen)
			}
			return nil
		},
	}
}

func settingsScreen(st State) string {
	if st.Settings == nil {
		return ""
	}
	return st.Settings.Screen
}

func init() {
	for _, tg := range toggles {
		register(toggleTask(tg, true), toggleTask(tg, false))
	}
	// The already-done variants ask for the fresh phone's own state and one
	// the Start sets.
	register(
		alreadyTask(toggles[0], true),  // Wi-Fi on (the default)
		alreadyTask(toggles[1], false), // Bluetooth off (the default)
		alreadyTask(toggles[2], true),  // dark theme on (Start)
		alreadyTask(toggles[3], false), // airplane mode off (the default)
		pageTask("about", "about", "About phone", "关于手机"),
		pageTask("tips", "tips", "Tips & support", "提示和支持"),
		pageTask("security", "security", "Security & privacy", "安全和隐私"),
	)
}

// settingIs checks one Settings switch by its state key: wifi, bluetooth,
// dark_theme or airplane_mode.
func settingIs(b []byte, name string, want bool) error {
	st, err := ParseState(b)
	if err != nil {
		return err
	}
	if st.Settings == nil {
		return notMet("Settings is not installed")
	}
	var have bool
	switch name {
	case "wifi":
		have = st.Settings.Wifi
	case "bluetooth":
		have = st.Settings.Bluetooth
	case "dark_theme":
		have = st.Settings.Dark
	case "airplane_mode":
		have = st.Settings.Airplane
	default:
		return notMet("no setting %q", name)
	}
	if have != want {
		return notMet("%s is %s, want %s", name, onOffWord(have), onOffWord(want))
	}
	return nil
}

func onOffWord(v bool) string {
	if v {
		return "on"
	}
	return "off"
}
