package rule

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"phonepilot/apps"
)

// kind is what one action of a goal does.
type kind int

const (
	actLaunch kind = iota
	actSearch
	actTap
	actType
	actScroll
	actBack
	actHome
	actPick   // "the first product": an item of the list on the screen, by its place
	actSwitch // "turn on Bluetooth": a switch of Settings
)

// action is one clause of a goal, read. Every word of the clause has a
// place in it: the verb in kind, the arguments in their fields, "in
// Settings" as a launch before it, "twice" in count, "the first" in nth.
type action struct {
	kind   kind
	clause string // the clause as written, for messages
	app    string // actLaunch: the app; actSearch: the app the clause names, if any
	query  string // actSearch
	label  string // actTap
	text   string // actType
	field  string // actType: the field's label, if named
	dir    string // actScroll: up, down, left, right
	edge   bool   // actScroll: to the end of the list ("scroll to the bottom")
	count  int    // actScroll, actBack: how many times (0 = once)
	nth    int    // actPick: 1 first, 2 second, …; -1 last
	noun   string // actPick: what the list holds, as the goal says it
	sw     *switchSetting
	on     bool // actSwitch: the state wanted
}

// times is how many closing steps the action takes.
func (a action) times() int { return max(a.count, 1) }

// ErrUnreadable is returned for a goal the rule Planner cannot read.
var ErrUnreadable = errors.New("the rule planner cannot read this goal")

// understood lists what the rule Planner reads, for the unreadable-goal reason.
const understood = `it understands: open/launch <app>, search (for) <query> [in <app>], tap/click <label>, ` +
	`tap the first/second/last <item>, type <text> [into <field>], scroll up/down [N times], scroll to the bottom/top, ` +
	`go back [N times], go home, turn on/off Wi-Fi/Bluetooth/airplane mode/dark theme, "in <app>" after any of them, ` +
	`as requests too ("can you …?", "please …"), joined by "and", "then" or commas ` +
	`(打开/启动 <应用>, 在<应用>里搜索 <内容>, 点击 <文字>, 点击第一个<商品>, 输入 <文字>, 上滑/下滑[两次], 滑到底部/顶部, ` +
	`返回[两次], 回到桌面, 打开/关闭 蓝牙/WLAN/飞行模式/深色主题, 帮我/请…, joined by 然后/并/，). ` +
	`For any other goal use the AI planner: --planner ai`

// parseGoal reads the whole goal into its actions, in order, before any of
// it is acted on. A goal it can read only part of is refused: the error
// names the words it could not place and says what it did read, so that
// "scroll down twice in Settings" neither scrolls the launcher once nor
// claims it scrolled. installed, when known, are the phone's apps: a
// clause's "in X" is a context only when X is an app.
func parseGoal(goal string, installed []apps.Installed) ([]action, error) {
	clauses := splitGoal(goal)
	if len(clauses) == 0 {
		return nil, fmt.Errorf("%w: the goal is empty; %s", ErrUnreadable, understood)
	}
	var out []action
	var read []string // the clauses read, for the refusal
	refuse := func(c, why string) error {
		if len(clauses) == 1 {
			return fmt.Errorf("%w: %q is %s; %s", ErrUnreadable, c, why, understood)
		}
		return fmt.Errorf("%w: it reads %s but not %q (%s), and it does not act on part of a goal; %s",
			ErrUnreadable, readList(read), c, why, understood)
	}
	isApp := func(name string) bool { return appNamed(name, installed) }
	for _, c := range clauses {
		acts, unplaced := parseClause(c, isApp)
		if acts == nil {
			why := "not an instruction it knows"
			if unplaced != "" {
				why = unplaced
			}
			return nil, refuse(c, why)
		}
		for _, a := range acts {
			if a.kind == actLaunch && isSetting(a.app) {
				// "open Wi-Fi": a setting, not an app; "turn on" is how to switch it.
				return nil, refuse(c, fmt.Sprintf("a setting (%s), not an app; say turn on/off for %s", a.app, switchNames()))
			}
			// "输入Mac mini并搜索": a search without a query submits what was typed.
			if a.kind == actSearch && a.query == "" {
				if n := len(out); n > 0 && out[n-1].kind == actType {
					out[n-1] = action{kind: actSearch, clause: out[n-1].clause, query: out[n-1].text}
					continue
				}
				return nil, refuse(c, "a search that does not say what to search for")
			}
			// A context opens its app, unless the goal is already in it.
			if a.kind == actLaunch && a.clause == "" {
				if ctx, ok := contextAt(out, len(out)); ok && sameApp(ctx, a.app) {
					continue
				}
				a.clause = c
			}
			out = append(out, a)
		}
		read = append(read, strconv.Quote(c))
	}
	return out, nil
}

