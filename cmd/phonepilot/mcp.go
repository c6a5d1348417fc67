package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"phonepilot/api"
	"phonepilot/device/backend"
	"phonepilot/internal/clock"
	"phonepilot/mcpserver"
	"phonepilot/task"
)

func init() { register(newMCPCmd) }

type mcpOptions struct {
	config    string
	http      string
	apiAddr   string
	leaseIdle time.Duration
	verbose   bool
}

func newMCPCmd() *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve phonepilot's tools to MCP clients (Claude Desktop, Claude Code, Cursor)",
		Long: `Serve phonepilot over the Model Context Protocol: on stdin/stdout (the
default, as MCP clients launch it) or as streamable HTTP at /mcp (--http).

Tools: ` + strings.Join(mcpserver.ToolNames(), ", ") + `.
They look at the phones and the screen (the listing, optionally a
screenshot), act through phonepilot's tool contract (each action waits for
the screen to settle and answers what changed, with the new listing), and
hand a goal to phonepilot's own loop or replay a flow file as a task (no
model).

A device is leased to one MCP session while it uses it; others get "busy".
The safety gate stops purchases, messages, deletions…: the client's user is
asked when the client supports MCP elicitation; otherwise a person approves
a waiting task on phonepilot's web page and API, served at the --http
address (or at --api in stdio mode).

Over HTTP beyond loopback a bearer token is required (--token or
PHONEPILOT_TOKEN), as for serve. In stdio mode logs go to stderr only.`,
		Example: `  phonepilot mcp --device sim
  phonepilot mcp --http 127.0.0.1:8765
  claude mcp add phonepilot -- phonepilot mcp --device sim`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd, o, nil) },
	}
	f := cmd.Flags()
	f.String("device", "sim", "device of calls that name none: "+backend.Names(nil))
	f.StringVar(&o.http, "http", "", "serve streamable HTTP at this address (path /mcp, and the API and web page at /) instead of stdio")
	f.StringVar(&o.apiAddr, "api", "", "in stdio mode, also serve the API and web page here, where a person approves waiting tasks")
	f.String("token", "", "bearer token HTTP clients must send, at least 16 characters (required beyond loopback); env PHONEPILOT_TOKEN")
	f.String("db", "", dbFlagHelp)
	addPlannerFlags(f, "planner of run_task when the call names none")
	f.Int("max-steps", 30, "most steps a run_task may take (and the default)")
	f.String("sim-locale", "en", "language of the simulated phones: en or zh")
	f.String("sim-profile", "", simProfileHelp("profile of the simulated phones"))
	f.Int64("sim-seed", 1, "seed of the simulated phones' randomness")
	f.String("adb-server", "", "adb server address host:port (default: $ADB_SERVER_SOCKET, else 127.0.0.1:5037)")
	f.DurationVar(&o.leaseIdle, "lease-idle", mcpserver.DefaultLeaseIdle, "a device lease ends after this long unused")
	addDoorFlags(f)
	f.StringVar(&o.config, "config", "", configFlagHelp)
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug lines (to stderr)")
	return cmd
}

// mcpReady is told the HTTP address once it listens (tests use it).
type mcpReady func(addr string)

