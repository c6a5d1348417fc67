package phonebench

import (
	"encoding/json"
	"io"
	"slices"
	"sort"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/phonebench/tasks"
)

// Record is one run: one task, locale, profile, seed and policy, judged on
// the simulator's state.
type Record struct {
	Task    string     `json:"task"`
	Kind    tasks.Kind `json:"kind"`
	Locale  string     `json:"locale"`
	Profile string     `json:"profile"`
	// Platform is the phone the run was on (android, ios).
	Platform string `json:"platform"`
	Seed     int64  `json:"seed"`
	Policy   string `json:"policy"`
	Goal     string `json:"goal"`
	Success  bool   `json:"success"`
	// Why says what the judge saw when Success is false.
	Why    string           `json:"why,omitempty"`
	Status lifecycle.Status `json:"status"`
	Cause  lifecycle.Cause  `json:"cause,omitempty"`
	Reason string           `json:"reason,omitempty"`
	Steps  int              `json:"steps"`
	// SimMS is the run's simulated time; FloorMS the oracle's on the same
	// task, seed and profile (see Floor).
	SimMS   int64 `json:"sim_ms"`
	FloorMS int64 `json:"floor_ms"`
	Dumps   int   `json:"dumps"`
	// Reads are the screen reads the run made: trees and screenshots.
	Reads int `json:"reads"`
	// Calls are the model calls the policy made (0 for rule); ModelMS is
	// Calls × the model latency, added to SimMS for the time a user feels.
	Calls   int   `json:"calls"`
	ModelMS int64 `json:"model_ms"`
	// Observer is the path the policy read the phone by ("own" for a
	// peer that reads its own way).
	Observer string `json:"observer"`
	// Tokens: the provider's reported usage when it reports one (input
	// counts every input token, the cache columns the parts of it read
	// from and written to the prompt cache); otherwise (the reference
	// policy's stand-in model) a count of what the model would be sent,
	// with a real tokenizer and the provider's image rule (ai.Estimate),
	// marked TokensEstimated. The other policies use none.
	InputTokens      int64 `json:"input_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	TokensEstimated  bool  `json:"tokens_estimated,omitempty"`
	Approvals        int   `json:"approvals"`
	// UnapprovedIrreversible counts irreversible actions (orders, messages,
	// deletions) that reached the phone beyond the approvals given: read
	// from the simulator's state, never from the agent. Always 0.
	UnapprovedIrreversible int `json:"unapproved_irreversible"`
	// FailedSteps are the last steps of a run that did not succeed.
	FailedSteps []StepLine `json:"failed_steps,omitempty"`
	// CPUMS is the real time the run took.
	CPUMS int64 `json:"cpu_ms"`
}

// StepLine is one step as the report shows it.
type StepLine struct {
	Number int    `json:"number"`
	Intent string `json:"intent"`
	Call   string `json:"call"`
	Status string `json:"status"`
	Result string `json:"result,omitempty"`
}

// maxFailedSteps is how many of a failed run's last steps are kept.
const maxFailedSteps = 10

func lastSteps(lines []StepLine) []StepLine {
	if len(lines) > maxFailedSteps {
		lines = lines[len(lines)-maxFailedSteps:]
	}
	return lines
}

// Ratio is the run's time over the floor (0 when there is no floor).
func (r Record) Ratio() float64 {
	if r.FloorMS <= 0 {
		return 0
	}
	return float64(r.SimMS) / float64(r.FloorMS)
}

// Summary is one policy on one profile (and locale, or "all").
type Summary struct {
	Policy    string  `json:"policy"`
	Profile   string  `json:"profile"`
	Locale    string  `json:"locale"` // "all" for both
	Runs      int     `json:"runs"`
	Successes int     `json:"successes"`
	Success   float64 `json:"success"` // Successes / Runs
	MeanSteps float64 `json:"mean_steps"`
	// TimeRatio is Σ sim_ms / Σ floor_ms over the successful runs
	// (OKSimMS / OKFloorMS): how far above the limit the policy is when it
	// works. 1 when both are 0 (the clean phone costs no time at all); 0
	// when only the floor is 0 (undefined: compare OKSimMS).
	TimeRatio float64 `json:"time_ratio"`
	OKSimMS   int64   `json:"ok_sim_ms"`
	OKFloorMS int64   `json:"ok_floor_ms"`
	MeanSimMS float64 `json:"mean_sim_ms"`
	MeanDumps float64 `json:"mean_dumps"`
	// ReadsPerStep and CallsPerStep are Σ reads and Σ model calls over Σ
	// steps; MeanTotalMS is the mean of sim_ms + model_ms (what a user
	// waits, with the model's time).
	ReadsPerStep float64 `json:"reads_per_step"`
	CallsPerStep float64 `json:"calls_per_step"`
	MeanTotalMS  float64 `json:"mean_total_ms"`
	// Vs is, for the reference policy, how it compares with each peer
	// loop over the runs both got right.
	Vs         []Versus `json:"vs,omitempty"`
	Unapproved int      `json:"unapproved_irreversible"`
	// VsPeer is, for the reference policy, Σ peer-loop sim_ms / Σ
	// reference sim_ms over the runs (same task, locale, seed, profile)
	// both policies got right: how many times faster reference is (0 when
	// reference took no time at all: compare the sums).
	VsPeer     float64 `json:"vs_peer_loop,omitempty"`
	PeerPaired int     `json:"vs_peer_loop_runs,omitempty"`
	PairRefMS  int64   `json:"vs_peer_loop_reference_ms,omitempty"`
	PairPeerMS int64   `json:"vs_peer_loop_peer_ms,omitempty"`
	Skipped    int     `json:"skipped,omitempty"`
}

// Report is a whole phonebench run.
type Report struct {
	Started  time.Time `json:"started"`
	Seeds    int       `json:"seeds"`
	Policies []string  `json:"policies"`
	Profiles []string  `json:"profiles"`
	Locales  []string  `json:"locales"`
	Tasks    []string  `json:"tasks"`
	// PeerDelay is the peer loop's fixed sleep after each action.
	PeerDelayMS int64 `json:"peer_delay_ms"`
	// Observer is the path phonepilot's policies read the phone by;
	// ModelLatencyMS one model call's time.
	Observer       string `json:"observer"`
	ModelLatencyMS int64  `json:"model_latency_ms"`
	// Vision: reference planned with the screenshot (Options.Vision).
	Vision  bool      `json:"vision,omitempty"`
	Summary []Summary `json:"summary"`
	Records []Record  `json:"records"`
	// Skipped counts runs not made, per policy (rule: tasks without a
	// phrasing it covers).
	Skipped map[string]int `json:"skipped,omitempty"`
}

// WriteJSON writes the report, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// pairKey names a run regardless of its policy.
type pairKey struct {
	task, locale, profile string
	seed                  int64
}

func keyOf(r Record) pairKey { return pairKey{r.Task, r.Locale, r.Profile, r.Seed} }

// Summarise computes the summary per policy × profile, for each locale and
// for both together ("all"), in the order of the report's policies,
// profiles and locales.
func Summarise(records []Record, policies, profiles, locales []string, skipped map[string]int) []Summary {
	var out []Summary
	locs := append([]string{"all"}, locales...)
	if len(locales) == 1 {
		locs = locales
	}
	for _, pol := range policies {
		for _, prof := range profiles {
			for _, loc := range locs {
				sel := func(r Record) bool {
					return r.Policy == pol && r.Profile == prof && (loc == "all" || r.Locale == loc)
				}
				s := summarise(records, sel)
				s.Policy, s.Profile, s.Locale = pol, prof, loc
				if loc == locs[0] {
					s.Skipped = skipped[pol]
				}
				if pol == PolicyReference {
					s.VsPeer, s.PeerPaired, s.PairRefMS, s.PairPeerMS = vsPeer(records, prof, loc)
					for _, peer := range PeerPolicies {
						if slices.Contains(policies, peer) {
							s.Vs = append(s.Vs, versus(records, peer, prof, loc))
						}
					}
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func summarise(records []Record, sel func(Record) bool) Summary {
	var s Summary
	var steps, dumps, reads, calls int
	var sim, total, okSim, okFloor int64
	for _, r := range records {
		if !sel(r) {
			continue
		}
		s.Runs++
		steps += r.Steps
		dumps += r.Dumps
		reads += r.Reads
		calls += r.Calls
		sim += r.SimMS
		total += r.SimMS + r.ModelMS
		s.Unapproved += r.UnapprovedIrreversible
		if r.Success {
			s.Successes++
			okSim += r.SimMS
			okFloor += r.FloorMS
		}
	}
	if s.Runs == 0 {
		return s
	}
	n := float64(s.Runs)
	s.Success = float64(s.Successes) / n
	s.MeanSteps = float64(steps) / n
	s.MeanDumps = float64(dumps) / n
	s.MeanSimMS = float64(sim) / n
	s.MeanTotalMS = float64(total) / n
	if steps > 0 {
		s.ReadsPerStep = float64(reads) / float64(steps)
		s.CallsPerStep = float64(calls) / float64(steps)
	}
	s.OKSimMS, s.OKFloorMS = okSim, okFloor
	switch {
	case okFloor > 0:
		s.TimeRatio = float64(okSim) / float64(okFloor)
	case okSim == 0 && s.Successes > 0:
		s.TimeRatio = 1
	}
	return s
}

// vsPeer is Σ peer-loop time / Σ reference time over the runs both got
// right, how many such pairs there are, and the two sums.
func vsPeer(records []Record, profile, locale string) (float64, int, int64, int64) {
	ref := map[pairKey]Record{}
	for _, r := range records {
		if r.Policy == PolicyReference && r.Success && r.Profile == profile && (locale == "all" || r.Locale == locale) {
			ref[keyOf(r)] = r
		}
	}
	var refMS, peerMS int64
	n := 0
	for _, r := range records {
		if r.Policy != PolicyPeerLoop || !r.Success {
			continue
		}
		if x, ok := ref[keyOf(r)]; ok {
			refMS += x.SimMS
			peerMS += r.SimMS
			n++
		}
	}
	if refMS == 0 {
		return 0, n, refMS, peerMS
	}
	return float64(peerMS) / float64(refMS), n, refMS, peerMS
}

// Versus is reference against one peer loop over the runs (same task,
// locale, profile, seed) both got right: how many times faster reference
// is on the phone's time alone (Ratio) and with the model's time
// (RatioWithModel), and the peer's success over all its runs.
//
// AtFloor is the peer's time over the floors of the same runs: the most
// any agent could be faster than the peer there on the phone's time (an
// agent at its floor on every run), so a target above it cannot be met;
// 0 when the runs have no floor (the fault-free phone).
type Versus struct {
	Peer           string  `json:"peer"`
	Runs           int     `json:"runs"`
	Ratio          float64 `json:"ratio"`
	RatioWithModel float64 `json:"ratio_with_model"`
	AtFloor        float64 `json:"at_floor"`
	PeerSuccess    float64 `json:"peer_success"`
}

func versus(records []Record, peer, profile, locale string) Versus {
	v := Versus{Peer: peer}
	ref := map[pairKey]Record{}
	in := func(r Record) bool { return r.Profile == profile && (locale == "all" || r.Locale == locale) }
	for _, r := range records {
		if r.Policy == PolicyReference && r.Success && in(r) {
			ref[keyOf(r)] = r
		}
	}
	var refMS, peerMS, refTotal, peerTotal, floorMS int64
	runs, ok := 0, 0
	for _, r := range records {
		if r.Policy != peer || !in(r) {
			continue
		}
		runs++
		if !r.Success {
			continue
		}
		ok++
		if x, found := ref[keyOf(r)]; found {
			refMS += x.SimMS
			peerMS += r.SimMS
			refTotal += x.SimMS + x.ModelMS
			peerTotal += r.SimMS + r.ModelMS
			floorMS += x.FloorMS
			v.Runs++
		}
	}
	if runs > 0 {
		v.PeerSuccess = float64(ok) / float64(runs)
	}
	if refMS > 0 {
		v.Ratio = float64(peerMS) / float64(refMS)
	}
	if refTotal > 0 {
		v.RatioWithModel = float64(peerTotal) / float64(refTotal)
	}
	if floorMS > 0 {
		v.AtFloor = float64(peerMS) / float64(floorMS)
	}
	return v
}

// sortRecords orders records by task, locale, profile, seed, then policy
// in the report's order, so a report reads the same whatever the workers'
// timing.
func sortRecords(rs []Record, policies, profiles []string) {
	pi := indexOf(policies)
	fi := indexOf(profiles)
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		switch {
		case a.Task != b.Task:
			return a.Task < b.Task
		case a.Locale != b.Locale:
			return a.Locale < b.Locale
		case a.Profile != b.Profile:
			return fi[a.Profile] < fi[b.Profile]
		case a.Seed != b.Seed:
			return a.Seed < b.Seed
		}
		return pi[a.Policy] < pi[b.Policy]
	})
}

func indexOf(ss []string) map[string]int {
	m := make(map[string]int, len(ss))
	for i, s := range ss {
		m[s] = i
	}
	return m
}
