package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/lifecycle"
	"phonepilot/tools"
)

// goalState is the part of the simulator's state the goal table checks.
type goalState struct {
	Foreground string `json:"foreground"`
	Recents    []string
	Settings   struct {
		Screen      string `json:"screen"`
		Wifi        bool   `json:"wifi"`
		Bluetooth   bool   `json:"bluetooth"`
		Dark        bool   `json:"dark_theme"`
		Airplane    bool   `json:"airplane_mode"`
		Scroll      int    `json:"scroll"`
		SearchQuery string `json:"search_query"`
	} `json:"settings"`
	Contacts struct {
		Screen      string `json:"screen"`
		Open        string `json:"open"`
		SearchQuery string `json:"search_query"`
		Contacts    []struct {
			Name string `json:"name"`
		} `json:"contacts"`
	} `json:"contacts"`
	Messages struct {
		Screen        string   `json:"screen"`
		Open          string   `json:"open"`
		Conversations []string `json:"conversations"`
	} `json:"messages"`
	Taobao struct {
		Screen   string `json:"screen"`
		Query    string `json:"query"`
		QueryBox string `json:"query_box"`
		Product  struct {
			Title string `json:"title"`
			Ad    bool   `json:"ad"`
		} `json:"product"`
	} `json:"taobao"`
	Clock struct {
		Screen string `json:"screen"`
	} `json:"clock"`
}

const (
	pkgSettings = "com.android.settings"
	pkgContacts = "com.android.contacts"
	pkgTaobao   = "com.taobao.taobao"
	pkgMessages = "com.google.android.apps.messaging"
	pkgClock    = "com.google.android.deskclock"
	pkgLauncher = "com.google.android.apps.nexuslauncher"
)

// goalCase is one everyday goal in English and Chinese (either may be
// empty), and how it must end: done, checked on the simulator's state
// (check returns what is wrong, "" when the state shows the goal), or
// refused before any step (refuse holds words the reason must name), or
// failed by the phone itself (an app that is not installed).
type goalCase struct {
	en, zh  string
	check   func(s goalState, res Result) string
	refuse  []string
	phoneNo bool // the phone refuses the first launch (not installed)
}

func fg(pkg string) func(goalState, Result) string {
	return func(s goalState, _ Result) string {
		if s.Foreground != pkg {
			return "foreground " + s.Foreground + ", want " + pkg
		}
		return ""
	}
}

func all(cs ...func(goalState, Result) string) func(goalState, Result) string {
	return func(s goalState, r Result) string {
		for _, c := range cs {
			if w := c(s, r); w != "" {
				return w
			}
		}
		return ""
	}
}

