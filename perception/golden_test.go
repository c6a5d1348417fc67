package perception

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"phonepilot/scene"
)

// UPDATE_GOLDEN=1 rewrites testdata/golden from the current code.
var updateGolden = os.Getenv("UPDATE_GOLDEN") == "1"

// goldenJSON is the Scene's JSON with one element per line, so a golden
// diff points at the element that changed. It is still valid JSON.
func goldenJSON(t *testing.T, sc *scene.Scene) []byte {
	t.Helper()
	data, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(`},{"index":`), []byte("},\n{\"index\":"))
	data = bytes.Replace(data, []byte(`"elements":[{`), []byte("\"elements\":[\n{"), 1)
	return append(data, '\n')
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the current output (UPDATE_GOLDEN=1 rewrites it after review)\n--- got ---\n%s", path, firstDiff(got, want))
	}
}

// firstDiff shows the first differing line.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return ""
}

// TestGolden pins the prompt listing and the JSON form of every fixture.
func TestGolden(t *testing.T) {
	for _, f := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".xml")
		t.Run(name, func(t *testing.T) {
			sc := mustParse(t, readFixture(t, name+".xml"))
			checkGolden(t, filepath.Join("testdata", "golden", name+".prompt.txt"), []byte(sc.Listing()))
			js := goldenJSON(t, sc)
			checkGolden(t, filepath.Join("testdata", "golden", name+".json"), js)

			var back scene.Scene
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatalf("golden JSON does not load: %v", err)
			}
			if !reflect.DeepEqual(&back, sc) {
				t.Error("JSON round trip changed the scene")
			}
		})
	}
}

// TestListingIsCompact reports the listing/dump byte ratio per fixture and
// holds the average under 25% (the listing is paid for every step).
func TestListingIsCompact(t *testing.T) {
	var sum float64
	files := fixtures(t)
	for _, f := range files {
		data := readFixture(t, filepath.Base(f))
		sc := mustParse(t, data)
		l := sc.Listing()
		r := float64(len(l)) / float64(len(data))
		sum += r
		t.Logf("%-40s dump %7d B  nodes %4d  listed %3d  prompt %5d B  ratio %5.1f%%  ~%d tokens",
			filepath.Base(f), len(data), len(sc.Elements), len(sc.Listed()), len(l), 100*r, scene.EstimateTokens(l))
		if !utf8.ValidString(l) {
			t.Errorf("%s: listing is not valid UTF-8", f)
		}
	}
	avg := sum / float64(len(files))
	t.Logf("average ratio %.1f%% over %d dumps", 100*avg, len(files))
	if avg >= 0.25 {
		t.Errorf("average listing/dump ratio %.1f%%, want < 25%%", 100*avg)
	}
}

// TestListingKeepsEveryVisibleLabelledClickable: a model can act on every
// clickable thing a person can see and read, through its own line or a
// listed clickable ancestor that carries its label.
func TestListingKeepsEveryVisibleLabelledClickable(t *testing.T) {
	for _, f := range fixtures(t) {
		sc := mustParse(t, readFixture(t, filepath.Base(f)))
		listing := sc.Listing()
		listed := map[int]bool{}
		for _, e := range sc.Listed() {
			listed[e.Index] = true
			if e.Bounds.Empty() {
				t.Errorf("%s: zero-area [%d] listed", filepath.Base(f), e.Index)
			}
		}
		for _, e := range sc.Elements {
			if !e.Clickable || e.Label() == "" || !sc.Visible(e) || listed[e.Index] {
				continue
			}
			// Not listed: allowed only for status/navigation bar noise.
			if e.Package != "com.android.systemui" {
				t.Errorf("%s: visible labelled clickable [%d] %q missing:\n%s", filepath.Base(f), e.Index, e.Label(), listing)
			}
		}
	}
}
