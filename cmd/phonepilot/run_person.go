package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/storage"
	"phonepilot/task"
)

// decidedBy is who `run`'s decisions are recorded as having come from.
const decidedBy = storage.ByCLI

// noTerminal is why an action of category was not approved without a
// terminal, and what to do instead.
func noTerminal(category string) string {
	if category == "" {
		category = "CATEGORY"
	}
	return "no terminal to ask; rerun with --allow " + category + " or from a terminal"
}

// askTerminal finds the person running `run`: stdin when it is a terminal,
// else nobody (ok false). A variable so that tests can play the person.
var askTerminal = func(cmd *cobra.Command) (in io.Reader, ok bool) {
	in = cmd.InOrStdin()
	f, isFile := in.(*os.File)
	return in, isFile && term.IsTerminal(int(f.Fd()))
}

// decider is the part of the task service a person's answers go to.
type decider interface {
	Approve(ctx context.Context, id, by, note string) (storage.Task, error)
	Deny(ctx context.Context, id, by, note string) (storage.Task, error)
	Answer(ctx context.Context, id, by, text string) (storage.Task, error)
	Cancel(ctx context.Context, id string) (storage.Task, error)
}

// person answers a recorded run's approvals and questions (the task
// service calls decide for each, task.Config.OnPending): on a terminal
// it shows the pending action and asks; without one it refuses approvals
// (a run nobody watches buys nothing) and cancels on a question, which
// nobody could answer.
type person struct {
	in     *bufio.Reader // nil: no terminal
	out    io.Writer     // where the questions are shown (stderr)
	before func()        // called before showing anything (stops the spinner)
}

func newPerson(cmd *cobra.Command, before func()) *person {
	p := &person{out: cmd.ErrOrStderr(), before: before}
	if in, ok := askTerminal(cmd); ok {
		p.in = bufio.NewReader(in)
	}
	return p
}

// decide answers one pending request.
func (p *person) decide(ctx context.Context, svc decider, id string, pd storage.Pending) {
	if p.before != nil {
		p.before()
	}
	var err error
	switch {
	case pd.Kind == lifecycle.PendingQuestion && p.in == nil:
		fmt.Fprintf(p.out, "phonepilot: the task asks %q and there is no terminal to answer it; cancelling (answer it from a terminal or through `phonepilot serve`)\n", pd.Question)
		_, err = svc.Cancel(ctx, id)
	case pd.Kind == lifecycle.PendingQuestion:
		fmt.Fprintf(p.out, "\nquestion (step %d): %s\n", pd.Step, pd.Question)
		fmt.Fprint(p.out, "Answer: ")
		line, rerr := p.readLine()
		if rerr != nil {
			fmt.Fprintln(p.out)
			fmt.Fprintln(p.out, "no answer; cancelling the task")
			_, err = svc.Cancel(ctx, id)
			break
		}
		_, err = svc.Answer(ctx, id, decidedBy, line)
	case p.in == nil:
		// Nobody is asked: the step's reason says so, once.
		_, err = svc.Deny(ctx, id, storage.ByNobody, noTerminal(pd.Category))
	default:
		fmt.Fprint(p.out, "\n"+describePending(pd))
		fmt.Fprint(p.out, "Approve? [y/N] ")
		line, rerr := p.readLine()
		if rerr != nil {
			fmt.Fprintln(p.out)
		}
		if yes(line) {
			_, err = svc.Approve(ctx, id, decidedBy, "approved at the terminal")
		} else {
			_, err = svc.Deny(ctx, id, decidedBy, "denied at the terminal")
		}
	}
	if err != nil && ctx.Err() == nil {
		// Too late (it timed out or was cancelled) or the store failed: say so.
		fmt.Fprintf(p.out, "phonepilot: the decision was not taken: %v\n", err)
	}
}

// readLine reads one line of the person's answer (EOF without a line is an error).
func (p *person) readLine() (string, error) {
	line, err := p.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

func yes(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes":
		return true
	}
	return false
}

