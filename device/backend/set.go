package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"
)

// MaxKept bounds the phones of Kept backends one Set keeps, so a client
// naming ever new sim:NAMEs cannot exhaust the process's memory.
const MaxKept = 256

// Errors State wraps so that a server can answer 404 and 409.
var (
	ErrUnknown = errors.New("no such device")
	ErrNoState = errors.New("the device does not report its own state")
)

// Set opens devices for a process that lives on (serve, worker, mcp): each
// name of a Kept backend is one phone kept for the Set's life (a second
// task on sim:a sees the screen the first left); other backends' devices
// are opened per use and closed when released.
type Set struct {
	opt Options

	mu     sync.Mutex
	kept   map[string]*Opened
	probed map[string]map[string]string // a listed device's labels, read once per attach
}

// NewSet is an empty Set opening devices with o.
func NewSet(o Options) *Set {
	if o.Logger == nil {
		o.Logger = o.logger()
	}
	return &Set{opt: o, kept: map[string]*Opened{}, probed: map[string]map[string]string{}}
}

// Options are the options the Set opens devices with.
func (s *Set) Options() Options { return s.opt }

// Check says whether name is a device the Set could open; the error says
// what is wrong with it (a Kept backend's new name beyond MaxKept too).
func (s *Set) Check(name string) error {
	if err := Check(name); err != nil {
		return err
	}
	if b, _, _ := Owner(name); b.Kept {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.kept[name]; !ok && len(s.kept) >= MaxKept {
			return fmt.Errorf("%q: this process already keeps %d simulated phones; reuse one of them", name, MaxKept)
		}
	}
	return nil
}

// Open opens name for one use; release ends the use (it closes a device
// that is not kept).
func (s *Set) Open(ctx context.Context, name string) (od *Opened, release func(), err error) {
	if err := Check(name); err != nil {
		return nil, nil, err
	}
	b, rest, _ := Owner(name)
	if !b.Kept {
		od, err := b.Open(ctx, name, rest, s.opt)
		if err != nil {
			return nil, nil, err
		}
		return od, func() { _ = od.Close() }, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	od, ok := s.kept[name]
	if !ok {
		o := s.opt
		o.Logger = s.opt.Logger.With("device", name)
		od, err = b.Open(ctx, name, rest, o)
		if err != nil {
			return nil, nil, err
		}
		s.kept[name] = od
	}
	return od, func() {}, nil
}

// kept is the kept phone of name, if the Set keeps it.
func (s *Set) keptPhone(name string) (*Opened, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	od, ok := s.kept[name]
	return od, ok
}

// State is the device's own state JSON. A Kept backend's phone reports its
// own: a named one once a use opened it, the bare Kind always (it is always
// listed, so it is opened on demand). Other devices report none. The error
// wraps ErrUnknown or ErrNoState.
func (s *Set) State(ctx context.Context, name string) (json.RawMessage, error) {
	if err := s.Check(name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	b, _, _ := Owner(name)
	if b.Kept {
		od, ok := s.keptPhone(name)
		if !ok && name != b.Kind {
			return nil, fmt.Errorf("%w: %s: no simulated phone of that name yet (a task on it creates it; see GET /v1/devices)", ErrUnknown, name)
		}
		if !ok {
			var err error
			if od, _, err = s.Open(ctx, name); err != nil {
				return nil, err
			}
		}
		if od.State == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoState, name)
		}
		return od.State.State(ctx)
	}
	list, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range list {
		if l.Kind == b.Kind && (l.Name == name || name == b.Kind) {
			return nil, fmt.Errorf("%w: %s is a real phone; only simulated phones (%s) report their own state", ErrNoState, l.Name, keptForms())
		}
	}
	return nil, fmt.Errorf("%w: %s: no %s backend lists this phone (see GET /v1/devices)", ErrUnknown, name, b.Kind)
}

// keptForms are the names of the backends that report their own state.
func keptForms() string {
	return Names(func(b *Backend, _ Form) bool { return b.Kept })
}

// listTimeout bounds how long one backend may take to list its devices.
const listTimeout = 2 * time.Second

