package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"regexp"
	"slices"
	"strings"
	"time"

	"phonepilot/device/adb/helper"
)

// The helper trial is the one check a user runs on a real phone (`phonepilot
// doctor --trial`, docs/device-helper.md): one `uiautomator dump` first (the
// phone allows one UiAutomation, so before the helper holds it), then the
// helper pushed, started, Trees trees read and timed and each compared with
// that dump, Shots screenshots timed, the app in front started Launches
// times through the helper (timed, then once with `monkey` to compare;
// starting the app already in front leaves the screen as it is), the
// helper stopped, and the stop
// checked (its socket gone, uiautomator dumping again). What only a real
// phone can tell (the dump dialect, ART, the timings) comes out of it.

// TrialConfig sizes the trial.
type TrialConfig struct {
	Trees    int // trees read through the helper, each compared with the dump
	Shots    int // screenshots through the helper
	Launches int // starts of the app in front through the helper
}

// DefaultTrial is the trial docs/device-helper.md asks for.
var DefaultTrial = TrialConfig{Trees: 20, Shots: 5, Launches: 3}

// Millis is a duration reported in milliseconds.
type Millis float64

func millis(d time.Duration) Millis { return Millis(float64(d.Microseconds()) / 1000) }

func (m Millis) String() string {
	if m >= 1000 {
		return fmt.Sprintf("%.2f s", float64(m)/1000)
	}
	return fmt.Sprintf("%.0f ms", float64(m))
}

// Spread is the minimum, median and maximum of timed calls.
type Spread struct {
	Min    Millis `json:"min_ms"`
	Median Millis `json:"median_ms"`
	Max    Millis `json:"max_ms"`
}

func spreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Spread{Min: millis(s[0]), Median: millis(s[len(s)/2]), Max: millis(s[len(s)-1])}
}

func (s Spread) String() string {
	return fmt.Sprintf("min %v, median %v, max %v", s.Min, s.Median, s.Max)
}

// TreeDiff is how a helper tree differs from the uiautomator dump.
type TreeDiff struct {
	DumpNodes   int `json:"dump_nodes"`
	HelperNodes int `json:"helper_nodes"`
	// Differing counts the nodes (in order) whose text differs.
	Differing int `json:"differing_nodes"`
	// OnlyExtras: the trees agree once drawing-order and hint are left out
	// (the helper guessed the phone's dump dialect wrong).
	OnlyExtras bool `json:"only_extras"`
	// The first difference: the node's index in document order and both texts.
	FirstIndex  int    `json:"first_index"`
	FirstDump   string `json:"first_dump"`
	FirstHelper string `json:"first_helper"`
}

func (d *TreeDiff) String() string {
	s := fmt.Sprintf("%d of %d nodes differ (the helper has %d)", d.Differing, d.DumpNodes, d.HelperNodes)
	if d.OnlyExtras {
		s += ", only in drawing-order/hint"
	}
	return s + fmt.Sprintf("; first, node %d: dump %q, helper %q", d.FirstIndex, d.FirstDump, d.FirstHelper)
}

// TrialReport is what the trial saw. DumpXML, TreeXML and Shot are the
// material to attach (not in the JSON).
type TrialReport struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`

	Dump struct {
		Took  Millis `json:"took_ms"`
		Nodes int    `json:"nodes"`
		Error string `json:"error,omitempty"`
	} `json:"uiautomator_dump"`
	Push struct {
		Pushed bool   `json:"pushed"` // false: the phone had this dex already
		Bytes  int    `json:"bytes"`
		Took   Millis `json:"took_ms"`
		Error  string `json:"error,omitempty"`
	} `json:"push"`
	Start struct {
		Took  Millis `json:"took_ms"`
		PID   int    `json:"pid,omitempty"`
		Proto int    `json:"protocol,omitempty"`
		SDK   int    `json:"sdk,omitempty"`
		Error string `json:"error,omitempty"`
	} `json:"start"`
	Trees struct {
		Read      int       `json:"read"`
		Identical int       `json:"identical_to_dump"`
		Time      Spread    `json:"time"`
		Diff      *TreeDiff `json:"diff,omitempty"` // the first tree that differs
		Error     string    `json:"error,omitempty"`
	} `json:"trees"`
	Shots struct {
		Taken  int    `json:"taken"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Time   Spread `json:"time"`
		Error  string `json:"error,omitempty"`
	} `json:"screenshots"`
	Launch struct {
		Package   string `json:"package,omitempty"`   // the app in front, started again
		Component string `json:"component,omitempty"` // the activity the helper started
		Started   int    `json:"started"`             // starts through the helper
		Time      Spread `json:"time"`                // through the helper
		// Monkey is one `monkey` launch of the same app (what device/adb
		// runs without the helper), for comparison.
		Monkey      Millis `json:"monkey_ms,omitempty"`
		MonkeyError string `json:"monkey_error,omitempty"`
		Skipped     string `json:"skipped,omitempty"`
		Error       string `json:"error,omitempty"`
	} `json:"launch"`
	Stop struct {
		SocketGone bool   `json:"socket_gone"`
		DumpAgain  bool   `json:"uiautomator_dumps_again"`
		Error      string `json:"error,omitempty"`
	} `json:"stop"`

	DumpXML []byte      `json:"-"`
	TreeXML []byte      `json:"-"`
	Shot    *image.RGBA `json:"-"`
}

