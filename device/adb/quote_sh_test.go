package adb

import (
	"os/exec"
	"strings"
	"testing"
)

// shMeta is every character a POSIX shell gives a meaning to, and the
// whitespace that splits words.
const shMeta = "|&;<>()$`\\\"' \t\n*?[]#~=%!{},^:@+-./_"

// throughSh runs `printf %s WORD` through a real sh with WORD = Quote(s)
// and returns what sh printed: s itself when Quote made it one inert word.
func throughSh(t testing.TB, s string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
	if err != nil {
		t.Fatalf("sh -c 'printf %%s %s': %v", Quote(s), err)
	}
	return string(out)
}

func needSh(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
}

// Quote is the one quoting of everything phonepilot hands the phone's
// sh -c (input text, package names, broadcast extras, IME ids): every
// metacharacter alone, at either end, doubled, and all of them combined
// come out of a real sh as one word, unchanged, with nothing run.
func TestQuoteThroughARealSh(t *testing.T) {
	needSh(t)
	var cases []string
	for _, c := range shMeta {
		m := string(c)
		cases = append(cases, m, m+m, "a"+m, m+"a", "a"+m+"b", "x "+m+" y")
	}
	cases = append(cases, shMeta, shMeta+shMeta, "'"+shMeta+"'", `"`+shMeta+`"`,
		"$(touch /tmp/phonepilot-quote-pwned)", "`touch /tmp/phonepilot-quote-pwned`", "; touch /tmp/phonepilot-quote-pwned",
		"it's", "''", `'\''`, "Mac mini & \"quotes\" $HOME; rm -rf /", "苹果 Mac mini", "", "-n", "--", "%s%s")
	for _, s := range cases {
		if got := throughSh(t, s); got != s {
			t.Errorf("Quote(%q) = %s; sh printed %q", s, Quote(s), got)
		}
	}
	if _, err := exec.Command("test", "-e", "/tmp/phonepilot-quote-pwned").Output(); err == nil {
		t.Error("a quoted word ran a command")
	}
}

// FuzzQuote: whatever the bytes (but NUL, which no shell command can
// carry), sh gets it back as one word.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a b", shMeta, "it's", "$(id)", "\n", "\\'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			t.Skip()
		}
		needSh(t)
		if got := throughSh(t, s); got != s {
			t.Errorf("Quote(%q) = %s; sh printed %q", s, Quote(s), got)
		}
	})
}
