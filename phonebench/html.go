package phonebench

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

//go:embed report.html.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	// pct never rounds up to 100%: 99.8% is not all.
	"pct": func(x float64) string {
		if x >= 1 {
			return "100%"
		}
		return fmt.Sprintf("%.1f%%", math.Min(99.9, math.Round(1000*x)/10))
	},
	"ratio": ratioText,
	"secs":  func(ms float64) string { return fmt.Sprintf("%.1f s", ms/1000) },
	"float": func(n int64) float64 { return float64(n) },
	"sub":   func(a, b int) int { return a - b },
	"cellColor": func(s Summary) template.CSS {
		if s.Runs == 0 {
			return "background:#f1f3f5;color:#adb5bd"
		}
		return template.CSS(successColor(s.Success))
	},
}).Parse(reportTemplate))

// successColor maps a success rate to a cell colour: red below 50%,
// through amber, to green at 100%.
func successColor(x float64) string {
	x = math.Max(0, math.Min(1, x))
	// hue 0 (red) at ≤ 80%, 130 (green) at 100%: the top is where a
	// benchmark's differences are (97% is yellow-green, 90% amber).
	h := 130 * math.Pow(math.Max(0, 1-(1-x)/0.2), 1.5)
	return fmt.Sprintf("background:hsl(%.0f,65%%,80%%);color:#1b1f23", h)
}

// htmlReport is what the template shows.
type htmlReport struct {
	R        *Report
	Headline []headline
	Grid     []gridRow
	Profiles []string
	Bars     barChart
	PerTask  []taskRow
	Cols     []taskCol
	Failures []failureGroup
	Total    int
	Failed   int
}

type headline struct {
	Value, Label string
	Good         bool
	Target       string
}

type gridRow struct {
	Policy string
	Cells  []Summary
}

type taskCol struct{ Policy, Profile string }

type taskRow struct {
	Task  string
	Kind  string
	Cells []taskCell
}

type taskCell struct {
	Runs, OK int
	Style    template.CSS
	Title    string
}

// barChart is time per task against the floor on one profile.
type barChart struct {
	Profile  string
	Policies []string
	Colors   map[string]string
	Rows     []barRow
	Width    int
	Height   int
	Ticks    []barTick
}

type barRow struct {
	Task string
	X    float64 // where the task's name ends
	Y    int
	H    float64
	Bars []bar
}

type bar struct {
	Policy     string
	X, W, Y, H float64
	Color      string
	Label      string
	Missing    bool
}

type barTick struct {
	X     float64
	Label string
	Floor bool // the 1× line
}

type failureGroup struct {
	Why  string
	Runs []Record
}

// floorColor is the floor's bar.
const floorColor = "#adb5bd"

var policyColors = map[string]string{
	PolicyRule: "#7950f2", PolicyReference: "#1c7ed6", PolicyPeerLoop: "#f08c00", PolicyAI: "#2b8a3e",
	PolicyDroidrunLoop: "#e03131", PolicyAutoGLMLoop: "#c2255c", PolicyMidsceneLoop: "#0c8599", PolicyMobileUseLoop: "#5c940d",
}

// WriteHTML writes the report as one self-contained HTML page (inline CSS
// and SVG, nothing fetched): success per policy and profile, time per task
// against the floor, and every failure with its cause and its last steps.
func (r *Report) WriteHTML(w io.Writer) error {
	v := htmlReport{R: r, Profiles: r.Profiles, Total: len(r.Records)}
	for _, rec := range r.Records {
		if !rec.Success {
			v.Failed++
		}
	}
	v.Headline = r.headlines()
	for _, pol := range r.Policies {
		row := gridRow{Policy: pol}
		for _, prof := range r.Profiles {
			s, _ := r.summary(pol, prof, r.summaryLocales()[0])
			s.Policy, s.Profile = pol, prof
			row.Cells = append(row.Cells, s)
		}
		v.Grid = append(v.Grid, row)
	}
	v.Bars = r.bars()
	v.Cols, v.PerTask = r.perTask()
	v.Failures = r.failureGroups()
	return reportTmpl.Execute(w, v)
}

// barProfile is the profile the time chart shows: realistic when run, else
// the first profile with a floor.
func (r *Report) barProfile() string {
	for _, p := range r.Profiles {
		if p == "realistic" {
			return p
		}
	}
	for _, p := range r.Profiles {
		if p != ProfileClean {
			return p
		}
	}
	if len(r.Profiles) > 0 {
		return r.Profiles[0]
	}
	return ""
}

