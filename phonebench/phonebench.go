// Package phonebench is the harness of phonebench: it runs the tasks of
// phonebench/tasks on the simulated phone under several policies, on the
// same seeds and fault schedules, judges every run on the simulator's own
// state (never on the agent's claim), measures each against the floor (the
// fastest any agent could be on that phone), and writes records, a summary
// and an HTML report.
//
// The policies:
//
//   - rule: the rule planner on the task's rule phrasing, through the
//     runtime (tasks without one are skipped).
//   - reference: the AIPlanner driven through the ai.Provider seam by the
//     scripted decision-maker, which reads only the request a model would
//     get and follows the task's intent script: a perfect planner, so what
//     fails under it is the runtime's fault.
//   - peer-loop: the same decisions in the loop Open-AutoGLM and droidrun
//     run: observe, decide, act, sleep a fixed 1 s; no wait-for-element,
//     settling, verification or retries.
//   - ai: the AIPlanner with a real provider (the caller builds it).
//
// Every run is on simulated time (one clock.Fake shared by the phone and
// whoever drives it), so a full suite takes minutes, not hours. The
// runtime's policies run through task.Service, so a gated action really
// waits (waiting_approval) and the harness, as the person, checks the
// phone before it approves.
package phonebench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/phonebench/tasks"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/runtime"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

// The policies.
const (
	PolicyRule      = "rule"
	PolicyReference = "reference"
	PolicyPeerLoop  = "peer-loop"
	PolicyAI        = "ai"
)

// Policies lists every policy, in report order.
var Policies = []string{PolicyRule, PolicyReference, PolicyPeerLoop, PolicyDroidrunLoop, PolicyAutoGLMLoop, PolicyMidsceneLoop, PolicyMobileUseLoop, PolicyAI}

// DefaultPolicies are the policies run when none are named: every one but
// ai (it needs a provider's key).
var DefaultPolicies = func() []string {
	var out []string
	for _, p := range Policies {
		if p != PolicyAI {
			out = append(out, p)
		}
	}
	return out
}()

// PolicyAbout says in a line what each policy is, for help texts.
var PolicyAbout = map[string]string{
	PolicyRule:          "the rule planner, on the tasks whose goal its grammar covers",
	PolicyReference:     "the AI planner driven by a scripted decision-maker that reads only what a model would see (a perfect planner: what fails under it is the runtime's fault)",
	PolicyPeerLoop:      "the same decisions in a generic loop: read, decide, act, sleep a fixed --peer-delay",
	PolicyDroidrunLoop:  "the same decisions in droidrun's own loop (its waits, its Portal reads, its model calls)",
	PolicyAutoGLMLoop:   "the same decisions in Open-AutoGLM's own loop (1 s after each action, PNG screenshots)",
	PolicyMidsceneLoop:  "the same decisions in Midscene's own loop (300 ms after each action, PNG screenshots)",
	PolicyMobileUseLoop: "the same decisions in mobile-use's own loop (a screenshot and a dump from its uiautomator2 server a turn, no idle wait, no sleep after a tap, two model calls a turn and one a run)",
	PolicyAI:            "the AI planner with a real provider (--provider, --model, --base-url; the key from ANTHROPIC_API_KEY / OPENAI_API_KEY)",
}

// DefaultModelLatency is a model call's time (--model-latency).
const DefaultModelLatency = 2 * time.Second

// ProfileClean is the fault-free phone (the simulator's profile "").
const ProfileClean = "clean"

// Profiles lists the profiles phonebench runs, in report order; "clean"
// is the simulator's fault-free phone. Which exist is the simulator's
// business (sim.ProfileNames).
var Profiles = []string{ProfileClean, "realistic", "slow", "flaky", "hostile"}

// DefaultPeerDelay is the peer loop's fixed sleep after every action.
const DefaultPeerDelay = time.Second

