package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/device"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/tools"
)

func (s *Server) listDevices(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := decodeArgs(req.Params.Arguments, &struct{}{}); err != nil {
		return errorResult("list_devices: %v", err), nil
	}
	list, err := s.cfg.Devices.List(ctx)
	if err != nil {
		return errorResult("list_devices: %v", err), nil
	}
	me := s.sessionOf(req.Session).id
	var b strings.Builder
	for _, d := range list {
		fmt.Fprintf(&b, "%s (%s", d.Name, d.Kind)
		if d.State != "" {
			fmt.Fprintf(&b, ", %s", d.State)
		}
		b.WriteString(")")
		switch holder, label := s.leases.Holder(d.Name); {
		case holder == "":
			b.WriteString(" free")
		case holder == me:
			b.WriteString(" leased to you")
		default:
			fmt.Fprintf(&b, " busy, held by %s", holder)
			if label != "" {
				fmt.Fprintf(&b, " (%s)", label)
			}
		}
		b.WriteString("\n")
	}
	if len(list) == 0 {
		b.WriteString("no devices\n")
	}
	return textResult(strings.TrimRight(b.String(), "\n")), nil
}

type observeArgs struct {
	Device     string `json:"device"`
	Screenshot bool   `json:"screenshot"`
}

func (s *Server) observe(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a observeArgs
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return errorResult("observe: %v", err), nil
	}
	st := s.sessionOf(req.Session)
	st.mu.Lock()
	defer st.mu.Unlock()
	name := st.pick(a.Device, s.cfg.DefaultDevice)
	h, res := s.handleFor(ctx, st, name)
	if res != nil {
		return res, nil
	}
	sc, err := h.stepper.Observe(ctx)
	if err != nil {
		return errorResult("observe %s: reading the screen failed: %v", name, err), nil
	}
	st.setLatest(name, sc)
	out := textResult(st.header() + sc.Listing())
	if a.Screenshot {
		// The client plans: it is a planner, and gets the picture it asked
		// for (docs/ARCHITECTURE.md, the Perception Boundary). Never logged.
		img, why := screenshot(ctx, h.opened.Camera)
		if img != nil {
			out.Content = append(out.Content, img)
		} else {
			out.Content = append(out.Content, &mcp.TextContent{Text: "no screenshot: " + why})
		}
	}
	return out, nil
}

// action is the handler of one TOOLS.md action tool.
func (s *Server) action(name string) toolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		call := tools.Call{Name: name, Args: json.RawMessage(compact(string(args)))}
		if err := tools.Validate(call); err != nil {
			return errorResult("%v", err), nil
		}
		st := s.sessionOf(req.Session)
		st.mu.Lock()
		defer st.mu.Unlock()
		dev := st.pick("", s.cfg.DefaultDevice)
		idx, named := tools.ElementArg(call)
		if named {
			if st.latest == nil {
				return errorResult("%s: no observation yet in this session: call observe, then name elements by the [N] indices it lists", name), nil
			}
			if !listed(st.latest, idx) {
				return errorResult("%s: no element %d in your latest observation (%d); it lists %s. Call observe again and use an index it lists",
					name, idx, st.obs, listedRange(st.latest)), nil
			}
		}
		h, res := s.handleFor(ctx, st, dev)
		if res != nil {
			return res, nil
		}
		// The client chose the call from its latest observation. The
		// screen may have moved on since (a timer, a notification, a
		// person's hand): the Stepper checks a call that lands on the
		// screen against a read of the screen of the moment, the one check
		// every planner's step gets, and does not act when it would land
		// elsewhere. Without an observation of this device there is
		// nothing to check against: the call starts from a fresh read.
		seen := st.latest
		if seen == nil || st.device != dev {
			var err error
			if seen, err = h.stepper.Observe(ctx); err != nil {
				return errorResult("%s: reading the screen failed: %v", name, err), nil
			}
		}
		out, err := h.stepper.Do(ctx, call, seen)
		if err != nil {
			if errors.Is(err, device.ErrDisconnected) {
				// Gone: the next call opens it afresh.
				if h.opened.Release != nil {
					h.opened.Release()
				}
				delete(st.open, dev)
			}
			return errorResult("%s: %v", name, err), nil
		}
		if out.Refused != nil {
			return s.refused(req.Session, name, out.Refused), nil
		}
		if out.Record.Status == lifecycle.StepReplanned {
			st.setLatest(dev, out.After)
			return errorResult("%s: stale index: %s since your latest observation; nothing was done. Observe again — the screen now, %s:\n%s",
				name, out.Moved, st.label(), out.After.Listing()), nil
		}
		st.setLatest(dev, out.After)
		return textResult(describeStep(out, seen) + "\n" + st.header() + out.After.Listing()), nil
	}
}

