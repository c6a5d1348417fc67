package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"phonepilot/device"
)

// driftTimeout bounds Drift's questions: a notice must not hold a run.
const driftTimeout = 5 * time.Second

// Drift says how dev differs from the device the flow was recorded on: an
// app at another version (or not installed), another locale. Each
// difference is one phrase; none when the flow records nothing to compare,
// the device cannot say (it is not a device.Facts), or nothing differs. A
// difference is a notice, not a failure: the replay finds its targets by
// what survives a layout change, and --heal mends a step that no longer
// fits.
func Drift(ctx context.Context, rec *Recorded, dev device.Device) []string {
	f, ok := dev.(device.Facts)
	if rec == nil || !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, driftTimeout)
	defer cancel()
	var out []string
	for _, a := range rec.Apps {
		if a.Version == "" {
			continue
		}
		name, _, err := f.AppVersion(ctx, a.Package)
		switch {
		case errors.Is(err, device.ErrAppNotFound):
			out = append(out, fmt.Sprintf("%s is not installed (recorded on %s)", a.Package, a.Version))
		case err != nil:
			// Cannot say: no notice.
		case name != a.Version:
			out = append(out, fmt.Sprintf("%s is %s here, recorded on %s", a.Package, name, a.Version))
		}
	}
	if rec.Locale != "" {
		if l, err := f.Locale(ctx); err == nil && l != "" && !sameLocale(l, rec.Locale) {
			out = append(out, fmt.Sprintf("the locale is %s here, recorded on %s", l, rec.Locale))
		}
	}
	return out
}

// sameLocale compares BCP 47 tags ("zh-CN", "zh_CN"); a tag without a
// region ("en", as older flows recorded the simulator's) matches any
// region of its language.
func sameLocale(a, b string) bool {
	norm := func(s string) (lang, region string) {
		s = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "_", "-"))
		lang, region, _ = strings.Cut(s, "-")
		return lang, region
	}
	la, ra := norm(a)
	lb, rb := norm(b)
	return la == lb && (ra == "" || rb == "" || ra == rb)
}

// DriftNotice is Drift's differences as the one line a run prints, or ""
// when there are none.
func DriftNotice(diffs []string) string {
	if len(diffs) == 0 {
		return ""
	}
	return "note: this device differs from the one the flow was recorded on: " + strings.Join(diffs, "; ") +
		". A step that no longer fits fails; --heal --planner ai mends it."
}
