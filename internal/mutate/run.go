package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// outcome is what the tests made of one mutation.
type outcome int

const (
	caught outcome = iota
	missed
	broken // does not build: not a bug a test can catch, the list must change
)

func (o outcome) String() string { return [...]string{"caught", "MISSED", "BROKEN"}[o] }

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	list := fs.String("list", "scripts/mutations.txt", "the mutation list")
	only := fs.String("pkg", "", "comma-separated packages of the list (its first word) to run; all when empty")
	id := fs.String("run", "", "a regexp: only the mutations whose PKG/ID matches")
	check := fs.Bool("check", false, "only check that every mutation still applies; run no test")
	timeout := fs.Duration("timeout", 3*time.Minute, "go test -timeout for each run (a hang is caught)")
	jobs := fs.Int("j", 1, "mutations tested at a time")
	hintFiles := fs.String("hints", "docs/mutation-run.txt", "comma-separated outputs of earlier runs: a mutation's tests that caught it there run first, the whole package only when they pass")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ms, err := ReadFile(*list)
	if err != nil {
		return err
	}
	var re *regexp.Regexp
	if *id != "" {
		if re, err = regexp.Compile(*id); err != nil {
			return err
		}
	}
	pkgs := strings.FieldsFunc(*only, func(r rune) bool { return r == ',' })
	var todo []Mutation
	for _, m := range ms {
		if (len(pkgs) == 0 || slices.Contains(pkgs, m.Pkg)) && (re == nil || re.MatchString(m.Name())) {
			todo = append(todo, m)
		}
	}
	if len(todo) == 0 {
		return errors.New("no mutation selected")
	}
	// Every mutation must apply before any test runs.
	mutated := make([]string, len(todo))
	where := make([]string, len(todo))
	var stale []error
	for i, m := range todo {
		src, err := os.ReadFile(m.File)
		if err != nil {
			stale = append(stale, fmt.Errorf("%s: %w: %v", m.Name(), ErrNoLongerApplies, err))
			continue
		}
		where[i] = Where(m, string(src))
		if mutated[i], err = Apply(m, string(src)); err != nil {
			stale = append(stale, err)
		}
	}
	if len(stale) > 0 {
		for _, e := range stale {
			fmt.Fprintln(w, "STALE", e)
		}
		return fmt.Errorf("%d of %d mutations no longer apply: update %s to the code", len(stale), len(todo), *list)
	}
	if *check {
		for i, m := range todo {
			fmt.Fprintf(w, "%-40s %s: %s\n", m.Name(), where[i], m.Desc)
		}
		fmt.Fprintf(w, "all %d mutations apply\n", len(todo))
		return nil
	}
	tmp, err := os.MkdirTemp("", "mutate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// The unmutated tests must pass, or every mutation would look caught:
	// each package once, again when it fails (a flake under load); the
	// mutations of a package whose tests fail twice are not run.
	var basePkgs []string
	for _, m := range todo {
		for _, p := range m.Test {
			if !slices.Contains(basePkgs, p) {
				basePkgs = append(basePkgs, p)
			}
		}
	}
	slices.Sort(basePkgs)
	// A package slower than -timeout under load is not hung: the baseline
	// gets four times as long, and a mutant of the package twice as long
	// as its baseline took.
	failing := map[string]bool{}
	took := map[string]time.Duration{}
	for _, p := range basePkgs {
		start := time.Now()
		out, err := goTest(ctx, "", 4**timeout, []string{p}, "")
		if err != nil {
			_, why := judge(out, err)
			fmt.Fprintf(w, "baseline %s failed once (%s); again\n", p, why)
			start = time.Now()
			out, err = goTest(ctx, "", 4**timeout, []string{p}, "")
		}
		if err != nil {
			failing[p] = true
			_, why := judge(out, err)
			fmt.Fprintf(w, "BASELINE %s fails without any mutation (%s): its mutations are not run\n%s\n", p, why, tail(out, 15))
			continue
		}
		took[p] = time.Since(start)
		fmt.Fprintf(w, "baseline %s passes (%s)\n", p, took[p].Round(time.Second))
	}

	hints, err := readHints(strings.FieldsFunc(*hintFiles, func(r rune) bool { return r == ',' }))
	if err != nil {
		return err
	}

	type tally struct{ made, caught int }
	per := map[string]*tally{}
	var order []string
	var missedNames, brokenNames []string
	var skipped []string
	type result struct {
		o    outcome
		why  string
		took time.Duration
		err  error
	}
	results := make([]chan result, len(todo))
	sem := make(chan struct{}, max(1, *jobs))
	for i, m := range todo {
		results[i] = make(chan result, 1)
		if slices.ContainsFunc(m.Test, func(p string) bool { return failing[p] }) {
			results[i] <- result{o: -1}
			continue
		}
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			limit := *timeout
			for _, p := range m.Test {
				limit = max(limit, 2*took[p])
			}
			o, why, err := try(ctx, tmp, i, m, mutated[i], hints[m.Name()], limit)
			results[i] <- result{o, why, time.Since(start), err}
		}()
	}
	for i, m := range todo {
		r := <-results[i]
		if r.err != nil {
			return r.err
		}
		if r.o < 0 {
			skipped = append(skipped, m.Name())
			continue
		}
		o, why := r.o, r.why
		if per[m.Pkg] == nil {
			per[m.Pkg] = &tally{}
			order = append(order, m.Pkg)
		}
		if o != broken {
			per[m.Pkg].made++
		}
		switch o {
		case caught:
			per[m.Pkg].caught++
		case missed:
			missedNames = append(missedNames, m.Name())
		case broken:
			brokenNames = append(brokenNames, m.Name())
		}
		fmt.Fprintf(w, "%-7s %-40s %s: %s (%s, %s)\n", o, m.Name(), where[i], m.Desc, why, r.took.Round(time.Second))
	}
	fmt.Fprintln(w, "\ncaught / made, per package:")
	var all tally
	for _, p := range order {
		t := per[p]
		all.made += t.made
		all.caught += t.caught
		fmt.Fprintf(w, "  %-12s %3d / %-3d %s\n", p, t.caught, t.made, pct(t.caught, t.made))
	}
	fmt.Fprintf(w, "  %-12s %3d / %-3d %s\n", "total", all.caught, all.made, pct(all.caught, all.made))
	if len(missedNames) > 0 {
		fmt.Fprintf(w, "missed: %s\n", strings.Join(missedNames, " "))
	}
	if len(skipped) > 0 {
		return fmt.Errorf("%d mutations not run, their package's tests failing without them: %s", len(skipped), strings.Join(skipped, " "))
	}
	if len(brokenNames) > 0 {
		return fmt.Errorf("%d mutations do not build (fix them in %s): %s", len(brokenNames), *list, strings.Join(brokenNames, " "))
	}
	return nil
}