func runMCP(cmd *cobra.Command, o mcpOptions, ready mcpReady) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	cfg, rc, err := commandConfig(cmd.Flags(), o.config, cmd.ErrOrStderr())
	if err != nil {
		return exitWith(2, err)
	}
	webAddr := o.http
	if webAddr == "" {
		webAddr = o.apiAddr
	}
	if webAddr != "" {
		if err := api.CheckBind(webAddr, cfg.Serve.Token); err != nil {
			return exitWith(2, err)
		}
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	// stdout is the protocol in stdio mode: every line goes to stderr.
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	store, err := openStore(ctx, cfg.Storage.DB)
	if err != nil {
		return exitWith(1, fmt.Errorf("open database: %w", err))
	}
	defer store.Close()
	devices := newServeDevices(cfg.deviceOptions(log), cfg.Device)
	gate, err := cfg.gate()
	if err != nil {
		return exitWith(2, err)
	}
	spec := cfg.plannerSpec()
	planners := []string{plannerName(spec.Name)}
	for _, p := range plannerNames {
		if p != planners[0] {
			planners = append(planners, p)
		}
	}
	// One lease table for the MCP sessions and the task service: a task
	// from the page or the API waits while a session works its phone.
	leases := mcpserver.NewLeases(clock.Real{}, o.leaseIdle)
	svc, err := task.New(task.Config{Snapshot: cfg.snapshots(log), Logger: log, Held: leases.HeldAgainst,
		ApprovalTimeout: cfg.Safety.ApprovalTimeout, AnswerTimeout: cfg.Safety.AnswerTimeout},
		store, devices, &runtimeRunner{base: rc, planner: spec, log: log, gate: gate})
	if err != nil {
		return exitWith(2, err)
	}
	acfg := api.Defaults()
	acfg.Token, acfg.MaxSteps, acfg.MaxStepsCeiling, acfg.Planners, acfg.DefaultDevice = cfg.Serve.Token, rc.MaxSteps, rc.MaxSteps, planners, cfg.Device
	// Decisions need the approval key, which only the person is shown: the
	// MCP client holds the bearer token (and may have a shell), so the
	// token alone must not approve what its model asked for.
	if acfg.ApprovalKey, err = approvalKey(nil); err != nil {
		return exitWith(2, err)
	}
	web, err := api.New(acfg, svc, devices, log)
	if err != nil {
		return exitWith(2, err)
	}
	if err := web.Start(ctx); err != nil {
		return exitWith(1, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = web.Close(sctx)
	}()

	// The hint is read by the model: it says who decides, never how (no
	// address to post to, no key).
	hint := "a person must approve it on phonepilot's web page, which needs phonepilot mcp started with --api; or use an MCP client that supports elicitation"
	var ln net.Listener
	if webAddr != "" {
		var lc net.ListenConfig
		if ln, err = lc.Listen(ctx, "tcp", webAddr); err != nil {
			return exitWith(1, fmt.Errorf("listen on %s: %w", webAddr, err))
		}
		hint = "a person approves or denies it on phonepilot's web page, through the approval link phonepilot showed them; it cannot be approved from here"
		// stdout is the protocol in stdio mode; the person's terminal (or
		// the client's log of stderr) gets the link.
		linkTo := stderr
		if o.http != "" {
			linkTo = cmd.OutOrStdout()
		}
		printApprovalLink(linkTo, ln.Addr().String(), acfg.ApprovalKey)
	}
	srv, err := mcpserver.New(mcpserver.Config{
		Devices: mcpDevices{devices}, Tasks: svc, DefaultDevice: cfg.Device, Planners: planners, MaxSteps: rc.MaxSteps,
		Runtime: rc, Gate: gate, ApproveHint: hint, LeaseIdle: o.leaseIdle, Leases: leases, Logger: log, Version: buildVersion(),
	})
	if err != nil {
		return exitWith(2, err)
	}

	if ln != nil {
		mux := http.NewServeMux()
		if o.http != "" {
			mux.Handle("/mcp", api.RequireToken(cfg.Serve.Token, srv.HTTPHandler(30*time.Minute)))
		}
		mux.Handle("/", web.Handler())
		handler, err := behindDoor(ln, cfg, mux)
		if err != nil {
			_ = ln.Close()
			return exitWith(2, err)
		}
		hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		errc := make(chan error, 1)
		go func() { errc <- hs.Serve(ln) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		}()
		log.Info("serving", "addr", ln.Addr().String(), "mcp", o.http != "", "token", keyState(cfg.Serve.Token))
		if ready != nil {
			ready(ln.Addr().String())
		}
		if o.http != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "phonepilot MCP is serving on http://%s/mcp\n", ln.Addr())
			select {
			case <-ctx.Done():
				return nil
			case err := <-errc:
				if !errors.Is(err, http.ErrServerClosed) {
					return exitWith(1, err)
				}
				return nil
			}
		}
	}
	err = srv.MCP().Run(ctx, &mcpserver.StdioTransport{In: cmd.InOrStdin(), Out: cmd.OutOrStdout()})
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return exitWith(1, err)
	}
	return nil
}

// mcpDevices are serve's devices as the MCP server opens them.
type mcpDevices struct{ d *serveDevices }

func (m mcpDevices) Check(name string) error { return m.d.Check(name) }

func (m mcpDevices) List(ctx context.Context) ([]mcpserver.DeviceInfo, error) {
	list, err := m.d.List(ctx)
	out := make([]mcpserver.DeviceInfo, len(list))
	for i, d := range list {
		out[i] = mcpserver.DeviceInfo{Name: d.Name, Kind: d.Kind, State: d.State}
	}
	return out, err
}

func (m mcpDevices) Open(ctx context.Context, name string) (mcpserver.Opened, error) {
	od, release, err := m.d.Set.Open(ctx, name)
	if err != nil {
		return mcpserver.Opened{}, err
	}
	return mcpserver.Opened{Device: od.Device, Camera: od.Camera, Release: release}, nil
}
