package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"phonepilot/device"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/storage"
	"phonepilot/task"
)

func init() { register(newRunCmd) }

// Exit statuses of `phonepilot run`.
const (
	exitCompleted  = 0
	exitFailed     = 1
	exitDeviceGone = 3 // the phone vanished or stopped answering (cause device_gone)
	exitCancelled  = 130
)

// exitFor is the exit status of a run that ended so.
func exitFor(res runtime.Result) int {
	switch {
	case res.Status == lifecycle.Completed:
		return exitCompleted
	case res.Status == lifecycle.Cancelled:
		return exitCancelled
	case res.Cause == lifecycle.CauseDeviceGone:
		return exitDeviceGone
	}
	return exitFailed
}

// runOptions are the flags of `phonepilot run` that are not settings.
type runOptions struct {
	config   string
	json     bool
	verbose  bool
	noRecord bool
	device   string
	dev      deviceOptions
	allow    []string
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] GOAL",
		Short: "Drive the phone toward a goal written in plain language",
		Long: `Drive the phone toward GOAL: observe the screen, plan a step, act, observe
again, until the goal is reached, a step ceiling is hit, or Ctrl-C.

The default rule planner reads simple instructions in English or Chinese:
open/launch <app>, search (for) <query>, tap/click <label>, type <text>
[into <field>], scroll up/down, go back, go home, joined by "and", "then",
commas (打开/启动, 搜索, 点击, 输入, 上滑/下滑, 返回, 回到桌面, 然后, 并).
For anything else use --planner ai.

Settings come from defaults, phonepilot.toml (or --config), PHONEPILOT_*
environment variables, then flags. API keys come only from ANTHROPIC_API_KEY
or OPENAI_API_KEY.

The task is recorded (unless --no-record) and its id printed first, so
"phonepilot show ID" (or a unique prefix of it) finds it afterwards.

Actions that cannot be undone (pay, buy, send, delete, grant a permission,
log out, install, call: the safety gate's categories) wait for a person:
on a terminal run shows the action (element, label, category, reason) and
asks "Approve? [y/N]" (and reads a line to answer a question the planner
asks); without a terminal (stdin not a TTY) it refuses, and the task fails
with cause approval_denied (also with --no-record, where the terminal is
asked directly). --allow CATEGORY[,…] lets
the named categories through for this run without asking, over the
[safety] rules of phonepilot.toml (docs/safety.md).

Exit status: 0 completed, 1 failed (goal not reached), 2 bad usage,
3 the device vanished or stopped answering (cause device_gone),
130 cancelled (Ctrl-C).`,
		Example: `  phonepilot run --device sim "open Taobao and search Mac mini"
  phonepilot run --device sim --sim-locale zh "打开淘宝搜索Mac mini"
  phonepilot run --device adb --planner ai --provider anthropic "turn on dark theme"
  phonepilot run --json --sim-profile realistic "open Taobao and search Mac mini"
  phonepilot run --allow payment "open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTask(cmd, o, args)
		},
	}
	addRunFlags(cmd, &o)
	return cmd
}

// addRunFlags registers the flags of `phonepilot run`, which `phonepilot
// flow run` takes too.
func addRunFlags(cmd *cobra.Command, o *runOptions) {
	addDeviceFlags(cmd, &o.device, &o.dev)
	f := cmd.Flags()
	addPlannerFlags(f, "planner")
	f.Bool("vision", true, "send the screenshot to the AI planner beside the Scene")
	f.Int("image-edge", ai.DefaultImageEdge, fmt.Sprintf("long side of the screenshot sent to the AI planner, in pixels (at most %d)", ai.MaxImageEdge))
	f.Int("max-steps", runtime.Defaults().MaxSteps, "most steps a task may take")
	f.Duration("fixed-delay", 0, "sleep this long after every action instead of waiting for the screen to settle (for comparison)")
	f.StringVar(&o.config, "config", "", configFlagHelp)
	f.BoolVar(&o.json, "json", false, "print one JSON result document instead of step lines")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug lines to stderr")
	f.String("db", "", dbFlagHelp)
	f.BoolVar(&o.noRecord, "no-record", false, "do not record the task in the database")
	f.StringSliceVar(&o.allow, "allow", nil, "let these gated categories through for this run without asking: "+categoryList()+" (comma separated)")
}

