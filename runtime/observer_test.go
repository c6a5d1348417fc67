package runtime

import (
	"context"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// switchingPhone is a phone whose helper fails after its first read: it
// then says it observes through uiautomator (device.ObserverReporter).
type switchingPhone struct {
	*toyPhone
	reads int
}

func (p *switchingPhone) Scene(ctx context.Context) (*scene.Scene, error) {
	p.reads++
	return p.toyPhone.Scene(ctx)
}

func (p *switchingPhone) Observer() device.ObserverState {
	if p.reads >= 2 {
		return device.ObserverState{Name: "uiautomator", Reason: "helper tree failed: unexpected EOF", Switches: 1}
	}
	return device.ObserverState{Name: "helper"}
}

// A switch of the phone's observer is an event, reported once.
func TestObserverSwitchIsAnEvent(t *testing.T) {
	p := &switchingPhone{toyPhone: newToyPhone(clock.NewFake(epoch))}
	steps := 0
	planner := planFunc(func(ctx context.Context, in plan.Input) (plan.Decision, error) {
		if steps++; steps > 3 {
			return plan.Decision{Finish: &plan.Finish{Success: true}}, nil
		}
		return plan.Decision{Steps: []plan.PlannedStep{{Intent: "wait a little",
			Call: tools.NewCall(tools.Wait, map[string]float64{"seconds": 0.1})}}}, nil
	})
	var events []Event
	r, err := New(Defaults(), p, planner, Options{Clock: clock.NewFake(epoch), OnEvent: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Run(t.Context(), "wait"); res.Status != lifecycle.Completed {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	var switched []Event
	for _, e := range events {
		if e.Type == lifecycle.EventObserverSwitched {
			switched = append(switched, e)
		}
	}
	if len(switched) != 1 || !strings.Contains(switched[0].Reason, "observing through uiautomator: helper tree failed") {
		t.Fatalf("switch events %+v; want one, with the reason", switched)
	}
}