// describePending shows an approval request as a person reads it: the
// action, the element and its label, the category and the gate's reason.
func describePending(pd storage.Pending) string {
	var b strings.Builder
	fmt.Fprintf(&b, "approval needed (step %d): %s\n", pd.Step, pd.Call.String())
	if e := pd.Element; e != nil {
		fmt.Fprintf(&b, "  element:  [%d] %s", e.Index, e.Class)
		if e.ID != "" {
			fmt.Fprintf(&b, "  id %s", e.ID)
		}
		fmt.Fprintf(&b, "  at (%d,%d)-(%d,%d)\n", e.Bounds.Left, e.Bounds.Top, e.Bounds.Right, e.Bounds.Bottom)
		fmt.Fprintf(&b, "  label:    %q\n", e.Label)
	}
	fmt.Fprintf(&b, "  category: %s\n", pd.Category)
	fmt.Fprintf(&b, "  reason:   %s\n", pd.Reason)
	if !pd.Expires.IsZero() {
		fmt.Fprintf(&b, "  expires:  %s (then the task fails with approval_timeout)\n", pd.Expires.Local().Format(time.TimeOnly))
	}
	return b.String()
}

// parseAllow reads --allow: category names, comma separated, each one of
// safety.Categories().
func parseAllow(values []string) ([]safety.Category, error) {
	known := safety.Categories()
	var out []safety.Category
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			c := safety.Category(name)
			found := false
			for _, k := range known {
				found = found || k == c
			}
			if !found {
				return nil, fmt.Errorf("--allow %q: not a category; use one or more of %s, comma separated", name, categoryList())
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// allowCategories is p with cats allowed for this run, everywhere: the
// flag is the person saying yes in advance, so it overrides the file's
// rules for those categories, per-app ones included.
func allowCategories(p safety.Policy, cats []safety.Category) safety.Policy {
	if len(cats) == 0 {
		return p
	}
	set := func(r *safety.Rules) {
		for _, c := range cats {
			r.Set(c, safety.Allow)
		}
	}
	out := safety.Policy{Rules: p.Rules}
	set(&out.Rules)
	if len(p.Apps) > 0 {
		out.Apps = make(map[string]safety.Rules, len(p.Apps))
		for pkg, r := range p.Apps {
			set(&r)
			out.Apps[pkg] = r
		}
	}
	return out
}

var _ decider = (*task.Service)(nil)

// categoryList names the categories --allow takes.
func categoryList() string {
	var names []string
	for _, c := range safety.Categories() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// directPerson is the runtime.Person of a run without a task to wait in
// (--no-record): the person at the terminal decides at once, as for a
// recorded run; without a terminal every approval is refused.
type directPerson struct{ p *person }

var _ runtime.Person = directPerson{}

// Approve implements runtime.Person.
func (d directPerson) Approve(ctx context.Context, a runtime.Approval) (runtime.ApprovalDecision, error) {
	v, err := d.ask(ctx, task.ApprovalPending(a))
	if err != nil {
		return runtime.ApprovalDecision{}, err
	}
	return runtime.ApprovalDecision{Approved: v.approved, By: v.by, Note: v.text, Unasked: v.by == storage.ByNobody}, nil
}

// Ask implements runtime.Person.
func (d directPerson) Ask(ctx context.Context, q runtime.Question) (runtime.Answer, error) {
	v, err := d.ask(ctx, storage.Pending{Kind: lifecycle.PendingQuestion, Step: q.Step, Call: q.Call, Question: q.Text})
	if err != nil {
		return runtime.Answer{}, err
	}
	if v.cancelled {
		return runtime.Answer{}, errors.New("nobody answered the question (no terminal, or end of input)")
	}
	return runtime.Answer{By: decidedBy, Text: v.text}, nil
}

// ask runs the person's decision in its own goroutine, so that Ctrl-C (ctx)
// ends the wait even while the terminal read blocks.
func (d directPerson) ask(ctx context.Context, pd storage.Pending) (directVerdict, error) {
	done := make(chan directVerdict, 1)
	go func() {
		var v directVerdict
		d.p.decide(ctx, &v, "", pd)
		done <- v
	}()
	select {
	case v := <-done:
		return v, nil
	case <-ctx.Done():
		return directVerdict{}, ctx.Err()
	}
}

// directVerdict takes the one decision of a directPerson's question.
type directVerdict struct {
	approved, cancelled bool
	by, text            string
}

func (v *directVerdict) Approve(_ context.Context, _, by, note string) (storage.Task, error) {
	v.approved, v.by, v.text = true, by, note
	return storage.Task{}, nil
}
func (v *directVerdict) Deny(_ context.Context, _, by, note string) (storage.Task, error) {
	v.by, v.text = by, note
	return storage.Task{}, nil
}
func (v *directVerdict) Answer(_ context.Context, _, _, text string) (storage.Task, error) {
	v.text = text
	return storage.Task{}, nil
}
func (v *directVerdict) Cancel(context.Context, string) (storage.Task, error) {
	v.cancelled = true
	return storage.Task{}, nil
}