// List lists the devices known now: each Kept backend's bare Kind and the
// phones the Set keeps, sorted, then the devices the other backends see. A
// backend that cannot list (no adb server) is not an error: it has none.
func (s *Set) List(ctx context.Context) ([]Listed, error) {
	var out []Listed
	for _, b := range Table {
		if !b.Kept {
			continue
		}
		out = append(out, Listed{Name: b.Kind, Kind: b.Kind, State: "device"})
		s.mu.Lock()
		var names []string
		for n := range s.kept {
			if o, _, _ := Owner(n); o == b && n != b.Kind {
				names = append(names, n)
			}
		}
		s.mu.Unlock()
		sort.Strings(names)
		for _, n := range names {
			out = append(out, Listed{Name: n, Kind: b.Kind, State: "device"})
		}
	}
	for _, b := range Table {
		if b.List == nil {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		list, err := b.List(lctx, s.opt)
		cancel()
		if err == nil {
			out = append(out, list...)
		}
	}
	return out, nil
}

// CheckOffer says whether spec may be offered to a farm: a device name
// some backend takes, and for a Named backend with its name.
func CheckOffer(spec string) error {
	b, rest, ok := Owner(spec)
	if !ok || Check(spec) != nil || b.Named && rest == "" {
		return fmt.Errorf("use %s", OfferForms())
	}
	return nil
}

// OfferForms are the device names a farm worker may offer.
func OfferForms() string {
	return Names(func(b *Backend, f Form) bool { return !b.Named || f.Name != b.Kind })
}

// Offer is a device ready for a task, with its labels.
type Offer struct {
	Name   string
	Labels map[string]string
}

// scanTimeout bounds how long one backend may take to list its devices
// for a Scan.
const scanTimeout = 3 * time.Second

// Scan lists the devices specs offer that are ready now (a farm worker's
// heartbeat): a Kept backend's named phone always (opened on first scan),
// another backend's bare Kind as every device it sees ready, Kind:REST as
// that device when it is ready. A listed device's labels are read once per
// attach. A backend that cannot list now (no adb server yet) offers
// nothing; that is not an error.
func (s *Set) Scan(ctx context.Context, specs []string) ([]Offer, error) {
	var out []Offer
	type wanted struct {
		all   bool
		names map[string]bool
	}
	want := map[*Backend]*wanted{}
	for _, sp := range specs {
		b, rest, ok := Owner(sp)
		if !ok {
			return nil, fmt.Errorf("%w %q: use %s", ErrName, sp, OfferForms())
		}
		if b.Kept {
			od, _, err := s.Open(ctx, sp)
			if err != nil {
				return nil, err
			}
			out = append(out, Offer{Name: sp, Labels: b.Labels(ctx, s.opt, Listed{Name: sp, Kind: b.Kind, State: "device"}, od.Device)})
			continue
		}
		w := want[b]
		if w == nil {
			w = &wanted{names: map[string]bool{}}
			want[b] = w
		}
		if rest == "" {
			w.all = true
		} else {
			w.names[sp] = true
		}
	}
	attached := map[string]bool{}
	for _, b := range Table {
		w := want[b]
		if w == nil || (b.List == nil && b.Probe == nil) {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, scanTimeout)
		list, err := s.listOrProbe(lctx, b, w.names)
		cancel()
		if err != nil {
			// Not reachable (yet): its phones are offline, the others are not.
			for n := range s.probedOf(b) {
				attached[n] = true // keep what was read: the backend did not say they left
			}
			continue
		}
		for _, l := range list {
			if l.State != "device" || (!w.all && !w.names[l.Name]) {
				continue
			}
			attached[l.Name] = true
			s.mu.Lock()
			labels, ok := s.probed[l.Name]
			s.mu.Unlock()
			if !ok {
				labels = b.Labels(ctx, s.opt, l, nil)
				s.mu.Lock()
				s.probed[l.Name] = labels
				s.mu.Unlock()
			}
			out = append(out, Offer{Name: l.Name, Labels: maps.Clone(labels)})
		}
	}
	s.mu.Lock()
	for n := range s.probed {
		if !attached[n] {
			delete(s.probed, n) // read again when it is back
		}
	}
	s.mu.Unlock()
	return out, nil
}

// listOrProbe lists b's devices, or, for a backend that cannot list its
// devices (a WDA is found only at the address it is given), probes each
// name asked for.
func (s *Set) listOrProbe(ctx context.Context, b *Backend, names map[string]bool) ([]Listed, error) {
	if b.List != nil {
		return b.List(ctx, s.opt)
	}
	var out []Listed
	for n := range names {
		_, rest, _ := Owner(n)
		l, err := b.Probe(ctx, n, rest, s.opt)
		if err != nil {
			l = Listed{Name: n, Kind: b.Kind, State: "offline"}
		}
		out = append(out, l)
	}
	return out, nil
}

// probedOf are the names of b's devices whose labels the Set holds.
func (s *Set) probedOf(b *Backend) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for n := range s.probed {
		if o, _, _ := Owner(n); o == b {
			out[n] = true
		}
	}
	return out
}
