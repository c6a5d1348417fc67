package tasks

import "strings"

// Tasks across two apps.

func init() {
	register(
		Task{
			Name: "cross.bluetooth.search", Apps: []string{settingsPkg, taobaoPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Turn on Bluetooth, then search Taobao for {query}",
				"zh": "开启蓝牙，然后在淘宝搜索{query}",
			},
			Rule: map[string]string{
				"en": "open Settings, tap Connected devices, tap Use Bluetooth, then open Taobao and search {query}",
				"zh": "打开设置，点击已连接的设备，点击使用蓝牙，然后打开淘宝搜索{query}",
			},
			Params: queryParams, Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				s := []Step{
					launch(tr(loc, "Settings", "设置")),
					tap("open Connected devices", tr(loc, "Connected devices", "已连接的设备")),
					tap("switch Bluetooth on", tr(loc, "Use Bluetooth", "使用蓝牙")),
				}
				s = append(s, taobaoSearch(loc, p["query"])...)
				return append(s, doneShowing("Bluetooth is on and the results show", result(loc, p["query"], 0)))
			},
			Check: func(b []byte, p map[string]string) error {
				if err := settingIs(b, "bluetooth", true); err != nil {
					return err
				}
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				if st.Taobao.LastSearch != p["query"] {
					return notMet("last Taobao search %q, want %q", st.Taobao.LastSearch, p["query"])
				}
				return nil
			},
		},
		Task{
			Name: "cross.dark.alarm", Apps: []string{settingsPkg, clockPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Turn on dark theme and set an alarm for {time_en}",
				"zh": "开启深色主题，并设一个{time_zh}的闹钟",
			},
			Rule: map[string]string{
				"en": "open Settings, tap Display, tap Dark theme, then open Clock, tap Add alarm, type {hour} into Hour, type {minute} into Minute, tap OK",
				"zh": "打开设置，点击显示，点击深色主题，然后打开时钟，点击添加闹钟，在小时输入{hour}，在分钟输入{minute}，点击确定",
			},
			Params: func(seed int64) map[string]string { return timeParams(seed, 26) },
			Start:  noStart,
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Settings", "设置")),
					tap("open Display", tr(loc, "Display", "显示")),
					tap("switch dark theme on", tr(loc, "Dark theme", "深色主题")),
					launch(tr(loc, "Clock", "时钟")),
					tap("add an alarm", tr(loc, "Add alarm", "添加闹钟")),
					typeInto("set the hour", tr(loc, "Hour", "小时"), p["hour"], false),
					typeInto("set the minute", tr(loc, "Minute", "分钟"), p["minute"], false),
					tap("confirm the time", tr(loc, "OK", "确定")),
					doneShowing("dark theme is on and the alarm is set", switchLabel(loc, p)),
				}
			},
			Check: func(b []byte, p map[string]string) error {
				if err := settingIs(b, "dark_theme", true); err != nil {
					return err
				}
				h, m := paramTime(p)
				return alarmIs(b, h, m, true, 3)
			},
		},
		Task{
			Name: "cross.number.text", Apps: []string{contactsPkg, messagesPkg}, Kind: Approval, Approvals: 1,
			Goal: map[string]string{
				"en": "Look up {person_en}'s number in Contacts and text it to {other_en}",
				"zh": "在通讯录里查到{person_zh}的电话号码，用短信发给{other_zh}",
			},
			Params: func(seed int64) map[string]string {
				p := personParams(seed, 27, "person")
				// Someone else from the book: a non-zero step from the person.
				i := pickIndex(len(peopleEn), seed, 27)
				j := (i + 1 + pickIndex(len(peopleEn)-1, seed, 28)) % len(peopleEn)
				p["other_en"], p["other_zh"] = peopleEn[j].Name, peopleZh[j].Name
				return p
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				s := []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					tap("open the contact to read the number", p["person_"+loc]),
				}
				s = append(s, newMessage(loc, p["other_"+loc])...)
				s = append(s, composeAndSend(loc, p["person_phone_"+loc])...)
				return append(s, done("sent the number"))
			},
			Check: func(b []byte, p map[string]string) error {
				phone := localParam(b, p, "person_phone")
				return sentOnce(b, localParam(b, p, "other"), func(t string) bool {
					return containsDigits(t, phone)
				}, "holding the number "+phone)
			},
		},
	)
}

// containsDigits reports whether text carries the number's digits in a row.
func containsDigits(text, number string) bool {
	return digits(number) != "" && strings.Contains(digits(text), digits(number))
}
