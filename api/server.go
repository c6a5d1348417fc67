// Package api is phonepilot's HTTP service: JSON endpoints to start, list,
// inspect and cancel tasks, a server-sent event stream of a task's progress,
// and the embedded web page at "/" that uses them.
//
// A task's life (queue, recording, recovery, cancel) is the task package's;
// this package is HTTP over a task.Service: routes, auth, errors and the
// event stream's framing.
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
	"strings"
	"sync"
	"time"

	"phonepilot/task"
)

// DeviceInfo describes a device the server can run tasks on.
type DeviceInfo struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`            // "sim" or "adb"
	State string `json:"state,omitempty"` // as the driver reports it ("device", "offline", …); a farm's: idle, busy, offline
	// A farm's devices also say where they are (serve --db postgres://).
	Worker    string            `json:"worker,omitempty"`
	Host      string            `json:"host,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Heartbeat *time.Time        `json:"heartbeat,omitempty"` // the worker's last heartbeat
}

// Devices names the devices tasks may run on.
type Devices interface {
	// Check says whether name is a device the server could open; the error
	// says what is wrong with it.
	Check(name string) error
	// List returns the devices known now.
	List(ctx context.Context) ([]DeviceInfo, error)
	// State returns the device's own state JSON (the simulator reports its
	// orders, messages, screen…). The error wraps ErrUnknownDevice for a
	// name that is no device, ErrNoState for a device that reports none.
	State(ctx context.Context, name string) (json.RawMessage, error)
}

// Errors a Devices implementation wraps so that GET /v1/devices/{id}/state
// answers 404 and 409.
var (
	ErrUnknownDevice = errors.New("no such device")
	ErrNoState       = errors.New("the device does not report its own state")
)

// Config tunes the server. Start from Defaults.
type Config struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every /v1 endpoint but /v1/openapi.json and /v1/lifecycle.
	Token string
	// ApprovalKey, when set, is what a person's decision (POST /approve,
	// /deny, /answer) must carry in X-Phonepilot-Approval besides the
	// bearer token: the credential of the people who decide, which the
	// server's other clients (an MCP client with a shell, a script holding
	// the token) are not given. The page takes it from the approval link
	// (ApprovalLink) phonepilot prints to the person who started it. A
	// decision that carries it is recorded as the web page's ("web"); with
	// no key set, the bearer token decides and the decision is the API's.
	ApprovalKey string
	// Planners are the planner names a task may ask for; the first is the
	// default.
	Planners []string
	// DefaultDevice is used when a task names none.
	DefaultDevice string
	// MaxSteps is a task's max_steps when it asks for none.
	MaxSteps int
	// MaxStepsCeiling is the most max_steps a task may ask for (at least
	// MaxSteps): a server's default can stay small while a client that
	// needs more asks for it.
	MaxStepsCeiling int
	// MaxBodyBytes limits request bodies (413 beyond).
	MaxBodyBytes int64
	// MaxGoalRunes limits the goal's length.
	MaxGoalRunes int
	// Keepalive is how often an idle event stream sends a comment line so
	// proxies keep it open.
	Keepalive time.Duration
}

// Defaults returns the configuration a server runs with unless told otherwise.
func Defaults() Config {
	return Config{
		Planners:        []string{"rule", "ai"},
		DefaultDevice:   "sim",
		MaxSteps:        30,
		MaxStepsCeiling: 200,
		MaxBodyBytes:    64 << 10,
		MaxGoalRunes:    2000,
		Keepalive:       15 * time.Second,
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
	case c.MaxStepsCeiling < c.MaxSteps:
		return fmt.Errorf("api: the max_steps ceiling (%d) is below the default max_steps (%d)", c.MaxStepsCeiling, c.MaxSteps)
	case c.MaxBodyBytes < 256:
		return fmt.Errorf("api: max_body_bytes must be at least 256, got %d", c.MaxBodyBytes)
	case c.MaxGoalRunes < 1:
		return fmt.Errorf("api: max_goal_runes must be at least 1, got %d", c.MaxGoalRunes)
	case c.Keepalive <= 0:
		return fmt.Errorf("api: keepalive must be positive, got %s", c.Keepalive)
	}
	if err := CheckToken(c.Token); err != nil {
		return fmt.Errorf("api: %w", err)
	}
	if err := CheckToken(c.ApprovalKey); err != nil {
		return fmt.Errorf("api: approval key: %w", err)
	}
	if c.ApprovalKey != "" && c.ApprovalKey == c.Token {
		return errors.New("api: the approval key must differ from the bearer token (every client holds the token)")
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

// Server is the HTTP service over a task.Service. Create it with New, call
// Start, serve Handler, and Close when done.
type Server struct {
	cfg     Config
	svc     *task.Service
	devices Devices
	log     *slog.Logger
	handler http.Handler

	tokenHash    [32]byte
	approvalHash [32]byte // of cfg.ApprovalKey, when set

	streams sync.WaitGroup // open event streams
}

// New builds a server around a task service and the devices.
func New(cfg Config, svc *task.Service, devices Devices, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if svc == nil || devices == nil {
		return nil, errors.New("api: a task service and devices are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, svc: svc, devices: devices, log: log}
	if cfg.Token != "" {
		s.tokenHash = sha256.Sum256([]byte(cfg.Token))
	}
	if cfg.ApprovalKey != "" {
		s.approvalHash = sha256.Sum256([]byte(cfg.ApprovalKey))
	}
	s.handler = s.routes()
	return s, nil
}

// Handler is the HTTP handler serving the API and the page.
func (s *Server) Handler() http.Handler { return s.handler }

// Start starts the task service: tasks a dead process left running become
// interrupted, and queued tasks are queued again, oldest first.
func (s *Server) Start(ctx context.Context) error { return s.svc.Start(ctx) }

// Close stops the task service (running tasks end as interrupted, queued
// ones stay queued for the next start) and then waits for the open event
// streams: each sends its task's last events and its end first (a stream of
// a task that stays queued ends without one), or until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	err := s.svc.Close(ctx)
	done := make(chan struct{})
	go func() { s.streams.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("api close: event streams still open: %w", ctx.Err())
		}
	}
	return err
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
		{"GET", "/v1/lifecycle", false, s.lifecycle},
		{"POST", "/v1/tasks", true, s.createTask},
		{"POST", "/v1/flows/run", true, s.runFlow},
		{"GET", "/v1/tasks", true, s.listTasks},
		{"GET", "/v1/tasks/{id}", true, s.getTask},
		{"GET", "/v1/tasks/{id}/steps", true, s.getSteps},
		{"GET", "/v1/tasks/{id}/events", true, s.streamEvents},
		{"POST", "/v1/tasks/{id}/cancel", true, s.cancelTask},
		{"POST", "/v1/tasks/{id}/approve", true, s.approveTask},
		{"POST", "/v1/tasks/{id}/deny", true, s.denyTask},
		{"POST", "/v1/tasks/{id}/answer", true, s.answerTask},
		{"GET", "/v1/devices", true, s.listDevices},
		{"GET", "/v1/devices/{id}/state", true, s.deviceState},
	}
}

// routes builds the mux. Each path gets one handler that dispatches on the
// method itself, so a wrong method gets the JSON error shape (ServeMux's own
// 405 is plain text).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	byPath := map[string][]route{}
	var paths []string
	for _, rt := range s.routeTable() {
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