func (r *Report) headlines() []headline {
	var out []headline
	add := func(pol, prof string) {
		s, ok := r.summary(pol, prof, r.summaryLocales()[0])
		if !ok || s.Runs == 0 {
			return
		}
		target := ""
		good := true
		if pol == PolicyReference {
			switch prof {
			case "realistic":
				target, good = "target ≥ 98%", s.Success >= 0.98
			case "hostile":
				target, good = "target ≥ 90%", s.Success >= 0.90
			}
		}
		out = append(out, headline{Value: fmt.Sprintf("%.1f%%", 100*s.Success), Label: pol + " success, " + prof, Good: good, Target: target})
		if pol == PolicyReference && (prof == "realistic" || prof == ProfileClean) && s.TimeRatio > 0 {
			out = append(out, headline{Value: ratioText(s.TimeRatio), Label: "reference time / floor, " + prof,
				Good: s.TimeRatio <= 1.3, Target: "target ≤ 1.3×"})
		}
		if pol == PolicyReference && prof == "realistic" && s.PeerPaired > 0 {
			peer, _ := r.summary(PolicyPeerLoop, prof, r.summaryLocales()[0])
			out = append(out, headline{Value: ratioText(s.VsPeer), Label: "reference faster than peer-loop, " + prof,
				Good:   s.VsPeer >= 2 && s.Success >= peer.Success,
				Target: fmt.Sprintf("target ≥ 2× at ≥ success (%.1f%% vs %.1f%%)", 100*s.Success, 100*peer.Success)})
		}
	}
	add(PolicyReference, "realistic")
	add(PolicyReference, "hostile")
	if s, ok := r.summary(PolicyReference, "realistic", r.summaryLocales()[0]); ok {
		for _, v := range s.Vs {
			out = append(out, headline{Value: ratioText(v.Ratio) + " / " + ratioText(v.RatioWithModel),
				Label:  "reference faster than " + v.Peer + ", realistic (phone time / with model)",
				Good:   v.Ratio > 1 && v.RatioWithModel > 1,
				Target: fmt.Sprintf("faster; any agent at most %s on the phone's time; %s succeeds %.1f%% (observer %s, model %s a call)", ratioText(v.AtFloor), v.Peer, 100*v.PeerSuccess, r.Observer, time.Duration(r.ModelLatencyMS)*time.Millisecond)})
		}
	}
	add(PolicyPeerLoop, "realistic")
	n := r.Unapproved()
	out = append(out, headline{Value: fmt.Sprint(n), Label: "unapproved irreversible actions", Good: n == 0, Target: "must be 0"})
	return out
}

