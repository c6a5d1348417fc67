package backend

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
	"phonepilot/device/wda"
)

// simName is what may follow "sim:".
var simName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// simBackend is the in-process simulated phone (device/sim).
var simBackend = &Backend{
	Kind: "sim",
	Forms: []Form{
		{"sim", "the built-in simulated phone"},
		{"sim:NAME", "a simulated phone of its own per NAME"},
		{"sim:ios", "the simulated phone dressed as an iPhone, driven through WebDriverAgent's API (sim:ios-NAME: one of its own per NAME)"},
	},
	Kept:  true,
	Named: true,
	Check: func(name, rest string) error {
		if name != "sim" && !simName.MatchString(rest) {
			return fmt.Errorf("the name after sim: must be 1-64 letters, digits, '.', '_' or '-'")
		}
		return nil
	},
	Open: func(ctx context.Context, name, rest string, o Options) (*Opened, error) {
		asked := o.Observer
		if asked == "auto" {
			asked = "" // the simulator's default path
		}
		obs, err := sim.ParseObserver(asked)
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
		if simIsIOS(rest) {
			d, err := wda.Open(ctx, simwda.InProcessURL, simwda.InProcessClient(simwda.New(p)))
			if err != nil {
				return nil, err
			}
			return opened(name, "sim", simIOS{d, p}, nil), nil
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

func simLabels(ctx context.Context, _ Options, l Listed, dev device.Device) map[string]string {
	sd, ok := dev.(interface{ Phone() *sim.Phone })
	if !ok {
		return map[string]string{"kind": "sim"}
	}
	p := sd.Phone()
	_, model, _ := p.Model()
	w, h := p.Size()
	locale := p.LocaleTag()
	out := map[string]string{"kind": "sim", "platform": "android", "model": model, "android": "14", "screen": fmt.Sprintf("%dx%d", w, h),
		"locale": LocaleLang(locale), "locale_full": locale}
	if _, ios := dev.(simIOS); ios {
		delete(out, "android")
		out["platform"], out["ios"] = "ios", simwda.IOSVersion
	}
	return out
}

// simIsIOS reports a sim name that asks for the iPhone dress: sim:ios and
// sim:ios-NAME.
func simIsIOS(rest string) bool { return rest == "ios" || strings.HasPrefix(rest, "ios-") }

// simIOS is the simulated phone in iOS dress, driven in process through
// the same WDA client as a real iPhone; it reports the simulator's state
// as the Android dress does.
type simIOS struct {
	*wda.Device
	p *sim.Phone
}

// State is the simulator's state JSON.
func (s simIOS) State(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.p.State()
}

// Phone is the simulated phone behind the WDA API.
func (s simIOS) Phone() *sim.Phone { return s.p }

// LocaleLang is the language of a locale ("zh-CN" → "zh"), so that routing
// by {"locale":"zh"} finds every Chinese phone.
func LocaleLang(l string) string {
	l, _, _ = strings.Cut(strings.ReplaceAll(l, "_", "-"), "-")
	return strings.ToLower(l)
}
