package rule

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
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
)

// action is one clause of a goal, read.
type action struct {
	kind  kind
	app   string // actLaunch; actSearch: the app to search in, if named
	query string // actSearch
	label string // actTap
	text  string // actType
	field string // actType: the field's label, if named
	dir   string // actScroll: up, down, left, right
}

// ErrUnreadable is returned for a goal the rule Planner cannot read.
var ErrUnreadable = errors.New("the rule planner cannot read this goal")

// understood lists what the rule Planner reads, for the unreadable-goal reason.
const understood = `it understands: open/launch <app>, search (for) <query>, tap/click <label>, ` +
	`type <text> [into <field>], scroll up/down, go back, go home, joined by "and", "then" or commas ` +
	`(打开/启动 <应用>, 搜索 <内容>, 点击 <文字>, 输入 <文字>, 上滑/下滑, 返回, 回到桌面, joined by 然后/并/，). ` +
	`For any other goal use the AI planner: --planner ai`

// parseGoal reads the whole goal into its actions, in order, before any of
// it is acted on. A goal it can read only part of is refused: the error
// names the part it cannot read and says what it did read, so that "open
// Settings and turn on Bluetooth" neither launches Settings and then stops
// halfway nor looks for an app called "Bluetooth".
func parseGoal(goal string) ([]action, error) {
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
	for _, c := range clauses {
		acts, ok := parseClause(c)
		if !ok {
			return nil, refuse(c, "not an instruction it knows")
		}
		for _, a := range acts {
			if a.kind == actLaunch && isSetting(a.app) {
				// "打开蓝牙", "open Wi-Fi": switching a setting, not an app.
				return nil, refuse(c, fmt.Sprintf("switching a setting (%s), not launching an app", a.app))
			}
			// "输入Mac mini并搜索": a search without a query submits what was typed.
			if a.kind == actSearch && a.query == "" {
				if n := len(out); n > 0 && out[n-1].kind == actType {
					out[n-1] = action{kind: actSearch, query: out[n-1].text}
					continue
				}
				return nil, refuse(c, "a search that does not say what to search for")
			}
			out = append(out, a)
		}
		read = append(read, fmt.Sprintf("%q", c))
	}
	return out, nil
}

// readList lists the clauses read.
func readList(read []string) string {
	if len(read) == 0 {
		return "no other part"
	}
	return strings.Join(read, ", ")
}

// otherVerbs start instructions the grammar does not know ("turn on",
// "关闭"). A separator followed by one ends a clause, so the clause before
// it does not swallow it as an argument ("open Settings and turn on
// Bluetooth" is not the app "Settings and turn on Bluetooth") and the
// instruction is refused by name.
var (
	otherVerbsEN = regexp.MustCompile(`(?i)^(turn|switch|toggle|enable|disable|set|add|create|make|send|text|message|call|dial|delete|remove|change|select|choose|pick|buy|purchase|pay|order|check|uncheck|save|share|install|uninstall|log|sign|book|play|stop|pause|take|record|show|close|exit|quit|wait|copy|paste|allow|deny|accept|reply|forward|download|upload|update|connect|disconnect|pair|reset|clear|mute|unmute|increase|decrease|raise|lower|put|move|rename|edit|read|tell|ask|let|use)\b`)
	otherVerbsZH = []string{"关闭", "关掉", "关上", "添加", "新建", "创建", "发送", "发给", "拨打", "打电话", "删除", "选择", "购买", "支付", "付款", "切换", "启用", "禁用", "调到", "调成", "保存", "分享", "安装", "卸载", "登录", "退出", "等待", "复制", "允许", "拒绝", "回复", "下载", "更新", "连接", "断开", "重置", "清除", "静音", "加入", "修改", "编辑", "设为", "设成", "把", "将", "给"}
)

func startsWithOtherVerb(s string) bool {
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
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range settings {
		if n == s {
			return true
		}
	}
	return false
}

// separators join clauses. English words need spaces around them; the
// Chinese ones do not.
var separatorRE = regexp.MustCompile(`(?i)\s*(?:[,，;；、。]|\band then\b|\bthen\b|\band\b|然后|接着|之后|并且|再|并)\s*`)

