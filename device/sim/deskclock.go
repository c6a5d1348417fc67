package sim

import (
	"fmt"
	"image"
	"image/color"
	"sort"
	"strconv"
	"strings"
)

const deskClockPkg = "com.google.android.deskclock"

const deskClockActivity = "com.android.deskclock.DeskClock"

type alarm struct {
	Hour    int  `json:"hour"`
	Minute  int  `json:"minute"`
	Enabled bool `json:"enabled"`
}

type deskClockApp struct {
	p         *Phone
	alarms    []alarm
	tab       int
	adding    bool
	hourDraft string
	minDraft  string
	scroll    int
}

func newDeskClock(p *Phone) *deskClockApp {
	return &deskClockApp{p: p, alarms: []alarm{{8, 30, false}, {9, 0, false}}}
}

func (a *deskClockApp) pkg() string                 { return deskClockPkg }
func (a *deskClockApp) icon() (color.RGBA, string)  { return rgb(0x18, 0x5a, 0xbc), "alarm" }
func (a *deskClockApp) launchActivity() string      { return deskClockActivity }
func (a *deskClockApp) activity() string            { return deskClockActivity }
func (a *deskClockApp) background(c *ui) color.RGBA { return c.pal.bg }
func (a *deskClockApp) secure() bool                { return false }

func (a *deskClockApp) screen() string {
	if a.adding {
		return "add_alarm"
	}
	return []string{"alarms", "clock", "timer", "stopwatch", "bedtime"}[a.tab]
}

func (a *deskClockApp) start(cold bool) {
	if cold {
		a.tab, a.adding = 0, false
	}
}

func (a *deskClockApp) back() bool {
	if a.adding {
		a.adding = false
		return true
	}
	return false
}

func (a *deskClockApp) state() any {
	return map[string]any{"screen": a.screen(), "alarms": append([]alarm{}, a.alarms...)}
}

func dcid(s string) string { return "com.google.android.deskclock:id/" + s }

func (a *deskClockApp) fmtTime(h, m int) string { return ClockTime(a.p.cfg.Locale, h, m) }

// ClockTime is a time of day as the simulated Clock shows it: "7:05 AM" in
// English, "07:05" in Chinese.
func ClockTime(locale string, h, m int) string {
	if locale == "zh" {
		return fmt.Sprintf("%02d:%02d", h, m)
	}
	ap := "AM"
	if h >= 12 {
		ap = "PM"
	}
	h12 := h % 12
	if h12 == 0 {
		h12 = 12
	}
	return fmt.Sprintf("%d:%02d %s", h12, m, ap)
}

func (a *deskClockApp) confirm() {
	h, err1 := strconv.Atoi(strings.TrimSpace(a.hourDraft))
	m, err2 := strconv.Atoi(strings.TrimSpace(a.minDraft))
	if err1 != nil || err2 != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		a.p.showToast(a.p.t("ck.bad_time"))
		return
	}
	a.alarms = append(a.alarms, alarm{Hour: h, Minute: m, Enabled: true})
	sort.SliceStable(a.alarms, func(i, j int) bool {
		return a.alarms[i].Hour*60+a.alarms[i].Minute < a.alarms[j].Hour*60+a.alarms[j].Minute
	})
	a.adding = false
}

func (a *deskClockApp) build(c *ui) []*node {
	g := c.g
	r := c.content
	tabH := g.u(190)
	keys := []string{"ck.alarm", "ck.clock", "ck.timer", "ck.stopwatch", "ck.bedtime"}
	glyphs := []string{"alarm", "clock", "timer", "stopwatch", "bed"}
	w := g.W / len(keys)
	var tabs []*node
	for i, k := range keys {
		i := i
		fg := c.pal.sub
		if i == a.tab {
			fg = c.pal.accent
		}
		tabs = append(tabs, &node{class: "android.widget.FrameLayout", desc: c.t(k), r: rect(i*w, r.Max.Y-tabH, (i+1)*w, r.Max.Y),
			clickable: true, focusable: true, selected: i == a.tab, tap: func() { a.tab = i },
			kids: []*node{
				{class: "android.widget.ImageView", r: rect(i*w+w/2-g.u(35), r.Max.Y-tabH+g.u(25), i*w+w/2+g.u(35), r.Max.Y-tabH+g.u(95)), look: look{kind: paintGlyph, glyph: glyphs[i], fg: fg}},
				label(dcid("navigation_bar_item_large_label_view"), c.t(k), rect(i*w, r.Max.Y-g.u(85), (i+1)*w, r.Max.Y-g.u(25)), g.u(32), fg).centered(),
			}})
	}
	nav := &node{class: "android.widget.FrameLayout", id: dcid("bottom_navigation"), r: rect(0, r.Max.Y-tabH, g.W, r.Max.Y), look: look{bg: c.pal.surface}, kids: tabs}
	body := rect(0, r.Min.Y, g.W, r.Max.Y-tabH)
	var kids []*node
	switch a.tab {
	case 0:
		kids = a.alarmTab(c, body)
	case 1:
		kids = []*node{label(dcid("digital_clock"), a.fmtTime(c.now.Hour(), c.now.Minute()), rect(0, body.Min.Y+g.u(300), g.W, body.Min.Y+g.u(520)), g.u(160), c.pal.fg).centered(),
			label(dcid("date"), dateLine(c), rect(0, body.Min.Y+g.u(540), g.W, body.Min.Y+g.u(620)), g.u(44), c.pal.sub).centered()}
	default:
		kids = []*node{label(dcid("title"), c.t(keys[a.tab]), rect(0, body.Min.Y+g.u(300), g.W, body.Min.Y+g.u(420)), g.u(64), c.pal.fg).centered()}
	}
	kids = append(kids, nav)
	out := []*node{frameLayout(r, kids...)}
	if a.adding {
		out = append(out, a.dialog(c))
	}
	return out
}