// contextAt is the app the goal works in at action i: the one its last
// launch before i opened ("" after going home, or before any launch).
func contextAt(acts []action, i int) (string, bool) {
	for j := i - 1; j >= 0; j-- {
		switch acts[j].kind {
		case actLaunch:
			return acts[j].app, true
		case actHome:
			return "", false
		}
	}
	return "", false
}

func sameApp(a, b string) bool {
	if strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) {
		return true
	}
	pa, pb := appPackage(a), appPackage(b)
	return pa != "" && pa == pb
}

// appNamed reports whether name is an app: one the table knows, or one of
// the phone's installed apps by name or package.
func appNamed(name string, installed []apps.Installed) bool {
	name = unquote(name)
	if name == "" || isSetting(name) {
		return false
	}
	if knownApp(name) {
		return true
	}
	k := apps.Key(name)
	for _, a := range installed {
		if strings.EqualFold(a.Package, name) {
			return true
		}
		for _, n := range a.Names {
			if apps.Key(n) == k {
				return true
			}
		}
	}
	return false
}

// readList lists the clauses read.
func readList(read []string) string {
	if len(read) == 0 {
		return "no other part"
	}
	return strings.Join(read, ", ")
}

// otherVerbs start instructions the grammar does not know ("add",
// "删除"). A separator followed by one ends a clause, so the clause before
// it does not swallow it as an argument ("open Settings and delete X" is
// not the app "Settings and delete X") and the instruction is refused by
// name.
var (
	otherVerbsEN = regexp.MustCompile(`(?i)^(turn|switch|toggle|enable|disable|set|add|create|make|send|text|message|call|dial|delete|remove|change|select|choose|pick|buy|purchase|pay|order|check|uncheck|save|share|install|uninstall|log|sign|book|play|stop|pause|take|record|show|close|exit|quit|wait|copy|paste|allow|deny|accept|reply|forward|download|upload|update|connect|disconnect|pair|reset|clear|mute|unmute|increase|decrease|raise|lower|put|move|rename|edit|read|tell|ask|let|use)\b`)
	otherVerbsZH = []string{"关闭", "关掉", "关上", "添加", "新建", "创建", "发送", "发给", "拨打", "打电话", "删除", "选择", "购买", "支付", "付款", "切换", "启用", "禁用", "调到", "调成", "保存", "分享", "安装", "卸载", "登录", "退出", "等待", "复制", "允许", "拒绝", "回复", "下载", "更新", "连接", "断开", "重置", "清除", "静音", "加入", "修改", "编辑", "设为", "设成", "确认", "滑到", "滚动到", "把", "将", "给"}
)

func startsWithOtherVerb(s string) bool {
	s = stripPolite(s)
	if otherVerbsEN.MatchString(s) {
		return true
	}
	for _, v := range otherVerbsZH {
		if strings.HasPrefix(s, v) {
			return true
		}
	}
	return false
}