// Options say what to run.
type Options struct {
	Tasks    []tasks.Task // tasks.All() when empty
	Policies []string     // rule, reference, peer-loop (not ai) when empty
	Profiles []string     // Profiles that the simulator has, when empty
	Locales  []string     // en and zh when empty
	Seeds    int          // seeds per task, locale and profile (1 when 0)
	// FirstSeed is the first seed (seeds are FirstSeed … FirstSeed+Seeds-1).
	FirstSeed int64
	// PeerDelay is the peer loop's fixed sleep (DefaultPeerDelay when 0).
	PeerDelay time.Duration
	// Observer is the path phonepilot's policies (rule, reference, ai,
	// peer-loop) read and drive the phone by (sim.ObserverUIAutomator when
	// ""); the other peers take their own.
	Observer sim.Observer
	// Platform is the phone the tasks run on: PlatformAndroid (when "") or
	// PlatformIOS (the simulated iPhone through WDA; phonepilot's policies
	// and peer-loop only).
	Platform string
	// ModelLatency is one model call's time, added per call to every
	// policy that calls a model (0: none).
	ModelLatency time.Duration
	// Vision has reference plan as the AI planner does by default: with
	// the screenshot taken beside each read, so the simulator renders
	// each frame and charges the path's frame cost (on the helper's path
	// a frame, 50–150 ms, outlasts a tree read, 5–40 ms). Off, reference
	// plans on the listing alone and only its tokens count the image.
	// Rendering makes it slow: for a few seeds.
	Vision bool
	// AI builds the planner of the ai policy, one per run (required when
	// Policies has ai). log is the run's logger.
	AI func(log *slog.Logger) (plan.Planner, error)
	// Workers runs that many runs at once (GOMAXPROCS when 0).
	Workers int
	// Progress, when set, hears of each record as it is made, with how
	// many are done of how many (from one goroutine at a time).
	Progress func(done, total int, r Record)
	// DB is the SQLite file the task service records into; a file in a
	// temporary directory, removed at the end, when empty.
	DB     string
	Logger *slog.Logger

	// gate, in tests, replaces the safety gate of every policy (a
	// gate-less run shows that the harness catches what gets through).
	gate runtime.Gate
	// requests, in tests, hears every request the reference policy's
	// stand-in model is sent.
	requests func(ai.Request)
	// floors, in tests, keeps each unit's floor across Runs: it depends on
	// the unit alone (the oracle reads for free and charges the cheapest
	// path), not on the policies or the observer.
	floors *floorCache
}

// floorCache holds floors by unit (task, locale, profile, seed).
type floorCache struct{ m sync.Map }

type floorKey struct {
	task, locale, profile string
	seed                  int64
}

// ErrBadOptions wraps every refusal of the options.
var ErrBadOptions = errors.New("phonebench")