// splitGoal cuts a goal into clauses. A separator only splits where the text
// after it starts with an instruction, so "search for salt and pepper" stays
// one clause. Chinese clauses are also cut before an instruction verb that
// follows an argument ("打开淘宝搜索Mac mini").
func splitGoal(goal string) []string {
	goal = strings.TrimSpace(goal)
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
		for _, c := range splitChineseVerbs(p) {
			c = strings.TrimSpace(strings.Trim(strings.TrimSpace(c), ",，;；、。.!！"))
			if c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

var (
	enVerbRE = regexp.MustCompile(`(?i)^(open|launch|start|run|search|look up|find|tap|click|press|touch|type|enter|input|write|scroll|swipe|go|navigate|return)\b`)
	zhVerbs  = []string{"打开", "启动", "开启", "运行", "搜索", "搜", "查找", "点击", "点一下", "轻触", "输入", "上滑", "下滑", "向上", "向下", "返回", "回到", "后退", "在"}
)

func startsWithVerb(s string) bool {
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
	// ("打开设置关闭蓝牙"), never another one: labels hold verbs too
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
			if strings.HasPrefix(head, "在") && (v == "搜索" || v == "输入") {
				// "在淘宝搜索…", "在搜索框输入…": one clause.
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
	reLaunchEN = regexp.MustCompile(`(?i)^(?:please\s+)?(?:open|launch|start|run)\s+(?:up\s+)?(?:the\s+)?(?:app\s+)?(.+?)(?:\s+app)?$`)
	reSearchEN = regexp.MustCompile(`(?i)^(?:please\s+)?(?:search|look\s+up|find)(?:\s+for)?\s+(.+?)$`)
	reInAppEN  = regexp.MustCompile(`(?i)^(.+?)\s+(?:on|in)\s+(?:the\s+)?(.+?)(?:\s+app)?$`)
	reTapEN    = regexp.MustCompile(`(?i)^(?:please\s+)?(?:tap|click|press|touch)(?:\s+on)?\s+(?:the\s+)?(.+?)(?:\s+(?:button|icon|tab|link))?$`)
	reTypeEN   = regexp.MustCompile(`(?i)^(?:please\s+)?(?:type|enter|input|write)\s+(.+?)(?:\s+(?:into|in|to)\s+(?:the\s+)?(.+?)(?:\s+(?:field|box))?)?$`)
	reScrollEN = regexp.MustCompile(`(?i)^(?:please\s+)?(scroll|swipe)\s+(up|down|left|right)(?:\s+.*)?$`)
	reBackEN   = regexp.MustCompile(`(?i)^(?:please\s+)?(?:go\s+back|navigate\s+back|press\s+(?:the\s+)?back(?:\s+(?:key|button))?|back)$`)
	reHomeEN   = regexp.MustCompile(`(?i)^(?:please\s+)?(?:go|return|navigate)?\s*(?:to\s+)?(?:the\s+)?home(?:\s+screen)?$|^(?:press\s+(?:the\s+)?home(?:\s+(?:key|button))?)$`)

	reLaunchZH   = regexp.MustCompile(`^(?:请)?(?:打开|启动|开启|运行)(.+?)(?:应用|APP|app)?$`)
	reInAppZH    = regexp.MustCompile(`^(?:请)?在(.+?)(?:里|中|上|里面)?(?:搜索|搜|查找)(?:一下)?(.*)$`)
	reSearchZH   = regexp.MustCompile(`^(?:请)?(?:搜索|搜一下|搜|查找)(?:一下)?(.*)$`)
	reTapZH      = regexp.MustCompile(`^(?:请)?(?:点击|点一下|轻触|点)(?:一下)?(.+?)(?:按钮|图标)?$`)
	reTypeIntoZH = regexp.MustCompile(`^(?:请)?在(.+?)(?:里|中)?输入(.+)$`)
	reTypeZH     = regexp.MustCompile(`^(?:请)?输入(.+?)(?:到(.+))?$`)
	reScrollZH   = regexp.MustCompile(`^(?:请)?(上滑|下滑|向上滑动?|向下滑动?|向上滚动|向下滚动|往上滑|往下滑)$`)
	reHomeZH     = regexp.MustCompile(`^(?:请)?(?:回到|返回|去)(?:桌面|主屏幕|主屏|首屏)$`)
	reBackZH     = regexp.MustCompile(`^(?:请)?(?:返回|后退|按返回键|返回上一页|返回上一级)$`)
)

// parseClause reads one clause into one or two actions ("search X on Taobao"
// becomes launch Taobao, search X).
func parseClause(c string) ([]action, bool) {
	c = strings.TrimSpace(c)
	one := func(a action) ([]action, bool) { return []action{a}, true }
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
	case reInAppZH.MatchString(c):
		m := reInAppZH.FindStringSubmatch(c)
		return []action{{kind: actLaunch, app: unquote(m[1])}, {kind: actSearch, query: unquote(m[2]), app: unquote(m[1])}}, true
	case reSearchZH.MatchString(c):
		return one(action{kind: actSearch, query: unquote(reSearchZH.FindStringSubmatch(c)[1])})
	case reLaunchZH.MatchString(c):
		return one(action{kind: actLaunch, app: unquote(reLaunchZH.FindStringSubmatch(c)[1])})
	case reTypeIntoZH.MatchString(c):
		m := reTypeIntoZH.FindStringSubmatch(c)
		return one(action{kind: actType, text: unquote(m[2]), field: unquote(m[1])})
	case reTypeZH.MatchString(c):
		m := reTypeZH.FindStringSubmatch(c)
		return one(action{kind: actType, text: unquote(m[1]), field: unquote(m[2])})
	case reTapZH.MatchString(c):
		return one(action{kind: actTap, label: unquote(reTapZH.FindStringSubmatch(c)[1])})

	case reHomeEN.MatchString(c):
		return one(action{kind: actHome})
	case reBackEN.MatchString(c):
		return one(action{kind: actBack})
	case reScrollEN.MatchString(c):
		m := reScrollEN.FindStringSubmatch(c)
		dir := strings.ToLower(m[2])
		if strings.EqualFold(m[1], "swipe") {
			// A finger swiping up moves the content up: what is below shows.
			dir = map[string]string{"up": "down", "down": "up", "left": "right", "right": "left"}[dir]
		}
		return one(action{kind: actScroll, dir: dir})
	case reSearchEN.MatchString(c):
		q := reSearchEN.FindStringSubmatch(c)[1]
		if m := reInAppEN.FindStringSubmatch(q); m != nil && knownApp(m[2]) {
			app := unquote(m[2])
			return []action{{kind: actLaunch, app: app}, {kind: actSearch, query: unquote(m[1]), app: app}}, true
		}
		return one(action{kind: actSearch, query: unquote(q)})
	case reLaunchEN.MatchString(c):
		return one(action{kind: actLaunch, app: unquote(reLaunchEN.FindStringSubmatch(c)[1])})
	case reTypeEN.MatchString(c):
		m := reTypeEN.FindStringSubmatch(c)
		return one(action{kind: actType, text: unquote(m[1]), field: unquote(m[2])})
	case reTapEN.MatchString(c):
		return one(action{kind: actTap, label: unquote(reTapEN.FindStringSubmatch(c)[1])})
	}
	return nil, false
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
