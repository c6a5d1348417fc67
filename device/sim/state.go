package sim

import (
	"encoding/json"
	"net/http"
)

// State is the phone's state as JSON (documented in docs/sim.md).
// Benchmarks judge success on it, never on what an agent claims.
func (p *Phone) State() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settle(p.now())
	pkg, act := p.foreground()
	st := map[string]any{
		"foreground": pkg,
		"activity":   act,
		"screen":     p.screenKey(),
		"locale":     p.cfg.Locale,
		"profile":    p.prof.name,
		"seed":       p.cfg.Seed,
		"ime":        p.ime,
		"popup":      p.popupName(),
		"recents":    nonNil(append([]string(nil), p.recents...)),
		"granted":    append([]grant{}, p.granted...),
		// interruptions and network_error: hostile.go (docs/sim.md).
		"interruptions": p.interruptions(),
		"network_error": p.netErrorShowing(),
	}
	var installed []string
	for _, a := range p.apps {
		installed = append(installed, a.pkg())
	}
	st["installed"] = nonNil(installed)
	for _, a := range p.apps {
		st[registered(a.pkg()).key] = a.state()
	}
	return json.Marshal(st)
}

func (p *Phone) popupName() string {
	switch {
	case p.popup == nil:
		return ""
	case p.popup.ad:
		return "ad"
	case p.popup.fake:
		return "fake_update"
	case p.popup.kind != "":
		return p.popup.kind
	}
	return "permission"
}

// ControlHandler serves GET /state (the state JSON), GET /commands (the
// shell's command lines, CommandLog), POST /reset (a
// fresh phone, same configuration) and POST /permission-dialog (the
// notification-permission request over the app in front) and POST
// /helper/kill (phonepilot's helper dies) for `phonepilot sim --control`.
func (p *Phone) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		b, err := p.State()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("GET /commands", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"commands": p.CommandLog()})
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		p.Reset()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"reset":true}`))
	})
	mux.HandleFunc("POST /helper/kill", func(w http.ResponseWriter, r *http.Request) {
		// phonepilot's helper dies mid-task (device/adb falls back).
		var killed []int
		for _, pid := range p.HelperPIDs() {
			if p.KillHelper(pid, 137) {
				killed = append(killed, pid)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"killed": killed})
	})
	mux.HandleFunc("POST /permission-dialog", func(w http.ResponseWriter, r *http.Request) {
		if err := p.ShowPermissionDialog(); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"shown":true}`))
	})
	return mux
}
