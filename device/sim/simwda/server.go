// Package simwda serves the simulated phone as an iPhone behind
// WebDriverAgent's HTTP API (`phonepilot sim --wda`): WDA's routes, its
// `{"value": …, "sessionId": …}` envelope and its W3C error names and
// codes, following WDA's own sources (WebDriverAgentLib/Commands and
// Routing) rather than any one client. Coordinates are points; the
// screenshot is in pixels (points × scale), as on a real iPhone.
package simwda

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"phonepilot/device/sim"
)

// Server is a WDA endpoint for one simulated phone.
type Server struct {
	p *sim.Phone

	mu       sync.Mutex
	session  string // the one live session ("" when none); a new one replaces it
	elements map[string]elemRef
	settings map[string]any
}

// New serves p.
func New(p *sim.Phone) *Server {
	return &Server{p: p, elements: map[string]elemRef{}, settings: map[string]any{
		"snapshotMaxDepth": 50, "waitForIdleTimeout": 10, "animationCoolOffTimeout": 2, "maxTypingFrequency": 60,
	}}
}

// Session is the live session's id ("" when none).
func (s *Server) Session() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// EndSession ends the live session, as WDA restarting would: the next call
// naming it gets `invalid session id`.
func (s *Server) EndSession() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session = ""
	s.elements = map[string]elemRef{}
}

// wdaError is a W3C error as WDA reports it.
type wdaError struct {
	status int
	name   string
	msg    string
}

func (e *wdaError) Error() string { return e.name + ": " + e.msg }

func errf(status int, name, format string, args ...any) *wdaError {
	return &wdaError{status, name, fmt.Sprintf(format, args...)}
}

func invalidArg(format string, args ...any) *wdaError {
	return errf(http.StatusBadRequest, "invalid argument", format, args...)
}

// maxBody bounds a request body: no WDA command needs more.
const maxBody = 1 << 20

type handler func(ctx context.Context, sid string, args map[string]any, r *http.Request) (any, error)

type route struct {
	method, path string // path segments; ":x" matches one segment
	sessionOnly  bool   // only under /session/:id
	h            handler
}

func (s *Server) routes() []route {
	return []route{
		{"GET", "/status", false, s.status},
		{"POST", "/session", false, s.newSession},
		{"GET", "/sessions", false, s.sessions},
		{"GET", "/source", false, s.source},
		{"GET", "/screenshot", false, s.screenshot},
		{"GET", "/window/size", false, s.windowSize},
		{"GET", "/window/rect", true, s.windowRect},
		{"GET", "/wda/screen", false, s.screen},
		{"GET", "/orientation", false, func(context.Context, string, map[string]any, *http.Request) (any, error) { return "PORTRAIT", nil }},
		{"GET", "/wda/activeAppInfo", false, s.activeApp},
		{"GET", "/wda/device/info", false, s.deviceInfo},
		{"POST", "/wda/homescreen", false, s.homescreen},
		{"GET", "/alert/text", false, s.alertText},
		{"POST", "/alert/accept", false, s.alertAnswer(true)},
		{"POST", "/alert/dismiss", false, s.alertAnswer(false)},
		{"GET", "/wda/alert/buttons", false, s.alertButtons},
		{"GET", "/appium/settings", false, s.getSettings},
		{"POST", "/appium/settings", false, s.setSettings},
		{"POST", "/wda/tap", true, s.tap},
		{"POST", "/wda/touchAndHold", true, s.touchAndHold},
		{"POST", "/wda/dragfromtoforduration", true, s.drag},
		{"POST", "/actions", true, s.actions},
		{"DELETE", "/actions", true, func(context.Context, string, map[string]any, *http.Request) (any, error) { return nil, nil }},
		{"POST", "/wda/keys", true, s.keys},
		{"POST", "/wda/element/:uuid/keyboardInput", true, s.keyboardInput},
		{"POST", "/wda/keyboard/dismiss", true, func(context.Context, string, map[string]any, *http.Request) (any, error) { return nil, nil }},
		{"POST", "/wda/pressButton", true, s.pressButton},
		{"POST", "/wda/apps/launch", true, s.launch},
		{"POST", "/wda/apps/activate", true, s.launch},
		{"POST", "/wda/apps/terminate", true, s.terminate},
		{"POST", "/wda/apps/state", true, s.appState},
		{"POST", "/element", true, s.findElement},
		{"POST", "/elements", true, s.findElements},
		{"GET", "/element/:uuid/rect", true, s.elemRect},
		{"GET", "/element/:uuid/text", true, s.elemText},
		{"GET", "/element/:uuid/name", true, s.elemName},
		{"GET", "/element/:uuid/enabled", true, s.elemBool(func(e *sim.XCElement) bool { return e.Enabled })},
		{"GET", "/element/:uuid/displayed", true, s.elemBool(func(e *sim.XCElement) bool { return e.Visible })},
		{"GET", "/element/:uuid/selected", true, s.elemBool(func(e *sim.XCElement) bool { return e.Selected })},
		{"GET", "/element/:uuid/attribute/:name", true, s.elemAttr},
		{"POST", "/element/:uuid/click", true, s.elemClick},
		{"POST", "/element/:uuid/value", true, s.elemValue},
		{"POST", "/element/:uuid/clear", true, s.elemClear},
		{"DELETE", "/session/:id", false, nil}, // handled in ServeHTTP
	}
}

