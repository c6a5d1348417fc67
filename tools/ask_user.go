package tools

import (
	"context"
	"errors"
	"strings"
)

// AskUser is the name of the ask_user tool.
const AskUser = "ask_user"

// AskUserArgs are ask_user's arguments.
type AskUserArgs struct {
	Question string `json:"question"`
}

// maxQuestion bounds a question's length (runes): a person reads it on a
// terminal or a phone.
const maxQuestion = 500

var askUserTool = register(&Tool{
	name:        AskUser,
	description: "Hand the phone to a person and wait for their answer: for a login, a captcha or a verification code only they can pass, a choice only they can make, or information the goal does not give. The task waits until a person answers; the next screen you see is the phone after they acted, and their answer is given to you as text. Ask one short, clear question.",
	schemaText: `{
  "type": "object",
  "properties": {
    "question": {"type": "string", "minLength": 1, "description": "What the person should do or answer, in one or two sentences (at most 500 characters)."}
  },
  "required": ["question"],
  "additionalProperties": false
}`,
	example: Example{`{"question":"Please log in to Taobao on the phone, then answer done."}`, `asked a person: Please log in to Taobao on the phone, then answer done.`},
	// The runtime answers ask_user itself (the task waits for a person);
	// run is what a direct caller without a person gets.
	run: func(_ context.Context, _ *runEnv, c Call) (Result, error) {
		q, err := questionOf(c)
		if err != nil {
			return Result{}, &ArgError{Tool: AskUser, Arg: "question", Msg: err.Error()}
		}
		return Result{Text: "asked a person: " + oneLine(q, 200)}, nil
	},
	intent: func(c Call, _ string) string {
		q, _ := questionOf(c)
		return "ask a person: " + oneLine(q, 120)
	},
	ask:        questionOf,
	tookEffect: func(Call, Outcome) bool { return false },
	passive:    true,
})

func questionOf(c Call) (string, error) {
	a, err := ArgsOf[AskUserArgs](c)
	if err != nil {
		return "", err
	}
	q := strings.TrimSpace(a.Question)
	switch {
	case q == "":
		return "", errors.New("the question is empty")
	case len([]rune(q)) > maxQuestion:
		return "", errors.New("the question is longer than 500 characters")
	}
	return q, nil
}

// Question returns the question a call asks a person (ask_user): ok is
// false for calls of tools that do not ask, err set for an ask_user call
// whose arguments do not fit its schema.
func Question(c Call) (q string, ok bool, err error) {
	t, found := Lookup(c.Name)
	if !found || t.ask == nil {
		return "", false, nil
	}
	if err := Validate(c); err != nil {
		return "", true, err
	}
	q, err = t.ask(c)
	return q, true, err
}
