package task

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxGoalRunes bounds a goal, wherever it comes from (the API, an MCP
// client, a flow's goal with its parameters bound).
const MaxGoalRunes = 2000

// GoalError is CheckGoal's refusal: what is wrong with the goal.
type GoalError struct{ Problem string }

func (e *GoalError) Error() string { return "goal: " + e.Problem }

func goalError(format string, a ...any) error { return &GoalError{fmt.Sprintf(format, a...)} }

// CheckGoal refuses a goal no task should carry: empty, longer than max
// runes (MaxGoalRunes when max is 0 or larger), not UTF-8 (or holding the
// U+FFFD a decoder put for bytes that were not), or holding a control
// character other than tab and newline (a NUL cuts the goal short for C
// code and terminals, and an escape sequence rewrites what a terminal
// shows the person).
func CheckGoal(goal string, max int) error {
	if max <= 0 || max > MaxGoalRunes {
		max = MaxGoalRunes
	}
	switch {
	case strings.TrimSpace(goal) == "":
		return goalError("required: say what the phone should do")
	case !utf8.ValidString(goal):
		return goalError("not valid UTF-8")
	case utf8.RuneCountInString(goal) > max:
		return goalError("longer than %d characters (%d)", max, utf8.RuneCountInString(goal))
	}
	for i, r := range goal {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if unicode.IsControl(r) {
			return goalError("a control character %U at byte %d", r, i)
		}
		if r == utf8.RuneError {
			return goalError("U+FFFD at byte %d (text that was not valid UTF-8, or a lone surrogate)", i)
		}
	}
	return nil
}
