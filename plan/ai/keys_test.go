package ai_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	"phonepilot/tools"
)

// A device that declares its keys (an iPhone: home, enter, delete) is
// offered only those: press_key's description and enum never name back or
// app_switch, which the phone refuses. Without a declaration every key is.
func TestToolListOffersOnlyTheDevicesKeys(t *testing.T) {
	pressKey := func(keys []device.Key) (string, []string) {
		t.Helper()
		fp := &fakeProvider{script: []func(ai.Request) (ai.Reply, error){answer(`tap {"element": 2}`)}}
		p, _ := newPlanner(t, fp, func(c *ai.Config) {
			if keys != nil {
				c.Tools = tools.SpecsFor(keys)
			}
		})
		if _, err := p.Plan(context.Background(), input(aitest.TaobaoHome())); err != nil {
			t.Fatal(err)
		}
		for _, ts := range fp.reqs[0].Tools {
			if ts.Name != tools.PressKey {
				continue
			}
			var s struct {
				Properties struct {
					Key struct {
						Enum []string `json:"enum"`
					} `json:"key"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(ts.Schema, &s); err != nil {
				t.Fatalf("press_key schema: %v\n%s", err, ts.Schema)
			}
			return ts.Description, s.Properties.Key.Enum
		}
		t.Fatal("no press_key offered")
		return "", nil
	}
	desc, enum := pressKey([]device.Key{device.KeyHome, device.KeyEnter, device.KeyDelete})
	if !slices.Equal(enum, []string{"home", "enter", "delete"}) || strings.Contains(desc, "back") || strings.Contains(desc, "app_switch") {
		t.Errorf("an iPhone is offered %q: %v", desc, enum)
	}
	if desc, enum := pressKey(nil); len(enum) != len(device.Keys) || !strings.Contains(desc, "back (go back") {
		t.Errorf("a phone with every key is offered %q: %v", desc, enum)
	}
}
