package tasks

import "phonepilot/device/sim"

const settingsPkg = "com.android.settings"

func init() {
	register(
		Task{
			Name: "settings.bluetooth.on", Apps: []string{settingsPkg}, Kind: Normal,
			Goal: map[string]string{"en": "Open Settings and turn on Bluetooth", "zh": "打开设置，开启蓝牙"},
			Rule: nil,
			Start: func(map[string]string) sim.Start {
				return sim.Start{Bluetooth: boolp(false)}
			},
			Script: func(loc string, _ map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Settings", "设置")),
					tap("open Connected devices", tr(loc, "Connected devices", "已连接的设备")),
					tap("switch Bluetooth on", tr(loc, "Use Bluetooth", "使用蓝牙")),
					done("Bluetooth is on"),
				}
			},
			Check: func(b []byte, _ map[string]string) error {
				return settingIs(b, "bluetooth", true)
			},
		},
	)
}

// settingIs checks one Settings switch: wifi, bluetooth, dark_theme or
// airplane_mode.
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
		return notMet("%s is %v, want %v", name, onOffWord(have), onOffWord(want))
	}
	return nil
}

func onOffWord(v bool) string {
	if v {
		return "on"
	}
	return "off"
}
