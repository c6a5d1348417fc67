package sim

import (
	"context"
	"errors"
	"strings"
	"testing"

	"phonepilot/device"
)

// An unknown app name is still device.ErrAppNotFound, and the error names
// the installed apps that come closest, in the phone's language first.
func TestLaunchUnknownAppNamesTheClosest(t *testing.T) {
	cases := []struct {
		locale, name string
		want         []string
	}{
		{"en", "Setings", []string{"Settings (com.android.settings)"}},
		{"en", "Taobao Lite", []string{"Taobao (com.taobao.taobao)"}},
		{"zh", "设定", []string{"设置 (com.android.settings)"}},
		{"en", "Bluetooth", []string{"no installed app has a name close to", "Settings (com.android.settings)", "Clock (com.google.android.deskclock)"}},
	}
	for _, c := range cases {
		v := newDrive(t, Config{Locale: c.locale})
		err := v.d.LaunchApp(context.Background(), c.name)
		if !errors.Is(err, device.ErrAppNotFound) {
			t.Errorf("%s %q: %v, want device.ErrAppNotFound", c.locale, c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: %q should name %q", c.locale, c.name, err, w)
			}
		}
	}
}