func pct(a, b int) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// try tests mutation i: the tests that caught it before first (hinted),
// then, when there are none or they all pass, the whole package; a
// mutation is missed only when every test of its package passes.
func try(ctx context.Context, tmp string, i int, m Mutation, mutated string, hinted []string, timeout time.Duration) (outcome, string, error) {
	abs, _ := filepath.Abs(m.File)
	file := filepath.Join(tmp, fmt.Sprintf("m%d.go", i))
	if err := os.WriteFile(file, []byte(mutated), 0o644); err != nil {
		return 0, "", err
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	ovFile := filepath.Join(tmp, fmt.Sprintf("m%d.json", i))
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		return 0, "", err
	}
	if len(hinted) > 0 {
		out, err := goTest(ctx, ovFile, timeout, m.Test, "^("+strings.Join(hinted, "|")+")$")
		if o, why := judge(out, err); o != missed {
			return o, why, nil
		}
	}
	o, why := judge(goTest(ctx, ovFile, timeout, m.Test, ""))
	return o, why, nil
}

// hintRE reads the outcome of a caught mutation in an earlier run's output:
// its name and, in the last parentheses, the tests that failed.
var hintRE = regexp.MustCompile(`(?m)(?:^|:)caught\s+(\S+)\s.*\((?:failed|timed out in) ([^()]*), [0-9hms.]+\)\s*$`)

// readHints maps each mutation caught in the outputs at paths (missing
// files are skipped) to the top-level tests that caught it.
func readHints(paths []string) (map[string][]string, error) {
	hints := map[string][]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, m := range hintRE.FindAllSubmatch(b, -1) {
			name := string(m[1])
			for _, t := range strings.Split(string(m[2]), ", ") {
				t, _, _ = strings.Cut(t, "/")
				if strings.HasPrefix(t, "Test") && !slices.Contains(hints[name], t) {
					hints[name] = append(hints[name], t)
				}
			}
		}
	}
	return hints, nil
}

func goTest(ctx context.Context, overlay string, timeout time.Duration, pkgs []string, run string) ([]byte, error) {
	args := []string{"test", "-count=1", "-failfast", "-timeout", timeout.String()}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	if run != "" {
		args = append(args, "-run", run)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.Bytes(), err
}

var (
	failRE  = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	panicRE = regexp.MustCompile(`(?m)^panic: (.*)$`)
	// the tests still running when go test's timeout panics
	runningRE = regexp.MustCompile(`(?m)^\t\t(Test\S*) \(\S+\)$`)
	buildRE   = regexp.MustCompile(`(?m)\[build failed\]|\[setup failed\]|^# .*\n.*\.go:\d+:\d+: |vet: `)
)

// failedNames lists the tests a go test run failed.
func failedNames(out []byte) string {
	var names []string
	for _, m := range failRE.FindAllSubmatch(out, -1) {
		names = append(names, string(m[1]))
	}
	if len(names) == 0 {
		return "no test named: " + firstLine(string(tail(out, 1)))
	}
	return strings.Join(names, ", ")
}

// judge reads a go test run of a mutant.
func judge(out []byte, err error) (outcome, string) {
	if err == nil {
		return missed, "every test passed"
	}
	if buildRE.Match(out) {
		return broken, "does not build: " + firstLine(buildRE.FindString(string(out)))
	}
	switch {
	case failRE.Match(out):
		return caught, "failed " + failedNames(out)
	case bytes.Contains(out, []byte("test timed out")):
		if m := runningRE.FindAllSubmatch(out, -1); len(m) > 0 {
			var names []string
			for _, n := range m {
				names = append(names, string(n[1]))
			}
			return caught, "timed out in " + strings.Join(names, ", ")
		}
		return caught, "timed out"
	case panicRE.Match(out):
		return caught, "panic: " + string(panicRE.FindSubmatch(out)[1])
	}
	return caught, "go test failed: " + firstLine(string(tail(out, 1)))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func tail(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}
