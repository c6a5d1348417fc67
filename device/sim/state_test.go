package sim

import (
	"encoding/json"
	"testing"
)

func stateOf(t testing.TB, p *Phone) map[string]any {
	t.Helper()
	b, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("state is not JSON: %v\n%s", err, b)
	}
	return m
}

// path digs into the state JSON: dig(m, "taobao", "last_search").
func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
