package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/phonebench"
	"phonepilot/phonebench/tasks"
	"phonepilot/plan"
	"phonepilot/runtime"
)

func init() { register(newBenchCmd) }

// benchOptions are the flags of `phonepilot bench --suite settle`.
type benchOptions struct {
	Seeds      int
	FirstSeed  int64
	Profile    string
	Locales    []string
	FixedDelay time.Duration
	Clock      string // "fake" (simulated time) or "real"
	MaxSteps   int
	// Observer is the path the simulated phone charges (--observer).
	Observer sim.Observer
}

// benchGoals is the task the bench runs, per locale, and the query the
// simulator must report as its last search for the run to count.
var benchGoals = map[string]string{
	"en": "open Taobao and search Mac mini",
	"zh": "打开淘宝搜索Mac mini",
}

const benchQuery = "Mac mini"

func newBenchCmd() *cobra.Command {
	o := benchOptions{}
	var pb phonebenchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure phonepilot on the simulator: phonebench (tasks × policies × profiles) or the settle comparison",
		Long: `--suite phonebench (the default) runs the phonebench tasks (phonebench/tasks: TASKS
goals over the simulator's apps, in English and Chinese, including tasks
that start already done, cannot be done, or end at a person's approval) under
several policies on the same seeds and fault schedules, and judges every run
on the simulator's own state:

POLICIES

Time is simulated (a fake clock shared by the phone and the agent), reported
against the floor: the least time any agent could take on the same phone,
given its own transitions and the cheapest read and input.
docs/phonebench.md explains the policies, the floor and the report.

--suite settle is the older comparison: "open Taobao and search Mac mini" for
N seeds, settling after each action versus a fixed sleep, both on the rule
planner (--fixed-delay, --clock, --first-seed, --max-steps apply to it).`,
		Example: `  phonepilot bench --seeds 5 --html report.html --json runs.json
  phonepilot bench --tasks 'settings.*' --policy reference,peer-loop --profile realistic --locale en
  phonepilot bench --list
  phonepilot bench --suite settle --seeds 100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			switch pb.Suite {
			case suitePhonebench:
				return runPhonebench(cmd, pb)
			case suiteSettle:
			default:
				return exitWith(2, fmt.Errorf("--suite must be %s or %s, got %q", suitePhonebench, suiteSettle, pb.Suite))
			}
			o.Profile = "realistic"
			if f.Changed("profile") {
				if len(pb.Profiles) != 1 {
					return exitWith(2, fmt.Errorf("--suite settle runs one profile, got %q", pb.Profiles))
				}
				o.Profile = pb.Profiles[0]
				if o.Profile == phonebench.ProfileClean {
					o.Profile = ""
				}
			}
			if !f.Changed("seeds") {
				o.Seeds = 20
			}
			obs, err := sim.ParseObserver(pb.Observer)
			if err != nil {
				return exitWith(2, err)
			}
			o.Observer = obs
			if f.Changed("locale") {
				locs, err := localesOf(pb.Locale)
				if err != nil {
					return exitWith(2, err)
				}
				o.Locales = locs
			}
			if err := o.validate(); err != nil {
				return exitWith(2, err)
			}
			rep, err := runBench(cmd.Context(), o, nil)
			if err != nil {
				return exitWith(exitFailed, err)
			}
			if pb.JSON != "" {
				return writeOut(cmd, pb.JSON, func(w io.Writer) error {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					enc.SetEscapeHTML(false)
					return enc.Encode(rep)
				})
			}
			rep.print(cmd.OutOrStdout())
			return nil
		},
	}
	// How many tasks there are is the registry's count, not a number
	// written down.
	cmd.Long = strings.Replace(cmd.Long, "TASKS", strconv.Itoa(len(tasks.All())), 1)
	cmd.Long = strings.Replace(cmd.Long, "POLICIES\n", policyHelp(), 1)
	f := cmd.Flags()
	f.StringVar(&pb.Suite, "suite", suitePhonebench, "phonebench or settle")
	f.IntVar(&o.Seeds, "seeds", 5, "seeds per task, locale and profile (settle: per locale and mode, default 20)")
	f.Int64Var(&o.FirstSeed, "first-seed", 1, "first seed")
	f.StringSliceVar(&pb.Profiles, "profile", nil, "simulator profiles: "+strings.Join(phonebench.AvailableProfiles(), ", ")+" (default: all; settle: realistic)")
	f.StringVar(&pb.Locale, "locale", "both", "goal and phone language: en, zh or both")
	f.StringSliceVar(&o.Locales, "locales", []string{"en", "zh"}, "simulator locales to run (settle; use --locale)")
	_ = f.MarkHidden("locales")
	f.StringSliceVar(&pb.Policies, "policy", phonebench.DefaultPolicies,
		"policies: "+strings.Join(phonebench.Policies, ", ")+" (ai needs a key or --base-url)")
	f.StringVar(&pb.Tasks, "tasks", "", "only the tasks whose name matches: a glob (settings.*) or a substring, comma separated")
	f.BoolVar(&pb.List, "list", false, "list the tasks (with --tasks: the ones it selects) and exit")
	f.StringVar(&pb.JSON, "json", "", "write the report as JSON to FILE (- for stdout)")
	f.StringVar(&pb.HTML, "html", "", "write the HTML report to FILE")
	f.DurationVar(&pb.PeerDelay, "peer-delay", phonebench.DefaultPeerDelay, "the peer loop's fixed sleep after each action")
	f.StringVar(&pb.Observer, "observer", "uiautomator", "how phonepilot's policies read and drive the simulated phone, and so what it charges: uiautomator (one-shot dumps, input commands: what a real phone gets today) or helper (the on-device helper); the peers read their own way (docs/phonebench.md)")
	f.StringVar(&pb.Platform, "platform", phonebench.PlatformAndroid, "the phone the tasks run on: "+strings.Join(phonebench.Platforms, " or ")+" (the simulated iPhone through WebDriverAgent's API; phonepilot's policies and peer-loop; docs/ios.md)")
	f.DurationVar(&pb.ModelLatency, "model-latency", phonebench.DefaultModelLatency, "one model call's time, added per call to every policy that calls a model")
	f.BoolVar(&pb.Vision, "vision", false, "reference plans with the screenshot beside each read, as the AI planner does by default (the simulator renders every frame and charges its path's frame cost: slow, for a few seeds); off, only its tokens count the image")
	f.IntVar(&pb.Workers, "workers", 0, "runs at once (default: the number of CPUs)")
	addProviderFlags(f, "the ai policy")
	f.DurationVar(&o.FixedDelay, "fixed-delay", time.Second, "settle: the fixed sleep after each action of the baseline")
	f.StringVar(&o.Clock, "clock", "fake", "settle: fake (simulated time, fast) or real")
	f.IntVar(&o.MaxSteps, "max-steps", runtime.Defaults().MaxSteps, "settle: most steps per task")
	return cmd
}

// The suites of `phonepilot bench`.
const (
	suitePhonebench = "phonebench"
	suiteSettle     = "settle"
)

// phonebenchFlags are the flags of --suite phonebench (and the shared ones).
type phonebenchFlags struct {
	Suite     string
	Profiles  []string
	Locale    string
	Policies  []string
	Tasks     string
	List      bool
	JSON      string
	HTML      string
	PeerDelay time.Duration
	Workers   int
	// Observer is --observer; ModelLatency --model-latency; Vision --vision.
	Vision       bool
	Observer     string
	ModelLatency time.Duration
	// Platform is --platform.
	Platform string
}

// localesOf reads --locale.
func localesOf(l string) ([]string, error) {
	switch l {
	case "en", "zh":
		return []string{l}, nil
	case "both", "":
		return []string{"en", "zh"}, nil
	}
	return nil, fmt.Errorf("--locale must be en, zh or both, got %q", l)
}

// writeOut writes to the file name, or to stdout for "-".
func writeOut(cmd *cobra.Command, name string, write func(io.Writer) error) error {
	if name == "-" {
		return write(cmd.OutOrStdout())
	}
	f, err := os.Create(name)
	if err != nil {
		return exitWith(exitFailed, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return exitWith(exitFailed, fmt.Errorf("%s: %w", name, err))
	}
	if err := f.Close(); err != nil {
		return exitWith(exitFailed, fmt.Errorf("%s: %w", name, err))
	}
	return nil
}

// runPhonebench is --suite phonebench.
func runPhonebench(cmd *cobra.Command, pb phonebenchFlags) error {
	f := cmd.Flags()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	selected := tasks.Select(pb.Tasks)
	if len(selected) == 0 {
		return exitWith(2, fmt.Errorf("--tasks %q selects no task (phonepilot bench --list shows them)", pb.Tasks))
	}
	if pb.List {
		printTaskList(stdout, selected)
		return nil
	}
	locales, err := localesOf(pb.Locale)
	if err != nil {
		return exitWith(2, err)
	}
	seeds, _ := f.GetInt("seeds")
	first, _ := f.GetInt64("first-seed")
	opt := phonebench.Options{Tasks: selected, Policies: pb.Policies, Profiles: pb.Profiles, Locales: locales,
		Seeds: seeds, FirstSeed: first, PeerDelay: pb.PeerDelay, Workers: pb.Workers,
		Observer: sim.Observer(pb.Observer), ModelLatency: pb.ModelLatency, Platform: pb.Platform, Vision: pb.Vision}
	if seeds < 1 {
		return exitWith(2, fmt.Errorf("--seeds must be at least 1, got %d", seeds))
	}
	if pb.Workers < 0 {
		return exitWith(2, fmt.Errorf("--workers must not be negative, got %d", pb.Workers))
	}
	if slices.Contains(pb.Policies, phonebench.PolicyAI) {
		cfg, _, err := commandConfig(f, "", cmd.ErrOrStderr())
		if err != nil {
			return exitWith(2, err)
		}
		spec := plannerSpec{Name: plannerAI, AI: cfg.aiConfig()}
		spec.AI.Vision = false // the simulator's frames are not worth the tokens here
		if err := spec.Validate(); err != nil {
			return exitWith(2, err)
		}
		opt.AI = func(log *slog.Logger) (plan.Planner, error) { return newPlanner(spec, nil, nil, log) }
	}
	if file, ok := stderr.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
		bar := phonebench.NewProgressBar(stderr, time.Now)
		opt.Progress = bar.Update
		defer bar.Done()
	}
	rep, err := phonebench.Run(cmd.Context(), opt)
	if err != nil {
		if errors.Is(err, phonebench.ErrBadOptions) {
			return exitWith(2, err)
		}
		if rep == nil {
			return exitWith(exitFailed, err)
		}
		fmt.Fprintf(stderr, "phonebench stopped: %v\n", err)
	}
	if pb.HTML != "" {
		if err := writeOut(cmd, pb.HTML, rep.WriteHTML); err != nil {
			return err
		}
	}
	if pb.JSON != "" {
		if err := writeOut(cmd, pb.JSON, rep.WriteJSON); err != nil {
			return err
		}
	}
	if pb.JSON != "-" {
		rep.WriteTable(stdout)
	}
	if err != nil {
		return exitWith(exitFailed, errors.New(""))
	}
	if n := rep.Unapproved(); n > 0 {
		return exitWith(exitFailed, fmt.Errorf("%d irreversible actions reached the phone without approval", n))
	}
	return nil
}

// printTaskList is --list: one task a line, with its kind, apps, the
// rule planner's coverage and its English goal.
func printTaskList(w io.Writer, ts []tasks.Task) {
	fmt.Fprintf(w, "%-34s %-13s %-5s %s\n", "task", "kind", "rule", "goal (en)")
	for _, t := range ts {
		rule := "-"
		if _, ok := t.RuleFor("en", nil); ok {
			rule = "yes"
		}
		fmt.Fprintf(w, "%-34s %-13s %-5s %s\n", t.Name, t.Kind, rule, t.GoalFor("en", t.ParamsFor(1)))
	}
	fmt.Fprintf(w, "%d tasks\n", len(ts))
}

func (o benchOptions) validate() error {
	switch {
	case o.Seeds < 1:
		return fmt.Errorf("--seeds must be at least 1, got %d", o.Seeds)
	case o.FixedDelay <= 0:
		return fmt.Errorf("--fixed-delay must be positive, got %s", o.FixedDelay)
	case o.Clock != "fake" && o.Clock != "real":
		return fmt.Errorf("--clock must be fake or real, got %q", o.Clock)
	case o.MaxSteps < 1:
		return fmt.Errorf("--max-steps must be at least 1, got %d", o.MaxSteps)
	}
	for _, l := range o.Locales {
		if _, ok := benchGoals[l]; !ok {
			return fmt.Errorf("--locales: %q is not en or zh", l)
		}
	}
	return nil
}

// benchRun is one task of the bench.
type benchRun struct {
	Locale   string           `json:"locale"`
	Seed     int64            `json:"seed"`
	Mode     string           `json:"mode"`
	Success  bool             `json:"success"`
	Status   lifecycle.Status `json:"status"`
	Reason   string           `json:"reason,omitempty"`
	Steps    int              `json:"steps"`
	Duration time.Duration    `json:"duration_ns"`
	CPU      time.Duration    `json:"cpu_ns"` // real time spent (equal to Duration with --clock real)
}

// benchMode summarises one mode.
type benchMode struct {
	Name      string        `json:"name"`
	Runs      int           `json:"runs"`
	Successes int           `json:"successes"`
	Mean      time.Duration `json:"mean_ns"`
	Median    time.Duration `json:"median_ns"`
	P90       time.Duration `json:"p90_ns"`
	MeanSteps float64       `json:"mean_steps"`
}

// benchReport is what `phonepilot bench` prints.
type benchReport struct {
	Profile     string      `json:"profile"`
	Clock       string      `json:"clock"`
	Seeds       int         `json:"seeds"`
	Locales     []string    `json:"locales"`
	Modes       []benchMode `json:"modes"`
	MeanRatio   float64     `json:"mean_ratio"`   // fixed / settle
	MedianRatio float64     `json:"median_ratio"` // fixed / settle
	Runs        []benchRun  `json:"runs"`
	Failures    []benchRun  `json:"failures,omitempty"`
}

const (
	modeSettle = "settle"
	modeFixed  = "fixed"
)

// runBench runs every locale × seed × mode. progress, when set, hears of
// each run as it ends.
func runBench(ctx context.Context, o benchOptions, progress func(benchRun)) (*benchReport, error) {
	rep := &benchReport{Profile: o.Profile, Clock: o.Clock, Seeds: o.Seeds, Locales: o.Locales}
	for _, mode := range []string{modeSettle, modeFixed} {
		for _, loc := range o.Locales {
			for i := 0; i < o.Seeds; i++ {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				r, err := benchOne(ctx, o, loc, o.FirstSeed+int64(i), mode)
				if err != nil {
					return rep, err
				}
				rep.Runs = append(rep.Runs, r)
				if !r.Success {
					rep.Failures = append(rep.Failures, r)
				}
				if progress != nil {
					progress(r)
				}
			}
		}
	}
	for _, mode := range []string{modeSettle, modeFixed} {
		rep.Modes = append(rep.Modes, summarise(mode, o, rep.Runs))
	}
	if s, f := rep.Modes[0], rep.Modes[1]; s.Mean > 0 && s.Median > 0 {
		rep.MeanRatio = float64(f.Mean) / float64(s.Mean)
		rep.MedianRatio = float64(f.Median) / float64(s.Median)
	}
	return rep, nil
}

func benchOne(ctx context.Context, o benchOptions, locale string, seed int64, mode string) (benchRun, error) {
	var clk clock.Clock = clock.Real{}
	if o.Clock == "fake" {
		clk = clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	}
	phone, err := sim.New(sim.Config{Locale: locale, Profile: o.Profile, Seed: seed, Clock: clk, Observer: o.Observer})
	if err != nil {
		return benchRun{}, fmt.Errorf("simulator: %w", err)
	}
	cfg := runtime.Defaults()
	cfg.MaxSteps = o.MaxSteps
	cfg.Seed = seed
	if mode == modeFixed {
		cfg.FixedDelay = o.FixedDelay
	}
	planner, err := newPlanner(plannerSpec{Name: plannerRule}, nil, nil, nil)
	if err != nil {
		return benchRun{}, err
	}
	runner, err := runtime.New(cfg, phone.Device(), planner, runtime.Options{Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return benchRun{}, err
	}
	realStart := time.Now()
	res := runner.Run(ctx, benchGoals[locale])
	r := benchRun{Locale: locale, Seed: seed, Mode: mode, Status: res.Status, Reason: res.Reason,
		Steps: len(res.Steps), Duration: res.Duration, CPU: time.Since(realStart)}
	st, err := phone.State()
	if err != nil {
		return r, fmt.Errorf("simulator state: %w", err)
	}
	last, err := lastSearch(st)
	if err != nil {
		return r, err
	}
	r.Success = res.Status == lifecycle.Completed && last == benchQuery
	if !r.Success && r.Reason == "" {
		r.Reason = fmt.Sprintf("last_search is %q", last)
	}
	return r, nil
}

// lastSearch reads taobao.last_search from the simulator's state.
func lastSearch(state []byte) (string, error) {
	var st struct {
		Taobao struct {
			LastSearch string `json:"last_search"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		return "", fmt.Errorf("simulator state is not the JSON expected: %w", err)
	}
	return st.Taobao.LastSearch, nil
}

