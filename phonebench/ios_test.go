package phonebench

import (
	"context"
	"testing"

	"phonepilot/phonebench/tasks"
)

// phonebench on the simulated iPhone (through WDA in process): the
// Settings tasks on realistic, one seed; no irreversible action
// reaches the phone without approval, every run is on the iPhone, the
// floor holds, and the Settings, Contacts and Messages tasks succeed.
// The iPhone's known gaps (docs/ios.md: the cart's toast, the alarm
// picker, no input cost on the clean profile) are measured by
// `phonepilot bench --platform ios`, not hidden.
func TestPhonebenchOnIOS(t *testing.T) {
	rep, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 1, Profiles: []string{"realistic"}, Platform: PlatformIOS,
		Tasks: tasks.Select("settings.*"), Policies: []string{PolicyRule, PolicyReference, PolicyPeerLoop, PolicyDroidrunLoop}})
	if err != nil {
		t.Fatal(err)
	}
	underFloor(t, rep)
	if len(rep.Records) == 0 {
		t.Fatal("no runs")
	}
	for _, r := range rep.Records {
		if r.Platform != PlatformIOS || r.Policy == PolicyDroidrunLoop {
			t.Errorf("%s %s: platform %q policy %s; want ios runs of phonepilot's policies and peer-loop only", r.Task, r.Policy, r.Platform, r.Policy)
		}
		if r.UnapprovedIrreversible > 0 {
			t.Errorf("%s %s %s %s: %d irreversible actions reached the phone without approval", r.Task, r.Locale, r.Profile, r.Policy, r.UnapprovedIrreversible)
		}
		if !r.Success {
			t.Errorf("%s %s %s %s failed on the iPhone: %s", r.Task, r.Locale, r.Profile, r.Policy, r.Why)
		}
	}
}

func TestUnknownPlatformRefused(t *testing.T) {
	_, err := Run(context.Background(), Options{Platform: "harmony", Tasks: tasks.Select("settings.*")})
	if err == nil {
		t.Fatal("platform harmony accepted")
	}
}
