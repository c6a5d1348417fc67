package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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

// A hang names the tests that were running, so the next run can try them
// first.
func TestJudgeNamesTheHungTest(t *testing.T) {
	out := "panic: test timed out after 3m0s\n\trunning tests:\n\t\tTestStartRequeues (2m59s)\n\ngoroutine 1 [running]:\n"
	if got, why := judge([]byte(out), errors.New("exit 2")); got != caught || why != "timed out in TestStartRequeues" {
		t.Errorf("judge = %s (%s)", got, why)
	}
}

// Hints come from an earlier run's output: the top-level tests that caught
// each mutation; missed and broken ones give none, nor do parentheses in
// the description.
func TestReadHints(t *testing.T) {
	out := `caught  safety/send-money-not-payment            safety/words.go:23: "send money" falls out (a send = allow policy lets money go) (failed TestPolicyTable, TestPolicyTable/send_money, TestOther, 13s)
caught  task/requeue-unknown-dead-owner          task/task.go:261: never queued again (timed out in TestStartRequeues, 3m32s)
/tmp/old.txt:caught  flow/one-char-label                      a one-character label matches (failed TestResolve, 40s)
MISSED  device/adb/quote-metachars               device/adb/text.go:189: quoting (every test passed, 1m7s)
BROKEN  api/require-token-any                    api/bearer.go:23: any token (does not build: # phonepilot/api [phonepilot/api.test], 1s)
caught  farm/x                                   farm/a.go:1: x (panic: boom, 3s)
`
	p := filepath.Join(t.TempDir(), "run.txt")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := readHints([]string{p, filepath.Join(t.TempDir(), "absent.txt")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"safety/send-money-not-payment":   {"TestPolicyTable", "TestOther"},
		"task/requeue-unknown-dead-owner": {"TestStartRequeues"},
		"flow/one-char-label":             {"TestResolve"},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("hints = %v\nwant %v", h, want)
	}
}
