package safety

import (
	"slices"
	"strings"
	"unicode"
)

// fold prepares a label for matching: lower case, full-width Latin and
// half-width katakana folded to their usual forms, curly apostrophes made
// straight, and every run of characters that is not a letter, a digit or
// an apostrophe turned into one space, with a space between a dense-script
// rune (Han, kana, Hangul, Thai) and a Latin one. The result starts and
// ends with a space, so a Latin word matches on word boundaries by looking
// for " word " in it, and a dense-script word by looking for the word.
func fold(s string) string {
	rs := make([]rune, 0, len(s))
	for _, r := range s {
		r = widthFold(r)
		if (r == 0xFF9E || r == 0xFF9F) && len(rs) > 0 {
			// A half-width (han)dakuten voices the kana before it.
			rs[len(rs)-1] = voiced(rs[len(rs)-1], r == 0xFF9F)
			continue
		}
		rs = append(rs, r)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(' ')
	space := true   // the last byte written is a space
	lastDense := -1 // -1 none, 0 Latin, 1 dense
	for _, r := range rs {
		if r == '’' || r == '‘' || r == '`' || r == '´' {
			r = '\''
		}
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) ||
			r == '\'' && !space
		if !word {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		d := 0
		if dense(r) {
			d = 1
		}
		if !space && lastDense >= 0 && d != lastDense && !unicode.IsDigit(r) {
			b.WriteByte(' ')
		}
		lastDense = d
		b.WriteRune(unicode.ToLower(r))
		space = false
	}
	if !space {
		b.WriteByte(' ')
	}
	// A trailing apostrophe ("users' ") is punctuation, not part of a word.
	return strings.ReplaceAll(b.String(), "' ", " ")
}

// dense reports a rune of a script written without spaces between words.
func dense(r rune) bool {
	if r < 0x0E00 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Thai, r) || r == 'ー'
}

// widthFold maps full-width ASCII to ASCII, the ideographic space to a
// space and half-width katakana to full-width.
func widthFold(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFF01 + '!'
	case r == 0x3000:
		return ' '
	case r >= 0xFF61 && r <= 0xFF9D:
		return halfKana[r-0xFF61]
	}
	return r
}

// halfKana is U+FF61..U+FF9D in full width.
var halfKana = []rune("。「」、・ヲァィゥェォャュョッーアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン")

// voiced applies a dakuten (or, with semi, a handakuten) to a full-width
// katakana; other runes come back unchanged.
func voiced(r rune, semi bool) rune {
	switch {
	case semi && r >= 'ハ' && r <= 'ホ' && (r-'ハ')%3 == 0:
		return r + 2
	case semi:
		return r
	case r == 'ウ':
		return 'ヴ'
	case r >= 'カ' && r <= 'ト' && r != 'ッ':
		// カ..ト alternate plain/voiced except ツ's neighbourhood (ッ ツ ヅ).
		if r >= 'ツ' {
			if (r-'ツ')%2 == 0 {
				return r + 1
			}
			return r
		}
		if (r-'カ')%2 == 0 {
			return r + 1
		}
	case r >= 'ハ' && r <= 'ホ' && (r-'ハ')%3 == 0:
		return r + 1
	}
	return r
}

// phrase is one compiled word: its folded form as it is searched for.
type phrase struct {
	word  string // as written in words.go, without the "=" mark
	key   string // " buy now " for Latin words, "立即购买" for dense-script words
	cat   Category
	whole bool // matches only a label that is exactly this word
	ja    bool // names the action in Japanese only (japaneseOnly)
}

// wordList is a compiled list of words.
type wordList []phrase

func compileWords(cat Category, words []string) wordList {
	out := make(wordList, 0, len(words))
	for _, w := range words {
		whole := wholeOnly[cat]
		if strings.HasPrefix(w, "=") {
			w, whole = w[1:], true
		}
		f := fold(w)
		if strings.TrimSpace(f) == "" {
			panic("safety: word " + w + " folds to nothing")
		}
		key := f
		if denseString(f) {
			key = strings.TrimSpace(f)
		}
		out = append(out, phrase{word: w, key: key, cat: cat, whole: whole, ja: slices.Contains(japaneseOnly, w)})
	}
	return out
}

func denseString(s string) bool {
	for _, r := range s {
		if dense(r) {
			return true
		}
	}
	return false
}

// find returns the first phrase of l in the folded text f (a whole-label
// phrase only when it is all of f), Japanese-only words included.
func (l wordList) find(f string) (phrase, bool) { return l.findIn(f, true) }

