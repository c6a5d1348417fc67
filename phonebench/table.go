package phonebench

import (
	"fmt"
	"io"
	"strings"
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
// policy's success, mean steps, time against the floor, and reference
// against the peer loop; then each failure in one line.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "phonebench: %d tasks × %s × %d seeds, simulated time; time/floor over successful runs\n",
		len(r.Tasks), strings.Join(r.Locales, "+"), r.Seeds)
	fmt.Fprintf(w, "%-10s %-6s %-10s %9s %7s %6s %10s %10s %8s\n", "profile", "locale", "policy", "success", "", "steps", "mean time", "time/floor", "vs peer")
	for _, prof := range r.Profiles {
		for _, loc := range r.summaryLocales() {
			for _, pol := range r.Policies {
				s, ok := r.summary(pol, prof, loc)
				if !ok || s.Runs == 0 {
					continue
				}
				vs := ""
				if pol == PolicyReference && s.PeerPaired > 0 {
					vs = ratioText(s.VsPeer)
				}
				fmt.Fprintf(w, "%-10s %-6s %-10s %4d/%-4d %6.1f%% %6.1f %9.2fs %10s %8s\n", prof, loc, pol,
					s.Successes, s.Runs, 100*s.Success, s.MeanSteps, s.MeanSimMS/1000, ratioText(s.TimeRatio), vs)
			}
		}
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
