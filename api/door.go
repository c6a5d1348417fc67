package api

import (
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// The door is what every listener of phonepilot puts in front of its
// handlers (the API and page of serve, `mcp --http`, `mcp --api`): a local
// server is reachable by every web page the user opens, so before any
// handler runs
//
//   - the Host header must be a name this server is known by (DNS
//     rebinding: a page whose name now points at 127.0.0.1 sends its own
//     name as Host): the loopback names and IP literals with the bound port,
//     and names configured for a reverse proxy; anything else is 421;
//   - a state-changing request (any method but GET, HEAD, OPTIONS) must not
//     come from another origin (http.CrossOriginProtection: Sec-Fetch-Site,
//     else Origin against Host; clients that send neither, curl and SDKs,
//     pass); configured origins are trusted; else 403;
//   - a state-changing request's body is JSON: a Content-Type other than
//     application/json, or a body without one, is 415 (an HTML form can send
//     only urlencoded, multipart or text/plain);
//   - no response may be framed by another page (frame-ancestors 'none').
//
// docs/security.md says what each of these covers and what they do not.

// DoorConfig is what an operator adds to the names and origins a listener
// accepts (a reverse proxy's public name and origin).
type DoorConfig struct {
	// Hosts are further Host header values: "name" (any port) or
	// "name:port".
	Hosts []string
	// Origins are further trusted origins of state-changing requests,
	// "scheme://host[:port]".
	Origins []string
}

// Errors the door answers with; they have their own status and code.
var (
	errWrongHost   = errors.New("this server is not known by that Host name")
	errCrossOrigin = errors.New("cross-origin request refused")
	errNotJSON     = errors.New("the request body must be JSON (Content-Type: application/json)")
)

// door is the checks of one listener.
type door struct {
	port    string
	names   map[string]bool // lower-case host names (no port) allowed on any port
	hostPos map[string]bool // lower-case "host:port" values allowed exactly
	cop     *http.CrossOriginProtection
	next    http.Handler
}

// Door wraps next with the checks above for a listener bound at addr (the
// listener's own address, so that port 0 has become the real port).
func Door(addr string, cfg DoorConfig, next http.Handler) (http.Handler, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("door: address %q: %w", addr, err)
	}
	d := &door{port: port, names: map[string]bool{}, hostPos: map[string]bool{}, next: next,
		cop: http.NewCrossOriginProtection()}
	d.hostPos["localhost:"+port] = true
	if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() {
		d.hostPos[strings.ToLower(net.JoinHostPort(ip.String(), port))] = true
	} else if err != nil && host != "" {
		d.hostPos[strings.ToLower(net.JoinHostPort(host, port))] = true // bound by name
	}
	for _, h := range cfg.Hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if err := checkHostName(h); err != nil {
			return nil, fmt.Errorf("door: allowed host %q: %w", h, err)
		}
		if _, _, err := net.SplitHostPort(h); err == nil {
			d.hostPos[h] = true
		} else {
			d.names[h] = true
		}
	}
	for _, o := range cfg.Origins {
		if err := d.cop.AddTrustedOrigin(strings.TrimSpace(o)); err != nil {
			return nil, fmt.Errorf("door: allowed origin %q: %w", o, err)
		}
	}
	d.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, nil, r, errCrossOrigin)
	}))
	return d, nil
}

// checkHostName refuses what cannot be a Host header value.
func checkHostName(h string) error {
	if h == "" || strings.ContainsAny(h, "/ \t@?#*") {
		return errors.New(`give a host name, or name:port, like "phone.example.com" or "phone.example.com:443"`)
	}
	return nil
}

func (d *door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
	if !d.hostAllowed(r.Host) {
		writeError(w, nil, r, fmt.Errorf("%w (%q); open it at http://localhost:%s/, or name the host with --allowed-hosts", errWrongHost, r.Host, d.port))
		return
	}
	if safeMethod(r.Method) {
		d.next.ServeHTTP(w, r)
		return
	}
	if err := d.cop.Check(r); err != nil {
		writeError(w, nil, r, fmt.Errorf("%w: %v", errCrossOrigin, err))
		return
	}
	if err := jsonBody(r); err != nil {
		writeError(w, nil, r, err)
		return
	}
	d.next.ServeHTTP(w, r)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// hostAllowed says whether a Host header names this server. An IP literal
// with the bound port always does: a rebinding attack needs a name, and a
// page on an IP address is that address's own origin.
func (d *door) hostAllowed(hostHeader string) bool {
	h := strings.ToLower(strings.TrimSpace(hostHeader))
	if h == "" {
		return false
	}
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), "80"
	}
	if d.names[name] || d.hostPos[net.JoinHostPort(name, port)] {
		return true
	}
	if _, err := netip.ParseAddr(name); err == nil && port == d.port {
		return true
	}
	return false
}

// jsonBody refuses a state-changing request whose body is not JSON. A
// request without a body (cancel) needs no Content-Type.
func jsonBody(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			return nil
		}
		return fmt.Errorf("%w; the request has a body and no Content-Type", errNotJSON)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return fmt.Errorf("%w, got %s", errNotJSON, strconv.Quote(ct))
	}
	return nil
}