func summarise(mode string, o benchOptions, runs []benchRun) benchMode {
	m := benchMode{Name: mode}
	if mode == modeFixed {
		m.Name = "fixed " + o.FixedDelay.String()
	}
	var ds []time.Duration
	var total time.Duration
	steps := 0
	for _, r := range runs {
		if r.Mode != mode {
			continue
		}
		m.Runs++
		if r.Success {
			m.Successes++
		}
		ds = append(ds, r.Duration)
		total += r.Duration
		steps += r.Steps
	}
	if len(ds) == 0 {
		return m
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	m.Mean = total / time.Duration(len(ds))
	m.Median = ds[len(ds)/2]
	if len(ds)%2 == 0 {
		m.Median = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	m.P90 = ds[min(len(ds)-1, len(ds)*9/10)]
	m.MeanSteps = float64(steps) / float64(len(ds))
	return m
}

func (r *benchReport) print(w io.Writer) {
	unit := "simulated time"
	if r.Clock == "real" {
		unit = "real time"
	}
	fmt.Fprintf(w, "profile %s, %d seeds × %s, %s\n", r.Profile, r.Seeds, strings.Join(r.Locales, ","), unit)
	fmt.Fprintf(w, "%-10s %9s %9s %9s %9s %7s\n", "mode", "success", "mean", "median", "p90", "steps")
	for _, m := range r.Modes {
		fmt.Fprintf(w, "%-10s %4d/%-4d %8.2fs %8.2fs %8.2fs %7.1f\n", m.Name, m.Successes, m.Runs,
			m.Mean.Seconds(), m.Median.Seconds(), m.P90.Seconds(), m.MeanSteps)
	}
	fmt.Fprintf(w, "fixed/settle: %.2fx by mean, %.2fx by median\n", r.MeanRatio, r.MedianRatio)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "failed: %s seed %d %s: %s (%s)\n", f.Locale, f.Seed, f.Mode, f.Status, f.Reason)
	}
}

// policyHelp lists every policy with what it is, from phonebench's table,
// wrapped under its name.
func policyHelp() string {
	width := 0
	for _, p := range phonebench.Policies {
		width = max(width, len(p))
	}
	var b strings.Builder
	for _, p := range phonebench.Policies {
		pad := strings.Repeat(" ", width+4)
		line := "  " + p + strings.Repeat(" ", width+2-len(p))
		for _, w := range strings.Fields(phonebench.PolicyAbout[p]) {
			if len(line)+1+len(w) > 78 && strings.TrimSpace(line) != "" && len(line) > len(pad) {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = pad
			}
			if !strings.HasSuffix(line, " ") {
				line += " "
			}
			line += w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
