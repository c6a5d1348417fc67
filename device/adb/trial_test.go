package adb

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"phonepilot/device/sim"
)

// The trial a user runs on a real phone (doctor --trial), here on the
// simulated phone behind Debian's adb: one uiautomator dump, the helper
// pushed and started, 20 timed trees each byte for byte the dump, 5
// screenshots of the display's size, the app in front started 3 times
// through the helper and once by monkey, the helper stopped (its socket gone,
// uiautomator dumping again), and the driver working after it.
func TestHelperTrialThroughRealADB(t *testing.T) {
	env, d := openSim(t, sim.Config{}, ObserverAuto)
	ctx := t.Context()
	// A helper already runs (a task was going, Settings in front): the
	// trial must stop it before its dump, since the phone allows one
	// UiAutomation.
	if err := d.LaunchApp(ctx, "Settings"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Scene(ctx); err != nil {
		t.Fatal(err)
	}
	r := d.HelperTrial(ctx, DefaultTrial)
	t.Logf("trial: dump %+v, push %+v, start %+v, trees %+v, shots %+v, launch %+v, stop %+v", r.Dump, r.Push, r.Start, r.Trees, r.Shots, r.Launch, r.Stop)
	if !r.OK || len(r.Problems) != 0 {
		t.Fatalf("trial on a healthy simulated phone: problems %q", r.Problems)
	}
	if r.Dump.Nodes < 10 || r.Dump.Error != "" {
		t.Errorf("uiautomator dump: %+v", r.Dump)
	}
	if r.Start.PID == 0 || r.Start.SDK != 34 || r.Push.Bytes == 0 {
		t.Errorf("push %+v, start %+v", r.Push, r.Start)
	}
	if r.Trees.Read != 20 || r.Trees.Identical != 20 || r.Trees.Diff != nil {
		t.Errorf("trees: %+v; want 20 read, all identical to the dump", r.Trees)
	}
	if r.Shots.Taken != 5 || r.Shots.Width != 1080 || r.Shots.Height != 2400 || r.Shot == nil {
		t.Errorf("screenshots: %+v; want 5 of 1080x2400", r.Shots)
	}
	// Settings, in front, started 3 times through the helper, then once by monkey.
	if l := r.Launch; l.Package != "com.android.settings" || l.Started != 3 || l.Component != "com.android.settings/com.android.settings.Settings" ||
		l.Monkey <= 0 || l.MonkeyError != "" || l.Skipped != "" {
		t.Errorf("launch: %+v; want Settings started 3 times through the helper and once by monkey", l)
	}
	if m := monkeys(env); len(m) != 1 {
		t.Errorf("monkey commands %q; want the trial's one", m)
	}
	if !r.Stop.SocketGone || !r.Stop.DumpAgain {
		t.Errorf("stop: %+v", r.Stop)
	}
	if pids := env.Phone.HelperPIDs(); len(pids) != 0 {
		t.Errorf("helpers still running after the trial: %v", pids)
	}
	if n := env.Phone.HelperStarts(); n != 2 {
		t.Errorf("helper started %d times; want 2 (the task's, the trial's)", n)
	}
	// The driver goes on through a fresh helper.
	if _, err := d.Scene(ctx); err != nil || d.Observer().Name != "helper" {
		t.Fatalf("after the trial: %v, observer %+v", err, d.Observer())
	}
}

// With the home screen in front (the launcher's package has no launcher
// activity) the launch is skipped, saying how to time one, and the trial
// still passes.
func TestHelperTrialOnTheHomeScreen(t *testing.T) {
	env, d := openSim(t, sim.Config{}, ObserverAuto)
	r := d.HelperTrial(t.Context(), DefaultTrial)
	if !r.OK || r.Launch.Started != 0 || !strings.Contains(r.Launch.Skipped, "has no launcher activity") {
		t.Fatalf("trial on the home screen: ok %v, launch %+v, problems %q", r.OK, r.Launch, r.Problems)
	}
	if m := monkeys(env); len(m) != 0 {
		t.Errorf("monkey ran: %q", m)
	}
}

// Another tool holds the UiAutomation: the trial says so, reads no tree,
// and still checks the stop.
func TestHelperTrialHeld(t *testing.T) {
	_, d := openSim(t, sim.Config{Helper: sim.HelperHeld}, ObserverAuto)
	r := d.HelperTrial(t.Context(), DefaultTrial)
	if r.OK || len(r.Problems) == 0 || !strings.Contains(r.Start.Error, "another tool holds") {
		t.Fatalf("trial with the UiAutomation held: ok %v, start %+v, problems %q", r.OK, r.Start, r.Problems)
	}
	if r.Trees.Read != 0 || r.Shots.Taken != 0 || !r.Stop.SocketGone {
		t.Errorf("trees %+v, shots %+v, stop %+v", r.Trees, r.Shots, r.Stop)
	}
}

// The trial's comparison on real dumps: one changed text is one differing
// node, named; a dump without drawing-order and hint against a tree with
// them differs "only in extras" (the dialect guessed wrong).
func TestDiffTrees(t *testing.T) {
	dump, err := os.ReadFile("../../perception/testdata/uidump/gmail_inbox.xml")
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTrees(dump, dump); d.Differing != 0 || d.OnlyExtras {
		t.Fatalf("a dump against itself: %+v", d)
	}
	nodes := strings.Count(string(dump), "<node ")
	changed := strings.Replace(string(dump), `text="Inbox"`, `text="Inbox!"`, 1)
	if changed == string(dump) {
		t.Fatal("fixture lacks text=\"Inbox\"")
	}
	d := diffTrees(dump, []byte(changed))
	if d.Differing != 1 || d.OnlyExtras || d.DumpNodes != nodes || d.HelperNodes != nodes ||
		!strings.Contains(d.FirstDump, `"Inbox"`) || !strings.Contains(d.FirstHelper, `"Inbox!"`) {
		t.Fatalf("one changed text: %v", d)
	}
	classic := regexp.MustCompile(` (drawing-order|hint)="[^"]*"`).ReplaceAll(dump, nil)
	d = diffTrees(classic, dump)
	if d.Differing != nodes || !d.OnlyExtras {
		t.Fatalf("the same tree with drawing-order and hint: %v; want all %d nodes differing only in extras", d, nodes)
	}
	short := strings.Replace(string(dump), "<node ", "<nod ", 1)
	if d := diffTrees(dump, []byte(short)); d.HelperNodes != nodes-1 || d.OnlyExtras {
		t.Fatalf("a node missing: %v", d)
	}
}

// The helper dies after its first answer: the trial reports the tree it
// could not read, takes no screenshot of a dead helper, and checks the stop.
func TestHelperTrialHelperDies(t *testing.T) {
	_, d := openSim(t, sim.Config{Helper: "crash-after=1"}, ObserverAuto)
	r := d.HelperTrial(t.Context(), DefaultTrial)
	if r.OK || r.Trees.Read != 1 || !strings.Contains(r.Trees.Error, "tree 2: ") {
		t.Fatalf("trial with a helper that dies: ok %v, trees %+v, problems %q", r.OK, r.Trees, r.Problems)
	}
	if r.Shots.Taken != 0 || r.Shots.Error != "not taken: the helper is gone" {
		t.Errorf("screenshots of a dead helper: %+v", r.Shots)
	}
	if !r.Stop.SocketGone || !r.Stop.DumpAgain {
		t.Errorf("stop: %+v", r.Stop)
	}
}
