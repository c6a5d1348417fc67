package sim

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
)

// Start is a phone's starting state, applied by New and Reset after the
// apps are built: the zero value is today's fresh phone. Benchmarks
// (phonebench) start each task from one, so a task can begin already done,
// with a contact missing or an app not installed.
type Start struct {
	// Wifi, Bluetooth, Airplane, DarkTheme set the Settings switches (nil =
	// the default: Wi-Fi on, the others off).
	Wifi, Bluetooth, Airplane, DarkTheme *bool
	// Contacts replace the default contacts when non-nil (an empty, non-nil
	// slice = no contacts at all). The list shows them sorted by name.
	Contacts []StartContact
	// Alarms replace the default alarms when non-nil, shown sorted by time.
	Alarms []StartAlarm
	// Messages, when non-nil, replace the default conversations: the
	// messages are grouped by With into conversations, listed in the order
	// each correspondent first appears. The conversation from 555-0199 that
	// tries to steer an agent (docs/sim.md) is kept at the end.
	Messages []StartMessage
	// Uninstalled lists apps not installed on this phone, by package or by
	// label in either locale ("com.taobao.taobao", "Taobao", "淘宝"): no
	// launcher icon, not launchable, not in `pm list packages`, and no key
	// in the state JSON ("installed" lists what is).
	Uninstalled []string
	// Cart holds product titles already in Taobao's cart (one each, with
	// an id and a price derived from the title).
	Cart []string
}

// StartContact is a contact the phone starts with.
type StartContact struct{ Name, Phone string }

// StartAlarm is an alarm the phone starts with (Hour 0-23, Minute 0-59).
type StartAlarm struct {
	Hour, Minute int
	Enabled      bool
}

// StartMessage is one message of a conversation the phone starts with: from
// With, or to With when Out is true.
type StartMessage struct {
	With, Text string
	Out        bool
}

// Validate reports the first field that cannot be applied, naming it.
func (s Start) Validate() error {
	for i, a := range s.Alarms {
		if a.Hour < 0 || a.Hour > 23 || a.Minute < 0 || a.Minute > 59 {
			return fmt.Errorf("sim start: Alarms[%d] %02d:%02d is not a time of day", i, a.Hour, a.Minute)
		}
	}
	for i, c := range s.Contacts {
		if strings.TrimSpace(c.Name) == "" && strings.TrimSpace(c.Phone) == "" {
			return fmt.Errorf("sim start: Contacts[%d] has neither a name nor a phone", i)
		}
	}
	for i, m := range s.Messages {
		if strings.TrimSpace(m.With) == "" || m.Text == "" {
			return fmt.Errorf("sim start: Messages[%d] needs With and Text", i)
		}
	}
	for i, u := range s.Uninstalled {
		if appFor(u) == nil {
			return fmt.Errorf("sim start: Uninstalled[%d] %q is not one of the simulated apps", i, u)
		}
	}
	for i, t := range s.Cart {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("sim start: Cart[%d] is empty", i)
		}
	}
	return nil
}

// appFor finds the constructor of a simulated app by package or by label in
// either locale, case-insensitively.
func appFor(name string) func(*Phone) app {
	name = strings.TrimSpace(name)
	probe := &Phone{}
	for _, sa := range installedApps {
		v := strings2[labelKey(sa.new(probe))]
		if sa.pkg == name || strings.EqualFold(name, v[0]) || name == v[1] {
			return sa.new
		}
	}
	return nil
}

// installed reports whether the Start leaves the app with package pkg on
// the phone.
func (s Start) installed(pkg string) bool {
	for _, u := range s.Uninstalled {
		if newApp := appFor(u); newApp != nil && newApp(&Phone{}).pkg() == pkg {
			return false
		}
	}
	return true
}

// buildApps makes the apps the Start leaves installed, in launcher order.
func (p *Phone) buildApps() {
	p.apps = p.apps[:0]
	for _, sa := range installedApps {
		a := sa.new(p)
		if p.cfg.Start.installed(a.pkg()) {
			p.apps = append(p.apps, a)
		}
	}
}

// applyStart sets the apps' data from cfg.Start on freshly built apps (New,
// Reset). `pm clear` does not apply it: it wipes an app to its defaults, as
// on a phone.
func (p *Phone) applyStart() {
	s := p.cfg.Start
	if st, ok := p.app(settingsPkg).(*settingsApp); ok {
		set := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		set(&st.wifi, s.Wifi)
		set(&st.bluetooth, s.Bluetooth)
		set(&st.airplane, s.Airplane)
		set(&st.dark, s.DarkTheme)
	}
	if ct, ok := p.app(contactsPkg).(*contactsApp); ok && s.Contacts != nil {
		ct.people = make([]contact, 0, len(s.Contacts))
		for _, c := range s.Contacts {
			ct.people = append(ct.people, contact{Name: c.Name, Phone: c.Phone})
		}
		sort.SliceStable(ct.people, func(i, j int) bool { return ct.people[i].Name < ct.people[j].Name })
	}
	if dc, ok := p.app(deskClockPkg).(*deskClockApp); ok && s.Alarms != nil {
		dc.alarms = make([]alarm, 0, len(s.Alarms))
		for _, a := range s.Alarms {
			dc.alarms = append(dc.alarms, alarm{Hour: a.Hour, Minute: a.Minute, Enabled: a.Enabled})
		}
		sort.SliceStable(dc.alarms, func(i, j int) bool {
			return dc.alarms[i].Hour*60+dc.alarms[i].Minute < dc.alarms[j].Hour*60+dc.alarms[j].Minute
		})
	}
	if ms, ok := p.app(messagesPkg).(*messagesApp); ok && s.Messages != nil {
		var convs []*conversation
		idx := map[string]*conversation{}
		for _, m := range s.Messages {
			cv := idx[m.With]
			if cv == nil {
				cv = &conversation{With: m.With}
				idx[m.With] = cv
				convs = append(convs, cv)
			}
			cv.Messages = append(cv.Messages, message{Text: m.Text, Out: m.Out})
		}
		// Keep the steering conversation (docs/sim.md) unless the Start has
		// its own with that number.
		for _, cv := range ms.convs {
			if cv.With == injSender && idx[injSender] == nil {
				convs = append(convs, cv)
			}
		}
		ms.convs = convs
	}
	if tb, ok := p.app(taobaoPkg).(*taobaoApp); ok {
		for _, title := range s.Cart {
			tb.addToCart(startProduct(title))
		}
	}
}

// startProduct is the product a Start's cart title stands for: its id and
// price are a hash of the title, so the same title is the same product.
func startProduct(title string) product {
	h := fnv.New64a()
	h.Write([]byte("cart:" + title))
	v := h.Sum64()
	return product{ID: fmt.Sprintf("%d", 800000000000+v%100000000000), Title: title, Price: float64(1990+int(v>>20)%50000) / 100}
}

// ResultTitles are the titles Taobao's results for query show on a phone in
// locale, in the default (Overall) order, without the sponsored row: the
// same query always gives the same titles, so a benchmark's script can name
// the product it means.
func ResultTitles(locale, query string) []string {
	t := &taobaoApp{p: &Phone{cfg: Config{Locale: locale}}}
	if strings.TrimSpace(query) == "" {
		return nil
	}
	var out []string
	for _, p := range t.products(query) {
		out = append(out, p.Title)
	}
	return out
}
