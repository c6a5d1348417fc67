package rule

import (
	"fmt"
	"strings"
	"unicode"

	"phonepilot/apps"
	"phonepilot/scene"
)

// A goal in Chinese on a phone set to English (or the reverse) names its
// targets in a language the screen does not show: "点击设置" finds no 设置
// on an English launcher. When a target cannot be found, the reason says
// so, with what the screen does show, instead of only "could not find".

// textLang is the language a text is written in, as far as the rule
// planner reads goals: "zh" with any Han character, "en" with Latin
// letters and no Han, "" with neither (digits, symbols).
func textLang(s string) string {
	latin := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			return "zh"
		case r < unicode.MaxASCII && unicode.IsLetter(r):
			latin = true
		}
	}
	if latin {
		return "en"
	}
	return ""
}

// screenLang is the language the screen's labels are in: "zh" when labels
// with Han characters are at least as many as those in Latin letters only,
// "en" when there are Latin labels and hardly any Chinese, else "".
func screenLang(sc *scene.Scene) (lang string, sample []string) {
	han, latin := 0, 0
	seen := map[string]bool{}
	for _, el := range sc.Elements {
		l := strings.TrimSpace(el.Label())
		if l == "" || seen[l] || !sc.Visible(el) || apps.SystemUI(el.Package) {
			continue
		}
		seen[l] = true
		switch textLang(l) {
		case "zh":
			han++
		case "en":
			latin++
		default:
			continue
		}
		if len(sample) < 5 && len([]rune(l)) <= 30 {
			sample = append(sample, l)
		}
	}
	switch {
	case han > 0 && han >= latin:
		return "zh", sample
	case latin > 0 && han*4 < latin:
		return "en", sample
	}
	return "", sample
}

var langNames = map[string]string{"en": "English", "zh": "Chinese"}

// languageNote is the clause a target-not-found reason gains when the
// goal's language differs from the screen's ("" when they agree or either
// is unclear).
func (w *work) languageNote() string {
	g := textLang(w.goal)
	s, sample := screenLang(w.sc)
	if g == "" || s == "" || g == s {
		return ""
	}
	shows := ""
	if len(sample) > 0 {
		q := make([]string, len(sample))
		for i, l := range sample {
			q[i] = fmt.Sprintf("%q", l)
		}
		shows = " (it shows " + strings.Join(q, ", ") + ")"
	}
	return fmt.Sprintf("; the goal is in %s but the phone's screen is in %s%s, so the phone's language is probably %s (%s): name the target as the screen shows it",
		langNames[g], langNames[s], shows, langNames[s], s)
}
