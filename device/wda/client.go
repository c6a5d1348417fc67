// Package wda drives an iPhone through WebDriverAgent (WDA): plain JSON
// over HTTP, spoken here without a library. Device names
// `wda:http://HOST:PORT` reach a WDA the user runs (behind iproxy, or over
// Wi‑Fi). One session per device, re-created when WDA says it is gone.
// Coordinates cross the wire in points; the Scene is in pixels (points ×
// the screen's scale), so every consumer keeps one coordinate space.
package wda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"phonepilot/device"
)

// Error is an error WDA answered with: its W3C name, message and HTTP
// status.
type Error struct {
	Status  int
	Name    string // "invalid session id", "no such alert", …
	Message string
	Route   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("wda %s: %s: %s", e.Route, e.Name, e.Message)
}

// IsName reports whether err is a WDA error with the W3C name.
func IsName(err error, name string) bool {
	var we *Error
	return errors.As(err, &we) && we.Name == name
}

// maxReply bounds a reply: a /source of a long list or a screenshot stays
// well under it.
const maxReply = 64 << 20

// Client speaks WDA's HTTP API at one base URL.
type Client struct {
	base string
	http *http.Client

	mu      sync.Mutex
	session string
}

// NewClient checks the base URL (http or https with a host) and makes a
// client. hc may be nil (a client with a 60 s timeout: /source on a real
// iPhone can take seconds).
func NewClient(base string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("wda: %q is not a WDA address: give http://HOST:PORT (WDA listens on 8100; forward it with iproxy 8100 8100)", base)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("wda: the WDA address takes no user, query or fragment: http://HOST:PORT")
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{base: strings.TrimSuffix(u.String(), "/"), http: hc}, nil
}

// Base is the base URL.
func (c *Client) Base() string { return c.base }

// call sends one request and decodes the envelope's value into out (may be
// nil). path starts with "/".
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("wda %s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("wda %s %s: %v: %w", method, path, err, device.ErrDisconnected)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return fmt.Errorf("wda %s %s: reading the reply: %v: %w", method, path, err, device.ErrDisconnected)
	}
	if len(raw) > maxReply {
		return fmt.Errorf("wda %s %s: the reply is over %d bytes", method, path, maxReply)
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("wda %s %s: HTTP %d and not WDA's JSON envelope (is this a WebDriverAgent?)", method, path, resp.StatusCode)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(env.Value, &e)
		if e.Error == "" {
			e.Error = "unknown error"
		}
		return &Error{Status: resp.StatusCode, Name: e.Error, Message: e.Message, Route: method + " " + path}
	}
	if out != nil && len(env.Value) > 0 {
		if err := json.Unmarshal(env.Value, out); err != nil {
			return fmt.Errorf("wda %s %s: unexpected value: %v", method, path, err)
		}
	}
	return nil
}

// Status is WDA's /status.
type Status struct {
	Ready bool `json:"ready"`
	OS    struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"os"`
	Device string `json:"device"`
}

// Status asks WDA whether it is up.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var s Status
	err := c.call(ctx, http.MethodGet, "/status", nil, &s)
	return s, err
}

// ensureSession returns the live session, starting one when there is none.
func (c *Client) ensureSession(ctx context.Context) (string, error) {
	c.mu.Lock()
	id := c.session
	c.mu.Unlock()
	if id != "" {
		return id, nil
	}
	var v struct {
		SessionID string `json:"sessionId"`
	}
	err := c.call(ctx, http.MethodPost, "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{}}}, &v)
	if err != nil {
		return "", err
	}
	if v.SessionID == "" {
		return "", fmt.Errorf("wda POST /session: no session id in the reply")
	}
	c.mu.Lock()
	c.session = v.SessionID
	c.mu.Unlock()
	return v.SessionID, nil
}

// session calls a route under the session, starting one first and once
// more when WDA says the session is gone (WDA restarted, another client
// took over).
func (c *Client) sessionCall(ctx context.Context, method, path string, body, out any) error {
	for attempt := 0; ; attempt++ {
		id, err := c.ensureSession(ctx)
		if err != nil {
			return err
		}
		err = c.call(ctx, method, "/session/"+id+path, body, out)
		if attempt == 0 && IsName(err, "invalid session id") {
			c.mu.Lock()
			if c.session == id {
				c.session = ""
			}
			c.mu.Unlock()
			continue
		}
		return err
	}
}

// Close ends the session, if any.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	id := c.session
	c.session = ""
	c.mu.Unlock()
	if id == "" {
		return nil
	}
	err := c.call(ctx, http.MethodDelete, "/session/"+id, nil, nil)
	if IsName(err, "invalid session id") {
		return nil
	}
	return err
}
