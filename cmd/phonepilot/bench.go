package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/runtime"
	"phonepilot/task/lifecycle"
)

func init() { register(newBenchCmd) }

// benchOptions are the flags of `phonepilot bench`.
type benchOptions struct {
	Seeds      int
	FirstSeed  int64
	Profile    string
	Locales    []string
	FixedDelay time.Duration
	Clock      string // "fake" (simulated time) or "real"
	MaxSteps   int
	JSON       bool
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
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Compare settling with a fixed 1 s sleep after each action on the simulator",
		Long: `Run "open Taobao and search Mac mini" (en) and "打开淘宝搜索Mac mini" (zh) on the
in-process simulator for N seeds, once waiting for the screen to settle
(the first read that shows the expected outcome, else two equal
fingerprints; capped) and once sleeping a fixed delay after every
action instead (what agents such as Open-AutoGLM and droidrun do). A run
succeeds when the simulator's own state shows last_search "Mac mini".

With --clock fake (the default) every wait, the simulator's latencies and the
runtime's polls run on a simulated clock: the times printed are what the
task would take on such a phone, measured without waiting for them (the
runtime's own CPU time is measured by the Go benchmark in runtime/).
--clock real runs in real time.`,
		Example: `  phonepilot bench --seeds 100
  phonepilot bench --seeds 5 --clock real --locales en`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return exitWith(2, err)
			}
			rep, err := runBench(cmd.Context(), o, nil)
			if err != nil {
				return exitWith(exitFailed, err)
			}
			if o.JSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(rep)
			}
			rep.print(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Seeds, "seeds", 20, "number of simulator seeds per locale and mode")
	f.Int64Var(&o.FirstSeed, "first-seed", 1, "first seed")
	f.StringVar(&o.Profile, "profile", "realistic", "simulator realism profile")
	f.StringSliceVar(&o.Locales, "locales", []string{"en", "zh"}, "simulator locales to run")
	f.DurationVar(&o.FixedDelay, "fixed-delay", time.Second, "the fixed sleep after each action of the baseline")
	f.StringVar(&o.Clock, "clock", "fake", "fake (simulated time, fast) or real")
	f.IntVar(&o.MaxSteps, "max-steps", runtime.Defaults().MaxSteps, "most steps per task")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
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
	phone, err := sim.New(sim.Config{Locale: locale, Profile: o.Profile, Seed: seed, Clock: clk})
	if err != nil {
		return benchRun{}, fmt.Errorf("simulator: %w", err)
	}
	cfg := runtime.Defaults()
	cfg.MaxSteps = o.MaxSteps
	cfg.Seed = seed
	if mode == modeFixed {
		cfg.FixedDelay = o.FixedDelay
	}
	planner, err := newPlanner(plannerSpec{Name: plannerRule}, nil, nil)
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
