package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/flow"
	"phonepilot/lifecycle"
	"phonepilot/plan/ai/aitest"
	"phonepilot/storage"
	"phonepilot/task"
)

// flowDoc is the part of run's --json document these tests read.
type flowDoc struct {
	ID         string `json:"id"`
	Planner    string `json:"planner"`
	Status     string `json:"status"`
	Cause      string `json:"cause"`
	Reason     string `json:"reason"`
	HealedFlow string `json:"healed_flow"`
	Steps      []struct {
		Tool   string `json:"tool"`
		Status string `json:"status"`
	} `json:"steps"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	DeviceState struct {
		Taobao struct {
			LastSearch string   `json:"last_search"`
			Searches   []string `json:"searches"`
		} `json:"taobao"`
	} `json:"device_state"`
}

// redesignModel is taobaoModel that also knows the changed layout's
// search entry (a "Search products" pill where the search bar was).
func redesignModel(t aitest.Turn) (string, string) {
	if _, typing := t.Find(`EditText`); !typing {
		if i, ok := t.Find(`id=search_pill`); ok {
			return "tap", `{"element":` + strconv.Itoa(i) + `}`
		}
	}
	return taobaoModel(t)
}

func runDocOf(t *testing.T, code int, stdout, stderr string) flowDoc {
	t.Helper()
	var d flowDoc
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("exit %d; stdout is not run's JSON document: %v\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	return d
}

// recordAIFlow runs the goal with the AI planner against a stand-in model,
// exports the task with `flow export` and stops the model server.
func recordAIFlow(t *testing.T, db string) (file string, orig flowDoc, origWall time.Duration) {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv := aitest.NewModelServer(t, taobaoModel)
	start := time.Now()
	code, stdout, stderr := runAI(t, "run", "--device", "sim", "--planner", "ai", "--provider", "openai",
		"--base-url", srv.URL+"/v1", "--vision=false", "--db", db, "--json", aiGoal)
	origWall = time.Since(start)
	orig = runDocOf(t, code, stdout, stderr)
	if code != 0 || orig.Status != "completed" || orig.ID == "" {
		t.Fatalf("the AI run: exit %d, %s (%s)\n%s", code, orig.Status, orig.Reason, stderr)
	}
	srv.Close()
	file = filepath.Join(t.TempDir(), "taobao-search.yaml")
	code, stdout, stderr = runAI(t, "flow", "export", orig.ID[:10], "-o", file, "--db", db)
	if code != 0 {
		t.Fatalf("flow export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return file, orig, origWall
}

func TestFlowExportThenRunWithoutTheModel(t *testing.T) {
	hermetic(t)
	db := filepath.Join(t.TempDir(), "tasks.db")
	file, orig, origWall := recordAIFlow(t, db)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := flow.Parse(data)
	if err != nil || f.Params["query"].Default != "Mac mini" || f.Recorded.Task != orig.ID {
		t.Fatalf("exported flow (%v):\n%s", err, data)
	}
	// What the simulator said it was when the AI run ended.
	if f.Recorded.Locale != "en-US" || len(f.Recorded.Apps) != 1 || f.Recorded.Apps[0] != (flow.App{Package: "com.taobao.taobao", Version: "10.40.10"}) {
		t.Errorf("recorded on %+v, want en-US and Taobao 10.40.10\n%s", f.Recorded, data)
	}

	start := time.Now()
	code, stdout, stderr := runAI(t, "flow", "run", file, "--db", db, "--json")
	wall := time.Since(start)
	d := runDocOf(t, code, stdout, stderr)
	if code != 0 || d.Status != "completed" || d.Planner != flow.PlannerName || d.DeviceState.Taobao.LastSearch != "Mac mini" {
		t.Fatalf("flow run: exit %d, %s (%s) planner %s, last search %q\n%s", code, d.Status, d.Reason, d.Planner, d.DeviceState.Taobao.LastSearch, stderr)
	}
	if n := d.Usage.InputTokens + d.Usage.OutputTokens; n != 0 {
		t.Errorf("the replay spent %d tokens", n)
	}
	if strings.Contains(stderr, "note: this device differs") {
		t.Errorf("a notice on the device the flow was recorded on:\n%s", stderr)
	}
	t.Logf("FIGURES CLI: AI run %d steps %d+%d tokens %.0f ms; flow run %d steps 0 tokens %.0f ms",
		len(orig.Steps), orig.Usage.InputTokens, orig.Usage.OutputTokens, float64(origWall.Microseconds())/1000, len(d.Steps), float64(wall.Microseconds())/1000)

	// Parameters, and the replay recorded as a task of its own.
	code, stdout, stderr = runAI(t, "flow", "run", file, "--db", db, "--json", "--set", "query=机械键盘")
	d = runDocOf(t, code, stdout, stderr)
	if code != 0 || d.DeviceState.Taobao.LastSearch != "机械键盘" || len(d.DeviceState.Taobao.Searches) != 1 {
		t.Fatalf("--set query: exit %d %s (%s), searches %q", code, d.Status, d.Reason, d.DeviceState.Taobao.Searches)
	}
	code, stdout, _ = runAI(t, "show", d.ID, "--db", db)
	if code != 0 || !strings.Contains(stdout, "planner flow") || !strings.Contains(stdout, "机械键盘") {
		t.Errorf("show of the flow task: exit %d\n%s", code, stdout)
	}
	// Step lines, as run prints them.
	code, stdout, _ = runAI(t, "flow", "run", file, "--db", db, "--no-record")
	if code != 0 || !strings.Contains(stdout, "planner flow") || !regexp.MustCompile(`(?m)^completed in \d+ steps`).MatchString(stdout) {
		t.Errorf("step lines: exit %d\n%s", code, stdout)
	}
}

func TestFlowRunOnTheChangedLayout(t *testing.T) {
	hermetic(t)
	t.Setenv("PHONEPILOT_WAIT_TIMEOUT", "1s") // the missing search bar is waited for this long
	db := filepath.Join(t.TempDir(), "tasks.db")
	file, _, _ := recordAIFlow(t, db)

	code, stdout, stderr := runAI(t, "flow", "run", file, "--db", db, "--sim-layout", "changed", "--json")
	d := runDocOf(t, code, stdout, stderr)
	if code != exitFailed || d.Status != "failed" || d.Cause != "step_failed" ||
		!strings.Contains(d.Reason, "flow step 2 of 3") || !strings.Contains(d.Reason, `id "home_searchbar"`) {
		t.Fatalf("without --heal: exit %d, %s (%s) %q", code, d.Status, d.Cause, d.Reason)
	}
	if len(d.DeviceState.Taobao.Searches) != 0 {
		t.Errorf("searched %q after the failing step", d.DeviceState.Taobao.Searches)
	}
	// Why healing is needed: the redesign came with an update.
	if n := strings.Count(stderr, "note: this device differs from the one the flow was recorded on: com.taobao.taobao is 10.42.20 here, recorded on 10.40.10."); n != 1 {
		t.Errorf("the version notice is said %d times, want once:\n%s", n, stderr)
	}
	t.Logf("without --heal: %s", d.Reason)

	srv := aitest.NewModelServer(t, redesignModel)
	code, stdout, stderr = runAI(t, "flow", "run", file, "--db", db, "--sim-layout", "changed", "--json",
		"--heal", "--planner", "ai", "--provider", "openai", "--base-url", srv.URL+"/v1", "--vision=false")
	d = runDocOf(t, code, stdout, stderr)
	want := strings.TrimSuffix(file, ".yaml") + ".healed.yaml"
	if code != 0 || d.Status != "completed" || d.HealedFlow != want || d.DeviceState.Taobao.LastSearch != "Mac mini" {
		t.Fatalf("with --heal: exit %d, %s (%s), healed flow %q (want %q), last search %q\n%s\n%s", code, d.Status, d.Reason, d.HealedFlow, want, d.DeviceState.Taobao.LastSearch, stdout, stderr)
	}
	if n := len(srv.Turns()); n != 1 {
		t.Errorf("%d model calls while healing, want 1 (the one step)", n)
	}
	srv.Close()
	healed, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(healed), "healed: ") || !strings.Contains(string(healed), "search_pill") {
		t.Errorf("healed flow:\n%s", healed)
	}
	code, stdout, stderr = runAI(t, "flow", "run", want, "--db", db, "--sim-layout", "changed", "--json", "--set", "query=iPhone 16")
	d = runDocOf(t, code, stdout, stderr)
	if code != 0 || d.Status != "completed" || d.DeviceState.Taobao.LastSearch != "iPhone 16" || d.Usage.InputTokens != 0 {
		t.Fatalf("the healed flow without a model: exit %d, %s (%s)\n%s", code, d.Status, d.Reason, stderr)
	}
}

// A flow recorded on another Taobao and locale says so once, before its
// steps, and still runs.
func TestFlowRunSaysTheDeviceDiffersFromTheRecordedOne(t *testing.T) {
	text, err := os.ReadFile("../../flow/testdata/taobao_search_ai_en.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hermetic(t)
	older := strings.Replace(strings.Replace(string(text), "  locale: en-US\n", "  locale: zh-CN\n", 1),
		"      version: 10.40.10\n", "      version: 10.30.0\n", 1)
	if older == string(text) {
		t.Fatal("the testdata flow records no locale or version to change")
	}
	file := filepath.Join(t.TempDir(), "older.yaml")
	if err := os.WriteFile(file, []byte(older), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runAI(t, "flow", "run", file, "--no-record")
	want := "note: this device differs from the one the flow was recorded on: com.taobao.taobao is 10.40.10 here, recorded on 10.30.0; the locale is en-US here, recorded on zh-CN."
	if code != 0 || strings.Count(stdout, want) != 1 || !regexp.MustCompile(`(?m)^completed in \d+ steps`).MatchString(stdout) {
		t.Fatalf("exit %d; want the notice once and a completed run:\n%s\n%s", code, stdout, stderr)
	}
	if strings.Index(stdout, want) > strings.Index(stdout, "launch") {
		t.Errorf("the notice comes after the first step:\n%s", stdout)
	}
}

func TestFlowRunRefusesBadInput(t *testing.T) {
	hermetic(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("version: 1\ngoal: x\nsteps:\n  - tool: tap\n    target: {id: a}\n    colour: red\n"), 0o644)
	code, _, stderr := runAI(t, "flow", "run", bad, "--no-record")
	if code != 2 || !strings.Contains(stderr, "line 6") || !strings.Contains(stderr, "colour") {
		t.Errorf("unknown field: exit %d\n%s", code, stderr)
	}
	good := filepath.Join(dir, "good.yaml")
	_ = os.WriteFile(good, []byte("version: 1\ngoal: open ${app}\nparams:\n  app: {default: Taobao}\nsteps:\n  - tool: launch_app\n    args: {app: \"${app}\"}\n"), 0o644)
	code, _, stderr = runAI(t, "flow", "run", good, "--no-record", "--set", "ap=Settings")
	if code != 2 || !strings.Contains(stderr, `no parameter "ap"`) {
		t.Errorf("unknown parameter: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runAI(t, "flow", "run", good, "--no-record", "--heal")
	if code != 2 || !strings.Contains(stderr, "--planner ai") {
		t.Errorf("--heal without the AI planner: exit %d\n%s", code, stderr)
	}
}

func postFlow(t *testing.T, base string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+"/v1/flows/run", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestServeRunsAFlow(t *testing.T) {
	api := startServedAPI(t, openTestSQLite(t), "")
	text, err := os.ReadFile("../../flow/testdata/taobao_search_ai_en.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, tk := postFlow(t, api.url, map[string]any{"flow": string(text), "params": map[string]string{"query": "iPhone 16"}, "device": "sim:flows"})
	if code != http.StatusAccepted || tk["planner"] != flow.PlannerName || tk["goal"] != "open Taobao and search iPhone 16" {
		t.Fatalf("POST /v1/flows/run = %d %v", code, tk)
	}
	id, _ := tk["id"].(string)
	var got storage.Task
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		getJSON(t, api.url+"/v1/tasks/"+id, &got)
		if got.Status.Terminal() {
			break
		}
	}
	var st struct {
		Taobao struct {
			LastSearch string `json:"last_search"`
		} `json:"taobao"`
	}
	getJSON(t, api.url+"/v1/devices/sim:flows/state", &st)
	if got.Status != lifecycle.Completed || st.Taobao.LastSearch != "iPhone 16" || got.Usage.InputTokens != 0 {
		t.Fatalf("the served flow: %s (%s), last search %q", got.Status, got.Reason, st.Taobao.LastSearch)
	}
	// The served phone told the task service what it is (through the
	// server's wrapper), so this task exports as recorded on it.
	if info := task.DeviceInfoOf(got.Config); info.Locale != "en-US" || len(info.Apps) == 0 ||
		info.Apps[len(info.Apps)-1] != (task.AppInfo{Package: "com.taobao.taobao", Version: "10.40.10", VersionCode: 1040100}) {
		t.Errorf("the served task's device info: %+v (config %s)", info, got.Config)
	}
	// The flow as a JSON object works too; bad input names its field.
	f, _ := flow.Parse(text)
	if code, out := postFlow(t, api.url, map[string]any{"flow": f, "device": "sim:flows2"}); code != http.StatusAccepted {
		t.Errorf("flow as an object: %d %v", code, out)
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
		says  string
	}{
		{map[string]any{"flow": "version: 1\ngoal: x\nsteps:\n  - tool: fly\n"}, "flow", "line 4"},
		{map[string]any{"flow": string(text), "params": map[string]string{"qurey": "x"}}, "params", `no parameter "qurey"`},
		{map[string]any{}, "flow", "required"},
	} {
		code, out := postFlow(t, api.url, tc.body)
		e, _ := out["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != http.StatusBadRequest || e["field"] != tc.field || !strings.Contains(msg, tc.says) {
			t.Errorf("%v: %d %v; want 400 on %s saying %q", tc.body, code, out, tc.field, tc.says)
		}
	}
}
