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

// The runs that failed on the iPhone until its dress was understood, each
// on the profile and seed it failed on (docs/ios.md):
//   - Taobao's "Added to cart": on clean the app's toast (a window of its
//     own above the app's) was not known as a toast, and the second
//     product's press was called lost; on realistic the result that said
//     "not pressed again" was cut from the planner's history behind the
//     iPhone's long class names: two or three in the cart;
//   - the Clock's "Add alarm" on clean: the time picker came over the
//     button and, with no container of the same place to match it, read
//     as a popup that came on its own: the press was called lost;
//   - Contacts' Save under hostile (en, seed 1): a system-update alert's
//     "Later" was not known as closing an alert (its buttons have no ids);
//   - the rule planner's "go back" from a Taobao product in English: the
//     navigation bar's button is labelled "Back" and so has no id.
func TestPhonebenchOnIOSDress(t *testing.T) {
	for _, c := range []struct {
		tasks, profile, locale, policy string
	}{
		{"taobao.cart.add", "realistic", "en", PolicyReference},
		{"taobao.cart.add_two", "clean", "en", PolicyReference},
		{"taobao.cart.add_two", "clean", "en", PolicyRule},
		{"clock.alarm.add", "clean", "en", PolicyReference},
		{"contacts.create", "hostile", "en", PolicyReference},
	} {
		rep, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 1, Profiles: []string{c.profile}, Locales: []string{c.locale},
			Platform: PlatformIOS, Tasks: tasks.Select(c.tasks), Policies: []string{c.policy}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Records) == 0 {
			t.Fatalf("%s: no runs", c.tasks)
		}
		for _, r := range rep.Records {
			if !r.Success || r.UnapprovedIrreversible > 0 {
				t.Errorf("%s %s %s seed %d on the iPhone: %s (%d unapproved)", r.Task, r.Locale, r.Profile, r.Seed, r.Why, r.UnapprovedIrreversible)
			}
		}
	}
}

func TestUnknownPlatformRefused(t *testing.T) {
	_, err := Run(context.Background(), Options{Platform: "harmony", Tasks: tasks.Select("settings.*")})
	if err == nil {
		t.Fatal("platform harmony accepted")
	}
}