func (o *Options) normalise() error {
	if len(o.Tasks) == 0 {
		o.Tasks = tasks.All()
	}
	if len(o.Policies) == 0 {
		o.Policies = DefaultPolicies
	}
	for _, p := range o.Policies {
		if !slices.Contains(Policies, p) {
			return fmt.Errorf("%w: unknown policy %q (use %s)", ErrBadOptions, p, strings.Join(Policies, ", "))
		}
		if p == PolicyAI && o.AI == nil {
			return fmt.Errorf("%w: the ai policy needs a provider (a key or --base-url)", ErrBadOptions)
		}
	}
	if len(o.Profiles) == 0 {
		o.Profiles = AvailableProfiles()
	}
	for _, p := range o.Profiles {
		if !slices.Contains(AvailableProfiles(), p) {
			return fmt.Errorf("%w: unknown profile %q (use %s)", ErrBadOptions, p, strings.Join(AvailableProfiles(), ", "))
		}
	}
	if len(o.Locales) == 0 {
		o.Locales = tasks.Locales
	}
	for _, l := range o.Locales {
		if !slices.Contains(tasks.Locales, l) {
			return fmt.Errorf("%w: unknown locale %q (use %s)", ErrBadOptions, l, strings.Join(tasks.Locales, ", "))
		}
	}
	if o.Seeds == 0 {
		o.Seeds = 1
	}
	if o.Seeds < 0 {
		return fmt.Errorf("%w: seeds must be at least 1, got %d", ErrBadOptions, o.Seeds)
	}
	switch o.Platform {
	case "":
		o.Platform = PlatformAndroid
	case PlatformAndroid, PlatformIOS:
	default:
		return fmt.Errorf("%w: unknown platform %q (use %s)", ErrBadOptions, o.Platform, strings.Join(Platforms, ", "))
	}
	obs, err := sim.ParseObserver(string(o.Observer))
	if err != nil || (obs != sim.ObserverUIAutomator && obs != sim.ObserverHelper) {
		return fmt.Errorf("%w: unknown observer %q (use uiautomator or helper)", ErrBadOptions, o.Observer)
	}
	if o.Vision && obs != sim.ObserverHelper {
		// The planner takes a frame beside each dump, in parallel on a
		// phone; the simulated clock adds the two one after the other.
		return fmt.Errorf("%w: --vision needs --observer helper: on %s a screenshot is taken beside each dump, at once on a phone, one after the other on the simulated clock (the times without it stand there)", ErrBadOptions, obs)
	}
	o.Observer = obs
	if o.ModelLatency < 0 {
		return fmt.Errorf("%w: the model latency must not be negative, got %s", ErrBadOptions, o.ModelLatency)
	}
	if o.PeerDelay == 0 {
		o.PeerDelay = DefaultPeerDelay
	}
	if o.PeerDelay < 0 {
		return fmt.Errorf("%w: the peer delay must be positive, got %s", ErrBadOptions, o.PeerDelay)
	}
	if o.Workers <= 0 {
		o.Workers = goruntime.GOMAXPROCS(0)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// AvailableProfiles are the Profiles the simulator has.
func AvailableProfiles() []string {
	have := sim.ProfileNames()
	var out []string
	for _, p := range Profiles {
		if p == ProfileClean || slices.Contains(have, p) {
			out = append(out, p)
		}
	}
	return out
}

func simProfile(p string) string {
	if p == ProfileClean {
		return ""
	}
	return p
}

// unit is one task, locale, profile and seed: the floor is measured once
// and every policy runs on it.
type unit struct {
	t       tasks.Task
	locale  string
	profile string
	seed    int64
}

// Run runs every task × locale × profile × seed under every policy and
// returns the report. Runs are independent (each has its own phone and
// clock), so Workers of them go at once; the records come back in a fixed
// order. A cancelled ctx stops it with the records so far.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if err := opt.normalise(); err != nil {
		return nil, err
	}
	h, err := newHarness(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer h.close()

	rep := &Report{Started: time.Now().UTC(), Seeds: opt.Seeds, Policies: opt.Policies, Profiles: opt.Profiles,
		Locales: opt.Locales, PeerDelayMS: opt.PeerDelay.Milliseconds(), Observer: string(opt.Observer),
		Vision: opt.Vision, ModelLatencyMS: opt.ModelLatency.Milliseconds(), Skipped: map[string]int{}}
	var units []unit
	total := 0
	for _, t := range opt.Tasks {
		rep.Tasks = append(rep.Tasks, t.Name)
		for _, loc := range opt.Locales {
			for _, prof := range opt.Profiles {
				for i := 0; i < opt.Seeds; i++ {
					units = append(units, unit{t, loc, prof, opt.FirstSeed + int64(i)})
					for _, pol := range opt.Policies {
						if h.applies(pol, t, loc) {
							total++
						} else {
							rep.Skipped[pol]++
						}
					}
				}
			}
		}
	}

	var (
		mu   sync.Mutex
		done int
		errs []error
	)
	work := make(chan unit)
	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				recs, err := h.runUnit(ctx, u)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, r := range recs {
					rep.Records = append(rep.Records, r)
					done++
					if opt.Progress != nil {
						opt.Progress(done, total, r)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, u := range units {
		select {
		case work <- u:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	sortRecords(rep.Records, opt.Policies, opt.Profiles)
	rep.Summary = Summarise(rep.Records, opt.Policies, opt.Profiles, opt.Locales, rep.Skipped)
	if err := errors.Join(errs...); err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// harness is what the runs of one Run share: the task service the
// runtime's policies run through, and its store.
type harness struct {
	opt     Options
	svc     *task.Service
	store   *sqlite.Store
	tmp     string
	pending sync.Map // task id → *run
}

func newHarness(ctx context.Context, opt Options) (*harness, error) {
	h := &harness{opt: opt}
	db := opt.DB
	if db == "" {
		dir, err := os.MkdirTemp("", "phonebench-")
		if err != nil {
			return nil, fmt.Errorf("phonebench: temporary directory for the task database: %w", err)
		}
		h.tmp = dir
		db = filepath.Join(dir, "tasks.db")
	}
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		h.close()
		return nil, fmt.Errorf("phonebench: task database: %w", err)
	}
	h.store = store
	svc, err := task.New(task.Config{
		Logger: opt.Logger,
		// The service waits for the harness in real time (milliseconds);
		// the runs' own time is each run's simulated clock.
		Clock:           clock.Real{},
		ApprovalTimeout: time.Minute, AnswerTimeout: time.Minute,
		OnPending: h.onPending,
	}, store, nil, task.RunnerFunc(h.runTask))
	if err != nil {
		h.close()
		return nil, err
	}
	h.svc = svc
	return h, nil
}

func (h *harness) close() {
	if h.svc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := h.svc.Close(ctx); err != nil {
			h.opt.Logger.Error("phonebench: task service close", "err", err)
		}
		cancel()
	}
	if h.store != nil {
		h.store.Close()
	}
	if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
}

// applies says whether policy pol runs task t in locale loc: the rule
// policy only where the task offers a phrasing it covers.
func (h *harness) applies(pol string, t tasks.Task, loc string) bool {
	if h.opt.Platform == PlatformIOS && !iosPolicies[pol] {
		return false
	}
	if pol == PolicyRule {
		_, ok := t.RuleFor(loc, nil)
		return ok
	}
	return true
}

// runUnit measures the floor of u and runs every policy on it.
func (h *harness) runUnit(ctx context.Context, u unit) ([]Record, error) {
	params := u.t.ParamsFor(u.seed)
	key := floorKey{u.t.Name, u.locale, u.profile, u.seed}
	var fl time.Duration
	if v, ok := h.floorsLoad(key); ok {
		fl = v
	} else {
		var err error
		if fl, err = floor(ctx, u, params); err != nil {
			return nil, fmt.Errorf("%s %s %s seed %d: floor: %w", u.t.Name, u.locale, u.profile, u.seed, err)
		}
		if h.opt.floors != nil {
			h.opt.floors.m.Store(key, fl)
		}
	}
	var out []Record
	for _, pol := range h.opt.Policies {
		if !h.applies(pol, u.t, u.locale) {
			continue
		}
		if ctx.Err() != nil {
			return out, nil
		}
		r, err := h.runPolicy(ctx, u, params, pol)
		if err != nil {
			return out, fmt.Errorf("%s %s %s seed %d %s: %w", u.t.Name, u.locale, u.profile, u.seed, pol, err)
		}
		r.FloorMS = fl.Milliseconds()
		out = append(out, r)
	}
	return out, nil
}

func (h *harness) floorsLoad(k floorKey) (time.Duration, bool) {
	if h.opt.floors == nil {
		return 0, false
	}
	v, ok := h.opt.floors.m.Load(k)
	if !ok {
		return 0, false
	}
	return v.(time.Duration), true
}

// epoch is where every run's simulated clock starts.
var epoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// newPhone makes the phone of a run, at u's starting state, driven on
// path o by Device().
func newPhone(u unit, params map[string]string, clk clock.Clock, o sim.Observer) (*sim.Phone, error) {
	var start sim.Start
	if u.t.Start != nil {
		start = u.t.Start(params)
	}
	p, err := sim.New(sim.Config{Locale: u.locale, Profile: simProfile(u.profile), Seed: u.seed, Clock: clk, Start: start, Observer: o})
	if err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	return p, nil
}

func script(t tasks.Task, locale string, params map[string]string) []tasks.Step {
	if t.Script == nil {
		return nil
	}
	return t.Script(locale, params)
}

// scriptOn is the script on the run's platform.
func (h *harness) scriptOn(t tasks.Task, locale string, params map[string]string) []tasks.Step {
	s := script(t, locale, params)
	if h.opt.Platform == PlatformIOS {
		return iosScript(s, locale)
	}
	return s
}
