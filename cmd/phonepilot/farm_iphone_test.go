package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"phonepilot/lifecycle"
)

// A farm with an iPhone: one worker offers the simulated iPhone (sim:ios-…,
// WDA's API in process) beside a simulated Android phone; the devices show
// platform=ios and platform=android; tasks routed by {"platform":"ios"} run
// on the iPhone (its Taobao's bundle id in the result) and by
// {"platform":"android"} on the other, each to completion.
func TestFarmRoutesTasksToAnIPhone(t *testing.T) {
	db := farmDB(t)
	bin := buildPhonepilot(t)
	startWorkerProcess(t, bin, db, "wi", "--devices", "sim:ios-wi,sim:wa", "--heartbeat", "300ms", "--lease", "5s")
	front := startServeProcess(t, bin, db).url
	waitFor(t, "2 idle devices", 60*time.Second, func() bool {
		n := 0
		for _, d := range farmDevicesOf(t, front) {
			if d.State == "idle" {
				n++
			}
		}
		return n == 2
	})
	for _, d := range farmDevicesOf(t, front) {
		want := map[string]string{"sim:ios-wi": "ios", "sim:wa": "android"}[d.Name]
		if d.Labels["platform"] != want || (want == "ios") != (d.Labels["ios"] != "") {
			t.Errorf("device %s: labels %v, want platform=%s", d.Name, d.Labels, want)
		}
	}
	type sub struct{ id, platform string }
	var subs []sub
	for _, platform := range []string{"ios", "android", "ios"} {
		var got farmTask
		req := map[string]any{"goal": "open Taobao and search Mac mini", "device": "any", "labels": map[string]string{"platform": platform}}
		if code := farmPost(t, front+"/v1/tasks", req, &got); code != http.StatusAccepted {
			t.Fatalf("submit on platform=%s: status %d", platform, code)
		}
		subs = append(subs, sub{got.ID, platform})
	}
	for _, s := range subs {
		var tk farmTask
		waitFor(t, "task "+s.id+" to end", 90*time.Second, func() bool {
			farmGet(t, front+"/v1/tasks/"+s.id, &tk)
			return tk.Status.Terminal()
		})
		wantDev, wantPkg := map[string]string{"ios": "sim:ios-wi", "android": "sim:wa"}[s.platform], map[string]string{"ios": "com.taobao.taobao4iphone", "android": "com.taobao.taobao"}[s.platform]
		if tk.Status != lifecycle.Completed || tk.Device != wantDev || !strings.Contains(tk.Reason, "("+wantPkg+")") {
			t.Errorf("platform=%s task: %s on %s (%s), want completed on %s showing %s", s.platform, tk.Status, tk.Device, tk.Reason, wantDev, wantPkg)
		}
	}
}