// settings are switches and modes of the phone that a goal may "open"
// (打开蓝牙 is "turn on Bluetooth"): not apps, so not something to launch.
var settings = []string{"bluetooth", "wi-fi", "wifi", "wlan", "airplane mode", "flight mode", "aeroplane mode",
	"dark theme", "dark mode", "night mode", "mobile data", "hotspot", "flashlight", "torch", "nfc", "gps",
	"do not disturb", "vpn", "蓝牙", "无线网", "无线网络", "无线局域网", "飞行模式", "深色模式", "深色主题", "夜间模式",
	"暗色模式", "移动数据", "热点", "个人热点", "手电筒", "勿扰模式", "免打扰", "定位", "位置信息", "数据漫游"}

func isSetting(name string) bool {
	n := fold(strings.TrimSpace(name))
	for _, s := range settings {
		if n == s {
			return true
		}
	}
	return false
}

// switchSetting is a switch of Settings the planner can turn on or off:
// what goals call it, the main-page row that opens its page, and its row
// there, as Android's Settings label them (English, Chinese).
type switchSetting struct {
	name  string
	words []string
	page  []string
	rows  []string
}

var switches = []*switchSetting{
	{"Wi-Fi", []string{"wi-fi", "wifi", "wlan", "无线网", "无线网络", "无线局域网"}, []string{"Network & internet", "网络和互联网"}, []string{"Wi-Fi", "WLAN", "Use Wi-Fi", "使用 WLAN"}},
	{"Bluetooth", []string{"bluetooth", "蓝牙"}, []string{"Connected devices", "已连接的设备"}, []string{"Use Bluetooth", "使用蓝牙"}},
	{"airplane mode", []string{"airplane mode", "flight mode", "aeroplane mode", "飞行模式"}, []string{"Network & internet", "网络和互联网"}, []string{"Airplane mode", "飞行模式"}},
	{"dark theme", []string{"dark theme", "dark mode", "night mode", "深色主题", "深色模式", "暗色模式", "夜间模式"}, []string{"Display", "显示"}, []string{"Dark theme", "深色主题"}},
}

// switchNames lists the switches, for messages.
func switchNames() string {
	var n []string
	for _, s := range switches {
		n = append(n, s.name)
	}
	return strings.Join(n, ", ")
}

var ownerRE = regexp.MustCompile(`(?i)^(?:the|my|your)\s+|\s+(?:setting|settings|switch|toggle)$|^(?:手机的?|我的)|(?:功能|开关|设置)$`)

// switchNamed is the switch a goal's words name.
func switchNamed(words string) (*switchSetting, bool) {
	w := fold(ownerRE.ReplaceAllString(strings.TrimSpace(unquote(words)), ""))
	for _, s := range switches {
		for _, n := range s.words {
			if w == n {
				return s, true
			}
		}
	}
	return nil, false
}

// separators join clauses. English words need spaces around them; the
// Chinese ones do not.
var separatorRE = regexp.MustCompile(`(?i)\s*(?:[,，;；、。]|\band then\b|\bthen\b|\band\b|然后|接着|之后|并且|再|并)\s*`)