func (r *TrialReport) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// HelperTrial runs the trial. The phone should stay on one still screen.
// Any helper of this Device is stopped first and the helper is stopped at
// the end whatever happened; the driver's observer starts afresh after it.
func (d *Device) HelperTrial(ctx context.Context, cfg TrialConfig) *TrialReport {
	r := &TrialReport{}
	l := &d.helper
	l.mu.Lock()
	defer l.mu.Unlock()
	d.stopHelperLocked(ctx)
	l.off, l.restarted = false, false

	// The dump first: while the helper runs, uiautomator cannot connect.
	start := time.Now()
	dump, err := d.trialDump(ctx)
	r.Dump.Took = millis(time.Since(start))
	if err != nil {
		r.Dump.Error = err.Error()
		r.problem("uiautomator dump: %v", err)
	}
	r.DumpXML = dump
	if dump != nil {
		r.Dump.Nodes = len(nodeTags(dump)) - 1
	}

	start = time.Now()
	pushed, err := d.pushHelper(ctx)
	r.Push.Took, r.Push.Pushed, r.Push.Bytes = millis(time.Since(start)), pushed, len(helper.Dex())
	if err != nil {
		r.Push.Error = err.Error()
		r.problem("push: %v", err)
		return r.done()
	}
	start = time.Now()
	err = d.startHelperLocked(ctx)
	r.Start.Took = millis(time.Since(start))
	if err != nil {
		r.Start.Error = err.Error()
		r.problem("start: %v", err)
		d.trialStop(ctx, r)
		return r.done()
	}
	c := l.proc.client
	h := c.Hello()
	r.Start.PID, r.Start.Proto, r.Start.SDK = h.PID, h.Proto, h.SDK

	var times []time.Duration
	for i := 0; i < cfg.Trees; i++ {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Stall)
		start := time.Now()
		xml, _, err := c.Tree(cctx, helper.TreeDefault)
		took := time.Since(start)
		cancel()
		if err != nil {
			r.Trees.Error = fmt.Sprintf("tree %d: %v", i+1, err)
			r.problem("tree %d of %d: %v", i+1, cfg.Trees, err)
			break
		}
		times = append(times, took)
		r.Trees.Read++
		if r.TreeXML == nil {
			r.TreeXML = xml
		}
		if dump == nil {
			continue
		}
		if bytes.Equal(xml, dump) {
			r.Trees.Identical++
		} else if r.Trees.Diff == nil {
			r.Trees.Diff = diffTrees(dump, xml)
		}
	}
	r.Trees.Time = spreadOf(times)
	if dump != nil && r.Trees.Read > 0 && r.Trees.Identical < r.Trees.Read {
		msg := fmt.Sprintf("%d of %d trees differ from the uiautomator dump", r.Trees.Read-r.Trees.Identical, r.Trees.Read)
		if r.Trees.Diff != nil {
			msg += ": " + r.Trees.Diff.String()
		}
		r.problem("%s", msg)
	}

	times = times[:0]
	size, sizeErr := d.ScreenSize(ctx)
	shots := cfg.Shots
	if c.Broken() {
		// The helper died reading trees: a screenshot would only repeat it.
		r.Shots.Error = "not taken: the helper is gone"
		shots = 0
	}
	for i := 0; i < shots; i++ {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Screenshot)
		start := time.Now()
		img, err := c.Screenshot(cctx)
		took := time.Since(start)
		cancel()
		if err != nil {
			r.Shots.Error = fmt.Sprintf("screenshot %d: %v", i+1, err)
			r.problem("screenshot %d of %d: %v", i+1, cfg.Shots, err)
			break
		}
		times = append(times, took)
		r.Shots.Taken++
		if r.Shot == nil {
			r.Shot = img
			r.Shots.Width, r.Shots.Height = img.Rect.Dx(), img.Rect.Dy()
			if sizeErr == nil && !sameSize(size, img.Rect) {
				r.problem("the screenshot is %dx%d; the display is %dx%d", img.Rect.Dx(), img.Rect.Dy(), size.Width, size.Height)
			}
			if oneColour(img) {
				r.problem("the screenshot is all one colour (a secure window, or the capture failed)")
			}
		}
	}
	r.Shots.Time = spreadOf(times)
	if cfg.Launches > 0 && !c.Broken() {
		d.trialLaunch(ctx, c, cfg.Launches, r)
	}
	d.trialStop(ctx, r)
	return r.done()
}

