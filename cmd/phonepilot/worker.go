package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/apps"
	"phonepilot/device"
	"phonepilot/device/backend"
	"phonepilot/farm"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/task"
)

func init() { register(newWorkerCmd) }

// farmSection configures `phonepilot worker` (flags win):
//
//	[farm]
//	name = "rack-1"              # --name; the host name when empty
//	devices = ["adb", "sim:a"]   # --devices
//	heartbeat = "2s"             # --heartbeat
//	lease = "10s"                # --lease
//	retry_interrupted = false    # --retry-interrupted
//	reset = true                 # --reset: home screen and the task's app force-stopped before each task
//	[farm.labels]                # --label KEY=VALUE, on every device of this worker
//	rack = "a"
type farmSection struct {
	Name             string            `toml:"name"`
	Devices          []string          `toml:"devices"`
	Heartbeat        time.Duration     `toml:"heartbeat"`
	Lease            time.Duration     `toml:"lease"`
	RetryInterrupted bool              `toml:"retry_interrupted"`
	Reset            *bool             `toml:"reset"`
	Labels           map[string]string `toml:"labels"`
}

func newWorkerCmd() *cobra.Command {
	var (
		configPath string
		verbose    bool
	)
	cmd := &cobra.Command{
		Use:   "worker --db postgres://… [--name N] [--devices SPEC…]",
		Short: "Run this host's phones for a device farm (PostgreSQL + River)",
		Long: `Join a device farm: register this host and its devices in the PostgreSQL
database, heartbeat, and run the tasks queued for them (one at a time per
device). Submit and watch tasks through any 'phonepilot serve --db' on the
same database.

Devices (--devices, repeatable or comma-separated): adb (every phone the adb
server sees, hot-plugged ones too), adb:SERIAL (that phone when attached),
sim:NAME (an in-process simulated phone). Default: adb.

Each device is labelled with its model, Android version, screen size and
locale, plus --label KEY=VALUE (and [farm.labels]). A task names a device or
asks for "any" with labels.

A worker that stops heart-beating for --lease is taken for dead: its running
tasks end interrupted (or are queued again with --retry-interrupted). Before
each task the device goes to its home screen and the task's app is
force-stopped (--reset=false to skip). See docs/farm.md.`,
		Example: `  phonepilot worker --db postgres://pp@db/phonepilot --name rack-1 --devices adb --label rack=a
  phonepilot worker --db "$DB" --devices sim:a,sim:b --sim-locale zh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd, configPath, verbose)
		},
	}
	f := cmd.Flags()
	f.String("db", "", "the farm's PostgreSQL database (postgres://…); env PHONEPILOT_DB")
	f.String("name", "", "this worker's name in the farm (default: the host name)")
	f.StringSlice("devices", nil, "devices to offer: adb, adb:SERIAL, sim:NAME (repeatable, comma-separated; default adb)")
	f.StringArray("label", nil, "KEY=VALUE label on every device of this worker (repeatable)")
	f.Duration("heartbeat", 0, "how often to heartbeat (default 2s)")
	f.Duration("lease", 0, "how long a device lease outlives the last heartbeat (default 10s; at least 3 heartbeats)")
	f.Bool("retry-interrupted", false, "queue a dead worker's running tasks again instead of ending them interrupted")
	f.Bool("reset", true, "before each task: home screen, the task's app force-stopped")
	f.Duration("job-timeout", time.Hour, "longest a task may run, waits for a person included")
	addPlannerFlags(f, "planner for tasks that name none")
	f.String("sim-locale", "en", "language of the simulated phones: en or zh")
	f.String("sim-profile", "", simProfileHelp("profile of the simulated phones"))
	f.Int64("sim-seed", 1, "seed of the simulated phones' randomness")
	f.String("adb-server", "", "adb server address host:port (default: $ADB_SERVER_SOCKET, else 127.0.0.1:5037)")
	f.StringVar(&configPath, "config", "", configFlagHelp)
	f.BoolVarP(&verbose, "verbose", "v", false, "log debug lines")
	return cmd
}

// workerSettings are the farm settings after file and flags.
type workerSettings struct {
	name      string
	specs     []string
	labels    map[string]string
	heartbeat time.Duration
	lease     time.Duration
	retry     bool
	reset     bool
	timeout   time.Duration
}

func farmSettings(cmd *cobra.Command, fs farmSection) (workerSettings, error) {
	f := cmd.Flags()
	s := workerSettings{name: fs.Name, specs: fs.Devices, labels: map[string]string{}, heartbeat: fs.Heartbeat,
		lease: fs.Lease, retry: fs.RetryInterrupted, reset: fs.Reset == nil || *fs.Reset}
	for k, v := range fs.Labels {
		s.labels[k] = v
	}
	if f.Changed("name") {
		s.name, _ = f.GetString("name")
	}
	if f.Changed("devices") {
		s.specs, _ = f.GetStringSlice("devices")
	}
	if f.Changed("heartbeat") {
		s.heartbeat, _ = f.GetDuration("heartbeat")
	}
	if f.Changed("lease") {
		s.lease, _ = f.GetDuration("lease")
	}
	if f.Changed("retry-interrupted") {
		s.retry, _ = f.GetBool("retry-interrupted")
	}
	if f.Changed("reset") {
		s.reset, _ = f.GetBool("reset")
	}
	s.timeout, _ = f.GetDuration("job-timeout")
	labels, _ := f.GetStringArray("label")
	for _, kv := range labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return s, fmt.Errorf("--label %q: want KEY=VALUE", kv)
		}
		s.labels[k] = v
	}
	if err := farm.CheckLabels(s.labels); err != nil {
		return s, err
	}
	if s.name == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return s, errors.New("no --name and no host name")
		}
		s.name = h
	}
	if strings.ContainsAny(s.name, "@ \t\n") || len(s.name) > 64 {
		return s, fmt.Errorf("--name %q: at most 64 characters, no '@' or spaces", s.name)
	}
	if len(s.specs) == 0 {
		s.specs = []string{"adb"}
	}
	seen := map[string]bool{}
	for _, sp := range s.specs {
		if err := backend.CheckOffer(sp); err != nil {
			return s, fmt.Errorf("--devices %q: %w", sp, err)
		}
		if seen[sp] {
			return s, fmt.Errorf("--devices %q given twice", sp)
		}
		seen[sp] = true
	}
	if s.timeout <= 0 {
		return s, errors.New("--job-timeout must be positive")
	}
	return s, nil
}

func runWorker(cmd *cobra.Command, configPath string, verbose bool) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, rc, err := commandConfig(cmd.Flags(), configPath, cmd.ErrOrStderr())
	if err != nil {
		return exitWith(2, err)
	}
	ws, err := farmSettings(cmd, cfg.Farm)
	if err != nil {
		return exitWith(2, err)
	}
	if !isPostgres(cfg.Storage.DB) {
		return exitWith(2, errors.New("worker: --db must be the farm's PostgreSQL database (postgres://…)"))
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level})).With("worker", ws.name)
	store, err := postgres.Open(ctx, cfg.Storage.DB)
	if err != nil {
		return exitWith(1, fmt.Errorf("open database: %w", err))
	}
	defer store.Close()
	pool, err := farm.OpenPool(ctx, cfg.Storage.DB)
	if err != nil {
		return exitWith(1, err)
	}
	defer pool.Close()
	gate, err := cfg.gate()
	if err != nil {
		return exitWith(2, err)
	}
	svc, err := task.New(task.Config{Logger: log, ApprovalTimeout: cfg.Safety.ApprovalTimeout, AnswerTimeout: cfg.Safety.AnswerTimeout},
		store, nil, &runtimeRunner{base: rc, planner: cfg.plannerSpec(), log: log, gate: gate})
	if err != nil {
		return exitWith(2, err)
	}
	host, _ := os.Hostname()
	devs := newWorkerDevices(ws.specs, ws.labels, cfg.deviceOptions(log))
	wcfg := farm.WorkerConfig{Name: ws.name, Host: host, Heartbeat: ws.heartbeat, Lease: ws.lease,
		RetryInterrupted: ws.retry, JobTimeout: ws.timeout, Logger: log}
	if ws.reset {
		wcfg.Reset = resetDevice
	}
	w, err := farm.NewWorker(wcfg, pool, store, svc, devs)
	if err != nil {
		return exitWith(2, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "phonepilot worker %s is serving %s\n", ws.name, strings.Join(ws.specs, ", "))
	err = w.Run(ctx)
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = svc.Close(cctx)
	if err != nil {
		return exitWith(1, err)
	}
	return nil
}

func isPostgres(dsn string) bool { return storage.IsPostgresDSN(dsn) }

// workerDevices is a worker's farm.Devices: the devices --devices names,
// through the backend table (simulated phones kept for the worker's life;
// the phones the adb server sees, hot-plugged ones too).
type workerDevices struct {
	specs  []string
	labels map[string]string
	served *serveDevices
}

var _ farm.Devices = (*workerDevices)(nil)

func newWorkerDevices(specs []string, labels map[string]string, o deviceOptions) *workerDevices {
	return &workerDevices{specs: specs, labels: labels, served: newServeDevices(o)}
}

// Scan implements farm.Devices: the devices ready now, with their labels
// and the worker's (the user's labels win).
func (d *workerDevices) Scan(ctx context.Context) ([]farm.Offer, error) {
	offers, err := d.served.Scan(ctx, d.specs)
	if err != nil {
		return nil, err
	}
	out := make([]farm.Offer, len(offers))
	for i, o := range offers {
		labels := maps.Clone(o.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, d.labels)
		out[i] = farm.Offer{Name: o.Name, Labels: labels}
	}
	return out, nil
}

// Open implements farm.Devices.
func (d *workerDevices) Open(ctx context.Context, name string) (device.Device, func(), error) {
	return d.served.Open(ctx, name)
}

// resetDevice puts a device in a known state before a task: the app the
// last task left in front (from its final screen, or the screen now after a
// start) and the app the goal names are force-stopped, and the home screen
// is shown.
func resetDevice(ctx context.Context, dev device.Device, next storage.Task, last *storage.Task) error {
	var stop []string
	front := ""
	if last != nil {
		var sc struct {
			Package string `json:"package"`
		}
		if json.Unmarshal(last.FinalScene, &sc) == nil {
			front = sc.Package
		}
	} else if sc, err := dev.Scene(ctx); err == nil {
		front = sc.Package
	}
	if front != "" && !apps.NotAnApp(front) {
		stop = append(stop, front)
	}
	if pkg := goalApp(next.Goal); pkg != "" && !slices.Contains(stop, pkg) {
		stop = append(stop, pkg)
	}
	for _, pkg := range stop {
		if err := forceStop(ctx, dev, pkg); err != nil {
			return fmt.Errorf("force-stop %s: %w", pkg, err)
		}
	}
	return dev.Key(ctx, device.KeyHome)
}

// goalApp is the package of the first well-known app the goal names.
func goalApp(goal string) string {
	g := apps.Key(goal)
	for _, a := range apps.Known {
		for _, n := range a.Names {
			if k := apps.Key(n); len(k) >= 4 && strings.Contains(g, k) { // bytes: "QQ" would match too much, 淘宝 does not
				return a.Packages[0]
			}
		}
	}
	return ""
}

// forceStop stops pkg on a device that can (a device.AppStopper); a device
// that cannot gets the home key only.
func forceStop(ctx context.Context, dev device.Device, pkg string) error {
	if !apps.LooksLikePackage(pkg) {
		return fmt.Errorf("%q is not a package name", pkg)
	}
	if s, ok := dev.(device.AppStopper); ok {
		return s.StopApp(ctx, pkg)
	}
	return nil
}
