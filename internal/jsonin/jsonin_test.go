package jsonin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	for _, c := range []struct {
		in   string
		want string // "" for nil, else a part of the error
	}{
		{`{"goal":"a","device":"sim"}`, ""},
		{`{"goal":"a","goal":"b"}`, `"goal" is given twice`},
		{`{"goal":"a","GOAL":"b"}`, `"GOAL" is given twice (as "goal" and "GOAL"`},
		{`{"goal":"a","Goal":"b"}`, `given twice`},
		{`{"max_steps":1,"MAX_STEPS":2}`, `given twice`},
		{"{\"kind\":1,\"\u212aind\":2}", `given twice`},     // the Kelvin sign folds to k
		{"{\"status\":1,\"\u017ftatus\":2}", `given twice`}, // the long s folds to s (upper case first: S)
		{`{"params":{"q":"a","Q":"b"}}`, `given twice in params`},
		{`{"a":[{"x":1},{"x":1,"x":2}]}`, `given twice in a[1]`},
		{`{"a":{"x":1},"b":{"x":1}}`, ""}, // the same key in two objects
		{`[{"x":1},{"x":2}]`, ""},
		{"{\"goal\":\"caf\xe9\"}", "not valid UTF-8"},
		{"{\"goal\":\"\xff\"}", "not valid UTF-8"},
		{`{"goal":"a",`, ""}, // syntax is the decoder's to report
		{deep, "nests deeper"},
		{ok, ""},
	} {
		err := Check([]byte(c.in))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Check(%.60s) = %v, want nil", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Check(%.60s) = %v, want %q", c.in, err, c.want)
		}
	}
	var dup *DuplicateKeyError
	if err := Check([]byte(`{"goal":"a","GOAL":"b"}`)); !errors.As(err, &dup) || dup.Key != "GOAL" || dup.Earlier != "goal" {
		t.Errorf("typed error: %#v", err)
	}
}

// What Check refuses, encoding/json takes silently: the last of two keys
// (matched without case) wins, and invalid UTF-8 becomes U+FFFD. If this
// test fails, encoding/json changed and Check may have become redundant.
func TestWhatEncodingJSONLetsThrough(t *testing.T) {
	var v struct{ Goal string }
	if err := json.Unmarshal([]byte(`{"goal":"look","GOAL":"buy"}`), &v); err != nil || v.Goal != "buy" {
		t.Errorf("duplicate keys: %v %q", err, v.Goal)
	}
	var st struct{ Status string }
	if err := json.Unmarshal([]byte("{\"status\":\"paid\",\"\u017ftatus\":\"unpaid\"}"), &st); err != nil || st.Status != "unpaid" {
		t.Errorf("a long s matches s: %v %q", err, st.Status)
	}
	if err := json.Unmarshal([]byte("{\"goal\":\"a\xffb\"}"), &v); err != nil || v.Goal != "a\ufffdb" {
		t.Errorf("invalid UTF-8: %v %q", err, v.Goal)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"goal":"a","GOAL":"b"}`))
	f.Add([]byte(`{"a":[{"x":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data)
		var v any
		if err == nil && json.Unmarshal(data, &v) == nil {
			// Whatever passes and decodes has no key twice at the top.
			if m, ok := v.(map[string]any); ok {
				seen := map[string]bool{}
				for k := range m {
					if seen[fold(k)] {
						t.Fatalf("%q passed with %q twice", data, k)
					}
					seen[fold(k)] = true
				}
			}
		}
	})
}