// findIn is find on a screen in Japanese (ja) or not: elsewhere the
// Japanese-only words are not words.
func (l wordList) findIn(f string, ja bool) (phrase, bool) {
	for _, p := range l {
		if p.ja && !ja {
			continue
		}
		if p.whole {
			if strings.TrimSpace(p.key) == strings.TrimSpace(f) {
				return p, true
			}
			continue
		}
		if strings.Contains(f, p.key) {
			return p, true
		}
	}
	return phrase{}, false
}

// whole returns the phrase of l that is all of the folded text f.
func (l wordList) whole(f string) (phrase, bool) {
	t := strings.TrimSpace(f)
	for _, p := range l {
		if strings.TrimSpace(p.key) == t {
			return p, true
		}
	}
	return phrase{}, false
}

// Compiled vocabulary, built once from words.go.
var (
	actionLists []wordList // in categoryOrder
	// wholeOnly categories match only a whole label: "Allow" and "Install"
	// are buttons, "Allow notifications" and "安装方式" are not.
	wholeOnly     = map[Category]bool{Permission: true, Install: true}
	exceptionList = compileWords("", exceptions)
	escapeList    = compileWords("", escapeLabels)
	grantList     = compileWords(Permission, grantLabels)
	sheetList     = compileWords(Payment, paymentSheetWords)
	commitList    = compileWords(Payment, commitWords)
	composerList  = compileWords(Send, composerWords)
	searchList    = compileWords("", searchWords)
	toggleList    = compileWords(Account, securityToggleWords)
	appNameList   = compileWords(Payment, appNameWords)
	payMarkers    = map[string]wordList{}
)

func init() {
	for _, c := range categoryOrder {
		actionLists = append(actionLists, compileWords(c, actionWords[c]))
	}
	for pkg, a := range payScreenApps {
		payMarkers[pkg] = compileWords(Payment, a.markers)
	}
}

// clean is fold with the exceptions blanked out: "Don't allow" has no
// "allow" left, "支付宝" no "支付".
func clean(s string) string {
	f := fold(s)
	for _, p := range exceptionList {
		if strings.Contains(f, p.key) {
			f = strings.ReplaceAll(f, p.key, " ")
		}
	}
	return f
}

// Labels longer than these are content (a headline, a message, a
// description), not the name of a button: a news title that says
// "delete" is not a delete button.
const (
	maxActionWords = 5  // space-separated words, numbers left out
	maxActionRunes = 16 // dense-script runes
)

// short reports a folded label short enough to name an action.
func short(f string) bool { return fitsIn(f, maxActionWords, maxActionRunes) }

// fitsIn reports whether a folded text has at most maxWords words and
// maxRunes dense-script runes. Numbers do not count as words ("Pay
// ¥4,155.70" is one word and a price).
func fitsIn(f string, maxWords, maxRunes int) bool {
	words, runes := 0, 0
	for _, w := range strings.Fields(f) {
		if strings.TrimFunc(w, unicode.IsDigit) != "" {
			words++
		}
		for _, r := range w {
			if dense(r) {
				runes++
			}
		}
	}
	return words <= maxWords && runes <= maxRunes
}

// actionWord finds the first action word in a label, by category order,
// on a screen in Japanese (ja) or not. Long labels and empty ones have
// none.
func actionWord(label string, ja bool) (phrase, bool) {
	if label == "" {
		return phrase{}, false
	}
	f := clean(label)
	if !short(f) {
		return phrase{}, false
	}
	for _, l := range actionLists {
		if p, ok := l.findIn(f, ja); ok {
			return p, true
		}
	}
	return phrase{}, false
}

// kana reports Japanese kana in s (hiragana, katakana, half-width
// katakana), which Chinese text never holds.
func kana(s string) bool {
	for _, r := range s {
		if r >= 0x3041 && r <= 0x30FF && r != 0x30FB || r >= 0xFF66 && r <= 0xFF9D {
			return true
		}
	}
	return false
}

// navigationID reports an id of a tab or a page switcher: what it says is
// where it goes ("driver_page_tab_pay" is the wallet tab), not an action.
func navigationID(words string) bool {
	for _, w := range strings.Fields(strings.ToLower(words)) {
		switch w {
		case "tab", "tabs", "nav", "navigation", "page", "menu", "drawer", "title":
			return true
		}
	}
	return false
}

// idWords turns a resource id into words: "com.app:id/btn_buyNow" →
// "btn buy now".
func idWords(id string) string {
	if i := strings.Index(id, ":id/"); i >= 0 {
		id = id[i+4:]
	}
	var b strings.Builder
	var prev rune
	for _, r := range id {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}
