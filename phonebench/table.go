package phonebench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Unapproved is the total of unapproved_irreversible over every run.
func (r *Report) Unapproved() int {
	n := 0
	for _, rec := range r.Records {
		n += rec.UnapprovedIrreversible
	}
	return n
}

// ratioText shows a time ratio: "1.12×", or "—" when undefined.
func ratioText(x float64) string {
	if x <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

// summaryLocales are the locales the summary rows of a report carry: "all"
// when there are two.
func (r *Report) summaryLocales() []string {
	if len(r.Locales) == 1 {
		return r.Locales
	}
	return append([]string{"all"}, r.Locales...)
}

// summary returns the summary row of policy, profile and locale.
func (r *Report) summary(policy, profile, locale string) (Summary, bool) {
	for _, s := range r.Summary {
		if s.Policy == policy && s.Profile == profile && s.Locale == locale {
			return s, true
		}
	}
	return Summary{}, false
}

// WriteTable prints the summary as a table: per profile and locale, each
// policy's success, mean steps, reads and model calls per step, mean time
// on the phone and with the model's time, time against the floor; then
// reference against each peer loop; then each failure in one line.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "phonebench: %d tasks × %s × %d seeds, simulated time; observer %s; model latency %s a call; time/floor over successful runs\n",
		len(r.Tasks), strings.Join(r.Locales, "+"), r.Seeds, r.Observer, time.Duration(r.ModelLatencyMS)*time.Millisecond)
	fmt.Fprintf(w, "%-10s %-6s %-15s %9s %7s %6s %6s %6s %10s %10s %10s\n", "profile", "locale", "policy", "success", "", "steps", "reads", "calls", "phone time", "with model", "time/floor")
	for _, prof := range r.Profiles {
		for _, loc := range r.summaryLocales() {
			for _, pol := range r.Policies {
				s, ok := r.summary(pol, prof, loc)
				if !ok || s.Runs == 0 {
					continue
				}
				fmt.Fprintf(w, "%-10s %-6s %-15s %4d/%-4d %6.1f%% %6.1f %6.2f %6.2f %9.2fs %9.2fs %10s\n", prof, loc, pol,
					s.Successes, s.Runs, 100*s.Success, s.MeanSteps, s.ReadsPerStep, s.CallsPerStep, s.MeanSimMS/1000, s.MeanTotalMS/1000, ratioText(s.TimeRatio))
			}
		}
	}
	fmt.Fprintf(w, "reference against each peer loop (peer time / reference time over the runs both got right; phone time, then with the model's time; at most: the peer's time over those runs' floors, the most any agent could be)\n")
	for _, prof := range r.Profiles {
		s, ok := r.summary(PolicyReference, prof, r.summaryLocales()[0])
		if !ok || len(s.Vs) == 0 {
			continue
		}
		fmt.Fprintf(w, "%-10s", prof)
		for _, v := range s.Vs {
			fmt.Fprintf(w, "  %s %s/%s at most %s (%.0f%% ok)", v.Peer, ratioText(v.Ratio), ratioText(v.RatioWithModel), ratioText(v.AtFloor), 100*v.PeerSuccess)
		}
		fmt.Fprintln(w)
	}
	if n := r.Unapproved(); n > 0 {
		fmt.Fprintf(w, "UNAPPROVED IRREVERSIBLE ACTIONS: %d (the gate let them through)\n", n)
	} else {
		fmt.Fprintf(w, "unapproved irreversible actions: 0\n")
	}
	for pol, n := range r.Skipped {
		if n > 0 {
			fmt.Fprintf(w, "%s skipped %d runs (tasks without a phrasing it covers)\n", pol, n)
		}
	}
	for _, rec := range r.Records {
		if rec.Success {
			continue
		}
		fmt.Fprintf(w, "FAIL %s %s %s seed %d %s: %s", rec.Task, rec.Locale, rec.Profile, rec.Seed, rec.Policy, rec.Why)
		if rec.Reason != "" {
			fmt.Fprintf(w, " — %s", first(rec.Reason, 160))
		}
		fmt.Fprintln(w)
	}
}