// splitGoal cuts a goal into clauses. A separator only splits where the text
// after it starts with an instruction, so "search for salt and pepper" stays
// one clause. Chinese clauses are also cut before an instruction verb that
// follows an argument ("打开淘宝搜索Mac mini").
func splitGoal(goal string) []string {
	goal = stripPolite(strings.TrimSpace(goal))
	if goal == "" {
		return nil
	}
	var pieces []string
	last := 0
	for _, loc := range separatorRE.FindAllStringIndex(goal, -1) {
		rest := strings.TrimSpace(goal[loc[1]:])
		if rest == "" || (!startsWithVerb(rest) && !startsWithOtherVerb(rest)) {
			continue
		}
		pieces = append(pieces, goal[last:loc[0]])
		last = loc[1]
	}
	pieces = append(pieces, goal[last:])
	var out []string
	for _, p := range pieces {
		for _, c := range splitChineseVerbs(stripPolite(p)) {
			c = stripPolite(strings.TrimSpace(strings.Trim(strings.TrimSpace(c), ",，;；、。.!！?？")))
			if c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// The words around an instruction that make it a question or a request:
// "can you open the Clock app?", "please …", "帮我打开…", "…吗？".
var (
	politeHeadEN = regexp.MustCompile(`(?i)^(?:(?:can|could|would|will)\s+you(?:\s+please)?|please|kindly|i\s+(?:want|need|would\s+like|'d\s+like)\s+(?:you\s+)?to|help\s+me(?:\s+to)?|let's|go\s+ahead\s+and)\s+`)
	politeTailEN = regexp.MustCompile(`(?i)(?:\s*,?\s*(?:please|for\s+me|thanks|thank\s+you))+\s*[?.!？。！]*$|\s*[?？!！]+$`)
	politeHeadZH = regexp.MustCompile(`^(?:请你?|麻烦你?|帮我|帮忙|你能|你可以|能不能|可不可以|可以|能否|我想|我要)`)
	politeTailZH = regexp.MustCompile(`(?:好吗|好不好|可以吗|行吗|吗|吧|呢|谢谢)+[?？。!！~]*$|[?？!！~]+$`)
)

// stripPolite drops the words that make an instruction a request.
func stripPolite(s string) string {
	for {
		t := strings.TrimSpace(strings.Trim(strings.TrimSpace(s), ",，;；、"))
		t = politeHeadEN.ReplaceAllString(t, "")
		t = politeTailEN.ReplaceAllString(t, "")
		t = strings.TrimSpace(politeHeadZH.ReplaceAllString(t, ""))
		t = strings.TrimSpace(politeTailZH.ReplaceAllString(t, ""))
		if t == s {
			return t
		}
		s = t
	}
}

var (
	enVerbRE = regexp.MustCompile(`(?i)^(open|launch|start|run|search|look up|find|tap|click|press|touch|type|enter|input|write|scroll|swipe|go|navigate|return)\b`)
	zhVerbs  = []string{"打开", "启动", "开启", "运行", "搜索", "搜", "查找", "点击", "点开", "点一下", "轻触", "输入", "上滑", "下滑", "向上", "向下", "返回", "回到", "后退", "在"}
)

func startsWithVerb(s string) bool {
	s = stripPolite(s)
	if enVerbRE.MatchString(s) {
		return true
	}
	for _, v := range zhVerbs {
		if strings.HasPrefix(s, v) {
			return true
		}
	}
	return false
}

// splitVerbs are the Chinese verbs that start a new clause when they follow
// an argument.
var splitVerbs = []string{"打开", "启动", "搜索", "点击", "输入", "上滑", "下滑", "返回", "回到桌面"}

func splitChineseVerbs(s string) []string {
	var out []string
	start := 0
	runes := []rune(s)
	// Instructions the grammar does not know also end a launch clause
	// ("打开设置删除…"), never another one: labels hold verbs too
	// ("点击已连接的设备" is a tap on 已连接的设备, not 连接).
	verbs := append(append([]string(nil), splitVerbs...), otherVerbsZH[:len(otherVerbsZH)-3]...) // not 把/将/给: too common inside names
	for i := 1; i < len(runes); i++ {
		for j, v := range verbs {
			if j >= len(splitVerbs) && !launchHead(string(runes[start:i])) {
				continue
			}
			vr := []rune(v)
			if i+len(vr) > len(runes) || string(runes[i:i+len(vr)]) != v {
				continue
			}
			// Only after a CJK argument: "打开淘宝搜索…" splits, "点击搜索"
			// (the verb has no argument yet) and "Mac搜索" do not.
			head := strings.TrimSpace(string(runes[start:i]))
			if strings.HasPrefix(head, "在") && (v == "搜索" || v == "输入" || v == "上滑" || v == "下滑" || v == "点击" || v == "打开" || v == "返回" || j >= len(splitVerbs)) {
				// "在淘宝搜索…", "在设置里下滑两次", "在搜索框输入…": one clause.
				continue
			}
			if !hasArgument(head) || !unicode.Is(unicode.Han, runes[i-1]) {
				continue
			}
			out = append(out, head)
			start = i
		}
	}
	return append(out, string(runes[start:]))
}

// launchHead reports a clause that starts by launching an app.
func launchHead(s string) bool {
	for _, v := range []string{"打开", "启动", "开启", "运行", "请打开"} {
		if strings.HasPrefix(strings.TrimSpace(s), v) {
			return true
		}
	}
	return false
}

// hasArgument reports whether a clause head already has something after its
// verb ("打开淘宝" yes, "点击" no).
func hasArgument(head string) bool {
	for _, v := range zhVerbs {
		if strings.HasPrefix(head, v) {
			return strings.TrimSpace(strings.TrimPrefix(head, v)) != ""
		}
	}
	return head != ""
}

var (
	reLaunchEN  = regexp.MustCompile(`(?i)^(?:open|launch|start|run)\s+(?:up\s+)?(?:the\s+)?(?:app\s+)?(.+?)(?:\s+app)?$`)
	reSearchEN  = regexp.MustCompile(`(?i)^(?:search|look\s+up|find)(?:\s+for)?\s+(.+?)$`)
	reContextEN = regexp.MustCompile(`(?i)^(.+?)\s+(?:in|on|inside|within|using)\s+(?:the\s+)?(.+?)(?:\s+app)?$`)
	reCountEN   = regexp.MustCompile(`(?i)^(.+?)\s+(once|twice|thrice|(\d+|two|three|four|five|six|seven|eight|nine|ten)\s+times)$`)
	reTapEN     = regexp.MustCompile(`(?i)^(?:tap|click|press|touch)(?:\s+on)?\s+(?:the\s+)?(.+?)(?:\s+(?:button|icon|tab|link))?$`)
	rePickEN    = regexp.MustCompile(`(?i)^(?:tap|click|press|touch|open|select|choose|pick)(?:\s+on)?\s+the\s+(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\d+(?:st|nd|rd|th))\s+(.+?)$`)
	reTypeEN    = regexp.MustCompile(`(?i)^(?:type|enter|input|write)\s+(.+?)(?:\s+(?:into|in|to)\s+(?:the\s+)?(.+?)(?:\s+(?:field|box))?)?$`)
	reScrollEN  = regexp.MustCompile(`(?i)^(scroll|swipe)\s+(up|down|left|right)(?:\s+(.+))?$`)
	reEdgeEN    = regexp.MustCompile(`(?i)^(?:scroll|swipe|go)\s+(?:all\s+the\s+way\s+)?(?:to\s+|down\s+to\s+|up\s+to\s+)?(?:the\s+)?(bottom|top|end|beginning|start)(?:\s+of\s+(?:the\s+)?(?:page|list|screen))?$|^scroll\s+all\s+the\s+way\s+(up|down)$`)
	reBackEN    = regexp.MustCompile(`(?i)^(?:go\s+back|navigate\s+back|press\s+(?:the\s+)?back(?:\s+(?:key|button))?|back)(?:\s+(.+))?$`)
	reHomeEN    = regexp.MustCompile(`(?i)^(?:go|return|navigate)?\s*(?:to\s+)?(?:the\s+)?home(?:\s+screen)?$|^(?:press\s+(?:the\s+)?home(?:\s+(?:key|button))?)$`)
	reSwitchEN  = regexp.MustCompile(`(?i)^(?:turn|switch)\s+(on|off)\s+(.+)$|^(?:turn|switch)\s+(.+?)\s+(on|off)$|^(enable|disable|activate|deactivate)\s+(.+)$|^make\s+sure\s+(.+?)\s+is\s+(on|off|enabled|disabled)$`)

	reLaunchZH   = regexp.MustCompile(`^(?:打开|启动|开启|运行)(.+?)(?:应用|APP|app)?$`)
	reContextZH  = regexp.MustCompile(`^(?:在|用|去)(.+?)(?:里面|里|中|上|内)?((?:搜索|搜|查找|下滑|上滑|向上|向下|滑|滚动|点击|点开|点|打开|开启|关闭|关掉|返回|选择|选).*)$`)
	reCountZH    = regexp.MustCompile(`^(.+?)\s*([一两二三四五六七八九十\d]+)\s*(?:次|遍)$`)
	reSearchZH   = regexp.MustCompile(`^(?:搜索|搜一下|搜|查找)(?:一下)?(.*)$`)
	reTapZH      = regexp.MustCompile(`^(?:点击|点一下|轻触|点开|点)(?:一下)?(.+?)(?:按钮|图标)?$`)
	rePickZH     = regexp.MustCompile(`^(?:点击|点开|打开|点|选择|选中|选)(?:一下)?(?:第\s*([一二三四五六七八九十两\d]+)|(最后一))\s*(?:个|条|项|位|款|件)(.*)$`)
	reTypeIntoZH = regexp.MustCompile(`^在(.+?)(?:里|中)?输入(.+)$`)
	reTypeZH     = regexp.MustCompile(`^输入(.+?)(?:到(.+))?$`)
	reScrollZH   = regexp.MustCompile(`^(上滑|下滑|向上滑动?|向下滑动?|向上滚动|向下滚动|往上滑|往下滑)$`)
	reEdgeZH     = regexp.MustCompile(`^(?:滑|滚动|翻|滑动|拉)(?:到|至)(?:最)?(底部|底端|底|最下面|下面|顶部|顶端|顶|最上面|上面)$|^(?:回到|返回)(顶部)$`)
	reHomeZH     = regexp.MustCompile(`^(?:回到|返回|去)(?:桌面|主屏幕|主屏|首屏)$`)
	reBackZH     = regexp.MustCompile(`^(?:返回|后退|按返回键|返回上一页|返回上一级)$`)
	reSwitchZH   = regexp.MustCompile(`^(打开|开启|启用|关闭|关掉|关上|禁用)(.+)$|^确认(.+?)(?:已|是)(开启|打开|关闭|关着|开着)(?:的)?$`)
)

// parseClause reads one clause into its actions: "search X on Taobao" is
// a launch of Taobao and a search, "scroll down twice in Settings" a launch
// of Settings and two scrolls. It returns nil and, when it can say, the
// words that have no place ("quickly" in "scroll down quickly").
func parseClause(c string, isApp func(string) bool) ([]action, string) {
	c = stripPolite(c)
	var ctx string
	count := 0
	// Peel the trailing "in <app>" and "twice" / "3 times", in any order.
	for {
		if m := reCountEN.FindStringSubmatch(c); m != nil && count == 0 {
			count = countOf(m[2])
			c = strings.TrimSpace(m[1])
			continue
		}
		if m := reCountZH.FindStringSubmatch(c); m != nil && count == 0 {
			if n := zhNumber(m[2]); n > 0 {
				count = n
				c = strings.TrimSpace(m[1])
				continue
			}
		}
		if m := reContextEN.FindStringSubmatch(c); m != nil && ctx == "" && isApp(m[2]) && !reTypeEN.MatchString(c) {
			ctx = unquote(m[2])
			c = strings.TrimSpace(m[1])
			continue
		}
		if m := reContextZH.FindStringSubmatch(c); m != nil && ctx == "" && isApp(m[1]) {
			ctx = unquote(m[1])
			c = strings.TrimSpace(m[2])
			continue
		}
		break
	}
	a, unplaced := parseCore(c, isApp)
	if a == nil {
		return nil, unplaced
	}
	a.clause = c
	if count > 0 {
		switch a.kind {
		case actScroll, actBack:
			if a.edge {
				return nil, fmt.Sprintf("a count (%d times) for a scroll that goes to the end anyway", count)
			}
			a.count = count
		default:
			return nil, fmt.Sprintf("a count (%d times) for an instruction that is done once", count)
		}
	}
	if a.kind == actSwitch {
		// A switch is in Settings, whatever the goal says around it.
		if ctx != "" && appPackage(ctx) != appPackage("Settings") {
			return nil, fmt.Sprintf("%s is a switch of Settings, not of %s", a.sw.name, ctx)
		}
		return []action{{kind: actLaunch, app: settingsName(c)}, *a}, ""
	}
	if ctx == "" {
		return []action{*a}, ""
	}
	if a.kind == actLaunch {
		return nil, fmt.Sprintf("opening %s inside %s", a.app, ctx)
	}
	if a.kind == actSearch {
		a.app = ctx
	}
	return []action{{kind: actLaunch, app: ctx}, *a}, ""
}

// settingsName is what the goal's language calls Settings.
func settingsName(clause string) string {
	if textLang(clause) == "zh" {
		return "设置"
	}
	return "Settings"
}

// parseCore reads the instruction itself, once its context and count are
// peeled off.
func parseCore(c string, isApp func(string) bool) (*action, string) {
	one := func(a action) (*action, string) { return &a, "" }
	extra := func(words string) (*action, string) {
		return nil, fmt.Sprintf("it cannot place %q", strings.TrimSpace(words))
	}
	switch {
	case reHomeZH.MatchString(c):
		return one(action{kind: actHome})
	case reBackZH.MatchString(c):
		return one(action{kind: actBack})
	case reScrollZH.MatchString(c):
		m := reScrollZH.FindStringSubmatch(c)
		dir := "down"
		if strings.Contains(m[1], "上") {
			dir = "up"
		}
		return one(action{kind: actScroll, dir: dir})
	case reEdgeZH.MatchString(c):
		m := reEdgeZH.FindStringSubmatch(c)
		dir := "down"
		if strings.Contains(m[1]+m[2], "顶") || strings.Contains(m[1], "上") {
			dir = "up"
		}
		return one(action{kind: actScroll, dir: dir, edge: true})
	case rePickZH.MatchString(c):
		m := rePickZH.FindStringSubmatch(c)
		n := -1
		if m[2] == "" {
			n = zhNumber(m[1])
		}
		if n == 0 {
			return extra(m[1])
		}
		return one(action{kind: actPick, nth: n, noun: strings.TrimSpace(unquote(m[3]))})
	case reSwitchZH.MatchString(c):
		m := reSwitchZH.FindStringSubmatch(c)
		verb, what := m[1], m[2]
		if m[3] != "" {
			verb, what = m[4], m[3]
		}
		on := strings.ContainsAny(verb, "打开启") || verb == "开着"
		if sw, ok := switchNamed(what); ok {
			return one(action{kind: actSwitch, sw: sw, on: on})
		}
		if !strings.HasPrefix(verb, "关") && !strings.HasPrefix(verb, "禁") && m[3] == "" {
			break // 打开淘宝: a launch
		}
		if isSetting(what) {
			return nil, fmt.Sprintf("a setting it cannot switch (it switches %s)", switchNames())
		}
		return nil, "not a switch it knows (" + switchNames() + ")"
	}
	switch {
	case reTypeIntoZH.MatchString(c):
		m := reTypeIntoZH.FindStringSubmatch(c)
		return one(action{kind: actType, text: unquote(m[2]), field: unquote(m[1])})
	case reSearchZH.MatchString(c):
		return one(action{kind: actSearch, query: unquote(reSearchZH.FindStringSubmatch(c)[1])})
	case reLaunchZH.MatchString(c):
		return one(action{kind: actLaunch, app: unquote(reLaunchZH.FindStringSubmatch(c)[1])})
	case reTypeZH.MatchString(c):
		m := reTypeZH.FindStringSubmatch(c)
		return one(action{kind: actType, text: unquote(m[1]), field: unquote(m[2])})
	case reTapZH.MatchString(c):
		return one(action{kind: actTap, label: unquote(reTapZH.FindStringSubmatch(c)[1])})

	case reHomeEN.MatchString(c):
		return one(action{kind: actHome})
	case reBackEN.MatchString(c):
		if m := reBackEN.FindStringSubmatch(c); m[1] != "" {
			return extra(m[1])
		}
		return one(action{kind: actBack})
	case reEdgeEN.MatchString(c):
		m := reEdgeEN.FindStringSubmatch(c)
		w := strings.ToLower(m[1] + m[2])
		dir := "down"
		if w == "top" || w == "beginning" || w == "start" || w == "up" {
			dir = "up"
		}
		return one(action{kind: actScroll, dir: dir, edge: true})
	case reScrollEN.MatchString(c):
		m := reScrollEN.FindStringSubmatch(c)
		if m[3] != "" {
			return extra(m[3])
		}
		dir := strings.ToLower(m[2])
		if strings.EqualFold(m[1], "swipe") {
			// A finger swiping up moves the content up: what is below shows.
			dir = map[string]string{"up": "down", "down": "up", "left": "right", "right": "left"}[dir]
		}
		return one(action{kind: actScroll, dir: dir})
	case reSwitchEN.MatchString(c):
		m := reSwitchEN.FindStringSubmatch(c)
		var verb, what string
		switch {
		case m[1] != "":
			verb, what = m[1], m[2]
		case m[3] != "":
			verb, what = m[4], m[3]
		case m[5] != "":
			verb, what = m[5], m[6]
		default:
			verb, what = m[8], m[7]
		}
		verb = strings.ToLower(verb)
		on := verb == "on" || verb == "enable" || verb == "activate" || verb == "enabled"
		if sw, ok := switchNamed(what); ok {
			return one(action{kind: actSwitch, sw: sw, on: on})
		}
		if isSetting(what) {
			return nil, fmt.Sprintf("%q is a setting it cannot switch (it switches %s)", what, switchNames())
		}
		return nil, fmt.Sprintf("%q is not a switch it knows (%s)", what, switchNames())
	case rePickEN.MatchString(c):
		m := rePickEN.FindStringSubmatch(c)
		return one(action{kind: actPick, nth: ordinalOf(m[1]), noun: unquote(m[2])})
	case reSearchEN.MatchString(c):
		return one(action{kind: actSearch, query: unquote(reSearchEN.FindStringSubmatch(c)[1])})
	case reLaunchEN.MatchString(c):
		return one(action{kind: actLaunch, app: unquote(reLaunchEN.FindStringSubmatch(c)[1])})
	case reTypeEN.MatchString(c):
		m := reTypeEN.FindStringSubmatch(c)
		return one(action{kind: actType, text: unquote(m[1]), field: unquote(m[2])})
	case reTapEN.MatchString(c):
		return one(action{kind: actTap, label: unquote(reTapEN.FindStringSubmatch(c)[1])})
	}
	return nil, ""
}

var enNumbers = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// countOf reads "twice", "3 times", "three times".
func countOf(s string) int {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "once":
		return 1
	case "twice":
		return 2
	case "thrice":
		return 3
	}
	f := strings.Fields(s)[0]
	if n, ok := enNumbers[f]; ok {
		return n
	}
	n, _ := strconv.Atoi(f)
	return n
}

var ordinals = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
	"eighth": 8, "ninth": 9, "tenth": 10, "last": -1}

func ordinalOf(s string) int {
	s = strings.ToLower(s)
	if n, ok := ordinals[s]; ok {
		return n
	}
	n, _ := strconv.Atoi(strings.TrimRight(s, "stndrh"))
	return n
}

// zhNumber reads 一 … 十 (and 两, and digits); 0 when it is none of them.
func zhNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	digits := map[rune]int{'一': 1, '两': 2, '二': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	r := []rune(s)
	switch {
	case len(r) == 1 && r[0] == '十':
		return 10
	case len(r) == 1:
		return digits[r[0]]
	case len(r) == 2 && r[0] == '十':
		return 10 + digits[r[1]]
	}
	return 0
}

// unquote drops the quotes a user may put around a label or query.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	for _, q := range [][2]string{{`"`, `"`}, {`'`, `'`}, {"“", "”"}, {"‘", "’"}, {"「", "」"}, {"《", "》"}} {
		if len(s) >= len(q[0])+len(q[1]) && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			return strings.TrimSpace(s[len(q[0]) : len(s)-len(q[1])])
		}
	}
	return s
}