// goalRun is what varies between `run` and `flow run`: the goal, and for a
// flow its planner and what to do with the result.
type goalRun struct {
	goal string
	// planner, when set, builds the task's planner in place of the
	// configured one; name is what the task records.
	planner func(spec plannerSpec, od *openedDevice, log *slog.Logger) (p plan.Planner, name string, err error)
	// flow is the task.Request's Flow.
	flow json.RawMessage
	// done is called with the result before it is printed; what it returns
	// joins the --json document (the healed flow's path).
	done func(res runtime.Result) (healed string, err error)
	// notice, when set, is a line said once before the first step (a flow
	// run on a device unlike the one it was recorded on); "" for none.
	notice func(ctx context.Context, od *openedDevice) string
}

// runTask is `phonepilot run`: configuration first (errors exit 2 before any
// device opens), then the device, then the loop.
func runTask(cmd *cobra.Command, o runOptions, args []string) error {
	goal := strings.TrimSpace(strings.Join(args, " "))
	if goal == "" {
		return exitWith(2, errors.New(`give a goal, for example: phonepilot run --device sim "open Taobao and search Mac mini"`))
	}
	return runGoal(cmd, o, goalRun{goal: goal})
}

// runGoal runs one goal as a task and prints it: the body of `run` and of
// `flow run`.
func runGoal(cmd *cobra.Command, o runOptions, g goalRun) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	goal := g.goal
	cfg, rc, err := commandConfig(cmd.Flags(), o.config, cmd.ErrOrStderr())
	if err != nil {
		return exitWith(2, err)
	}
	allow, err := parseAllow(o.allow)
	if err != nil {
		return exitWith(2, err)
	}
	gate, err := safety.New(allowCategories(cfg.Safety.Policy, allow))
	if err != nil {
		return exitWith(2, err)
	}

	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	dopt := o.dev
	dopt.SimLocale, dopt.SimProfile, dopt.SimSeed, dopt.ADBServer = cfg.Sim.Locale, cfg.Sim.Profile, cfg.Sim.Seed, cfg.ADB.Server
	dopt.Observer = cfg.Observer
	dopt.Logger = log
	od, err := openDevice(ctx, cfg.Device, dopt)
	if err != nil {
		if errors.Is(err, errDeviceSpec) {
			return exitWith(2, err)
		}
		code := exitFailed
		if errors.Is(err, device.ErrDisconnected) {
			// No phone to open is the device-gone case (exit 3), as a
			// phone that vanishes mid-task is.
			code = exitDeviceGone
		}
		return exitWith(code, fmt.Errorf("opening device %s: %w", cfg.Device, err))
	}
	defer od.Close()
	spec := cfg.plannerSpec()
	var planner plan.Planner
	if g.planner != nil {
		planner, spec.Name, err = g.planner(spec, od, log)
	} else {
		planner, err = newPlanner(spec, od.Camera, od.Device, log)
	}
	if err != nil {
		return exitWith(2, err)
	}

	pr := newStepPrinter(stdout, o.json)
	// The runtime's events go to the printer and, when recording, to the
	// task service's recorder (set by the service for the run).
	var record func(runtime.Event)
	// newRunner builds the loop; person is the task service's when the task
	// is recorded, else the person at the terminal directly.
	newRunner := func(person runtime.Person) (*runtime.Runner, error) {
		return runtime.New(rc, od.Device, planner, runtime.Options{Logger: log, Gate: gate, Person: person, OnEvent: func(e runtime.Event) {
			pr.event(e)
			if record != nil {
				record(e)
			}
		}})
	}
	p := newPerson(cmd, pr.stopSpinner)
	// Without a task to wait in (--no-record) the runtime asks the person
	// directly.
	runner, err := newRunner(directPerson{p})
	if err != nil {
		return exitWith(2, err)
	}
	if !o.json {
		pr.header(goal, od.Name, spec.Name)
	}
	if g.notice != nil {
		if n := g.notice(ctx, od); n != "" {
			// --json keeps stdout for its document.
			w := stdout
			if o.json {
				w = stderr
			}
			fmt.Fprintln(w, n)
		}
	}
	var (
		res runtime.Result
		id  string
	)
	if o.noRecord {
		res = runner.Run(ctx, goal)
	} else {
		t, r, err := recordedRun(ctx, cfg, task.Request{Goal: goal, Device: od.Name, Planner: plannerName(spec.Name), MaxSteps: rc.MaxSteps, Flow: g.flow},
			od.Device, log, p, task.RunnerFunc(func(ctx context.Context, t storage.Task, _ device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
				record = emit
				pr.taskID(t.ID)
				// The task service is the person the runtime turns to: the
				// task waits, and the person at the terminal decides.
				runner, err := newRunner(person)
				if err != nil { // newRunner above took the same settings
					return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed, Reason: err.Error()}
				}
				return runner.Run(ctx, t.Goal)
			}))
		if err != nil {
			return exitWith(exitFailed, fmt.Errorf("%w (use --no-record to run without recording)", err))
		}
		res, id = r, t.ID
	}
	pr.stop()
	var healed string
	if g.done != nil {
		if healed, err = g.done(res); err != nil {
			fmt.Fprintf(stderr, "phonepilot: %v\n", err)
		}
	}

	if o.json {
		doc := resultDocument(goal, od.Name, plannerName(spec.Name), res)
		doc.ID, doc.HealedFlow = id, healed
		if od.State != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if st, err := od.State.State(sctx); err == nil && json.Valid(st) {
				doc.DeviceState = st
			}
			cancel()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return exitWith(exitFailed, err)
		}
	} else {
		pr.summary(res)
	}
	if code := exitFor(res); code != exitCompleted {
		return exitWith(code, errors.New(""))
	}
	return nil
}

