package tasks

import (
	"fmt"
	"strconv"

	"phonepilot/device/sim"
)

const clockPkg = "com.google.android.deskclock"

// Alarm times drawn per seed: none is a fresh phone's (8:30, 9:00).
var alarmTimes = [][2]int{{6, 15}, {6, 45}, {7, 5}, {7, 30}, {10, 20}, {13, 40}, {18, 0}, {21, 35}, {22, 50}, {5, 55}}

// timeParams draws an alarm time: {hour} {minute} as typed in the picker
// (24-hour), and {time_en} "7:05 AM" / {time_zh} "07:05" as each locale
// shows and says it.
func timeParams(seed int64, salt int) map[string]string {
	t := alarmTimes[pickIndex(len(alarmTimes), seed, salt)]
	return map[string]string{
		"hour": strconv.Itoa(t[0]), "minute": fmt.Sprintf("%02d", t[1]),
		"time_en": sim.ClockTime("en", t[0], t[1]), "time_zh": sim.ClockTime("zh", t[0], t[1]),
	}
}

func paramTime(p map[string]string) (h, m int) {
	h, _ = strconv.Atoi(p["hour"])
	m, _ = strconv.Atoi(p["minute"])
	return h, m
}

// switchLabel is the on/off switch of the alarm at the param time, as
// listed: "Alarm 7:05 AM" / "闹钟 07:05".
func switchLabel(loc string, p map[string]string) string {
	return tr(loc, "Alarm "+p["time_en"], "闹钟 "+p["time_zh"])
}

func clockState(b []byte) (State, error) {
	st, err := ParseState(b)
	if err != nil {
		return st, err
	}
	if st.Clock == nil {
		return st, notMet("Clock is not installed")
	}
	return st, nil
}

// alarmIs checks there is exactly one alarm at h:m, enabled as wanted, and
// that n alarms exist in all (-1 = any number).
func alarmIs(b []byte, h, m int, enabled bool, n int) error {
	st, err := clockState(b)
	if err != nil {
		return err
	}
	var at []Alarm
	for _, a := range st.Clock.Alarms {
		if a.Hour == h && a.Minute == m {
			at = append(at, a)
		}
	}
	if len(at) != 1 || at[0].Enabled != enabled {
		return notMet("alarms at %02d:%02d: %v, want one %s", h, m, at, onOffWord(enabled))
	}
	if n >= 0 && len(st.Clock.Alarms) != n {
		return notMet("%d alarms, want %d", len(st.Clock.Alarms), n)
	}
	return nil
}

// withAlarm is a Start whose alarms are the param time (enabled as given)
// between two others that are off.
func withAlarm(enabled bool) func(map[string]string) sim.Start {
	return func(p map[string]string) sim.Start {
		h, m := paramTime(p)
		return sim.Start{Alarms: []sim.StartAlarm{{Hour: 5, Minute: 0}, {Hour: h, Minute: m, Enabled: enabled}, {Hour: 23, Minute: 30}}}
	}
}

