// Package mcpserver is phonepilot behind the Model Context Protocol
// (github.com/modelcontextprotocol/go-sdk): direct tools for a client that
// plans itself (list_devices, observe, and the action tools of TOOLS.md,
// each settled and answered with what changed) and delegating tools for a
// client that hands over the goal (run_task, get_task, cancel_task over the
// task service). Devices are leased to one session at a time; the safety
// gate stops gated actions, and the client's user is asked through MCP
// elicitation when the client can, else the tool says who must approve and
// how.
//
// The transports (stdio, streamable HTTP) are the caller's: Server.MCP is
// the SDK server to run on either, Server.HTTPHandler mounts it for HTTP.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/perception/frame"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/task"
)

// DeviceInfo is a device the server can drive.
type DeviceInfo struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	State string `json:"state,omitempty"`
}

// Opened is a device opened for a session: the phone, its camera (nil when
// it has none) and the function that gives it back.
type Opened struct {
	Device  device.Device
	Camera  frame.Camera
	Release func()
}

// Devices names and opens devices.
type Devices interface {
	List(ctx context.Context) ([]DeviceInfo, error)
	// Check says whether name is a device that could be opened.
	Check(name string) error
	Open(ctx context.Context, name string) (Opened, error)
}

// Tasks is the part of task.Service the delegating tools use.
type Tasks interface {
	Submit(ctx context.Context, req task.Request) (storage.Task, error)
	Get(ctx context.Context, id string) (storage.Task, error)
	Steps(ctx context.Context, id string) ([]storage.Step, error)
	Cancel(ctx context.Context, id string) (storage.Task, error)
	Watch(ctx context.Context, id string, after int64, fn func(storage.Event) error) (storage.Task, error)
	Approve(ctx context.Context, id, by, note string) (storage.Task, error)
	Deny(ctx context.Context, id, by, note string) (storage.Task, error)
	Answer(ctx context.Context, id, by, text string) (storage.Task, error)
	// Load is each device's running task, whoever started it (the API and
	// web page share the service).
	Load() map[string]task.DeviceLoad
}

// Config is what a Server is built from.
type Config struct {
	Devices Devices
	// Tasks runs run_task's tasks; the delegating tools answer an error
	// when nil.
	Tasks Tasks
	// DefaultDevice is the device of a call that names none.
	DefaultDevice string
	// Planners are the planner names run_task accepts; the first is the
	// default.
	Planners []string
	// MaxSteps caps run_task's max_steps and is its default.
	MaxSteps int
	// Runtime tunes the direct actions' Executor (settle, retries).
	Runtime runtime.Config
	// Gate is asked before every direct action (nil: the default policy).
	Gate runtime.Gate
	// ApproveHint says who decides a task's pending action when the client
	// cannot ask its user; "{id}" is replaced by the task. The model reads
	// it, so it names no address or credential a client could use to
	// approve its own request (New refuses a URL or an API path).
	ApproveHint string
	// LeaseIdle ends a device lease its session has not used for this long
	// (5 minutes when zero).
	LeaseIdle time.Duration
	// Leases is the device lease table, NewLeases(Clock, LeaseIdle) when
	// nil; pass the one whose HeldAgainst the task service asks
	// (task.Config.Held), so tasks started elsewhere wait for a session.
	Leases *Leases
	// Clock drives leases and the Executor; clock.Real when nil.
	Clock clock.Clock
	// Logger receives the server's lines (never screenshots); discarded
	// when nil. A stdio server must log to stderr: stdout is the protocol.
	Logger *slog.Logger
	// Version is the server version told to clients.
	Version string
}

// DefaultLeaseIdle is the idle time after which a lease ends.
const DefaultLeaseIdle = 5 * time.Minute

// Server is phonepilot's MCP server. Create it with New.
type Server struct {
	cfg    Config
	mcp    *mcp.Server
	leases *Leases
	log    *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	nextID   int
}

