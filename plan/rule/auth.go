package rule

import (
	"fmt"
	"strings"

	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The words of a screen only a person can pass: a login (with a password
// field) or a captcha / verification code, in the languages of the
// simulator and of the phones users drive.
var (
	loginWords = []string{"log in", "login", "sign in", "signin", "登录", "登入", "登錄", "iniciar sesión", "entrar",
		"anmelden", "connexion", "se connecter", "ログイン", "로그인", "เข้าสู่ระบบ"}
	captchaWords = []string{"captcha", "验证码", "驗證碼", "verification code", "security code", "one-time code",
		"code de vérification", "código de verificación", "bestätigungscode", "認証コード", "인증번호", "รหัสยืนยัน"}
)

// maxAsks is how many times in a row the planner asks a person about the
// same wall before it gives up.
const maxAsks = 2

// authWall says whether the screen is a login or a captcha the planner
// cannot pass by itself, and what it is ("a login", "a verification
// code").
func authWall(sc *scene.Scene) (string, bool) {
	password, field := false, false
	var words []string
	for _, e := range sc.Elements {
		field = field || e.Editable
		if e.Password || (e.Editable && containsAny(fold(e.ResourceID), []string{"password", "passwd", "pwd"})) {
			password = true
		}
		if l := fold(e.Label()); l != "" && len(l) <= 80 {
			words = append(words, l)
		}
		if id := fold(e.ResourceID); id != "" {
			words = append(words, id)
		}
	}
	text := strings.Join(words, "\n")
	switch {
	case field && containsAny(text, captchaWords): // a code to enter, not a message that quotes one
		return "a verification code", true
	case password && containsAny(text, loginWords):
		return "a login", true
	}
	return "", false
}

// askPerson hands the phone to a person when the screen is a login or a
// captcha the goal does not get through: it asks (ask_user); with an
// answer, it types the answer into the code field when there is one, and
// after maxAsks answers that did not get past the wall it gives up.
func (w *work) askPerson(in plan.Input) ([]plan.PlannedStep, *plan.Finish, bool) {
	what, ok := authWall(w.sc)
	if !ok || w.goalPassesWall() {
		return nil, nil, false
	}
	if a := in.Answer; a != nil && strings.TrimSpace(a.Text) != "" {
		if el, ok := w.codeField(); ok {
			sel := selectorFor(w.sc, el, false)
			text := strings.TrimSpace(a.Text)
			return []plan.PlannedStep{{
				Intent: "type the person's answer",
				Tag:    plan.Tag{Kind: tagAnswer, Action: noAction},
				Call:   tools.NewCall(tools.TypeText, map[string]any{"text": text, "submit": true}),
				Target: &sel,
				Expect: plan.Expectation{Kind: plan.ExpectChanged},
			}}, nil, true
		}
	}
	if n := trailingAsks(w.all); n >= maxAsks {
		return nil, &plan.Finish{Reason: fmt.Sprintf("the screen still needs %s after asking a person %d times", what, n)}, true
	}
	app := w.sc.Package
	q := fmt.Sprintf("The phone shows %s (%s) that only you can pass. Please get through it on the phone and answer \"done\", or answer with the code to type.", what, app)
	return []plan.PlannedStep{{
		Intent: "ask a person to pass " + what,
		Tag:    plan.Tag{Kind: tagAsk, Action: noAction},
		Call:   tools.NewCall(tools.AskUser, tools.AskUserArgs{Question: q}),
	}}, nil, true
}

// goalPassesWall says whether the goal's current action works on this
// screen by itself: it types something, or taps what is on the screen
// ("tap Sign in" on a login page someone already filled).
func (w *work) goalPassesWall() bool {
	if w.cur >= len(w.acts) {
		return false
	}
	a := w.acts[w.cur]
	switch a.kind {
	case actType:
		return true
	case actTap:
		_, ok := w.labelled(a.label, scene.ModeContains)
		return ok
	}
	return false
}

// codeField is the empty, editable, non-password field a code goes into.
func (w *work) codeField() (scene.Element, bool) {
	for _, e := range w.sc.Elements {
		if e.Editable && !e.Password && !containsAny(fold(e.ResourceID), []string{"password", "passwd", "pwd"}) {
			return e, true
		}
	}
	return scene.Element{}, false
}

// trailingAsks counts the ask_user steps at the end of the history (the
// typing of an answer between them included).
func trailingAsks(hist []plan.StepRecord) int {
	n := 0
	for i := len(hist) - 1; i >= 0; i-- {
		switch tl, ok := tools.Lookup(hist[i].Call.Name); {
		case ok && tl.Asks():
			n++
		case hist[i].Tag.Kind == tagAnswer:
		default:
			return n
		}
	}
	return n
}
