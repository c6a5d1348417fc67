package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// userDataKeys are the parts of the state JSON that hold what a person
// would call their data or settings: what an AlreadyDone or Impossible task
// must leave exactly as it found it. Screens, the foreground app, recents
// and search queries are not data (looking is allowed; changing is not).
var userDataKeys = []struct{ section, key string }{
	{"", "installed"},
	{"", "granted"},
	{"settings", "wifi"},
	{"settings", "bluetooth"},
	{"settings", "dark_theme"},
	{"settings", "airplane_mode"},
	{"contacts", "contacts"},
	{"messages", "sent"},
	{"clock", "alarms"},
	{"taobao", "cart"},
	{"taobao", "orders"},
	{"taobao", "history"},
	{"taobao", "login"},
}

// UserData extracts the user's data from a state JSON, keyed
// "section.key" (or "key" at the top), each value as its JSON.
func UserData(state []byte) (map[string]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(state, &top); err != nil {
		return nil, fmt.Errorf("phonebench state: %w", err)
	}
	out := map[string]string{}
	for _, k := range userDataKeys {
		obj := top
		name := k.key
		if k.section != "" {
			name = k.section + "." + k.key
			raw, ok := top[k.section]
			if !ok {
				continue // the app is not installed: "installed" says so
			}
			obj = nil
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, fmt.Errorf("phonebench state: %s: %w", k.section, err)
			}
		}
		if v, ok := obj[k.key]; ok {
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return nil, fmt.Errorf("phonebench state: %s: %w", name, err)
			}
			out[name] = b.String()
		}
	}
	return out, nil
}

// Unchanged reports nil when after holds the same user data as before
// (UserData), else an error naming every part that changed. The harness
// uses it for AlreadyDone tasks (no toggle or write reached the phone) and
// Impossible ones (the user's data untouched).
func Unchanged(before, after []byte) error {
	b, err := UserData(before)
	if err != nil {
		return err
	}
	a, err := UserData(after)
	if err != nil {
		return err
	}
	var changed []string
	for k, v := range b {
		if a[k] != v {
			changed = append(changed, fmt.Sprintf("%s: %s → %s", k, v, a[k]))
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			changed = append(changed, fmt.Sprintf("%s: (none) → %s", k, v))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return fmt.Errorf("%w: %v", ErrChanged, changed)
}

// ErrChanged is Unchanged's error: the user's data differs.
var ErrChanged = errors.New("the user's data changed")
