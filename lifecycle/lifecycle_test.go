package lifecycle

import (
	"slices"
	"testing"
)

// The final statuses are exactly the four of TASKS.md; waiting_* hold the
// device but are not final.
func TestTerminalAndActive(t *testing.T) {
	final := map[Status]bool{Completed: true, Failed: true, Cancelled: true, Interrupted: true}
	active := map[Status]bool{Running: true, WaitingApproval: true, WaitingUser: true}
	for _, s := range Statuses {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		if s.Terminal() != final[s] {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
		if s.Active() != active[s] {
			t.Errorf("%s.Active() = %v", s, s.Active())
		}
	}
	for _, bad := range []Status{"", "done", "RUNNING"} {
		if bad.Valid() || bad.Terminal() {
			t.Errorf("%q counted as a status", bad)
		}
	}
}

func TestValid(t *testing.T) {
	if len(Causes) != 13 || len(EventTypes) != 13 || len(StepStatuses) != 4 {
		t.Errorf("lists: %d causes, %d event types, %d step statuses", len(Causes), len(EventTypes), len(StepStatuses))
	}
	for _, c := range Causes {
		if !c.Valid() || c == CauseNone {
			t.Errorf("cause %q", c)
		}
	}
	if !CauseNone.Valid() || Cause("boom").Valid() {
		t.Error("cause validity")
	}
	if EventType("tick").Valid() || !EventStatus.Valid() {
		t.Error("event type validity")
	}
	if StepStatus("ok").Valid() || !StepCancelled.Valid() {
		t.Error("step status validity")
	}
}

// ActiveStatuses is every status that holds its device, and nothing else.
func TestActiveStatusesFollowActive(t *testing.T) {
	got := ActiveStatuses()
	for _, s := range Statuses {
		if slices.Contains(got, s) != s.Active() {
			t.Errorf("%s: in ActiveStatuses %v, Active() %v", s, slices.Contains(got, s), s.Active())
		}
	}
	if !slices.Equal(got, []Status{Running, WaitingApproval, WaitingUser}) {
		t.Errorf("ActiveStatuses = %v", got)
	}
}