// ServeHTTP routes a request, answering in WDA's envelope.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path == "" {
		path = "/"
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	sid := ""
	underSession := false
	if len(segs) >= 2 && segs[0] == "session" {
		sid, underSession = segs[1], true
		if r.Method == http.MethodDelete && len(segs) == 2 {
			v, err := s.deleteSession(sid)
			s.reply(w, sid, v, err)
			return
		}
		if r.Method == http.MethodGet && len(segs) == 2 {
			if err := s.checkSession(sid); err != nil {
				s.reply(w, sid, nil, err)
				return
			}
			s.reply(w, sid, map[string]any{"capabilities": s.capabilities()}, nil)
			return
		}
		segs = segs[2:]
	}
	var args map[string]any
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		switch {
		case err != nil:
			s.reply(w, sid, nil, invalidArg("reading the body: %v", err))
			return
		case len(body) > maxBody:
			s.reply(w, sid, nil, invalidArg("the body is over %d bytes", maxBody))
			return
		case len(strings.TrimSpace(string(body))) > 0:
			if err := json.Unmarshal(body, &args); err != nil {
				s.reply(w, sid, nil, invalidArg("the body is not a JSON object: %v", err))
				return
			}
		}
	}
	for _, rt := range s.routes() {
		if rt.h == nil || rt.method != r.Method {
			continue
		}
		params, ok := match(rt.path, segs)
		if !ok {
			continue
		}
		if rt.sessionOnly && !underSession {
			break
		}
		if underSession {
			if err := s.checkSession(sid); err != nil {
				s.reply(w, sid, nil, err)
				return
			}
		}
		if args == nil {
			args = map[string]any{}
		}
		for k, v := range params {
			args[":"+k] = v
		}
		v, err := rt.h(r.Context(), sid, args, r)
		s.reply(w, sid, v, err)
		return
	}
	s.reply(w, sid, nil, errf(http.StatusNotFound, "unknown command", "Unhandled endpoint: %s %s", r.Method, r.URL.Path))
}

func match(pattern string, segs []string) (map[string]string, bool) {
	ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if len(ps) != len(segs) {
		return nil, false
	}
	params := map[string]string{}
	for i, p := range ps {
		if strings.HasPrefix(p, ":") {
			params[p[1:]] = segs[i]
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

func (s *Server) reply(w http.ResponseWriter, sid string, v any, err error) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	var sess any
	if sid != "" {
		sess = sid
	} else if cur := s.Session(); cur != "" {
		sess = cur
	}
	if err != nil {
		var we *wdaError
		switch {
		case errors.As(err, &we):
		case errors.Is(err, sim.ErrNoAlert):
			we = errf(http.StatusNotFound, "no such alert", "An attempt was made to operate on a modal dialog when one was not open")
		case errors.Is(err, sim.ErrNoKeyboardFocus):
			we = errf(http.StatusBadRequest, "invalid element state", "Keyboard is not present: %v", err)
		case errors.Is(err, sim.ErrNoSuchApp):
			we = errf(http.StatusBadRequest, "invalid argument", "%v", err)
		default:
			we = errf(http.StatusInternalServerError, "unknown error", "%v", err)
		}
		w.WriteHeader(we.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"value": map[string]any{"error": we.name, "message": we.msg, "traceback": ""}, "sessionId": sess})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"value": v, "sessionId": sess})
}

