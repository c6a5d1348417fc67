package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNotMet wraps every Check failure: the state does not show the goal.
var ErrNotMet = errors.New("goal not met")

// notMet is a Check failure naming what the state shows.
func notMet(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotMet, fmt.Sprintf(format, args...))
}

// State is the part of the simulator's state JSON (docs/sim.md) the checks
// read.
type State struct {
	Locale     string   `json:"locale"`
	Foreground string   `json:"foreground"`
	Screen     string   `json:"screen"`
	Installed  []string `json:"installed"`
	Taobao     *struct {
		Screen     string   `json:"screen"`
		History    []string `json:"history"`
		LastSearch string   `json:"last_search"`
		Searches   []string `json:"searches"`
		Cart       []Item   `json:"cart"`
		Orders     []struct {
			ID    string  `json:"id"`
			Items []Item  `json:"items"`
			Total float64 `json:"total"`
		} `json:"orders"`
	} `json:"taobao"`
	Settings *struct {
		Screen    string `json:"screen"`
		Wifi      bool   `json:"wifi"`
		Bluetooth bool   `json:"bluetooth"`
		Dark      bool   `json:"dark_theme"`
		Airplane  bool   `json:"airplane_mode"`
	} `json:"settings"`
	Contacts *struct {
		Screen   string `json:"screen"`
		Open     string `json:"open"`
		Contacts []struct {
			Name  string `json:"name"`
			Phone string `json:"phone"`
		} `json:"contacts"`
	} `json:"contacts"`
	Messages *struct {
		Screen string `json:"screen"`
		Sent   []struct {
			To   string `json:"to"`
			Text string `json:"text"`
		} `json:"sent"`
		Conversations []string `json:"conversations"`
		Open          string   `json:"open"`
	} `json:"messages"`
	Clock *struct {
		Screen string  `json:"screen"`
		Alarms []Alarm `json:"alarms"`
	} `json:"clock"`
}

// Item is a Taobao cart or order line.
type Item struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Price float64 `json:"price"`
	Qty   int     `json:"qty"`
}

// Alarm is a Clock alarm.
type Alarm struct {
	Hour    int  `json:"hour"`
	Minute  int  `json:"minute"`
	Enabled bool `json:"enabled"`
}

// ParseState decodes the state JSON; a state missing an app's section
// (the app is not installed) leaves that field nil.
func ParseState(b []byte) (State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("phonebench state: %w", err)
	}
	return s, nil
}

// digits keeps the digits of a phone number: "(555) 010-1001" and
// "5550101001" are the same number.
func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sameText compares what a person typed with what was asked: trimmed,
// case-insensitive.
func sameText(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// localParam is params[key+"_"+locale] for the state's locale, or
// params[key] when the parameter is the same in both locales.
func localParam(state []byte, params map[string]string, key string) string {
	st, err := ParseState(state)
	if err == nil {
		if v, ok := params[key+"_"+st.Locale]; ok {
			return v
		}
	}
	return params[key]
}
