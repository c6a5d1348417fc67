package task

import (
	"strings"
	"testing"
)

func TestCheckGoal(t *testing.T) {
	for goal, want := range map[string]string{
		"open Settings":                   "",
		"open Settings\n\tthen Wi-Fi\r\n": "",
		"打开设置":                            "",
		strings.Repeat("长", 2000):         "",
		"":                                "required",
		" \n\t":                           "required",
		strings.Repeat("长", 2001):         "longer than 2000 characters (2001)",
		"open\x00Settings":                "control character U+0000 at byte 4",
		"open \x1b[31mSettings":           "control character U+001B",
		"open \u0085Settings":             "control character U+0085",
		"open \xffSettings":               "not valid UTF-8",
		"open \ufffdSettings":             "U+FFFD",
	} {
		err := CheckGoal(goal, 0)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckGoal(%.30q) = %v, want %q", goal, err, want)
		}
	}
	if err := CheckGoal("open Settings", 5); err == nil || !strings.Contains(err.Error(), "longer than 5") {
		t.Errorf("a lower limit: %v", err)
	}
	if err := CheckGoal(strings.Repeat("a", 2001), 5000); err == nil {
		t.Error("a limit above MaxGoalRunes let 2001 characters through")
	}
}