func (s *Server) checkSession(sid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sid == "" || sid != s.session {
		return errf(http.StatusNotFound, "invalid session id", "Session does not exist")
	}
	return nil
}

func (s *Server) capabilities() map[string]any {
	w, h := s.p.IOSWindowSize()
	bundle, _, _ := s.p.IOSActiveApp()
	return map[string]any{"device": "iphone", "browserName": bundle, "sdkVersion": IOSVersion, "CFBundleIdentifier": bundle,
		"screenSize": map[string]any{"width": w, "height": h}}
}

// IOSVersion is the iOS the simulated iPhone reports.
const IOSVersion = "17.5"

func (s *Server) status(context.Context, string, map[string]any, *http.Request) (any, error) {
	return map[string]any{
		"ready": true, "message": "WebDriverAgent is ready to accept commands",
		"state":  "success",
		"os":     map[string]any{"name": "iOS", "version": IOSVersion, "sdkVersion": IOSVersion, "testmanagerdVersion": 28},
		"ios":    map[string]any{"ip": "127.0.0.1"},
		"build":  map[string]any{"time": "phonepilot simulator", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner"},
		"device": "iphone",
	}, nil
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := strings.ToUpper(hex.EncodeToString(b[:]))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newSession starts a session, ending any previous one (WDA keeps one). A
// bundleId among the capabilities launches that app.
func (s *Server) newSession(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	caps, _ := args["capabilities"].(map[string]any)
	merged := map[string]any{}
	if am, ok := caps["alwaysMatch"].(map[string]any); ok {
		for k, v := range am {
			merged[k] = v
		}
	}
	if fm, ok := caps["firstMatch"].([]any); ok && len(fm) > 0 {
		if m, ok := fm[0].(map[string]any); ok {
			for k, v := range m {
				merged[k] = v
			}
		}
	}
	if dc, ok := args["desiredCapabilities"].(map[string]any); ok {
		for k, v := range dc {
			merged[k] = v
		}
	}
	for _, k := range []string{"bundleId", "appium:bundleId"} {
		if b, ok := merged[k].(string); ok && b != "" {
			if err := s.p.IOSLaunch(ctx, b); err != nil {
				return nil, errf(http.StatusInternalServerError, "session not created", "%v", err)
			}
		}
	}
	id := newID()
	s.mu.Lock()
	s.session = id
	s.elements = map[string]elemRef{}
	s.mu.Unlock()
	return map[string]any{"sessionId": id, "capabilities": s.capabilities()}, nil
}

func (s *Server) sessions(context.Context, string, map[string]any, *http.Request) (any, error) {
	if id := s.Session(); id != "" {
		return []any{map[string]any{"id": id, "capabilities": s.capabilities()}}, nil
	}
	return []any{}, nil
}

func (s *Server) deleteSession(sid string) (any, error) {
	if err := s.checkSession(sid); err != nil {
		return nil, err
	}
	s.EndSession()
	return nil, nil
}

// source serves the tree as JSON (format=json) or XML (the default, and
// what Appium asks for).
func (s *Server) source(ctx context.Context, _ string, _ map[string]any, r *http.Request) (any, error) {
	root, err := s.p.IOSSource(ctx)
	if err != nil {
		return nil, err
	}
	excluded := map[string]bool{}
	for _, a := range strings.Split(r.URL.Query().Get("excluded_attributes"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			excluded[a] = true
		}
	}
	switch f := r.URL.Query().Get("format"); f {
	case "json":
		return jsonNode(root, excluded), nil
	case "", "xml":
		return xmlSource(root, excluded), nil
	case "description":
		return xmlSource(root, excluded), nil
	default:
		return nil, invalidArg("unknown source format %q: use xml, json or description", f)
	}
}

func (s *Server) screenshot(ctx context.Context, _ string, _ map[string]any, _ *http.Request) (any, error) {
	png, err := s.p.IOSScreenshot(ctx)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString(png), nil
}

func (s *Server) windowSize(context.Context, string, map[string]any, *http.Request) (any, error) {
	w, h := s.p.IOSWindowSize()
	return map[string]any{"width": w, "height": h}, nil
}

func (s *Server) windowRect(context.Context, string, map[string]any, *http.Request) (any, error) {
	w, h := s.p.IOSWindowSize()
	return map[string]any{"x": 0, "y": 0, "width": w, "height": h}, nil
}

func (s *Server) screen(context.Context, string, map[string]any, *http.Request) (any, error) {
	w, h := s.p.IOSWindowSize()
	return map[string]any{
		"screenSize":    map[string]any{"width": w, "height": h},
		"statusBarSize": map[string]any{"width": w, "height": 100 / sim.IOSScale * w / 360},
		"scale":         sim.IOSScale,
	}, nil
}

func (s *Server) activeApp(context.Context, string, map[string]any, *http.Request) (any, error) {
	bundle, name, pid := s.p.IOSActiveApp()
	return map[string]any{"pid": pid, "bundleId": bundle, "name": name, "processArguments": map[string]any{"args": []any{}, "env": map[string]any{}}}, nil
}

func (s *Server) homescreen(ctx context.Context, _ string, _ map[string]any, _ *http.Request) (any, error) {
	return nil, s.p.IOSHome(ctx)
}

func (s *Server) alertText(context.Context, string, map[string]any, *http.Request) (any, error) {
	a, err := s.p.IOSAlert()
	if err != nil {
		return nil, err
	}
	return a.Text, nil
}

func (s *Server) alertButtons(context.Context, string, map[string]any, *http.Request) (any, error) {
	a, err := s.p.IOSAlert()
	if err != nil {
		return nil, err
	}
	return a.Buttons, nil
}

func (s *Server) alertAnswer(accept bool) handler {
	return func(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
		name, _ := args["name"].(string)
		err := s.p.IOSAnswerAlert(ctx, accept, name)
		if err != nil && !errors.Is(err, sim.ErrNoAlert) {
			return nil, errf(http.StatusBadRequest, "invalid element state", "%v", err)
		}
		return nil, err
	}
}

func (s *Server) getSettings(context.Context, string, map[string]any, *http.Request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for k, v := range s.settings {
		out[k] = v
	}
	return out, nil
}

// setSettings takes `{"settings": {…}}`, as WDA's FBSessionCommands reads
// it; a body without the wrapper is an error.
func (s *Server) setSettings(ctx context.Context, sid string, args map[string]any, r *http.Request) (any, error) {
	set, ok := args["settings"].(map[string]any)
	if !ok {
		return nil, invalidArg("the body must wrap the settings: {\"settings\": {…}}")
	}
	s.mu.Lock()
	for k, v := range set {
		s.settings[k] = v
	}
	s.mu.Unlock()
	return s.getSettings(ctx, sid, args, r)
}

func num(args map[string]any, key string) (float64, error) {
	switch v := args[key].(type) {
	case float64:
		return v, nil
	case nil:
		return 0, invalidArg("%q is required", key)
	default:
		return 0, invalidArg("%q must be a number, not %T", key, v)
	}
}

func nums(args map[string]any, keys ...string) ([]float64, error) {
	out := make([]float64, len(keys))
	for i, k := range keys {
		v, err := num(args, k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (s *Server) tap(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	v, err := nums(args, "x", "y")
	if err != nil {
		return nil, err
	}
	return nil, s.p.IOSTap(ctx, v[0], v[1])
}

func (s *Server) touchAndHold(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	v, err := nums(args, "x", "y", "duration")
	if err != nil {
		return nil, err
	}
	return nil, s.p.IOSTouchAndHold(ctx, v[0], v[1], seconds(v[2]))
}

func (s *Server) drag(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	v, err := nums(args, "fromX", "fromY", "toX", "toY", "duration")
	if err != nil {
		return nil, err
	}
	return nil, s.p.IOSDrag(ctx, v[0], v[1], v[2], v[3], seconds(v[4]))
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// actions plays W3C pointer actions: one touch pointer's moves, downs, ups
// and pauses become a tap, a touch-and-hold or a drag.
func (s *Server) actions(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	list, ok := args["actions"].([]any)
	if !ok || len(list) == 0 {
		return nil, invalidArg("\"actions\" must be a non-empty array of input sources")
	}
	for _, src := range list {
		m, _ := src.(map[string]any)
		if m == nil || m["type"] != "pointer" {
			return nil, invalidArg("only pointer input sources are supported")
		}
		steps, _ := m["actions"].([]any)
		var x, y, dx, dy float64
		var down bool
		var held time.Duration
		for _, st := range steps {
			a, _ := st.(map[string]any)
			switch a["type"] {
			case "pointerMove":
				nx, err := num(a, "x")
				if err != nil {
					return nil, err
				}
				ny, err := num(a, "y")
				if err != nil {
					return nil, err
				}
				if !down {
					x, y = nx, ny
				}
				dx, dy = nx, ny
				if d, ok := a["duration"].(float64); ok && down {
					held += time.Duration(d) * time.Millisecond
				}
			case "pointerDown":
				down = true
				dx, dy = x, y
			case "pause":
				if d, ok := a["duration"].(float64); ok && down {
					held += time.Duration(d) * time.Millisecond
				}
			case "pointerUp":
				if !down {
					return nil, invalidArg("pointerUp without pointerDown")
				}
				var err error
				switch {
				case dx != x || dy != y:
					err = s.p.IOSDrag(ctx, x, y, dx, dy, held)
				case held >= 500*time.Millisecond:
					err = s.p.IOSTouchAndHold(ctx, x, y, held)
				default:
					err = s.p.IOSTap(ctx, x, y)
				}
				if err != nil {
					return nil, err
				}
				down, held = false, 0
			default:
				return nil, invalidArg("unknown pointer action %v", a["type"])
			}
		}
	}
	return nil, nil
}

func (s *Server) keys(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	text, err := joinValue(args["value"])
	if err != nil {
		return nil, err
	}
	return nil, s.p.IOSKeys(ctx, text)
}

// keyboardInput is `mobile: keys` (Appium): keys are strings or
// {"key": …} objects.
func (s *Server) keyboardInput(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	list, ok := args["keys"].([]any)
	if !ok {
		return nil, invalidArg("\"keys\" must be an array")
	}
	var b strings.Builder
	for _, k := range list {
		switch v := k.(type) {
		case string:
			b.WriteString(v)
		case map[string]any:
			if s, ok := v["key"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return nil, s.p.IOSKeys(ctx, b.String())
}

func joinValue(v any) (string, error) {
	switch t := v.(type) {
	case []any:
		var b strings.Builder
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return "", invalidArg("\"value\" must be an array of strings")
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case string:
		return t, nil
	}
	return "", invalidArg("\"value\" must be an array of strings")
}

// pressButton presses a hardware button; names are matched lower-case as
// WDA does. The simulated iPhone has home and the volume buttons are not
// available (as on a simulator); there is no back button.
func (s *Server) pressButton(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	name, _ := args["name"].(string)
	switch strings.ToLower(name) {
	case "home":
		return nil, s.p.IOSHome(ctx)
	case "volumeup", "volumedown":
		return nil, invalidArg("%s button is not supported on Simulator", name)
	}
	return nil, invalidArg("The value of 'name' must be one of [home]. '%s' is given instead", name)
}

func bundleArg(args map[string]any) (string, error) {
	b, _ := args["bundleId"].(string)
	if b == "" {
		return "", invalidArg("\"bundleId\" is required")
	}
	return b, nil
}

func (s *Server) launch(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	b, err := bundleArg(args)
	if err != nil {
		return nil, err
	}
	return nil, s.p.IOSLaunch(ctx, b)
}

func (s *Server) terminate(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	b, err := bundleArg(args)
	if err != nil {
		return nil, err
	}
	return s.p.IOSTerminate(ctx, b)
}

func (s *Server) appState(_ context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	b, err := bundleArg(args)
	if err != nil {
		return nil, err
	}
	return s.p.IOSAppState(b)
}

// deviceInfo is WDA's /wda/device/info: the locale among the rest.
func (s *Server) deviceInfo(context.Context, string, map[string]any, *http.Request) (any, error) {
	_, model, _ := s.p.Model()
	return map[string]any{"currentLocale": s.p.LocaleTag(), "timeZone": "UTC", "name": "phonepilot iPhone", "model": model,
		"userInterfaceIdiom": 0, "isSimulator": true, "thermalState": 0}, nil
}
