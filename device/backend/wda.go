package backend

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/device/wda"
)

// wdaBackend is an iPhone behind WebDriverAgent (device/wda): the user
// runs WDA on the phone and forwards its port (docs/ios.md).
var wdaBackend = &Backend{
	Kind: "wda",
	Forms: []Form{
		{"wda:http://HOST:PORT", "an iPhone's WebDriverAgent, e.g. behind iproxy 8100 8100 (docs/ios.md)"},
	},
	Check: func(name, rest string) error {
		if rest == "" {
			return fmt.Errorf(`give WDA's address after "wda:", e.g. wda:http://127.0.0.1:8100`)
		}
		_, err := wda.NewClient(rest, nil)
		return err
	},
	Open: func(ctx context.Context, name, rest string, o Options) (*Opened, error) {
		d, err := wda.Open(ctx, rest, nil)
		if err != nil {
			return nil, err
		}
		return opened(name, "wda", d, d.Close), nil
	},
	Probe: func(ctx context.Context, name, rest string, _ Options) (Listed, error) {
		c, err := wda.NewClient(rest, nil)
		if err != nil {
			return Listed{}, err
		}
		st, err := c.Status(ctx)
		if err != nil || !st.Ready {
			return Listed{Name: name, Kind: "wda", State: "offline"}, err
		}
		return Listed{Name: name, Kind: "wda", State: "device", Model: st.Device}, nil
	},
	Labels: func(ctx context.Context, _ Options, l Listed, dev device.Device) map[string]string {
		out := map[string]string{"kind": "wda", "platform": "ios"}
		if dev == nil {
			d, err := wda.Open(ctx, strings.TrimPrefix(l.Name, "wda:"), nil)
			if err != nil {
				return out
			}
			defer d.Close()
			dev = d
		}
		iosLabels(ctx, dev, out)
		return out
	},
}

// iosLabels adds what an iPhone tells of itself: its iOS version, screen
// in pixels and locale.
func iosLabels(ctx context.Context, dev device.Device, out map[string]string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, ok := dev.(interface {
		OSVersion(context.Context) (string, error)
		Scale() float64
		ScreenPoints() (int, int)
	})
	if ok {
		if v, err := d.OSVersion(ctx); err == nil && v != "" {
			out["ios"] = v
		}
		w, h := d.ScreenPoints()
		out["screen"] = strconv.Itoa(int(float64(w)*d.Scale())) + "x" + strconv.Itoa(int(float64(h)*d.Scale()))
	}
	if f, ok := dev.(device.Facts); ok {
		if l, err := f.Locale(ctx); err == nil && l != "" {
			out["locale"], out["locale_full"] = LocaleLang(l), l
		}
	}
}
