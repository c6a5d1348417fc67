package apps

import (
	"sort"
	"strconv"
	"strings"

	"phonepilot/internal/editdist"
)

// Installed is an app on one phone: its package and the names it goes by
// there (its launcher labels, or the table's names for the package).
type Installed struct {
	Package string
	Names   []string
}

// String is the app as an error message names it: "Settings (com.android.settings)".
func (a Installed) String() string {
	if len(a.Names) == 0 || a.Names[0] == a.Package {
		return a.Package
	}
	return a.Names[0] + " (" + a.Package + ")"
}

// maxDistance is how far (edit distance over the longer name, on Key
// forms) a name may be from what was asked and still count as close:
// "Setings", "Settigns", "taobao app", "淘宝网" are; "Bluetooth" is not
// close to "Messages".
const maxDistance = 0.5

// Closest returns up to n of the installed apps whose name or package is
// nearest to name, nearest first; none when nothing is close. It is what an
// "app not found" error offers instead.
func Closest(name string, installed []Installed, n int) []Installed {
	key := Key(name)
	if key == "" || n <= 0 {
		return nil
	}
	type scored struct {
		app   Installed
		score float64
	}
	var out []scored
	for _, a := range installed {
		best := 2.0
		cands := append([]string{a.Package}, a.Names...)
		segs := strings.Split(a.Package, ".")
		cands = append(cands, segs[len(segs)-1])
		for _, c := range cands {
			best = min(best, distance(key, Key(c)))
		}
		if best <= maxDistance {
			out = append(out, scored{a, best})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score < out[j].score })
	var res []Installed
	for i := 0; i < len(out) && i < n; i++ {
		res = append(res, out[i].app)
	}
	return res
}

// NamesOf lists the table's names for a package (none when it does not
// know it), so a driver that sees only packages can name apps.
func NamesOf(pkg string) []string {
	if a, ok := byPackage[strings.ToLower(pkg)]; ok {
		return append([]string(nil), a.Names...)
	}
	return nil
}

// distance is 0 for equal keys, small when one contains the other ("taobao"
// in "taobaoapp"), else the rune edit distance over the longer length.
func distance(a, b string) float64 {
	if a == "" || b == "" {
		return 2
	}
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	long := max(len(ra), len(rb))
	if strings.Contains(a, b) || strings.Contains(b, a) {
		short := min(len(ra), len(rb))
		if short*2 >= long || short >= 4 {
			return 0.25 * float64(long-short) / float64(long)
		}
	}
	return float64(editdist.Runes(ra, rb)) / float64(long)
}

// ClosestText is the clause an "app not found" error ends with: the closest
// installed apps, or that none is close (then, on a phone with few apps,
// which are installed).
func ClosestText(name string, installed []Installed) string {
	c := Closest(name, installed, 3)
	if len(c) == 0 {
		s := "no installed app has a name close to " + strconv.Quote(name)
		if len(installed) > 0 && len(installed) <= 8 {
			s += "; installed: " + list(installed)
		}
		return s
	}
	return "the closest installed: " + list(c)
}

func list(as []Installed) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}
