// Package api is phonepilot's HTTP service: JSON endpoints to start, list,
// inspect and cancel tasks, a server-sent event stream of a task's progress,
// and the embedded web page at "/" that uses them.
//
// Tasks run one at a time per device, queued in order; tasks on different
// devices run at once. How a task runs and how a device is opened are the
// caller's (cmd/phonepilot wires the runtime and the drivers in) through the
// small Runner and Devices interfaces, so this package is tested with fakes.
package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/plan"
	"phonepilot/storage"
)

// Runner runs one task on an opened device until it ends. It records the
// task's steps (when each finishes) and events in rec, which tells the
// server's live streams. ctx is cancelled when the task is cancelled or the
// server stops; Run must then return promptly.
type Runner interface {
	Run(ctx context.Context, task storage.Task, dev device.Device, rec storage.Store) Result
}

// Result is how a run ended: a terminal status (completed, failed,
// cancelled), its reason and the model cost.
type Result struct {
	Status string
	Reason string
	Usage  plan.Usage
}

// DeviceInfo describes a device the server can run tasks on.
type DeviceInfo struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`            // "sim" or "adb"
	State string `json:"state,omitempty"` // as the driver reports it ("device", "offline", …)
}

// Devices opens devices by name for tasks.
type Devices interface {
	// Check says whether name is a device this server could open; the error
	// says what is wrong with it.
	Check(name string) error
	// Open opens the device for one task; release is called when it ends.
	Open(ctx context.Context, name string) (dev device.Device, release func(), err error)
	// List returns the devices known now.
	List(ctx context.Context) ([]DeviceInfo, error)
}

// Config tunes the server. Start from Defaults.
type Config struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every /v1 endpoint.
	Token string
	// Planners are the planner names a task may ask for; the first is the
	// default.
	Planners []string
	// DefaultDevice is used when a task names none.
	DefaultDevice string
	// MaxSteps caps a task's max_steps (and is its default when 0).
	MaxSteps int
	// MaxBodyBytes limits request bodies (413 beyond).
	MaxBodyBytes int64
	// MaxGoalRunes limits the goal's length.
	MaxGoalRunes int
	// PollInterval is how often an event stream looks at the store when
	// nothing in this process told it of news (tasks run by another
	// process sharing a PostgreSQL database).
	PollInterval time.Duration
	// Clock stamps times; clock.Real when nil.
	Clock clock.Clock
	// Snapshot is stored with every task as its configuration (secrets
	// already removed: storage.RedactConfig).
	Snapshot json.RawMessage
	// Owner names this process in the tasks it runs; "host:pid" when empty.
	Owner string
	// OwnerGone says whether the process named by a running task's owner
	// has died, so Start may mark its tasks interrupted. Nil means every
	// other owner is gone: right when one server owns the database (SQLite),
	// wrong when several share a PostgreSQL database (cmd supplies a check).
	OwnerGone func(owner string) bool
}

// DefaultOwner is "host:pid" of this process.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}

// Defaults returns the configuration a server runs with unless told otherwise.
func Defaults() Config {
	return Config{
		Planners:      []string{"rule", "ai"},
		DefaultDevice: "sim",
		MaxSteps:      200,
		MaxBodyBytes:  64 << 10,
		MaxGoalRunes:  2000,
		PollInterval:  time.Second,
	}
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	switch {
	case len(c.Planners) == 0:
		return errors.New("api: no planners")
	case c.DefaultDevice == "":
		return errors.New("api: no default device")
	case c.MaxSteps < 1:
		return fmt.Errorf("api: max_steps must be at least 1, got %d", c.MaxSteps)
	case c.MaxBodyBytes < 256:
		return fmt.Errorf("api: max_body_bytes must be at least 256, got %d", c.MaxBodyBytes)
	case c.MaxGoalRunes < 1:
		return fmt.Errorf("api: max_goal_runes must be at least 1, got %d", c.MaxGoalRunes)
	case c.PollInterval <= 0:
		return fmt.Errorf("api: poll_interval must be positive, got %s", c.PollInterval)
	}
	return nil
}

// CheckBind refuses to serve beyond loopback without a token: anyone who can
// reach the port could drive the phone.
func CheckBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if err := CheckToken(token); err != nil {
		return err
	}
	if token != "" || loopback(host) {
		return nil
	}
	return fmt.Errorf("address %q is reachable beyond this machine: set a token (--token or PHONEPILOT_TOKEN), or bind 127.0.0.1", addr)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is the HTTP service. Create it with New, call Start, serve
// Handler, and Close when done.
type Server struct {
	cfg     Config
	store   storage.Store // the caller's store
	rec     *notifyingStore
	devices Devices
	runner  Runner
	log     *slog.Logger
	clock   clock.Clock
	handler http.Handler
	hub     *hub

	tokenHash [32]byte

	mu      sync.Mutex
	queues  map[string]*deviceQueue
	running map[string]*runningTask
	closed  bool
	wg      sync.WaitGroup
	stop    context.CancelFunc
	ctx     context.Context
}

type deviceQueue struct {
	pending []string // task IDs in arrival order
	active  bool     // a goroutine is draining this queue
}

type runningTask struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Why a running task's context ends.
var (
	errCancelledByUser = errors.New("cancelled by request")
	errServerStopped   = errors.New("server stopped")
)

// New builds a server around a store, the devices and a runner.
func New(cfg Config, store storage.Store, devices Devices, runner Runner, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil || devices == nil || runner == nil {
		return nil, errors.New("api: store, devices and runner are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Owner == "" {
		cfg.Owner = DefaultOwner()
	}
	s := &Server{
		cfg: cfg, store: store, devices: devices, runner: runner, log: log, clock: cfg.Clock,
		hub: newHub(), queues: map[string]*deviceQueue{}, running: map[string]*runningTask{},
	}
	s.rec = &notifyingStore{Store: store, hub: s.hub}
	if cfg.Token != "" {
		s.tokenHash = sha256.Sum256([]byte(cfg.Token))
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s, nil
}

// Handler is the HTTP handler serving the API and the page.
func (s *Server) Handler() http.Handler { return s.handler }

// Start recovers from a previous run: tasks it left running are marked
// interrupted, and tasks it left queued are queued again, oldest first.
func (s *Server) Start(ctx context.Context) error {
	running, err := s.allTasks(ctx, storage.StatusRunning)
	if err != nil {
		return fmt.Errorf("api start: %w", err)
	}
	queued, err := s.allTasks(ctx, storage.StatusQueued)
	if err != nil {
		return fmt.Errorf("api start: %w", err)
	}
	// Owners that are gone: this process's dead predecessors (or, by
	// default, everyone else). Their running tasks are interrupted and
	// their queued tasks are taken over; live processes keep theirs.
	gone := map[string]bool{}
	for _, t := range append(running, queued...) {
		if _, seen := gone[t.Owner]; seen || t.Owner == s.cfg.Owner {
			continue
		}
		gone[t.Owner] = s.cfg.OwnerGone == nil || s.cfg.OwnerGone(t.Owner)
	}
	var owners []string
	for o, g := range gone {
		if g {
			owners = append(owners, o)
		}
	}
	ids, err := s.store.MarkInterrupted(ctx, owners, "phonepilot stopped while the task was running", s.clock.Now())
	if err != nil {
		return fmt.Errorf("api start: %w", err)
	}
	for _, id := range ids {
		s.log.Warn("task interrupted by a previous stop", "task", id)
		s.appendStatus(ctx, id, storage.StatusInterrupted, "phonepilot stopped while the task was running")
	}
	slices.Reverse(queued) // oldest first
	for _, t := range queued {
		if t.Owner == s.cfg.Owner || gone[t.Owner] {
			s.enqueue(t)
		}
	}
	return nil
}

// allTasks lists every task with a status, newest first.
func (s *Server) allTasks(ctx context.Context, status string) ([]storage.Task, error) {
	var out []storage.Task
	q := storage.Query{Status: status, Limit: storage.MaxPage}
	for {
		p, err := s.store.ListTasks(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Tasks...)
		if p.Next == "" {
			return out, nil
		}
		q.Cursor = p.Next
	}
}

// Close stops accepting work, cancels running tasks (they end as
// interrupted; queued tasks stay queued for the next start) and waits for
// them, or until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, rt := range s.running {
		rt.cancel(errServerStopped)
	}
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("api close: tasks still stopping: %w", ctx.Err())
	}
}

// route is one endpoint; the OpenAPI document is checked against this table.
type route struct {
	method, pattern string
	auth            bool
	h               func(w http.ResponseWriter, r *http.Request) error
}

func (s *Server) routeTable() []route {
	return []route{
		{"GET", "/healthz", false, s.healthz},
		{"GET", "/v1/openapi.json", false, s.openAPI},
		{"POST", "/v1/tasks", true, s.createTask},
		{"GET", "/v1/tasks", true, s.listTasks},
		{"GET", "/v1/tasks/{id}", true, s.getTask},
		{"GET", "/v1/tasks/{id}/steps", true, s.getSteps},
		{"GET", "/v1/tasks/{id}/events", true, s.streamEvents},
		{"POST", "/v1/tasks/{id}/cancel", true, s.cancelTask},
		{"GET", "/v1/devices", true, s.listDevices},
	}
}

// routes builds the mux. Each path gets one handler that dispatches on the
// method itself, so a wrong method gets the JSON error shape (ServeMux's own
// 405 is plain text).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	byPath := map[string][]route{}
	var paths []string
	for _, rt := range append(s.routeTable(), s.vocabularyRoute()) {
		if _, ok := byPath[rt.pattern]; !ok {
			paths = append(paths, rt.pattern)
		}
		byPath[rt.pattern] = append(byPath[rt.pattern], rt)
	}
	for _, p := range paths {
		rts := byPath[p]
		var allow []string
		for _, rt := range rts {
			allow = append(allow, rt.method)
		}
		allowHeader := strings.Join(allow, ", ")
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			method := r.Method
			if method == http.MethodHead {
				method = http.MethodGet
			}
			for _, rt := range rts {
				if rt.method != method {
					continue
				}
				if rt.auth && !s.authorized(r) {
					err := errUnauthorized
					if r.URL.Query().Has("access_token") && !queryTokenAllowed(r) {
						err = fmt.Errorf("%w; ?access_token= is taken only by the event stream", errUnauthorized)
					}
					writeError(w, s.log, r, err)
					return
				}
				if err := rt.h(w, r); err != nil {
					writeError(w, s.log, r, err)
				}
				return
			}
			writeError(w, s.log, r, &methodError{allow: allowHeader})
		})
	}
	s.webRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, s.log, r, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, errNoRoute))
	})
	// ServeMux would redirect an unclean path (307/301, HTML body); a
	// client that sent one has a bug the API's own error should name.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if uncleanPath(r.URL.Path) {
			writeError(w, s.log, r, fmt.Errorf("%q: %w", r.URL.Path, errUncleanPath))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// authorized checks the bearer token in constant time. EventSource cannot
// send headers, so the event stream (and only it) also takes ?access_token=.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok && queryTokenAllowed(r) {
		got = r.URL.Query().Get("access_token")
	}
	if got == "" {
		return false
	}
	h := sha256.Sum256([]byte(strings.TrimSpace(got)))
	return subtle.ConstantTimeCompare(h[:], s.tokenHash[:]) == 1
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}