func want(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// calls counts the executed steps calling tool name that succeeded.
func calls(r Result, name string) (n, moved int) {
	for _, s := range r.Steps {
		if s.Call.Name == name && s.Status == lifecycle.StepSucceeded {
			n++
			if s.Changed {
				moved++
			}
		}
	}
	return n, moved
}

func scrolled(times int) func(goalState, Result) string {
	return func(s goalState, r Result) string {
		n, moved := calls(r, tools.Scroll)
		return want(s.Settings.Screen == "main" && s.Settings.Scroll > 0 && n == times && moved == times,
			"settings on %q scrolled to %d after %d scrolls (%d moved), want %d that moved", s.Settings.Screen, s.Settings.Scroll, n, moved, times)
	}
}

// noSwitch: no step turned a switch (the phone was already as wanted).
func noSwitch(_ goalState, r Result) string {
	for _, s := range r.Steps {
		if s.Tag.Kind == "switch" {
			return fmt.Sprintf("step %d (%s) switched on a phone already in the goal's state", s.Number, s.Intent)
		}
	}
	return ""
}

// goalTable is the 30 everyday goals of issue 23 and the shapes it names,
// as people type them: every rule phrasing of README's grammar list.
var goalTable = []goalCase{
	{en: "open Settings", zh: "打开设置", check: fg(pkgSettings)},
	{en: "can you open the Clock app?", zh: "你能帮我打开时钟吗？", check: fg(pkgClock)},
	{en: "please open Contacts, thanks", zh: "请打开通讯录，谢谢", check: fg(pkgContacts)},
	{en: "open Taobao and search Mac mini", zh: "打开淘宝搜索Mac mini", check: func(s goalState, _ Result) string {
		return want(s.Foreground == pkgTaobao && s.Taobao.Screen == "results" && s.Taobao.Query == "Mac mini", "taobao %q query %q", s.Taobao.Screen, s.Taobao.Query)
	}},
	{en: "search for Mac mini", zh: "搜索Mac mini", refuse: []string{"which app", "Taobao", "Settings", "Contacts"}},
	{en: "search for Alice in Contacts", zh: "在通讯录里搜索王芳", check: func(s goalState, _ Result) string {
		return want(s.Contacts.Screen == "search" && s.Contacts.SearchQuery != "", "contacts %q query %q", s.Contacts.Screen, s.Contacts.SearchQuery)
	}},
	{en: "scroll down twice in Settings", zh: "在设置里下滑两次", check: all(fg(pkgSettings), scrolled(2))},
	{en: "scroll down in Settings", zh: "在设置里下滑", check: all(fg(pkgSettings), scrolled(1))},
	{en: "open Settings and scroll down twice", zh: "打开设置然后下滑两次", check: all(fg(pkgSettings), scrolled(2))},
	{en: "open Settings and scroll to the bottom", zh: "打开设置滑到底部", check: func(s goalState, r Result) string {
		last := r.Steps[len(r.Steps)-1]
		return want(s.Settings.Scroll > 0 && last.Call.Name == tools.Scroll && !last.Changed, "scroll %d, last step %s changed=%v: not at the bottom", s.Settings.Scroll, last.Intent, last.Changed)
	}},
	{en: "scroll to the top in Settings", zh: "在设置里滑到顶部", check: func(s goalState, _ Result) string {
		return want(s.Foreground == pkgSettings && s.Settings.Scroll == 0, "settings scroll %d", s.Settings.Scroll)
	}},
	{en: "open Taobao and tap the first product", zh: "打开淘宝，点击第一个商品", check: func(s goalState, _ Result) string {
		return want(s.Taobao.Screen == "detail" && s.Taobao.Product.Title != "" && !s.Taobao.Product.Ad, "taobao %q product %+v", s.Taobao.Screen, s.Taobao.Product)
	}},
	{en: "open Taobao, search iPhone 16 and tap the first product", zh: "打开淘宝并搜索 iPhone 16 然后点击第一个商品", check: func(s goalState, _ Result) string {
		return want(s.Taobao.Screen == "detail" && strings.Contains(s.Taobao.Product.Title, "iPhone 16") && !s.Taobao.Product.Ad, "taobao %q product %+v", s.Taobao.Screen, s.Taobao.Product)
	}},
	{en: "open Taobao and type Mac mini into the search box", zh: "打开淘宝，在搜索框输入Mac mini", check: func(s goalState, _ Result) string {
		return want(s.Taobao.Screen == "search" && s.Taobao.QueryBox == "Mac mini", "taobao %q box %q", s.Taobao.Screen, s.Taobao.QueryBox)
	}},
	{en: "open Contacts and search for Alice", zh: "打开通讯录搜索张伟", check: func(s goalState, _ Result) string {
		return want(s.Contacts.Screen == "search" && (s.Contacts.SearchQuery == "Alice" || s.Contacts.SearchQuery == "张伟"), "contacts %q query %q", s.Contacts.Screen, s.Contacts.SearchQuery)
	}},
	{en: "open Settings and search for Bluetooth", zh: "打开设置搜索蓝牙", check: func(s goalState, _ Result) string {
		return want(s.Settings.Screen == "search" && (s.Settings.SearchQuery == "Bluetooth" || s.Settings.SearchQuery == "蓝牙"), "settings %q query %q", s.Settings.Screen, s.Settings.SearchQuery)
	}},
	{en: "open Settings, search for dark theme and tap the first result", zh: "打开设置，搜索深色主题，点击第一个结果", check: func(s goalState, _ Result) string {
		return want(s.Settings.Screen == "display" && !s.Settings.Dark, "settings %q dark %v", s.Settings.Screen, s.Settings.Dark)
	}},
	{en: "open Contacts, search for Bob and open the first result", zh: "打开通讯录，搜索李娜，点击第一个结果", check: func(s goalState, _ Result) string {
		return want(s.Contacts.Screen == "detail" && (s.Contacts.Open == "Bob Martinez" || s.Contacts.Open == "李娜"), "contacts %q open %q", s.Contacts.Screen, s.Contacts.Open)
	}},
	{en: "open Contacts and tap Add contact", zh: "打开通讯录，点击新建联系人", check: func(s goalState, _ Result) string {
		return want(s.Contacts.Screen == "editor", "contacts %q", s.Contacts.Screen)
	}},
	{en: "open Contacts and tap the last contact", zh: "打开通讯录，点击最后一个联系人", check: func(s goalState, _ Result) string {
		n := len(s.Contacts.Contacts)
		return want(s.Contacts.Screen == "detail" && n > 0 && s.Contacts.Open == s.Contacts.Contacts[n-1].Name, "contacts %q open %q", s.Contacts.Screen, s.Contacts.Open)
	}},
	{en: "open Messages and open the first conversation", zh: "打开信息，点击第一个对话", check: func(s goalState, _ Result) string {
		return want(s.Messages.Screen == "conversation" && len(s.Messages.Conversations) > 0 && s.Messages.Open == s.Messages.Conversations[0], "messages %q open %q", s.Messages.Screen, s.Messages.Open)
	}},
	{en: "turn on Bluetooth", zh: "打开蓝牙", check: func(s goalState, _ Result) string { return want(s.Settings.Bluetooth, "bluetooth off") }},
	{en: "turn off Wi-Fi", zh: "关闭WLAN", check: func(s goalState, _ Result) string { return want(!s.Settings.Wifi, "wi-fi on") }},
	{en: "could you turn on airplane mode?", zh: "帮我开启飞行模式", check: func(s goalState, _ Result) string { return want(s.Settings.Airplane, "airplane mode off") }},
	{en: "please enable dark theme", zh: "请打开深色主题", check: func(s goalState, _ Result) string { return want(s.Settings.Dark, "dark theme off") }},
	{en: "make sure Wi-Fi is on", zh: "确认WLAN已开启", check: all(noSwitch, func(s goalState, _ Result) string { return want(s.Settings.Wifi, "wi-fi off") })},
	{en: "open Settings, tap Display", zh: "打开设置，点击显示", check: func(s goalState, _ Result) string {
		return want(s.Settings.Screen == "display", "settings %q", s.Settings.Screen)
	}},
	{en: "open Settings, tap Display and go back", zh: "打开设置，点击显示，然后返回", check: func(s goalState, _ Result) string {
		return want(s.Foreground == pkgSettings && s.Settings.Screen == "main", "foreground %s settings %q", s.Foreground, s.Settings.Screen)
	}},
	{en: "open Settings, tap Display, go back twice", zh: "打开设置，点击显示，返回两次", check: fg(pkgLauncher)},
	{en: "open the Clock app and tap Timer", zh: "打开时钟，点击计时器", check: func(s goalState, _ Result) string {
		return want(s.Clock.Screen == "timer", "clock %q", s.Clock.Screen)
	}},
	{en: "open Settings and go home", zh: "打开设置然后回到桌面", check: fg(pkgLauncher)},
	{en: "open Settings and open WeChat", zh: "打开设置然后打开微信", refuse: []string{"WeChat|微信", "not an app on this phone"}},
	{en: "open WeChat", zh: "打开微信", refuse: []string{"WeChat|微信", "not an app on this phone"}},
	{en: "open Settings and turn on NFC", zh: "打开设置并开启NFC", refuse: []string{"NFC"}},
	{en: "open Settings and scroll down quickly", zh: "打开设置然后快速下滑", refuse: []string{"quickly|快速"}},
	{en: "open Settings and make me a sandwich", zh: "打开设置，给我做个三明治", refuse: []string{"sandwich|三明治"}},
}

// TestEverydayGoalsEndDoneOrRefused is issue 23's table: each goal, in
// each language on a phone in that language, ends completed with the
// simulator's state showing it, or refused before any step; none claims
// completion the state does not show.
func TestEverydayGoalsEndDoneOrRefused(t *testing.T) {
	for _, c := range goalTable {
		for _, lg := range [][2]string{{"en", c.en}, {"zh", c.zh}} {
			loc, goal := lg[0], lg[1]
			if goal == "" {
				continue
			}
			t.Run(loc+"/"+goal, func(t *testing.T) {
				res, p := runOnSim(t, sim.Config{Locale: loc, Seed: 1}, goal, Defaults())
				raw, err := p.State()
				if err != nil {
					t.Fatal(err)
				}
				var st goalState
				if err := json.Unmarshal(raw, &st); err != nil {
					t.Fatal(err)
				}
				switch {
				case c.refuse != nil:
					if res.Status != lifecycle.Failed || res.Cause != lifecycle.CauseGoalNotUnderstood || len(res.Steps) != 0 || len(st.Recents) != 0 {
						t.Fatalf("%s/%s after %d steps (%s); want REFUSED with 0 steps", res.Status, res.Cause, len(res.Steps), res.Reason)
					}
					t.Logf("VERDICT REFUSED, 0 steps: %s", res.Reason)
					for _, w := range c.refuse {
						// "en|zh": the word as each goal says it.
						if en, zh, ok := strings.Cut(w, "|"); ok {
							w = map[string]string{"en": en, "zh": zh}[loc]
						}
						if !strings.Contains(res.Reason, w) {
							t.Errorf("reason %q does not name %q", res.Reason, w)
						}
					}
				case c.phoneNo:
					if res.Status != lifecycle.Failed || len(res.Steps) != 1 || res.Steps[0].Call.Name != tools.LaunchApp || len(st.Recents) != 0 {
						t.Fatalf("%s/%s after %d steps (%s); want the phone's refusal of the launch, nothing touched", res.Status, res.Cause, len(res.Steps), res.Reason)
					}
					t.Logf("VERDICT THE PHONE REFUSED (1 launch, nothing touched): %s", res.Reason)
				default:
					if res.Status != lifecycle.Completed {
						t.Fatalf("%s/%s (%s); want DONE", res.Status, res.Cause, res.Reason)
					}
					if w := c.check(st, res); w != "" {
						t.Fatalf("completed (%s) but the phone does not show it: %s", res.Reason, w)
					}
					if !strings.Contains(res.Reason, "the screen shows") {
						t.Errorf("reason %q does not say what the screen shows", res.Reason)
					}
					t.Logf("VERDICT DONE in %d steps, checked on the simulator's state: %s", len(res.Steps), res.Reason)
				}
			})
		}
	}
}

// A count the list cannot give is not claimed: Settings' list ends after
// two scrolls, so "scroll down 3 times" fails saying the screen moved
// twice, never "done".
func TestCountBeyondTheListFailsSayingSo(t *testing.T) {
	for loc, goal := range map[string]string{"en": "open Settings and scroll down 3 times", "zh": "打开设置，下滑三次"} {
		res, _ := runOnSim(t, sim.Config{Locale: loc, Seed: 1}, goal, Defaults())
		if res.Status != lifecycle.Failed || !strings.Contains(res.Reason, "scrolled down 3 times, but the screen moved twice") {
			t.Errorf("%q: %s (%s); want a failure saying the list moved twice", goal, res.Status, res.Reason)
		}
	}
}