func (a *deskClockApp) alarmTab(c *ui, body image.Rectangle) []*node {
	g := c.g
	title := label(dcid("action_bar_title"), c.t("ck.alarm"), rect(g.u(60), body.Min.Y+g.u(40), g.W-g.u(60), body.Min.Y+g.u(180)), g.u(64), c.pal.fg)
	listR := rect(0, body.Min.Y+g.u(200), g.W, body.Max.Y)
	alarms := a.alarms
	var lst *node
	if len(alarms) == 0 {
		lst = label(dcid("alarms_empty_view"), c.t("ck.no_alarms"), listR, g.u(44), c.pal.sub).centered()
	} else {
		lst = list("androidx.recyclerview.widget.RecyclerView", dcid("alarm_recycler_view"), listR, len(alarms), g.u(300), &a.scroll,
			func(i int, rr image.Rectangle) *node {

				al := alarms[i]
				in := rect(g.u(40), rr.Min.Y+g.u(15), g.W-g.u(40), rr.Max.Y-g.u(15))
				sub := c.t("ck.not_sched")
				if al.Enabled {
					sub = c.t("ck.tomorrow")
				}
				fg := c.pal.sub
				if al.Enabled {
					fg = c.pal.fg
				}
				return &node{class: "android.view.ViewGroup", id: dcid("alarm_item"), r: in, look: look{bg: c.pal.surface, radius: g.u(50)},
					kids: []*node{
						label(dcid("digital_clock"), a.fmtTime(al.Hour, al.Minute), rect(in.Min.X+g.u(50), in.Min.Y+g.u(30), in.Max.X-g.u(250), in.Min.Y+g.u(180)), g.u(100), fg),
						label(dcid("upcoming_instance_label"), sub, rect(in.Min.X+g.u(50), in.Min.Y+g.u(190), in.Max.X-g.u(250), in.Min.Y+g.u(250)), g.u(36), c.pal.sub),
						{class: "android.widget.Switch", id: dcid("onoff"), desc: c.tf("ck.alarm_label", a.fmtTime(al.Hour, al.Minute)), r: rect(in.Max.X-g.u(210), in.Min.Y+in.Dy()/2-g.u(45), in.Max.X-g.u(50), in.Min.Y+in.Dy()/2+g.u(45)),
							clickable: true, focusable: true, checkable: true, checked: al.Enabled, tap: func() { a.alarms[i].Enabled = !a.alarms[i].Enabled },
							look: look{kind: paintSwitch, accent: c.pal.accent}},
					}}
			})
	}
	fab := &node{class: "android.widget.ImageButton", id: dcid("fab"), desc: c.t("ck.add"), r: rect(g.W/2-g.u(100), body.Max.Y-g.u(240), g.W/2+g.u(100), body.Max.Y-g.u(40)),
		clickable: true, focusable: true, tap: func() {
			a.adding = true
			a.hourDraft, a.minDraft = "", ""
			a.p.focus = focusKey{a.p.screenKey(), dcid("material_hour_text_input")}
		},
		look: look{kind: paintGlyph, glyph: "plus", bg: c.pal.accent, fg: c.pal.onAccent, radius: g.u(60)}}
	return []*node{title, lst, fab}
}

func (a *deskClockApp) dialog(c *ui) *node {
	g := c.g
	r := c.content
	w, h := g.W-g.u(160), g.u(760)
	x0, y0 := g.u(80), r.Min.Y+(r.Dy()-h)/2
	hour := c.editText(dcid("material_hour_text_input"), c.t("ck.hour"), &a.hourDraft, rect(x0+g.u(60), y0+g.u(220), x0+w/2-g.u(40), y0+g.u(420)),
		func() { a.p.focus = focusKey{a.p.screenKey(), dcid("material_minute_text_input")} })
	minute := c.editText(dcid("material_minute_text_input"), c.t("ck.minute"), &a.minDraft, rect(x0+w/2+g.u(40), y0+g.u(220), x0+w-g.u(60), y0+g.u(420)), a.confirm)
	hour.look.size, minute.look.size = g.u(72), g.u(72)
	hour.look.center, minute.look.center = true, true
	card := &node{class: "android.widget.LinearLayout", id: dcid("material_timepicker_container"), r: rect(x0, y0, x0+w, y0+h), look: look{bg: c.pal.surface, radius: g.u(56)},
		kids: []*node{
			label(dcid("header_title"), c.t("ck.set_time"), rect(x0+g.u(60), y0+g.u(60), x0+w-g.u(60), y0+g.u(160)), g.u(44), c.pal.sub),
			hour,
			label("", ":", rect(x0+w/2-g.u(40), y0+g.u(220), x0+w/2+g.u(40), y0+g.u(420)), g.u(90), c.pal.fg).centered(),
			minute,
			button(dcid("material_timepicker_cancel_button"), c.t("ck.cancel"), rect(x0+w-g.u(520), y0+h-g.u(160), x0+w-g.u(290), y0+h-g.u(50)), g.u(42), c.pal.surface, c.pal.accent, func() { a.adding = false }),
			button(dcid("material_timepicker_ok_button"), c.t("ck.ok"), rect(x0+w-g.u(260), y0+h-g.u(160), x0+w-g.u(50), y0+h-g.u(50)), g.u(42), c.pal.surface, c.pal.accent, a.confirm),
		}}
	return &node{class: "android.widget.FrameLayout", r: r, blocks: true, look: look{bg: color.RGBA{0, 0, 0, 120}}, kids: []*node{card}}
}