// refused answers an action the gate (or the user) did not let through.
func (s *Server) refused(ss *mcp.ServerSession, name string, r *runtime.Refusal) *mcp.CallToolResult {
	msg := fmt.Sprintf("%s was NOT performed: %s.", name, r.Reason)
	switch {
	case r.Cause == lifecycle.CausePolicyDenied:
		msg += " phonepilot's safety policy forbids it; only the person who runs phonepilot can change that policy."
	case !canElicit(ss):
		msg += " A person must approve it, and this MCP client cannot ask its user (it does not support elicitation). " +
			"Either hand the goal to run_task: its task then waits for a person's approval through phonepilot" + s.hint("") +
			"; or the person who runs phonepilot changes its safety policy."
	default:
		msg += " Do not ask for it again; find another way or tell the user."
	}
	return errorResult("%s", msg)
}

// hint is how a person approves a waiting task, from the configuration.
func (s *Server) hint(id string) string {
	if s.cfg.ApproveHint == "" {
		return ""
	}
	if id == "" {
		id = "ID"
	}
	return " (" + strings.ReplaceAll(s.cfg.ApproveHint, "{id}", id) + ")"
}

// handleFor leases name to the session and returns it opened, or the tool
// error that says why not.
func (s *Server) handleFor(ctx context.Context, st *session, name string) (*handle, *mcp.CallToolResult) {
	if err := s.cfg.Devices.Check(name); err != nil {
		return nil, errorResult("unknown device: %v (list_devices names the devices)", err)
	}
	if id := s.leases.Running(name, st.id); id != "" && !s.ended(ctx, id) {
		return nil, errorResult("device %s is busy: your task %s runs on it; follow it with get_task or cancel_task, then act", name, id)
	}
	if s.cfg.Tasks != nil {
		if l := s.cfg.Tasks.Load()[name]; l.Running != "" && !s.ended(ctx, l.Running) {
			return nil, errorResult("device %s is busy: task %s runs on it (get_task follows it)", name, l.Running)
		}
	}
	if err := s.leases.Acquire(name, st.id, st.client); err != nil {
		return nil, errorResult("%v", err)
	}
	if h, ok := st.open[name]; ok {
		return h, nil
	}
	op, err := s.cfg.Devices.Open(ctx, name)
	if err != nil {
		return nil, errorResult("open device %s: %v", name, err)
	}
	opt := runtime.Options{Clock: s.cfg.Clock, Logger: s.log.With("session", st.id, "device", name), Gate: s.cfg.Gate}
	if canElicit(st.ss) {
		opt.Person = elicitPerson{ss: st.ss}
	}
	stp, err := runtime.NewStepper(s.cfg.Runtime, op.Device, opt)
	if err != nil {
		if op.Release != nil {
			op.Release()
		}
		return nil, errorResult("device %s: %v", name, err)
	}
	h := &handle{opened: op, stepper: stp}
	st.open[name] = h
	return h, nil
}

// pick is the device a call acts on: the one it names, else the session's
// latest, else the default.
func (st *session) pick(named, def string) string {
	switch {
	case named != "":
		return named
	case st.device != "":
		return st.device
	}
	return def
}

func (st *session) setLatest(dev string, sc *scene.Scene) {
	st.device, st.latest = dev, sc
	st.obs++
}

// label names the latest observation in answers.
func (st *session) label() string { return fmt.Sprintf("observation %d of %s", st.obs, st.device) }

