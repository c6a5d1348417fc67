package main

import (
	"errors"
	"strings"
	"testing"
)

const sample = `# a comment
=== lease idle-from-start: idle time counted from the lease's start
file: mcpserver/lease.go
- return len(cur.tasks) > 0 || now.Sub(cur.last) < l.idle
+ return len(cur.tasks) > 0 || now.Sub(cur.since) < l.idle

=== lease two-hunks: two places
file: x/y.go
test: ./x ./z
- a := 1
+ a := 2
- b()
`

func TestParseAndApply(t *testing.T) {
	ms, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name() != "lease/idle-from-start" || ms[0].Test[0] != "./mcpserver" || ms[1].Test[1] != "./z" || len(ms[1].Hunks) != 2 {
		t.Fatalf("parsed %+v", ms)
	}
	src := "func f() {\n\tif x {\n\t\treturn len(cur.tasks) > 0 || now.Sub(cur.last) < l.idle\n\t}\n}\n"
	got, err := Apply(ms[0], src)
	if want := "func f() {\n\tif x {\n\t\treturn len(cur.tasks) > 0 || now.Sub(cur.since) < l.idle\n\t}\n}\n"; err != nil || got != want {
		t.Errorf("Apply: %v\n%s", err, got)
	}
	got, err = Apply(ms[1], "a := 1\nb()\nc()\n")
	if err != nil || got != "a := 2\nc()\n" {
		t.Errorf("Apply, two hunks, one deleting: %v %q", err, got)
	}
}

// A mutation whose text is gone, or is there twice, fails loudly.
func TestNoLongerApplies(t *testing.T) {
	ms, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"return something else\n", "a := 1\nb()\na := 1\nb()\n"} {
		m := ms[0]
		if strings.HasPrefix(src, "a") {
			m = ms[1]
		}
		if _, err := Apply(m, src); !errors.Is(err, ErrNoLongerApplies) {
			t.Errorf("%q: %v; want ErrNoLongerApplies", src, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"=== onlyone: x\nfile: a.go\n- x\n",
		"=== p a: x\n- x\n",
		"=== p a: x\nfile: a.go\n",
		"=== p a: x\nfile: a.go\n- x\n=== p a: again\nfile: a.go\n- y\n",
		"- stray\n",
		"=== p a: x\nfile: a.go\n+ before\n",
		"=== p a: x\nfile: a.go\nbogus\n",
	} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		out  string
		err  error
		want outcome
	}{
		{"ok  \tphonepilot/x\t1s\n", nil, missed},
		{"--- FAIL: TestA (0.1s)\nFAIL\n", errors.New("exit 1"), caught},
		{"# phonepilot/x\nx/a.go:3:2: undefined: y\nFAIL\tphonepilot/x [build failed]\n", errors.New("exit 1"), broken},
		{"panic: test timed out after 5m0s\n", errors.New("exit 1"), caught},
	} {
		if got, why := judge([]byte(c.out), c.err); got != c.want {
			t.Errorf("%q: %s (%s); want %s", c.out, got, why, c.want)
		}
	}
}
