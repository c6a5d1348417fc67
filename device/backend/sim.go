package backend

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"phonepilot/device"
	"phonepilot/device/sim"
)

// simName is what may follow "sim:".
var simName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// simBackend is the in-process simulated phone (device/sim).
var simBackend = &Backend{
	Kind: "sim",
	Forms: []Form{
		{"sim", "the built-in simulated phone"},
		{"sim:NAME", "a simulated phone of its own per NAME"},
	},
	Kept:  true,
	Named: true,
	Check: func(name, rest string) error {
		if name != "sim" && !simName.MatchString(rest) {
			return fmt.Errorf("the name after sim: must be 1-64 letters, digits, '.', '_' or '-'")
		}
		return nil
	},
	Open: func(ctx context.Context, name, _ string, o Options) (*Opened, error) {
		obs, err := sim.ParseObserver(o.Observer)
		if err != nil || obs == sim.ObserverPortal || obs == sim.ObserverOracle {
			return nil, fmt.Errorf("%w: --observer %q: use uiautomator or helper", ErrName, o.Observer)
		}
		p, err := sim.New(sim.Config{
			Observer: obs,
			Width:    o.SimWidth, Height: o.SimHeight, Locale: o.SimLocale, Profile: o.SimProfile,
			Seed: o.SimSeed, NoADBKeyboard: o.SimNoADBKeyboard, Layout: o.SimLayout, Logger: o.logger(),
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrName, err)
		}
		return opened(name, "sim", p.Device(), nil), nil
	},
	Labels: simLabels,
	Settings: func(o Options) any {
		return simSettings{Locale: o.SimLocale, Profile: o.SimProfile, Seed: o.SimSeed}
	},
}

// simSettings is what a task's snapshot records of the simulator.
type simSettings struct {
	Locale  string `json:"locale"`
	Profile string `json:"profile,omitempty"`
	Seed    int64  `json:"seed"`
}

func simLabels(ctx context.Context, _ Options, _ Listed, dev device.Device) map[string]string {
	sd, ok := dev.(*sim.Device)
	if !ok {
		return map[string]string{"kind": "sim"}
	}
	p := sd.Phone()
	_, model, _ := p.Model()
	w, h := p.Size()
	locale, _ := sd.Locale(ctx)
	return map[string]string{"kind": "sim", "model": model, "android": "14", "screen": fmt.Sprintf("%dx%d", w, h),
		"locale": LocaleLang(locale), "locale_full": locale}
}

// LocaleLang is the language of a locale ("zh-CN" → "zh"), so that routing
// by {"locale":"zh"} finds every Chinese phone.
func LocaleLang(l string) string {
	l, _, _ = strings.Cut(strings.ReplaceAll(l, "_", "-"), "-")
	return strings.ToLower(l)
}