// recordedRun runs the task through a task service over the task database,
// the same path a served task takes: created, started, every step and event
// recorded, its end (with its cause) written. Tasks that dead `run`s left
// running are interrupted first (openStore does it). A Ctrl-C (ctx)
// cancels the task; the records are still written.
func recordedRun(ctx context.Context, cfg appConfig, req task.Request, dev device.Device, log *slog.Logger, p *person, runner task.Runner) (storage.Task, runtime.Result, error) {
	bg := context.WithoutCancel(ctx)
	store, err := openStore(bg, cfg.Storage.DB)
	if err != nil {
		return storage.Task{}, runtime.Result{}, fmt.Errorf("open task database: %w", err)
	}
	defer store.Close()
	var svc *task.Service
	tcfg := task.Config{Snapshot: cfg.snapshots(log), Logger: log,
		ApprovalTimeout: cfg.Safety.ApprovalTimeout, AnswerTimeout: cfg.Safety.AnswerTimeout,
		// The task waits for a person: p asks on the terminal, or refuses
		// when there is none (nothing is bought or sent).
		OnPending: func(id string, pd storage.Pending) { p.decide(bg, svc, id, pd) }}
	svc, err = task.New(tcfg, store, nil, runner)
	if err != nil {
		return storage.Task{}, runtime.Result{}, err
	}
	t, res, err := svc.RunNow(ctx, req, dev)
	cctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	if cerr := svc.Close(cctx); cerr != nil {
		log.Error("the task database did not take all of this task's records", "task", t.ID, "err", cerr)
	}
	if err != nil {
		return storage.Task{}, runtime.Result{}, fmt.Errorf("record task: %w", err)
	}
	return t, res, nil
}

func plannerName(p string) string {
	if p == "" {
		return plannerRule
	}
	return p
}

