package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// timePhone is an alarm's time dialog: an Hour and a Minute field (an
// empty one shows its hint as its text, as dumps do); a tap focuses the
// field under it unless it is one of the taps to drop (counted from 1);
// typing replaces the focused field's text.
type timePhone struct {
	mu     sync.Mutex
	fields [2]string // hour, minute
	focus  int
	taps   int
	drop   map[int]bool
	// secret: the Hour field is a password field (typing into it asks
	// a person).
	secret bool
}

var _ device.Device = (*timePhone)(nil)

var timeFieldBounds = [2]scene.Bounds{{Left: 100, Top: 800, Right: 500, Bottom: 950}, {Left: 580, Top: 800, Right: 980, Bottom: 950}}

func (p *timePhone) Scene(ctx context.Context) (*scene.Scene, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sc := &scene.Scene{Width: 1080, Height: 2400, Package: "com.android.deskclock", Elements: []scene.Element{
		{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Enabled: true, Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}}}
	for i, hint := range []string{"Hour", "Minute"} {
		text := p.fields[i]
		if text == "" {
			text = hint
		}
		sc.Elements = append(sc.Elements, scene.Element{Index: i + 1, Parent: 0, Class: "android.widget.EditText", Text: text, Hint: hint,
			ResourceID: "com.android.deskclock:id/" + strings.ToLower(hint), Editable: true, Clickable: true, Enabled: true,
			Focused: p.focus == i, Bounds: timeFieldBounds[i], Password: p.secret && i == 0})
	}
	return sc, ctx.Err()
}

func (p *timePhone) Tap(ctx context.Context, x, y int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.taps++
	if p.drop[p.taps] {
		return ctx.Err()
	}
	for i, b := range timeFieldBounds {
		if x >= b.Left && x < b.Right && y >= b.Top && y < b.Bottom {
			p.focus = i
		}
	}
	return ctx.Err()
}

func (p *timePhone) TypeText(ctx context.Context, s string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fields[p.focus] = s
	return ctx.Err()
}
func (p *timePhone) LongPress(ctx context.Context, x, y int, d time.Duration) error { return ctx.Err() }
func (p *timePhone) Swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error {
	return ctx.Err()
}
func (p *timePhone) Key(ctx context.Context, k device.Key) error   { return ctx.Err() }
func (p *timePhone) LaunchApp(ctx context.Context, a string) error { return ctx.Err() }

// typeInto types text into the field with resource id id, then finishes.
type typeInto struct{ id, text string }

func (p typeInto) Plan(_ context.Context, in plan.Input) (plan.Decision, error) {
	if len(in.History) > 0 {
		return plan.Decision{Finish: &plan.Finish{Success: in.History[0].Status == lifecycle.StepSucceeded, Reason: "typed"}}, nil
	}
	sel := scene.Selector{Field: scene.FieldID, Value: p.id}
	return plan.Decision{Steps: []plan.PlannedStep{{Intent: "type " + p.text, Call: tools.NewCall(tools.TypeText, tools.TypeTextArgs{Text: p.text}),
		Target: &sel, Expect: plan.Expectation{Kind: plan.ExpectFieldText, Text: p.text}}}}, nil
}

// Text typed into the wrong field because the focus tap was lost is taken
// out of it again: the field gets back what it held (issue 12: the minutes
// replaced the hour, 22 → 50, and the alarm was refused), an empty field
// is emptied rather than given its hint as text, and the retry types the
// text where it was meant to go.
func TestTextInTheWrongFieldIsPutBack(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hour, want string // the Hour field before, and after the run
	}{
		{name: "occupied", hour: "22", want: "22"},
		{name: "empty", hour: "", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The Hour field has focus; the tap on Minute is dropped.
			p := &timePhone{fields: [2]string{tc.hour, ""}, focus: 0, drop: map[int]bool{1: true}}
			r, err := New(Defaults(), p, typeInto{"com.android.deskclock:id/minute", "50"},
				Options{Clock: clock.NewFake(time.Unix(0, 0)), Logger: testlog.New(t)})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), "set the minutes to 50")
			if res.Status != lifecycle.Completed || p.fields != [2]string{tc.want, "50"} {
				t.Errorf("%s (%s): hour %q, minute %q; want hour %q, minute \"50\"", res.Status, res.Reason, p.fields[0], p.fields[1], tc.want)
			}
			if len(res.Steps) > 0 && len(res.Steps[0].Attempts) > 0 {
				if got := res.Steps[0].Attempts[0].Result; !strings.Contains(got, `went into [1] "Hour"`) {
					t.Errorf("the first attempt says %q; want it to say where the text went", got)
				}
			}
		})
	}
}

