package phonebench

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"phonepilot/phonebench/tasks"
)

// item is one line of a screen listing as a model reads it
// (`[4] Button "Search" id=search_btn clickable`).
type item struct {
	Index                     int
	Class, Label, ID          string
	Clickable, LongClickable  bool
	Editable, Scrollable      bool
	Checkable, Checked        bool
	Selected, Disabled, Focus bool
}

// listing is a parsed screen listing: its header (size, foreground app)
// and its lines. The decision-maker sees nothing else of the screen.
type listing struct {
	Text    string // the listing as it was given
	Package string // the foreground app of the header, "" when not given
	Items   []item
}

var (
	lineRE   = regexp.MustCompile(`^\[(\d+)\] (\S+)(?: "((?:[^"\\]|\\.)*)")?(?: id=(\S+))?((?: [a-z-]+)*)$`)
	headerRE = regexp.MustCompile(`(?:^| )app (\S+)`)
)

// parseListing reads the text of scene.Listing (TOOLS.md's format). A line
// that is not an element line is an error naming it: the decision-maker
// must not act on a screen it misread.
func parseListing(text string) (listing, error) {
	l := listing{Text: text}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "Screen") {
		return l, fmt.Errorf("listing: no header line (want \"Screen …\"), got %q", first(text, 60))
	}
	if m := headerRE.FindStringSubmatch(lines[0]); m != nil {
		l.Package = m[1]
	}
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			return l, fmt.Errorf("listing: cannot read line %q", first(line, 80))
		}
		idx, err := strconv.Atoi(m[1])
		if err != nil {
			return l, fmt.Errorf("listing: index of %q: %w", first(line, 80), err)
		}
		it := item{Index: idx, Class: m[2], Label: tasks.UnquoteLabel(m[3]), ID: m[4]}
		for _, f := range strings.Fields(m[5]) {
			switch f {
			case "clickable":
				it.Clickable = true
			case "long-clickable":
				it.LongClickable = true
			case "editable":
				it.Editable = true
			case "scrollable":
				it.Scrollable = true
			case "checked":
				it.Checkable, it.Checked = true, true
			case "unchecked":
				it.Checkable = true
			case "selected":
				it.Selected = true
			case "disabled":
				it.Disabled = true
			case "focused":
				it.Focus = true
			case "password":
			default:
				return l, fmt.Errorf("listing: unknown flag %q in %q", f, first(line, 80))
			}
		}
		l.Items = append(l.Items, it)
	}
	return l, nil
}

func first(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// fold is how labels compare: case, curly apostrophes, runs of spaces and
// a trailing cut-off mark do not matter.
func fold(s string) string {
	s = strings.NewReplacer("’", "'", "‘", "'", "\u00a0", " ", "\u2011", "-").Replace(s)
	s = strings.TrimSuffix(strings.TrimSpace(s), "…")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// loading says whether the screen shows that it is still loading: a
// progress bar, a loading text, or nothing a finger can use yet (a splash
// screen, a window still being drawn), as the runtime judges it
// (runtime.loading).
func (l listing) loading() bool {
	usable := false
	for _, it := range l.Items {
		usable = usable || it.Clickable || it.LongClickable || it.Editable || it.Scrollable
	}
	if !usable {
		return true
	}
	for _, it := range l.Items {
		if strings.HasSuffix(it.Class, "ProgressBar") {
			return true
		}
		switch fold(it.Label) {
		case "loading", "loading...", "加载中", "加载中...", "正在加载", "please wait", "请稍候":
			return true
		}
	}
	return false
}

// item is the element listed as [index].
func (l listing) item(index int) (item, bool) {
	for _, it := range l.Items {
		if it.Index == index {
			return it, true
		}
	}
	return item{}, false
}

// editable says whether the element listed as [index] takes text.
func (l listing) editable(index int) bool {
	it, ok := l.item(index)
	return ok && it.Editable
}

// clickable says whether the element listed as [index] can be pressed.
func (l listing) clickable(index int) bool {
	it, ok := l.item(index)
	return ok && (it.Clickable || it.LongClickable) && !it.Disabled
}

// scrollable returns the first scrollable element, if any.
func (l listing) scrollable() (item, bool) {
	for _, it := range l.Items {
		if it.Scrollable {
			return it, true
		}
	}
	return item{}, false
}

// Obstacles are what a model closes before it goes on: an ad, a permission
// prompt (refused: granting one is not the goal), an update nag, an "isn't
// responding" dialog (wait for the app), a network error page (retry).
// strongObstacles close something wherever they are listed; weakObstacles
// ("Close", "Cancel", "Wait"…) are ordinary buttons too, so they count only
// on an element whose id says it belongs to a popup.
var (
	strongObstacles = []string{"don't allow", "not now", "skip ad", "close ad", "no thanks", "no, thanks", "maybe later",
		"不允许", "以后再说", "稍后再说", "暂不", "暂不需要", "跳过", "关闭广告", "×", "✕", "retry", "try again", "重试"}
	weakObstacles = []string{"close", "关闭", "later", "稍后", "skip", "dismiss", "cancel", "取消", "wait", "等待",
		"ok", "确定", "got it", "知道了", "我知道了"}
	popupIDs = []string{"popup", "poplayer", "dialog", "alert", "permission", "update", "anr", "aerr", "error", "interstitial", "overlay", "_ad", "ad_"}
)

// obstacle returns the control that closes what is in the way, if the
// screen shows one. Of several, the one listed last: the listing is in
// drawing order, so that is the topmost layer (an ad over an error page is
// closed before the page's Retry can be reached).
func (l listing) obstacle() (item, bool) {
	strong, weak := map[string]bool{}, map[string]bool{}
	for _, w := range strongObstacles {
		strong[w] = true
	}
	for _, w := range weakObstacles {
		weak[w] = true
	}
	// An iPhone's system alert is listed as an Alert with its buttons
	// after it; they have no ids to say they belong to it.
	alert := len(l.Items)
	for i, it := range l.Items {
		if strings.HasSuffix(it.Class, "Alert") {
			alert = i
			break
		}
	}
	for i := len(l.Items) - 1; i >= 0; i-- {
		it := l.Items[i]
		if !it.Clickable || it.Disabled {
			continue
		}
		w := fold(it.Label)
		if strong[w] || (weak[w] && (i > alert || containsAny(strings.ToLower(it.ID), popupIDs))) {
			return it, true
		}
	}
	return item{}, false
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