// bars lays out the time chart: per task (in two columns) one bar per
// policy, its time over the floor (Σ time / Σ floor of its successful runs
// on the chart's profile), against a dashed line at 1× — the floor.
func (r *Report) bars() barChart {
	prof := r.barProfile()
	c := barChart{Profile: prof, Colors: policyColors}
	ran := map[string]bool{}
	for _, rec := range r.Records {
		if rec.Profile == prof {
			ran[rec.Policy] = true
		}
	}
	for _, pol := range r.Policies {
		if ran[pol] {
			c.Policies = append(c.Policies, pol)
		}
	}
	type acc struct{ sim, floor, n, runs float64 }
	sums := map[[2]string]*acc{}
	for _, rec := range r.Records {
		if rec.Profile != prof {
			continue
		}
		k := [2]string{rec.Task, rec.Policy}
		if sums[k] == nil {
			sums[k] = &acc{}
		}
		sums[k].runs++
		if rec.Success {
			sums[k].sim += float64(rec.SimMS)
			sums[k].floor += float64(rec.FloorMS)
			sums[k].n++
		}
	}
	maxRatio := 2.0
	for _, a := range sums {
		if a.floor > 0 {
			maxRatio = math.Max(maxRatio, a.sim/a.floor)
		}
	}
	maxRatio = math.Min(math.Ceil(maxRatio), 6)
	const colW, labelW, chartW, barH, gap, top = 650.0, 205.0, 360.0, 10.0, 9.0, 24.0
	var tasks []string
	for _, t := range r.Tasks {
		for _, pol := range c.Policies {
			if sums[[2]string{t, pol}] != nil {
				tasks = append(tasks, t)
				break
			}
		}
	}
	half := (len(tasks) + 1) / 2
	c.Height = 0
	for col := 0; col < 2; col++ {
		x0 := float64(col) * colW
		y := top
		end := min(len(tasks), (col+1)*half)
		for _, t := range tasks[min(len(tasks), col*half):end] {
			row := barRow{Task: t, Y: int(y), X: x0 + labelW - 6}
			n := 0
			for _, pol := range c.Policies {
				a := sums[[2]string{t, pol}]
				if a == nil {
					continue
				}
				b := bar{Policy: pol, X: x0 + labelW, Y: y + float64(n)*barH, H: barH - 2, Color: policyColors[pol]}
				switch {
				case a.n == 0:
					b.Missing, b.Label = true, pol+": no success"
				case a.floor == 0:
					b.Missing, b.Label = true, fmt.Sprintf("%s: %.1f s (floor 0)", pol, a.sim/a.n/1000)
				default:
					ratio := a.sim / a.floor
					b.W = math.Max(1, math.Min(ratio, maxRatio)/maxRatio*chartW)
					b.Label = fmt.Sprintf("%.2f×", ratio)
				}
				row.Bars = append(row.Bars, b)
				n++
			}
			row.H = float64(n) * barH
			c.Rows = append(c.Rows, row)
			y += float64(n)*barH + gap
		}
		c.Height = max(c.Height, int(y))
		for k := 0.0; k <= maxRatio+1e-9; k++ {
			c.Ticks = append(c.Ticks, barTick{X: x0 + labelW + k/maxRatio*chartW, Label: fmt.Sprintf("%g×", k), Floor: k == 1})
		}
	}
	c.Width = int(2 * colW)
	return c
}

// niceStep is a tick step of 1, 2 or 5 × 10^n giving 4–10 ticks.
func niceStep(max float64) float64 {
	if max <= 0 {
		return 1
	}
	raw := max / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// perTask is the success of every task under every policy and profile.
func (r *Report) perTask() ([]taskCol, []taskRow) {
	var cols []taskCol
	for _, pol := range r.Policies {
		for _, prof := range r.Profiles {
			cols = append(cols, taskCol{pol, prof})
		}
	}
	idx := map[taskCol]int{}
	for i, c := range cols {
		idx[c] = i
	}
	rows := map[string]*taskRow{}
	for _, rec := range r.Records {
		row := rows[rec.Task]
		if row == nil {
			row = &taskRow{Task: rec.Task, Kind: string(rec.Kind), Cells: make([]taskCell, len(cols))}
			rows[rec.Task] = row
		}
		c := &row.Cells[idx[taskCol{rec.Policy, rec.Profile}]]
		c.Runs++
		if rec.Success {
			c.OK++
		}
	}
	var out []taskRow
	for _, t := range r.Tasks {
		row := rows[t]
		if row == nil {
			continue
		}
		for i := range row.Cells {
			c := &row.Cells[i]
			if c.Runs == 0 {
				c.Style = "background:#f1f3f5"
				c.Title = fmt.Sprintf("%s · %s %s: not run", t, cols[i].Policy, cols[i].Profile)
				continue
			}
			c.Style = template.CSS(successColor(float64(c.OK) / float64(c.Runs)))
			c.Title = fmt.Sprintf("%s · %s %s: %d/%d", t, cols[i].Policy, cols[i].Profile, c.OK, c.Runs)
		}
		out = append(out, *row)
	}
	return cols, out
}

// failureGroups gathers the failed runs by what the judge saw, the largest
// group first.
func (r *Report) failureGroups() []failureGroup {
	by := map[string][]Record{}
	for _, rec := range r.Records {
		if rec.Success {
			continue
		}
		why := rec.Why
		if i := strings.Index(why, ": "); i > 0 && strings.HasPrefix(why, "completed, but") {
			why = why[:i]
		}
		key := fmt.Sprintf("%s — %s", rec.Policy, why)
		by[key] = append(by[key], rec)
	}
	var out []failureGroup
	for k, rs := range by {
		out = append(out, failureGroup{Why: k, Runs: rs})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Runs) != len(out[j].Runs) {
			return len(out[i].Runs) > len(out[j].Runs)
		}
		return out[i].Why < out[j].Why
	})
	return out
}