// askingPerson approves everything and counts what it was asked.
type askingPerson struct{ asked []string }

func (p *askingPerson) Approve(_ context.Context, a Approval) (ApprovalDecision, error) {
	p.asked = append(p.asked, a.Call.String())
	return ApprovalDecision{Approved: true, By: "test"}, nil
}
func (p *askingPerson) Ask(context.Context, Question) (Answer, error) { return Answer{}, nil }

// Putting text back where the gate wants a person (a password field) is
// not worth their approval: nobody is asked, nothing is typed there, and
// the step says why. (It asked, then typed nothing whatever the answer.)
func TestTextInAGatedFieldIsNotPutBackAndNobodyIsAsked(t *testing.T) {
	p := &timePhone{fields: [2]string{"22", ""}, focus: 0, drop: map[int]bool{1: true}, secret: true}
	person := &askingPerson{}
	r, err := New(Defaults(), p, typeInto{"com.android.deskclock:id/minute", "50"},
		Options{Clock: clock.NewFake(time.Unix(0, 0)), Logger: testlog.New(t), Person: person})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "set the minutes to 50")
	if len(person.asked) != 0 {
		t.Errorf("a person was asked %v; putting text back asks nobody", person.asked)
	}
	if len(res.Steps) == 0 || len(res.Steps[0].Attempts) == 0 {
		t.Fatalf("%s (%s): no attempts", res.Status, res.Reason)
	}
	if got := res.Steps[0].Attempts[0].Result; !strings.Contains(got, "not put back: the gate stops typing there (account") {
		t.Errorf("the first attempt says %q; want it to say the text was not put back and why", got)
	}
	if p.fields[0] != "50" {
		t.Errorf("hour %q: something typed into the password field after the stray text", p.fields[0])
	}
}

// dearTimePhone is timePhone read by one-shot dumps of 1 s: it notes when
// each read began and when each typing returned.
type dearTimePhone struct {
	*timePhone
	clk          *clock.Fake
	reads, typed []time.Time
}

func (p *dearTimePhone) Scene(ctx context.Context) (*scene.Scene, error) {
	p.reads = append(p.reads, p.clk.Now())
	if err := p.clk.Sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return p.timePhone.Scene(ctx)
}

func (p *dearTimePhone) TypeText(ctx context.Context, s string) error {
	err := p.timePhone.TypeText(ctx, s)
	p.typed = append(p.typed, p.clk.Now())
	return err
}

// On a phone with dear reads the text put back waits for its transition
// like any action: the first read after it starts transitionLead later,
// not at once because the step's own action landed long before.
func TestPuttingTextBackWaitsForItsTransition(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	p := &dearTimePhone{timePhone: &timePhone{fields: [2]string{"22", ""}, drop: map[int]bool{1: true}}, clk: clk}
	r, err := New(Defaults(), p, typeInto{"com.android.deskclock:id/minute", "50"}, Options{Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), "set the minutes to 50")
	if res.Status != lifecycle.Completed || len(p.typed) < 2 {
		t.Fatalf("%s (%s), %d typings; want the text typed, put back and typed again", res.Status, res.Reason, len(p.typed))
	}
	back := p.typed[1] // the second typing puts "22" back
	for _, at := range p.reads {
		if at.Before(back) {
			continue
		}
		if wait := at.Sub(back); wait < transitionLead {
			t.Errorf("the first read after the text was put back began %v after it; want at least %v", wait, transitionLead)
		}
		return
	}
	t.Error("no read after the text was put back")
}
