package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/api"
	"phonepilot/device"
	"phonepilot/device/backend"
	"phonepilot/farm"
	"phonepilot/flow"
	"phonepilot/lifecycle"
	"phonepilot/perception/frame"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/task"
)

func init() { register(newServeCmd) }

type serveOptions struct {
	config  string
	verbose bool
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the live web page",
		Long: `Serve the JSON API (POST /v1/tasks, GET /v1/tasks, /v1/tasks/{id},
/v1/tasks/{id}/steps, /v1/tasks/{id}/events (server-sent events),
POST /v1/tasks/{id}/cancel, /approve, /deny, /answer, GET /v1/devices,
/v1/devices/{id}/state, /healthz, /v1/openapi.json) and the web page at /,
which starts tasks and follows them live.

A task whose next action the safety gate stops (pay, send, delete…) waits in
waiting_approval with its pending action until a client approves or denies
it; a question of the planner waits in waiting_user for an answer.

Tasks run one at a time per device, in order; tasks on different devices run
at once. Devices: sim or sim:NAME (an in-process simulated phone per NAME,
kept while the server runs), adb or adb:SERIAL.

Every task, step and event is recorded in --db as it happens. On start,
tasks a previous run left running are marked interrupted.

With --db postgres://… serve is a front of a device farm: it runs no task
itself; 'phonepilot worker' processes on the phone hosts do, and any number
of fronts share the farm (a task may name a device or ask for "device":
"any" with "labels"; GET /v1/devices lists the farm's devices). See
docs/farm.md.

Bound beyond loopback, the server requires --token (or PHONEPILOT_TOKEN) and
refuses to start without one; a token has at least 16 characters. Clients
send Authorization: Bearer <token>.`,
		Example: `  phonepilot serve
  phonepilot serve --addr 0.0.0.0:8080 --token "$(openssl rand -hex 16)"
  curl -s localhost:8080/v1/tasks -d '{"goal":"open Taobao and search Mac mini","device":"sim"}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, o, nil)
		},
	}
	f := cmd.Flags()
	f.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks one)")
	f.String("db", "", dbFlagHelp)
	f.String("token", "", "bearer token clients must send, at least 16 characters (required beyond loopback); env PHONEPILOT_TOKEN")
	addPlannerFlags(f, "planner for tasks that name none")
	f.Int("max-steps", runtime.Defaults().MaxSteps, "steps a task may take when it asks for no max_steps")
	f.Int("max-steps-ceiling", api.Defaults().MaxStepsCeiling, "the most max_steps a task may ask for (at least --max-steps)")
	f.String("sim-locale", "en", "language of the in-process simulated phones: en or zh")
	f.String("sim-profile", "", simProfileHelp("profile of the in-process simulated phones"))
	f.Int64("sim-seed", 1, "seed of the simulated phones' randomness")
	f.String("adb-server", "", "adb server address host:port (default: $ADB_SERVER_SOCKET, else 127.0.0.1:5037)")
	addDoorFlags(f)
	f.StringVar(&o.config, "config", "", configFlagHelp)
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug lines")
	return cmd
}

// serveReady is told the bound address (tests use it).
type serveReady func(addr string)

func runServe(cmd *cobra.Command, o serveOptions, ready serveReady) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	cfg, rc, err := commandConfig(cmd.Flags(), o.config, cmd.ErrOrStderr())
	if err != nil {
		return exitWith(2, err)
	}
	if err := api.CheckBind(cfg.Serve.Addr, cfg.Serve.Token); err != nil {
		return exitWith(2, err)
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	var (
		store   storage.Store
		devices serveDeviceSet
		front   *farm.Front
	)
	if isPostgres(cfg.Storage.DB) {
		// The farm's front: workers run the tasks (farm_serve.go).
		var closeFarm func()
		store, front, devices, closeFarm, err = openFarmFront(ctx, cfg.Storage.DB, log)
		if err != nil {
			return exitWith(1, err)
		}
		defer closeFarm()
	} else {
		store, err = openStore(ctx, cfg.Storage.DB)
		if err != nil {
			return exitWith(1, fmt.Errorf("open database: %w", err))
		}
		defer store.Close()
		devices = newServeDevices(cfg.deviceOptions(log), cfg.Device)
	}
	acfg := api.Defaults()
	acfg.Token = cfg.Serve.Token
	if acfg.ApprovalKey, err = approvalKey(nil); err != nil {
		return exitWith(2, err)
	}
	acfg.MaxSteps, acfg.MaxStepsCeiling = rc.MaxSteps, cfg.Serve.MaxStepsCeiling
	if err := acfg.Validate(); err != nil {
		return exitWith(2, fmt.Errorf("--max-steps-ceiling: %w", err))
	}
	spec := cfg.plannerSpec()
	acfg.Planners = []string{plannerName(spec.Name)}
	for _, p := range plannerNames {
		if p != acfg.Planners[0] {
			acfg.Planners = append(acfg.Planners, p)
		}
	}
	gate, err := cfg.gate()
	if err != nil {
		return exitWith(2, err)
	}
	tcfg := task.Config{Snapshot: cfg.snapshots(log), Logger: log,
		ApprovalTimeout: cfg.Safety.ApprovalTimeout, AnswerTimeout: cfg.Safety.AnswerTimeout}
	if front != nil {
		tcfg.Queue = front
	}
	svc, err := task.New(tcfg, store, devices, &runtimeRunner{base: rc, planner: spec, log: log, gate: gate})
	if err != nil {
		return exitWith(2, err)
	}
	if front != nil {
		front.SetNotify(svc.Notify)
		lctx, stopListen := context.WithCancel(context.Background())
		defer stopListen()
		go front.Run(lctx)
	}
	srv, err := api.New(acfg, svc, devices, log)
	if err != nil {
		return exitWith(2, err)
	}
	if err := srv.Start(ctx); err != nil {
		return exitWith(1, err)
	}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Serve.Addr)
	if err != nil {
		return exitWith(1, fmt.Errorf("listen on %s: %w", cfg.Serve.Addr, err))
	}
	handler, err := behindDoor(ln, cfg, srv.Handler())
	if err != nil {
		_ = ln.Close()
		return exitWith(2, err)
	}
	// Requests hang off baseCtx so that stopping ends the event streams of
	// tasks that will not end by themselves (queued ones).
	baseCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	hs := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second, // event streams lift it for themselves
		IdleTimeout:       2 * time.Minute,
	}
	addr := ln.Addr().String()
	fmt.Fprintf(stdout, "phonepilot is serving on http://%s/\n", addr)
	printApprovalLink(stdout, addr, acfg.ApprovalKey)
	log.Info("serving", "addr", addr, "db", dbLabel(cfg.Storage.DB), "token", keyState(cfg.Serve.Token))
	if ready != nil {
		ready(addr)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return exitWith(1, err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Running tasks end as interrupted (queued ones wait for the next
	// start), their ends are written, and the open event streams send
	// them with their end event; only then are requests cut.
	_ = srv.Close(sctx)
	cancelRequests()
	_ = hs.Shutdown(sctx)
	return nil
}

// dbLabel names the database for a log line without a DSN's password.
func dbLabel(spec string) string {
	if spec == "" {
		return "default SQLite file"
	}
	return storage.RedactSecrets(spec)
}

// runtimeRunner runs a task with the real runtime and the task's planner;
// its events go to emit, which the task service records.
type runtimeRunner struct {
	base    runtime.Config
	planner plannerSpec // its Name is replaced by the task's
	log     *slog.Logger
	// gate is asked before every action (nil: the default policy,
	// confirm every category); the task service's person decides.
	gate runtime.Gate
}

var _ task.Runner = (*runtimeRunner)(nil)

func (r *runtimeRunner) Run(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
	cfg := r.base
	if t.MaxSteps > 0 {
		cfg.MaxSteps = t.MaxSteps
	}
	spec := r.planner
	spec.Name = t.Planner
	log := r.log.With("task", t.ID)
	var planner plan.Planner
	var err error
	if t.Planner == flow.PlannerName {
		// A flow task (POST /v1/flows/run) carries its flow.
		planner, err = flowPlanner(t, log)
		if run, ferr := flow.FromTask(t); ferr == nil {
			if n := flow.DriftNotice(flow.Drift(ctx, run.Flow.Recorded, dev)); n != "" {
				log.Warn(n)
			}
		}
	} else {
		planner, err = newPlanner(spec, cameraOf(dev), dev, log)
	}
	if err != nil {
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseModelError, Reason: err.Error()}
	}
	runner, err := runtime.New(cfg, dev, planner, runtime.Options{Logger: log, OnEvent: emit, Gate: r.gate, Person: person})
	if err != nil {
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed, Reason: err.Error()}
	}
	return runner.Run(ctx, t.Goal)
}

// serveDevices are the server's devices: the backend table's Set (each
// sim or sim:NAME one in-process simulated phone kept while the server
// runs; adb phones opened per task), as the task service and the API ask
// for them.
type serveDevices struct {
	*backend.Set
	// operator are the device names the operator configured (--device,
	// PHONEPILOT_DEVICE): a client may name them though no backend lists
	// them.
	operator map[string]bool
}

var (
	_ api.Devices  = (*serveDevices)(nil)
	_ task.Devices = (*serveDevices)(nil)
)

func newServeDevices(o deviceOptions, operator ...string) *serveDevices {
	d := &serveDevices{Set: backend.NewSet(o), operator: map[string]bool{}}
	for _, n := range operator {
		d.operator[n] = true
	}
	return d
}

// Check refuses a device a client (the API, an MCP client) names that this
// server does not know: a client may name a simulated phone, a backend's
// bare kind ("adb": the one attached), a device the operator configured,
// or one a backend lists now (GET /v1/devices). Anything else, an
// adb:HOST:PORT or wda:URL above all, would make the server connect to an
// address of the client's choosing (the adb server would keep that
// endpoint attached, send it its key and user@host, and take its
// screens): connecting a new address is the operator's (adb connect, or
// --device).
func (d *serveDevices) Check(name string) error {
	if err := d.Set.Check(name); err != nil {
		return err
	}
	b, rest, _ := backend.Owner(name)
	if b.Kept || rest == "" || d.operator[name] {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, _ := d.Set.List(ctx)
	for _, l := range list {
		if l.Name == name {
			return nil
		}
	}
	return fmt.Errorf("%q is not a device this server knows (see GET /v1/devices); connecting to a new phone or address is the operator's decision (adb connect on the server, or phonepilot's --device)", name)
}

// Open opens the device for one task. The device is the driver itself: its
// optional abilities (camera, facts, stopping an app) are found on it by
// type assertion.
func (d *serveDevices) Open(ctx context.Context, name string) (device.Device, func(), error) {
	od, release, err := d.Set.Open(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return od.Device, release, nil
}

// cameraOf is the device's camera, when it has one.
func cameraOf(d device.Device) frame.Camera {
	c, _ := d.(frame.Camera)
	return c
}

// State is the device's own state JSON; its error wraps the API's
// ErrUnknownDevice or ErrNoState as the Set's does.
func (d *serveDevices) State(ctx context.Context, name string) (json.RawMessage, error) {
	raw, err := d.Set.State(ctx, name)
	switch {
	case errors.Is(err, backend.ErrUnknown):
		return nil, apiError{api.ErrUnknownDevice, err}
	case errors.Is(err, backend.ErrNoState):
		return nil, apiError{api.ErrNoState, err}
	}
	return raw, err
}

// apiError is err, also matching the API's sentinel.
type apiError struct{ sentinel, err error }

func (e apiError) Error() string   { return e.err.Error() }
func (e apiError) Unwrap() []error { return []error{e.sentinel, e.err} }

func (d *serveDevices) List(ctx context.Context) ([]api.DeviceInfo, error) {
	list, err := d.Set.List(ctx)
	out := make([]api.DeviceInfo, len(list))
	for i, l := range list {
		out[i] = api.DeviceInfo{Name: l.Name, Kind: l.Kind, State: l.State}
	}
	return out, err
}

// flowPlanner is the replay planner of a flow task.
func flowPlanner(t storage.Task, log *slog.Logger) (plan.Planner, error) {
	run, err := flow.FromTask(t)
	if err != nil {
		return nil, err
	}
	return flow.NewPlanner(run.Flow, flow.Options{Params: run.Params, Logger: log})
}
