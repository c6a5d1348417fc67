package rule

import (
	"context"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

func loginScreen(title string) *scene.Scene {
	sc := mkScene(tb,
		node{class: "android.widget.TextView", text: title, l: 40, t: 200, r: 1040, b: 300},
		node{class: "android.widget.EditText", text: "Phone number", id: tb + ":id/account", click: true, edit: true, l: 40, t: 400, r: 1040, b: 500},
		node{class: "android.widget.EditText", text: "", id: tb + ":id/pwd", click: true, edit: true, l: 40, t: 550, r: 1040, b: 650},
		node{class: "android.widget.Button", text: title, click: true, l: 40, t: 700, r: 1040, b: 800})
	sc.Elements[3].Password = true
	return sc
}

func captchaScreen() *scene.Scene {
	return mkScene(tb,
		node{class: "android.widget.TextView", text: "输入验证码", l: 40, t: 200, r: 1040, b: 300},
		node{class: "android.widget.EditText", text: "", id: tb + ":id/code", click: true, edit: true, l: 40, t: 400, r: 1040, b: 500})
}

func askStep(h int) plan.StepRecord {
	return plan.StepRecord{Number: h, Intent: "ask a person to pass a login", Tag: plan.Tag{Kind: tagAsk, Action: noAction}, Status: lifecycle.StepSucceeded,
		Call: tools.NewCall(tools.AskUser, tools.AskUserArgs{Question: "please"})}
}

// A login or captcha screen in the way of the goal: the planner asks a
// person (ask_user), with the app named, and does not try to pass it.
func TestLoginOrCaptchaAsksAPerson(t *testing.T) {
	for name, sc := range map[string]*scene.Scene{"Log in": loginScreen("Log in"), "登录": loginScreen("登录"), "验证码": captchaScreen()} {
		d := planOf(t, "open Taobao and search Mac mini", sc, launched("Taobao"))
		if d.Finish != nil || len(d.Steps) == 0 || d.Steps[0].Call.Name != tools.AskUser {
			t.Errorf("%s: %v %+v; want ask_user first", name, stepIntents(d), d.Finish)
			continue
		}
		q, _, err := tools.Question(d.Steps[0].Call)
		if err != nil || !strings.Contains(q, tb) {
			t.Errorf("%s: question %q (%v); want a valid question naming the app", name, q, err)
		}
	}
}

// With a code for answer, it types the code into the code field; after
// asking twice without getting past the wall, it gives up.
func TestAnswerTypedThenGivesUp(t *testing.T) {
	d, err := New().Plan(context.Background(), plan.Input{Goal: "open Taobao and search Mac mini", Scene: captchaScreen(),
		History: []plan.StepRecord{launched("Taobao"), askStep(2)}, Answer: &plan.Answer{Question: "code?", Text: " 482913 "}})
	if err != nil || len(d.Steps) == 0 || d.Steps[0].Call.Name != tools.TypeText || !strings.Contains(string(d.Steps[0].Call.Args), `"482913"`) {
		t.Fatalf("%v %+v (%v); want the code typed", stepIntents(d), d.Finish, err)
	}
	if el, ok := captchaScreen().Resolve(*d.Steps[0].Target); !ok || el.ResourceID != tb+":id/code" {
		t.Errorf("typed into %+v; want the code field", el)
	}
	d = planOf(t, "open Taobao and search Mac mini", loginScreen("Sign in"), launched("Taobao"), askStep(2), askStep(3))
	if d.Finish == nil || d.Finish.Success {
		t.Errorf("after two asks: %v; want the planner to give up", stepIntents(d))
	}
}

// Screens that are no wall, or a goal that passes it itself, never ask.
func TestNoAskWithoutAWall(t *testing.T) {
	for name, tc := range map[string]struct {
		goal string
		sc   *scene.Scene
	}{
		"search page":              {"open Taobao and search Mac mini", taobaoSearchPage("")},
		"a code in a message":      {"open Taobao and search Mac mini", mkScene(tb, node{class: "android.widget.TextView", text: "您的验证码是 123456"})},
		"login words, no password": {"open Taobao and search Mac mini", mkScene(tb, node{class: "android.widget.Button", text: "Log in", click: true, l: 1, t: 1, r: 100, b: 100})},
		"the goal taps Sign in":    {"open Taobao, tap Sign in", loginScreen("Sign in")},
	} {
		d := planOf(t, tc.goal, tc.sc, launched("Taobao"))
		if len(d.Steps) > 0 && d.Steps[0].Call.Name == tools.AskUser {
			t.Errorf("%s: asked a person: %v", name, stepIntents(d))
		}
	}
}