// trialLaunch starts the app in front n times through the helper, timed,
// then once with monkey. An app in front with no launcher activity (the
// home screen) skips it: nothing to start that leaves the screen alone.
func (d *Device) trialLaunch(ctx context.Context, c *helper.Client, n int, r *TrialReport) {
	cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Stall)
	pkg, err := c.FrontApp(cctx)
	cancel()
	if err != nil || pkg == "" {
		r.Launch.Error = fmt.Sprintf("the app in front: %q, %v", pkg, err)
		r.problem("launch: %s", r.Launch.Error)
		return
	}
	r.Launch.Package = pkg
	var times []time.Duration
	for i := 0; i < n; i++ {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Stall)
		start := time.Now()
		comp, err := c.Launch(cctx, pkg)
		took := time.Since(start)
		cancel()
		var he *helper.Error
		if errors.As(err, &he) && he.Code == helper.CodeNotFound && i == 0 {
			r.Launch.Skipped = pkg + " has no launcher activity (a home screen?): open Settings and run the trial again to time a launch"
			return
		}
		if err != nil {
			r.Launch.Error = fmt.Sprintf("launch %d of %s: %v", i+1, pkg, err)
			r.problem("%s", r.Launch.Error)
			break
		}
		times = append(times, took)
		r.Launch.Started++
		r.Launch.Component = comp
	}
	r.Launch.Time = spreadOf(times)
	if r.Launch.Started == 0 {
		return
	}
	start := time.Now()
	if err := d.monkeyLaunch(ctx, pkg); err != nil {
		r.Launch.MonkeyError = err.Error()
		return
	}
	r.Launch.Monkey = millis(time.Since(start))
}

func (r *TrialReport) done() *TrialReport {
	r.OK = len(r.Problems) == 0
	return r
}

// trialStop stops the helper and checks it is gone: its socket no longer in
// /proc/net/unix, and uiautomator able to dump again (the UiAutomation freed).
func (d *Device) trialStop(ctx context.Context, r *TrialReport) {
	d.stopHelperLocked(ctx)
	unix, err := d.run(ctx, d.cfg.Timeouts.Command, "cat /proc/net/unix")
	if err != nil {
		r.Stop.Error = "cat /proc/net/unix: " + err.Error()
		r.problem("stop: %s", r.Stop.Error)
		return
	}
	r.Stop.SocketGone = !bytes.Contains(unix, []byte("@"+helper.SocketName()))
	if !r.Stop.SocketGone {
		r.problem("stop: @%s is still in /proc/net/unix", helper.SocketName())
	}
	if _, err := d.trialDump(ctx); err != nil {
		r.Stop.Error = "uiautomator dump after the stop: " + err.Error()
		r.problem("stop: %s", r.Stop.Error)
		return
	}
	r.Stop.DumpAgain = true
}

// trialDump is one `uiautomator dump`: the XML document alone (what the
// phone writes to its file), without what uiautomator prints around it.
func (d *Device) trialDump(ctx context.Context) ([]byte, error) {
	raw, err := d.dump(ctx, false)
	if err != nil {
		return nil, err
	}
	begin := bytes.Index(raw, []byte("<?xml"))
	end := bytes.LastIndex(raw, []byte("</hierarchy>"))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("no XML document in its output: %s", clip(raw))
	}
	return raw[begin : end+len("</hierarchy>")], nil
}

var extrasRE = regexp.MustCompile(` (drawing-order|hint)="[^"]*"`)

// diffTrees compares the helper's tree with the dump, node by node.
func diffTrees(dump, tree []byte) *TreeDiff {
	a, b := nodeTags(dump), nodeTags(tree)
	d := &TreeDiff{DumpNodes: len(a) - 1, HelperNodes: len(b) - 1, FirstIndex: -1}
	onlyExtras := true
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x == y {
			continue
		}
		d.Differing++
		if d.FirstIndex < 0 {
			d.FirstIndex, d.FirstDump, d.FirstHelper = i, x, y
		}
		if extrasRE.ReplaceAllString(x, "") != extrasRE.ReplaceAllString(y, "") {
			onlyExtras = false
		}
	}
	d.OnlyExtras = onlyExtras && d.Differing > 0
	return d
}

// nodeTags is the document split before each "<node ": the header (index
// 0), then each node's text up to the next node.
func nodeTags(xml []byte) []string {
	parts := strings.Split(string(xml), "<node ")
	for i := 1; i < len(parts); i++ {
		parts[i] = "<node " + parts[i]
	}
	return parts
}

func sameSize(s ScreenSize, r image.Rectangle) bool {
	return (r.Dx() == s.Width && r.Dy() == s.Height) || (r.Dx() == s.Height && r.Dy() == s.Width)
}

// oneColour reports whether every pixel of img is the same.
func oneColour(img *image.RGBA) bool {
	p := img.Pix
	for i := 4; i+4 <= len(p); i += 4 {
		if p[i] != p[0] || p[i+1] != p[1] || p[i+2] != p[2] || p[i+3] != p[3] {
			return false
		}
	}
	return true
}
