package perception

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"phonepilot/scene"
)

// FuzzParse feeds the parser arbitrary bytes, seeded with every real dump
// and the device's error lines. Whatever it gets, Parse must not panic,
// must return either a Scene or a typed error, and a Scene it returns must
// be a consistent tree whose listing, fingerprint and JSON work.
func FuzzParse(f *testing.F) {
	for _, file := range fixtures(f) {
		f.Add(readFixture(f, baseName(file)))
	}
	f.Add([]byte("ERROR: could not get idle state.\n"))
	f.Add([]byte("ERROR: null root node returned by UiTestAutomationBridge.\n"))
	f.Add(minimalDump(`text="a &amp; b&#10;c" content-desc="null"`))
	f.Add([]byte(`<hierarchy rotation="0"/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data, Options{})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) && !Retryable(err) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if pe != nil && (pe.Offset < 0 || pe.Offset > len(data)) {
				t.Fatalf("offset %d outside input of %d bytes", pe.Offset, len(data))
			}
			return
		}
		if len(sc.Elements) == 0 {
			t.Fatal("scene without elements and without error")
		}
		for i, e := range sc.Elements {
			if e.Index != i || e.Parent >= i || e.Parent < -1 {
				t.Fatalf("element %d: index %d parent %d", i, e.Index, e.Parent)
			}
		}
		_ = sc.Listing()
		_ = sc.Fingerprint()
		sc.Find(scene.Selector{Value: "a"})
		js, err := json.Marshal(sc)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back scene.Scene
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("unmarshal own JSON: %v", err)
		}
		if !reflect.DeepEqual(&back, sc) {
			t.Fatal("JSON round trip changed the scene")
		}
	})
}
