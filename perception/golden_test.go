package perception

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"phonepilot/internal/golden"
	"phonepilot/scene"
)

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

// TestGolden pins the prompt listing and the JSON form of every fixture.
func TestGolden(t *testing.T) {
	for _, f := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".xml")
		t.Run(name, func(t *testing.T) {
			sc := mustParse(t, readFixture(t, name+".xml"))
			golden.Check(t, filepath.Join("testdata", "golden", name+".prompt.txt"), []byte(sc.Listing()))
			js := goldenJSON(t, sc)
			golden.Check(t, filepath.Join("testdata", "golden", name+".json"), js)

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