func init() {
	addScript := func(loc string, p map[string]string) []Step {
		return []Step{
			launch(tr(loc, "Clock", "时钟")),
			tap("add an alarm", tr(loc, "Add alarm", "添加闹钟")),
			typeInto("set the hour", tr(loc, "Hour", "小时"), p["hour"], false),
			typeInto("set the minute", tr(loc, "Minute", "分钟"), p["minute"], false),
			tap("confirm the time", tr(loc, "OK", "确定")),
			doneShowing("alarm set for "+p["time_"+loc], switchLabel(loc, p)),
		}
	}
	switchScript := func(on bool) func(string, map[string]string) []Step {
		return func(loc string, p map[string]string) []Step {
			return []Step{
				launch(tr(loc, "Clock", "时钟")),
				tap("switch the alarm "+onOffWord(on), switchLabel(loc, p)),
				doneShowing("the "+p["time_"+loc]+" alarm is "+onOffWord(on), switchLabel(loc, p)),
			}
		}
	}
	lookScript := func(loc string, p map[string]string) []Step {
		return []Step{
			launch(tr(loc, "Clock", "时钟")),
			doneShowing("the "+p["time_"+loc]+" alarm is already as asked", switchLabel(loc, p)),
		}
	}
	register(
		Task{
			Name: "clock.alarm.add", Apps: []string{clockPkg}, Kind: Normal,
			Goal: map[string]string{"en": "Set an alarm for {time_en}", "zh": "设一个{time_zh}的闹钟"},
			Rule: map[string]string{
				"en": "open Clock, tap Add alarm, type {hour} into Hour, type {minute} into Minute, tap OK",
				"zh": "打开时钟，点击添加闹钟，在小时输入{hour}，在分钟输入{minute}，点击确定",
			},
			Params: func(seed int64) map[string]string { return timeParams(seed, 7) },
			Start:  noStart,
			Script: addScript,
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				return alarmIs(b, h, m, true, 3) // the fresh phone's two, and this one
			},
		},
		Task{
			Name: "clock.alarm.add.second", Apps: []string{clockPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Add another alarm at {time_en}, keeping the ones I have",
				"zh": "再加一个{time_zh}的闹钟，已有的闹钟保持不变",
			},
			Params: func(seed int64) map[string]string { return timeParams(seed, 8) },
			Start: func(map[string]string) sim.Start {
				return sim.Start{Alarms: []sim.StartAlarm{{Hour: 4, Minute: 10, Enabled: true}, {Hour: 12, Minute: 0}, {Hour: 23, Minute: 5, Enabled: true}}}
			},
			Script: addScript,
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				if err := alarmIs(b, h, m, true, 4); err != nil {
					return err
				}
				// The others as they were.
				for _, a := range [][3]int{{4, 10, 1}, {12, 0, 0}, {23, 5, 1}} {
					if err := alarmIs(b, a[0], a[1], a[2] == 1, -1); err != nil {
						return err
					}
				}
				return nil
			},
		},
		Task{
			Name: "clock.alarm.on", Apps: []string{clockPkg}, Kind: Normal,
			Goal:   map[string]string{"en": "Turn on my {time_en} alarm", "zh": "打开{time_zh}的闹钟"},
			Rule:   map[string]string{"en": "open Clock, tap Alarm {time_en}", "zh": "打开时钟，点击闹钟 {time_zh}"},
			Params: func(seed int64) map[string]string { return timeParams(seed, 9) },
			Start:  withAlarm(false),
			Script: switchScript(true),
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				return alarmIs(b, h, m, true, 3)
			},
		},
		Task{
			Name: "clock.alarm.off", Apps: []string{clockPkg}, Kind: Normal,
			Goal:   map[string]string{"en": "Turn off my {time_en} alarm", "zh": "关掉{time_zh}的闹钟"},
			Rule:   map[string]string{"en": "open Clock, tap Alarm {time_en}", "zh": "打开时钟，点击闹钟 {time_zh}"},
			Params: func(seed int64) map[string]string { return timeParams(seed, 10) },
			Start:  withAlarm(true),
			Script: switchScript(false),
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				return alarmIs(b, h, m, false, 3)
			},
		},
		Task{
			Name: "clock.alarm.already_on", Apps: []string{clockPkg}, Kind: AlreadyDone,
			Goal:   map[string]string{"en": "Make sure my {time_en} alarm is on", "zh": "确认{time_zh}的闹钟是开着的"},
			Params: func(seed int64) map[string]string { return timeParams(seed, 11) },
			Start:  withAlarm(true),
			Script: lookScript,
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				return alarmIs(b, h, m, true, 3)
			},
		},
		Task{
			Name: "clock.alarm.already_off", Apps: []string{clockPkg}, Kind: AlreadyDone,
			Goal:   map[string]string{"en": "Make sure my {time_en} alarm is off", "zh": "确认{time_zh}的闹钟是关着的"},
			Params: func(seed int64) map[string]string { return timeParams(seed, 12) },
			Start:  withAlarm(false),
			Script: lookScript,
			Check: func(b []byte, p map[string]string) error {
				h, m := paramTime(p)
				return alarmIs(b, h, m, false, 3)
			},
		},
		Task{
			Name: "clock.timer.open", Apps: []string{clockPkg}, Kind: Normal,
			Goal:  map[string]string{"en": "Open the timer in the Clock app", "zh": "打开时钟里的计时器"},
			Rule:  map[string]string{"en": "open Clock, tap Timer", "zh": "打开时钟，点击计时器"},
			Start: noStart,
			Script: func(loc string, _ map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Clock", "时钟")),
					tap("open the timer tab", tr(loc, "Timer", "计时器")),
					done("the timer is open"),
				}
			},
			Check: func(b []byte, _ map[string]string) error {
				st, err := clockState(b)
				if err != nil {
					return err
				}
				if st.Foreground != clockPkg || st.Clock.Screen != "timer" {
					return notMet("Clock on %q (%s in front), want the timer", st.Clock.Screen, st.Foreground)
				}
				return nil
			},
		},
	)
}