// resultDoc is the --json output: one document per run. Its units and
// empties are the API's (docs/api.md, "Units"): times as integer
// nanoseconds named *_ns, a cause left out while there is none.
type resultDoc struct {
	ID          string           `json:"id,omitempty"` // the recorded task (none with --no-record)
	Goal        string           `json:"goal"`
	Device      string           `json:"device"`
	Planner     string           `json:"planner"`
	Status      lifecycle.Status `json:"status"`
	Cause       lifecycle.Cause  `json:"cause,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	Steps       []stepDoc        `json:"steps"`
	Usage       plan.Usage       `json:"usage"`
	Started     time.Time        `json:"started"`
	Duration    time.Duration    `json:"duration_ns"`
	DeviceState json.RawMessage  `json:"device_state,omitempty"`
	// HealedFlow is where `flow run --heal` wrote the healed flow.
	HealedFlow string `json:"healed_flow,omitempty"`
}

type stepDoc struct {
	Number   int                  `json:"number"`
	Intent   string               `json:"intent"`
	Tool     string               `json:"tool"`
	Args     json.RawMessage      `json:"args,omitempty"`
	Status   lifecycle.StepStatus `json:"status"`
	Reason   string               `json:"reason,omitempty"`
	Changed  bool                 `json:"changed"`
	Attempts []attemptDoc         `json:"attempts"`
	Duration time.Duration        `json:"duration_ns"`
	Usage    *plan.Usage          `json:"usage,omitempty"`
}

type attemptDoc struct {
	Number   int           `json:"number"`
	Result   string        `json:"result"`
	Changed  bool          `json:"changed"`
	Duration time.Duration `json:"duration_ns"`
}

func resultDocument(goal, device, planner string, res runtime.Result) resultDoc {
	doc := resultDoc{Goal: goal, Device: device, Planner: planner, Status: res.Status, Cause: res.Cause, Reason: res.Reason,
		Steps: []stepDoc{}, Usage: res.Usage, Started: res.Started, Duration: res.Duration}
	for _, s := range res.Steps {
		sd := stepDoc{Number: s.Number, Intent: s.Intent, Tool: s.Call.Name, Args: s.Call.Args, Status: s.Status,
			Reason: s.Reason, Changed: s.Changed, Attempts: []attemptDoc{}, Duration: s.Duration}
		if len(sd.Args) == 0 || !json.Valid(sd.Args) {
			sd.Args = nil
		}
		for _, a := range s.Attempts {
			sd.Attempts = append(sd.Attempts, attemptDoc{Number: a.Number, Result: a.Result, Changed: a.Changed, Duration: a.Duration})
		}
		if s.Usage != (plan.Usage{}) {
			u := s.Usage
			sd.Usage = &u
		}
		doc.Steps = append(doc.Steps, sd)
	}
	return doc
}

// stepPrinter writes a line per step as it finishes, with a spinner while
// a step runs when the output is a terminal. Colours only on a terminal
// and never with NO_COLOR set.
type stepPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	quiet   bool
	tty     bool
	color   bool
	label   string
	stopSp  chan struct{}
	spDone  chan struct{}
	started time.Time
}

func newStepPrinter(w io.Writer, quiet bool) *stepPrinter {
	p := &stepPrinter{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
		_, noColor := os.LookupEnv("NO_COLOR")
		p.color = !noColor && os.Getenv("TERM") != "dumb"
	}
	return p
}

func (p *stepPrinter) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *stepPrinter) header(goal, device, planner string) {
	if p.quiet {
		return
	}
	fmt.Fprintf(p.w, "goal: %s  (device %s, planner %s)\n", goal, device, plannerName(planner))
}

// taskID prints the recorded task's id, before its first step.
func (p *stepPrinter) taskID(id string) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	fmt.Fprintf(p.w, "task %s\n", id)
	p.mu.Unlock()
}

func (p *stepPrinter) event(e runtime.Event) {
	if p.quiet {
		return
	}
	switch e.Type {
	case lifecycle.EventStepStarted:
		p.startSpinner(fmt.Sprintf("%3d  %s", e.Step, e.Intent))
	case lifecycle.EventStepFinished:
		p.stopSpinner()
		p.stepLine(*e.Record)
	case lifecycle.EventStatus:
		p.stopSpinner()
	}
}

func (p *stepPrinter) stepLine(r plan.StepRecord) {
	var mark string
	switch r.Status {
	case lifecycle.StepSucceeded:
		mark = p.paint("32", "ok")
	case lifecycle.StepCancelled:
		mark = p.paint("33", "cancelled")
	case lifecycle.StepReplanned:
		mark = p.paint("33", "re-planned")
	default:
		mark = p.paint("31", "FAILED")
	}
	line := fmt.Sprintf("%3d  %s %s %s  %d ms", r.Number, pad(r.Intent, 40), pad(r.Call.String(), 48), mark, r.Duration.Milliseconds())
	if n := len(r.Attempts); n > 1 {
		line += fmt.Sprintf("  (%d attempts)", n)
	}
	if u := r.Usage; u.Tokens() != "" || u.Latency > 0 {
		line += fmt.Sprintf("  [%s tokens, model %d ms]", u.Tokens(), u.Latency.Milliseconds())
	}
	if r.Status == lifecycle.StepFailed && r.Reason != "" {
		line += "\n     " + p.paint("31", r.Reason)
	}
	p.mu.Lock()
	fmt.Fprintln(p.w, line)
	p.mu.Unlock()
}

// withoutRepeat is the task's reason with the last failed step's reason,
// already printed under that step, said once: "see above" stands for it.
func withoutRepeat(res runtime.Result) string {
	for i := len(res.Steps) - 1; i >= 0; i-- {
		if r := res.Steps[i]; r.Status == lifecycle.StepFailed && len(r.Reason) > 20 {
			return strings.Replace(res.Reason, r.Reason, "see above", 1)
		}
	}
	return res.Reason
}

// pad fills s with spaces to width terminal columns; CJK characters take
// two columns.
func pad(s string, width int) string {
	w := 0
	for _, r := range s {
		w++
		if unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || (r >= 0xFF00 && r <= 0xFF60) || (r >= 0x3000 && r <= 0x303F) {
			w++
		}
	}
	if w >= width {
		return s
	}
	return s + strings.Repeat(" ", width-w)
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (p *stepPrinter) startSpinner(label string) {
	if !p.tty {
		return
	}
	p.stopSpinner()
	p.mu.Lock()
	p.label, p.started = label, time.Now()
	stop, done := make(chan struct{}), make(chan struct{})
	p.stopSp, p.spDone = stop, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r\x1b[K%s %s  %.1fs", p.paint("36", spinFrames[i%len(spinFrames)]), p.label, time.Since(p.started).Seconds())
			p.mu.Unlock()
			select {
			case <-stop:
				p.mu.Lock()
				fmt.Fprint(p.w, "\r\x1b[K")
				p.mu.Unlock()
				return
			case <-t.C:
			}
		}
	}()
}

func (p *stepPrinter) stopSpinner() {
	p.mu.Lock()
	stop, done := p.stopSp, p.spDone
	p.stopSp, p.spDone = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (p *stepPrinter) stop() { p.stopSpinner() }

func (p *stepPrinter) summary(res runtime.Result) {
	status := string(res.Status)
	switch res.Status {
	case lifecycle.Completed:
		status = p.paint("32", status)
	case lifecycle.Failed:
		status = p.paint("31", status)
	default:
		status = p.paint("33", status)
	}
	steps := "steps"
	if len(res.Steps) == 1 {
		steps = "step"
	}
	if res.Cause != lifecycle.CauseNone && res.Status == lifecycle.Failed {
		status += " (" + string(res.Cause) + ")"
	}
	line := fmt.Sprintf("%s in %d %s, %.1f s", status, len(res.Steps), steps, res.Duration.Seconds())
	if res.Reason != "" {
		line += ": " + withoutRepeat(res)
	}
	if t := res.Usage.Tokens(); t != "" {
		line += " [" + t + " tokens]"
	}
	fmt.Fprintln(p.w, line)
}