// New builds the server and its tools.
func New(cfg Config) (*Server, error) {
	if cfg.Devices == nil {
		return nil, errors.New("mcpserver: no devices")
	}
	if cfg.DefaultDevice == "" {
		cfg.DefaultDevice = "sim"
	}
	if len(cfg.Planners) == 0 {
		cfg.Planners = []string{"rule"}
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = runtime.Defaults().MaxSteps
	}
	if strings.Contains(cfg.ApproveHint, "://") || strings.Contains(cfg.ApproveHint, "/v1/") {
		return nil, fmt.Errorf("mcpserver: the approve hint %q shows the model where to approve; a person approves, and the model must not be told how", cfg.ApproveHint)
	}
	if cfg.Runtime == (runtime.Config{}) {
		cfg.Runtime = runtime.Defaults()
	}
	if err := cfg.Runtime.Validate(); err != nil {
		return nil, err
	}
	if cfg.LeaseIdle <= 0 {
		cfg.LeaseIdle = DefaultLeaseIdle
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Leases == nil {
		cfg.Leases = NewLeases(cfg.Clock, cfg.LeaseIdle)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, leases: cfg.Leases, sessions: map[*mcp.ServerSession]*session{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "phonepilot", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       cfg.Logger,
		// Sessions carry the state the direct tools need (the latest
		// observation its indices refer to, the device lease), so the
		// server speaks the protocol versions that have sessions: before
		// 2026-07-28, whose HTTP requests are sessionless.
		SupportedProtocolVersions: sessionVersions(),
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.addTools()
	return s, nil
}

func sessionVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })
}

// MCP is the SDK server, to run on a transport (Run(ctx, &mcp.StdioTransport{})).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// HTTPHandler serves streamable HTTP, one MCP session per client session;
// sessions idle for idle are closed (never when zero). Serve it only behind
// api.Door, which checks the Host header (with the operator's reverse-proxy
// names, which the SDK's own loopback-only check would refuse), the origin
// of every POST and DELETE, and that bodies are JSON.
func (s *Server) HTTPHandler(idle time.Duration) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: idle, Logger: s.log, DisableLocalhostProtection: true})
}

const instructions = `phonepilot drives Android phones. Call observe to get the screen listing; ` +
	`act with tap, type_text, scroll, … naming elements by their [N] index in your latest observation. ` +
	`Each action waits for the screen to settle and answers what changed with the new listing, so observe again only when told. ` +
	`Or hand over a whole goal with run_task.`

// session is the server's state of one MCP session.
type session struct {
	id, client string
	ss         *mcp.ServerSession

	// mu serialises the session's direct tools: one screen, one index.
	mu sync.Mutex
	// device is the device of the latest observation, latest that
	// observation (the indices a client names refer to it), obs its number.
	device string
	latest *scene.Scene
	obs    int
	open   map[string]*handle
}

// handle is a device a session opened, with its Stepper.
type handle struct {
	opened  Opened
	stepper *runtime.Stepper
}

// sessionOf returns the server's state of the request's session, creating
// it (and watching for its end) on first use.
func (s *Server) sessionOf(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[ss]; ok {
		return st
	}
	s.nextID++
	st := &session{id: fmt.Sprintf("session-%d", s.nextID), ss: ss, open: map[string]*handle{}}
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		st.client = ip.ClientInfo.Name
		if ip.ClientInfo.Version != "" {
			st.client += " " + ip.ClientInfo.Version
		}
	}
	s.sessions[ss] = st
	go func() {
		_ = ss.Wait()
		s.endSession(ss)
	}()
	return st
}

// endSession ends what a closed session held: its leases and devices.
func (s *Server) endSession(ss *mcp.ServerSession) {
	s.mu.Lock()
	st, ok := s.sessions[ss]
	delete(s.sessions, ss)
	s.mu.Unlock()
	if !ok {
		return
	}
	s.leases.ReleaseAll(st.id)
	st.mu.Lock()
	for name, h := range st.open {
		if h.opened.Release != nil {
			h.opened.Release()
		}
		delete(st.open, name)
	}
	st.mu.Unlock()
	s.log.Info("mcp session ended", "session", st.id, "client", st.client)
}

// canElicit reports whether the client can ask its user (MCP elicitation).
func canElicit(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}
