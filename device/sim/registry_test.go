package sim

import "testing"

// TestInstalledAppsAreWhole: each simulated app is registered whole in
// installedApps: its constructor makes the app of its package, its key is
// its own (the state JSON carries its state there), it has a label in both
// locales and a version, so an app cannot forget an entry in a second list.
func TestInstalledAppsAreWhole(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	st := stateOf(t, p)
	keys := map[string]bool{}
	for _, sa := range installedApps {
		if got := sa.new(p).pkg(); got != sa.pkg {
			t.Errorf("the constructor registered for %s makes %s", sa.pkg, got)
		}
		if sa.key == "" || keys[sa.key] || st[sa.key] == nil {
			t.Errorf("%s: key %q is empty, taken twice or not in the state JSON", sa.pkg, sa.key)
		}
		keys[sa.key] = true
		if v := strings2["app."+sa.key]; v[0] == "" || v[1] == "" {
			t.Errorf("%s: no label app.%s in both locales (i18n.go)", sa.pkg, sa.key)
		}
		p.mu.Lock()
		v, ok := p.versionLocked(sa.pkg)
		p.mu.Unlock()
		if !ok || v.name == "" || v.code == 0 {
			t.Errorf("%s: no version", sa.pkg)
		}
	}
	if _, ok := st[""]; ok {
		t.Errorf(`the state JSON has an app's state under the key ""`)
	}
}
