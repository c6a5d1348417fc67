package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage"
)

// arrival is one request that reached the listener (before the door), and
// what the door or the API answered.
type arrival struct {
	Method, Path, Host, Origin, Site, Type string
	Status                                 int
}

// arrivals records what reaches a listener.
type arrivals struct {
	mu   sync.Mutex
	list []arrival
}

func (a *arrivals) add(x arrival) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = append(a.list, x)
}

func (a *arrivals) all() []arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]arrival(nil), a.list...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// rebindPath is where, before the attacker's name is re-pointed at
// 127.0.0.1, the attacker's own server answered with its page.
const rebindPath = "/__attacker__/rebind"

// attackForm is one HTML form a page auto-submits.
type attackForm struct {
	Action, Enctype string
	Fields          [][2]string // name, value
}

// attackFetch is one fetch a page makes.
type attackFetch struct {
	URL, Mode, Type, Body string
}

// The attacks, in a real Chromium, against the real serve wiring
// (the door, the API, the task service, the simulator) with a purchase
// waiting for a person's approval:
//
//   - a page on another origin (another loopback port) auto-submits HTML
//     forms (text/plain crafted to be JSON, urlencoded, multipart) and makes
//     no-cors and cors fetches to create tasks, run a flow, and approve,
//     deny, answer and cancel the waiting purchase;
//   - a DNS-rebinding page: a name (rebind.test, mapped to 127.0.0.1 with
//     Chromium's --host-resolver-rules) whose page came from the attacker
//     and whose same-origin requests now reach the server: it reads the
//     task list and the waiting task and posts JSON to create, approve and
//     cancel.
//
// Every attack reaches the listener (recorded before the door, so a browser
// that blocked it cannot make this pass) and is refused (403, 415 or 421);
// the rebinding page reads nothing of the tasks; afterwards there is still
// exactly one task, waiting on the same approval, no decision recorded and
// no order on the phone.
func TestAttackPagesInChromium(t *testing.T) {
	t.Parallel() // mostly waiting on the browser
	store := openTestSQLite(t)
	log := warnLog(t)
	devs := newServeDevices(deviceOptions{SimLocale: "en", SimSeed: 1, Logger: log, ADBServer: "127.0.0.1:1"})
	var seen arrivals
	attackerPage := "" // the rebinding page, set once the victim's task exists
	var pageMu sync.Mutex
	base := serveOverAs(t, store, devs, &runtimeRunner{base: runtime.Defaults(), log: log}, 100*time.Millisecond, log,
		func(door http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == rebindPath {
					// The attacker's server, before the name pointed here.
					pageMu.Lock()
					page := attackerPage
					pageMu.Unlock()
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					w.Header().Set("Cache-Control", "no-store")
					fmt.Fprint(w, page)
					return
				}
				sw := &statusWriter{ResponseWriter: w}
				door.ServeHTTP(sw, r)
				seen.add(arrival{r.Method, r.URL.Path, r.Host, r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Content-Type"), sw.status})
			})
		})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))

	// The person's purchase, waiting for their approval of Buy now.
	const victimDev = "sim:victim"
	victim := postTask(t, base, purchaseGoal, victimDev)
	waiting := waitServed(t, base, victim.ID, lifecycle.WaitingApproval)
	if waiting.Pending == nil || waiting.Pending.Element == nil {
		t.Fatalf("the purchase waits with pending %+v", waiting.Pending)
	}
	before := len(seen.all())

	// The other-origin page (the worst case: it knows the task's id).
	tasksGoal := purchaseGoal + " now"
	flowYAML := "version: 1\nname: f\ngoal: open Settings\nsteps:\n  - intent: open Settings\n    tool: launch_app\n    args: {app: Settings}\n#"
	jsonForm := func(action, prefix string) attackForm {
		// Sent as text/plain, name=value is the JSON object {prefix="}.
		return attackForm{action, "text/plain", [][2]string{{prefix, `"}`}}}
	}
	var forms []attackForm
	var fetches []attackFetch
	for _, target := range []string{"http://localhost:" + port, "http://127.0.0.1:" + port} {
		id := target + "/v1/tasks/" + victim.ID
		forms = append(forms,
			jsonForm(target+"/v1/tasks", `{"device":"sim:attack","goal":"`+tasksGoal),
			attackForm{target + "/v1/tasks", "application/x-www-form-urlencoded", [][2]string{{"goal", tasksGoal}, {"device", "sim:attack"}}},
			attackForm{target + "/v1/tasks", "multipart/form-data", [][2]string{{"goal", tasksGoal}, {"device", "sim:attack"}}},
			jsonForm(target+"/v1/flows/run", `{"device":"sim:attack","flow":"`+strings.ReplaceAll(flowYAML, "\n", `\n`)),
			jsonForm(id+"/approve", `{"note":"ok`),
			jsonForm(id+"/deny", `{"note":"no`),
			jsonForm(id+"/answer", `{"text":"yes`),
			jsonForm(id+"/cancel", `{"note":"x`),
		)
		for _, f := range []struct{ path, body string }{
			{"/v1/tasks", `{"device":"sim:attack","goal":"` + tasksGoal + `"}`},
			{"/v1/flows/run", `{"device":"sim:attack","flow":` + string(mustJSON(t, flowYAML)) + `}`},
			{"/v1/tasks/" + victim.ID + "/approve", `{"note":"ok"}`},
			{"/v1/tasks/" + victim.ID + "/deny", `{"note":"no"}`},
			{"/v1/tasks/" + victim.ID + "/answer", `{"text":"yes"}`},
			{"/v1/tasks/" + victim.ID + "/cancel", `{}`},
		} {
			fetches = append(fetches,
				attackFetch{target + f.path, "no-cors", "text/plain", f.body},
				attackFetch{target + f.path, "no-cors", "", f.body},
				attackFetch{target + f.path, "cors", "application/json", f.body}) // preflighted
		}
	}
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := crossPage.Execute(w, map[string]any{"Forms": forms, "Fetches": fetches}); err != nil {
			t.Errorf("attacker page: %v", err)
		}
	}))
	t.Cleanup(attacker.Close)

	// The rebinding page.
	rebindOrigin := "http://rebind.test:" + port
	var page strings.Builder
	if err := rebindPage.Execute(&page, map[string]any{"ID": victim.ID, "Goal": tasksGoal}); err != nil {
		t.Fatal(err)
	}
	pageMu.Lock()
	attackerPage = page.String()
	pageMu.Unlock()

	ctx := newChromium(t, 120*time.Second, chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))
	if err := chromedp.Do(ctx, chromedp.Navigate(attacker.URL+"/")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	sent, err := chromedp.Run(ctx, chromedp.Poll[string](`document.title === "sent" ? document.body.dataset.fetches : ""`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("the other-origin page did not finish its attacks: %v", err)
	}
	t.Logf("other-origin page, fetch outcomes: %s", sent)

	if err := chromedp.Do(ctx, chromedp.Navigate(rebindOrigin+rebindPath)); err != nil {
		t.Fatalf("browser: %v", err)
	}
	js, err := chromedp.Run(ctx, chromedp.Poll[string](`document.title === "done" ? JSON.stringify(window.results) : ""`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		where, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " " + document.title + " " + JSON.stringify(window.results || null)`))
		t.Fatalf("the rebinding page did not finish: %v; %.2000s", err, where)
	}
	var results []struct {
		Method, Path, Body string
		Status             int
	}
	if err := json.Unmarshal([]byte(js), &results); err != nil {
		t.Fatalf("rebinding results %s: %v", js, err)
	}
	if len(results) < 6 {
		t.Fatalf("the rebinding page made %d requests: %s", len(results), js)
	}
	for _, r := range results {
		if r.Status != http.StatusMisdirectedRequest || strings.Contains(r.Body, victim.ID) || strings.Contains(r.Body, "Taobao") {
			t.Errorf("rebinding page: %s %s = %d %.200q, want 421 and nothing of the tasks", r.Method, r.Path, r.Status, r.Body)
		}
	}

	// Everything the pages sent reached the listener, and was refused.
	deadline := time.Now().Add(20 * time.Second)
	var attacks []arrival
	for {
		attacks = seen.all()[before:]
		if missing := unarrived(attacks, forms, fetches, port); len(missing) == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d attacks never reached the listener (the browser blocked them, so this test would not show the door): %v", len(missing), missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rebound := 0
	for _, a := range attacks {
		switch {
		case a.Method == http.MethodOptions: // a cors preflight: the browser stops there
		case strings.HasPrefix(a.Host, "rebind.test"):
			rebound++
			if a.Status != http.StatusMisdirectedRequest {
				t.Errorf("rebinding %s %s (Host %s) = %d, want 421", a.Method, a.Path, a.Host, a.Status)
			}
		case a.Status != http.StatusForbidden && a.Status != http.StatusUnsupportedMediaType:
			t.Errorf("other-origin %s %s (Origin %q, Sec-Fetch-Site %q, %q) = %d, want 403 or 415", a.Method, a.Path, a.Origin, a.Site, a.Type, a.Status)
		}
	}
	if rebound < len(results) {
		t.Errorf("%d rebinding requests reached the listener, the page made %d", rebound, len(results))
	}
	t.Logf("%d attack requests reached the listener (%d forms, %d fetches, %d rebinding)", len(attacks), len(forms), len(fetches), rebound)

	// Nothing changed: one task, still waiting on the same approval, no
	// decision, no order.
	pg, err := store.ListTasks(t.Context(), storage.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Tasks) != 1 || pg.Tasks[0].ID != victim.ID {
		var goals []string
		for _, tk := range pg.Tasks {
			goals = append(goals, tk.ID+" "+tk.Goal+" on "+tk.Device)
		}
		t.Errorf("tasks after the attacks: %v, want only the person's purchase", goals)
	}
	after := waitServed(t, base, victim.ID, lifecycle.WaitingApproval, lifecycle.Completed, lifecycle.Failed, lifecycle.Cancelled)
	if after.Status != lifecycle.WaitingApproval || after.Pending == nil || after.Pending.Step != waiting.Pending.Step || after.Pending.Element == nil || after.Pending.Element.Label != waiting.Pending.Element.Label {
		t.Errorf("the purchase after the attacks: %s (%s), pending %+v; want still waiting on step %d %q", after.Status, after.Cause, after.Pending, waiting.Pending.Step, waiting.Pending.Element.Label)
	}
	if n := len(servedOrders(t, base, victimDev)); n != 0 {
		t.Errorf("%d orders on the phone after the attacks, want 0", n)
	}
	// The person denies: the first decision recorded is theirs.
	if code, _ := postDecision(t, base, victim.ID, "deny", `{"note":"mine"}`); code != http.StatusOK {
		t.Fatalf("the person's deny = %d", code)
	}
	waitServed(t, base, victim.ID, lifecycle.Failed)
	if ds := decisions(t, base, victim.ID); len(ds) != 1 || ds[0]["note"] != "mine" {
		t.Errorf("decisions on the purchase: %v, want only the person's deny", ds)
	}
	if n := len(servedOrders(t, base, victimDev)); n != 0 {
		t.Errorf("%d orders on the phone, want 0", n)
	}
}

// unarrived lists the pages' attacks with no request at the listener.
func unarrived(got []arrival, forms []attackForm, fetches []attackFetch, port string) []string {
	count := map[string]int{}
	for _, a := range got {
		count[a.Method+" "+a.Host+a.Path]++
	}
	want := map[string]int{}
	for _, f := range forms {
		want["POST "+strings.TrimPrefix(f.Action, "http://")]++
	}
	for _, f := range fetches {
		m := "POST "
		if f.Mode == "cors" {
			m = "OPTIONS "
		}
		want[m+strings.TrimPrefix(f.URL, "http://")]++
	}
	var missing []string
	for k, n := range want {
		if count[k] < n {
			missing = append(missing, fmt.Sprintf("%s (%d of %d)", k, count[k], n))
		}
	}
	return missing
}

// crossPage is the other-origin attacker's page: every form into its own
// frame, every fetch; it sets its title to "sent" when all were sent.
var crossPage = template.Must(template.New("cross").Parse(`<!doctype html>
<html><head><title>cute cats</title></head><body>
{{range $i, $f := .Forms}}<iframe name="f{{$i}}"></iframe>
<form method="POST" target="f{{$i}}" action="{{$f.Action}}" enctype="{{$f.Enctype}}">{{range $f.Fields}}<input type="hidden" name="{{index . 0}}" value="{{index . 1}}">{{end}}</form>
{{end}}
<script>
const fetches = {{.Fetches}};
for (const f of document.forms) f.submit();
Promise.all(fetches.map((f) => {
  const opt = {method: "POST", mode: f.Mode, credentials: "include", body: f.Body, headers: {}};
  if (f.Type) opt.headers["Content-Type"] = f.Type;
  else opt.body = new Blob([f.Body]);
  return fetch(f.URL, opt).then((r) => r.type + ":" + r.status, (e) => "refused:" + e.name);
})).then((out) => { document.body.dataset.fetches = out.join(" "); document.title = "sent"; });
</script></body></html>`))

// rebindPage is the rebinding attacker's page: its name now points at
// 127.0.0.1, so its same-origin requests reach the server and it could
// read the answers; it keeps what it got in window.results.
var rebindPage = template.Must(template.New("rebind").Parse(`<!doctype html>
<html><head><title>loading</title></head><body><script>
const id = {{.ID}};
const tries = [
  ["GET", "/v1/tasks"],
  ["GET", "/v1/tasks/" + id],
  ["GET", "/v1/devices"],
  ["GET", "/"],
  ["POST", "/v1/tasks", {goal: {{.Goal}}, device: "sim:attack"}],
  ["POST", "/v1/tasks/" + id + "/approve", {note: "ok"}],
  ["POST", "/v1/tasks/" + id + "/answer", {text: "yes"}],
  ["POST", "/v1/tasks/" + id + "/cancel", {}],
];
window.results = [];
(async () => {
  for (const [method, path, body] of tries) {
    const opt = {method, signal: AbortSignal.timeout(5000)};
    if (body) { opt.body = JSON.stringify(body); opt.headers = {"Content-Type": "application/json", "X-Phonepilot-Client": "web"}; }
    try {
      const r = await fetch(path, opt);
      window.results.push({Method: method, Path: path, Status: r.status, Body: (await r.text()).slice(0, 2000)});
    } catch (e) {
      window.results.push({Method: method, Path: path, Status: 0, Body: String(e)});
    }
  }
  document.title = "done";
})();
</script></body></html>`))