func (st *session) header() string { return st.label() + " (use these indices):\n" }

// listed reports whether idx is an index the Scene's listing shows.
func listed(sc *scene.Scene, idx int) bool {
	for _, e := range sc.Listed() {
		if e.Index == idx {
			return true
		}
	}
	return false
}

func listedRange(sc *scene.Scene) string {
	els := sc.Listed()
	if len(els) == 0 {
		return "no elements"
	}
	lo, hi := els[0].Index, els[0].Index
	for _, e := range els {
		lo, hi = min(lo, e.Index), max(hi, e.Index)
	}
	return fmt.Sprintf("%d elements between %d and %d", len(els), lo, hi)
}

// describeStep says what a step did: its result, whether the screen
// changed, what appeared and disappeared.
func describeStep(out runtime.StepOutcome, before *scene.Scene) string {
	rec := out.Record
	var b strings.Builder
	result := rec.Call.String()
	if n := len(rec.Attempts); n > 0 {
		result = rec.Attempts[n-1].Result
	}
	b.WriteString(result)
	if rec.Status == lifecycle.StepSucceeded {
		b.WriteString(" · done")
	} else {
		fmt.Fprintf(&b, " · NOT confirmed: %s", rec.Reason)
	}
	if rec.Changed {
		b.WriteString(" · the screen changed")
	} else {
		b.WriteString(" · the screen did not change")
	}
	fmt.Fprintf(&b, " (%d ms)\n", rec.Duration.Milliseconds())
	switch {
	case rec.Changed && out.After != nil && before.Package != out.After.Package:
		// Another app: its whole listing is new; the listing below says it all.
		fmt.Fprintf(&b, "the app in front is now %s (was %s)\n", out.After.Package, before.Package)
	case rec.Changed:
		appeared, gone := diffListings(before, out.After)
		writeSome(&b, "appeared", appeared)
		writeSome(&b, "disappeared", gone)
	}
	return strings.TrimRight(b.String(), "\n")
}

// maxDiffLines bounds each of the appeared / disappeared lists.
const maxDiffLines = 8

func writeSome(b *strings.Builder, what string, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString(what + ": ")
	shown := lines[:min(len(lines), maxDiffLines)]
	b.WriteString(strings.Join(shown, "; "))
	if n := len(lines) - len(shown); n > 0 {
		fmt.Fprintf(b, "; … %d more", n)
	}
	b.WriteString("\n")
}

// diffListings compares two screens' listings by element, index aside (an
// element that moved down the list is not new): the lines only after has,
// and the lines only before had.
func diffListings(before, after *scene.Scene) (appeared, gone []string) {
	bl, al := listingLines(before), listingLines(after)
	count := map[string]int{}
	for _, l := range bl {
		count[withoutIndex(l)]++
	}
	for _, l := range al {
		k := withoutIndex(l)
		if count[k] > 0 {
			count[k]--
			continue
		}
		appeared = append(appeared, l)
	}
	count = map[string]int{}
	for _, l := range al {
		count[withoutIndex(l)]++
	}
	for _, l := range bl {
		k := withoutIndex(l)
		if count[k] > 0 {
			count[k]--
			continue
		}
		gone = append(gone, l)
	}
	return appeared, gone
}

func listingLines(sc *scene.Scene) []string {
	if sc == nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(sc.Listing(), "\n"), "\n")
	return lines[1:] // the header
}

// withoutIndex drops a listing line's "[N] " and its focus flag, which
// moves with typing and is not an element of its own.
func withoutIndex(line string) string {
	if i := strings.Index(line, "] "); strings.HasPrefix(line, "[") && i > 0 {
		line = line[i+2:]
	}
	return strings.ReplaceAll(line, " focused", "")
}

// ended reports a task that is final, though its hold on the device may
// not be dropped yet (its run_task call is still returning).
func (s *Server) ended(ctx context.Context, id string) bool {
	if s.cfg.Tasks == nil {
		return true
	}
	t, err := s.cfg.Tasks.Get(ctx, id)
	return err == nil && t.Status.Terminal()
}
