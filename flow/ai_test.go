package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/internal/golden"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	_ "phonepilot/plan/ai/openai" // the provider the stand-in model speaks
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/task"
	"phonepilot/tools"
)

var aiGoals = map[string]string{"en": "open Taobao and search Mac mini", "zh": "打开淘宝搜索Mac mini"}

// taobaoModel plays the model for the simulator's Taobao, as
// cmd/phonepilot's AI tests do: it reads the listing and answers with one
// tool call. It knows the changed layout's search pill too (for healing).
func taobaoModel(t aitest.Turn) (string, string) {
	header, _, _ := strings.Cut(t.Listing, "\n")
	tap := func(i int) (string, string) { return "tap", `{"element":` + strconv.Itoa(i) + `}` }
	switch {
	case t.N > 20:
		return "finish_task", `{"success":false,"reason":"the scripted model got lost"}`
	case !strings.Contains(header, "com.taobao.taobao"):
		return "launch_app", `{"app":"Taobao"}`
	}
	if i, ok := t.Find(`id=poplayer_close`); ok {
		return tap(i)
	}
	if _, ok := t.Find(`id=search_item|id=search_result_list`); ok {
		return "finish_task", `{"success":true,"reason":"search results for Mac mini are shown"}`
	}
	if i, ok := t.Find(`EditText`); ok {
		return "type_text", `{"text":"Mac mini","element":` + strconv.Itoa(i) + `,"submit":true}`
	}
	if i, ok := t.Find(`id=home_searchbar|id=search_pill`); ok {
		return tap(i)
	}
	return "wait", `{"seconds":0.5}`
}

// counting counts the screen reads (uiautomator dumps) a task makes.
type counting struct {
	device.Device
	dumps atomic.Int64
}

func (c *counting) Scene(ctx context.Context) (*scene.Scene, error) {
	c.dumps.Add(1)
	return c.Device.Scene(ctx)
}

// StopApp passes the simulator's force-stop through (a flow starts its app
// from its start).
func (c *counting) StopApp(ctx context.Context, app string) error {
	return c.Device.(device.AppStopper).StopApp(ctx, app)
}

// figures are what a run cost.
type figures struct {
	wall      time.Duration // real time
	simulated time.Duration // the fake clock's time (the phone's latencies, the waits)
	dumps     int64
	tokens    int64
}

func (f figures) String() string {
	return fmt.Sprintf("wall %6.1f ms, simulated %5.2f s, %3d dumps, %5d tokens",
		float64(f.wall.Microseconds())/1000, f.simulated.Seconds(), f.dumps, f.tokens)
}

// run runs planner on a fresh phone, counting dumps.
func run(t *testing.T, cfg sim.Config, goal string, planner plan.Planner) (runtime.Result, []storage.Step, taobaoState, figures) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	cfg.Clock = clk
	p, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return runOn(t, p, clk, cfg.Seed, goal, planner)
}

// runOn runs the goal on the phone p as it is (what an earlier task left).
func runOn(t *testing.T, p *sim.Phone, clk *clock.Fake, seed int64, goal string, planner plan.Planner) (runtime.Result, []storage.Step, taobaoState, figures) {
	t.Helper()
	dev := &counting{Device: p.Device()}
	var steps []storage.Step
	rc := runtime.Defaults()
	rc.Seed = seed
	r, err := runtime.New(rc, dev, planner, runtime.Options{Clock: clk, Logger: testlog.New(t), OnEvent: func(e runtime.Event) {
		if e.Type == lifecycle.EventStepFinished {
			sj, _ := json.Marshal(e.Scene)
			steps = append(steps, storage.Step{TaskID: "t1", StepRecord: *e.Record, Scene: sj})
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := r.Run(context.Background(), goal)
	fig := figures{wall: time.Since(start), simulated: res.Duration, dumps: dev.dumps.Load(), tokens: res.Usage.InputTokens + res.Usage.OutputTokens}
	raw, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao taobaoState `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return res, steps, st.Taobao, fig
}

// aiPlanner is the AI planner against the stand-in model at srv (no
// screenshots: the sim's camera is not wired here).
func aiPlanner(t *testing.T, srv *aitest.ModelServer) plan.Planner {
	t.Helper()
	cfg := ai.Defaults()
	cfg.Provider, cfg.BaseURL, cfg.APIKey, cfg.Vision, cfg.MaxRetries = "openai", srv.URL+"/v1", "sk-test", false, 0
	cfg.Logger = testlog.New(t)
	p, err := ai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// aiFlow runs the goal with the AI planner against a stand-in model,
// exports it and stops the model server. It returns the flow and the
// original run's figures.
func aiFlow(t *testing.T, cfg sim.Config, goal string) (*Flow, figures, *aitest.ModelServer) {
	t.Helper()
	srv := aitestServer(t)
	res, steps, st, fig := run(t, cfg, goal, aiPlanner(t, srv))
	if res.Status != lifecycle.Completed || st.LastSearch != "Mac mini" {
		t.Fatalf("the AI run: %s (%s), last search %q", res.Status, res.Reason, st.LastSearch)
	}
	// The config as the task service leaves it: the snapshot, and what the
	// device said of itself when the task ended.
	p, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := p.Device().Locale(t.Context())
	ver, code, _ := p.Device().AppVersion(t.Context(), "com.taobao.taobao")
	info, _ := json.Marshal(task.DeviceInfo{Locale: loc, Apps: []task.AppInfo{{Package: "com.taobao.taobao", Version: ver, VersionCode: code}}})
	f, err := Export(storage.Task{ID: "t-ai", Goal: goal, Planner: "ai", Device: "sim", Status: lifecycle.Completed,
		Config: json.RawMessage(`{"sim":{"locale":"` + cfg.Locale + `"},"device_info":` + string(info) + `}`)}, steps)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // the replay has no model to call
	return f, fig, srv
}

func TestAIRunExportedReplaysWithoutTheModel(t *testing.T) {
	for _, profile := range []string{"", "realistic"} {
		t.Run("profile="+profile, func(t *testing.T) {
			cfg := sim.Config{Profile: profile, Seed: 1}
			f, orig, srv := aiFlow(t, cfg, aiGoals["en"])
			turns := len(srv.Turns())
			data, _ := Marshal(f)
			if f.Params["query"].Default != "Mac mini" || f.Goal != "open Taobao and search ${query}" {
				t.Errorf("exported flow:\n%s\nwant a query parameter defaulting to Mac mini in the goal", data)
			}
			fp, err := NewPlanner(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, _, st, replay := run(t, cfg, fp.Goal(), fp)
			if res.Status != lifecycle.Completed || st.LastSearch != "Mac mini" || len(st.Searches) != 1 {
				t.Fatalf("replay: %s (%s), searches %q\nflow:\n%s", res.Status, res.Reason, st.Searches, data)
			}
			if replay.tokens != 0 || len(srv.Turns()) != turns {
				t.Errorf("the replay used %d tokens and %d model calls, want none", replay.tokens, len(srv.Turns())-turns)
			}
			t.Logf("FIGURES profile %q: AI run %s (%d model calls); replay %s", profile, orig, turns, replay)
		})
	}
}

// A flow exported from a run starts its app from its start: run one after
// another on the same phone, as a server runs them, each replay begins on
// Taobao's home page, not on the results page the last one left (where the
// search bar it taps is not). Each step line shows the value it types.
func TestFlowsOnOnePhoneStartFromTheAppsStart(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{}, aiGoals["en"])
	if a := f.Steps[0].Args; a["app"] != "Taobao" || a["stop"] != true {
		t.Fatalf("the exported flow's first step is %s %v; want launch_app with stop: true", f.Steps[0].Tool, a)
	}
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p, err := sim.New(sim.Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"Mac mini", "iPhone 16", "机械键盘"} {
		fp, err := NewPlanner(f, Options{Params: map[string]string{"query": q}})
		if err != nil {
			t.Fatal(err)
		}
		res, steps, st, _ := runOn(t, p, clk, 0, fp.Goal(), fp)
		if res.Status != lifecycle.Completed || st.LastSearch != q || st.Screen != "results" {
			t.Fatalf("replay %d (%q) on the phone the last one left: %s (%s), searches %q, screen %s", i+1, q, res.Status, res.Reason, st.Searches, st.Screen)
		}
		var typedLine string
		for _, s := range steps {
			if s.Call.Name == tools.TypeText {
				typedLine = s.Intent
			}
		}
		if !strings.Contains(typedLine, strconv.Quote(q)) {
			t.Errorf("replay %d: the step line of the typing is %q; want it to show %q", i+1, typedLine, q)
		}
	}
}

// A flow exported before intents named their parameter ("type \"Mac
// mini\" into …") shows the value set all the same.
func TestOldStepLineShowsTheValueSet(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{}, aiGoals["en"])
	for i, s := range f.Steps {
		f.Steps[i].Intent = strings.ReplaceAll(s.Intent, "${query}", "Mac mini")
	}
	bound, err := f.Bind(map[string]string{"query": "iPhone 16"})
	if err != nil {
		t.Fatal(err)
	}
	if got := bound.Steps[2].Intent; !strings.Contains(got, `"iPhone 16"`) || strings.Contains(got, "Mac mini") {
		t.Errorf("step 3's line %q; want it to show the value set, \"iPhone 16\"", got)
	}
}

var otherQueries = []string{"iPhone 16", "蓝牙耳机", "running shoes", "机械键盘", "Nintendo Switch 2"}

func TestReplayWithOtherQueriesInBothLocales(t *testing.T) {
	for _, loc := range []string{"en", "zh"} {
		f, _, _ := aiFlow(t, sim.Config{Locale: loc}, aiGoals[loc])
		for _, q := range otherQueries {
			fp, err := NewPlanner(f, Options{Params: map[string]string{"query": q}})
			if err != nil {
				t.Fatal(err)
			}
			res, _, st, fig := run(t, sim.Config{Locale: loc}, fp.Goal(), fp)
			if res.Status != lifecycle.Completed || st.LastSearch != q || len(st.Searches) != 1 || st.Screen != "results" {
				t.Errorf("%s %q: %s (%s), searches %q, screen %s", loc, q, res.Status, res.Reason, st.Searches, st.Screen)
				continue
			}
			t.Logf("%s %-18q completed: %s", loc, q, fig)
		}
	}
}

func TestReplayUnderRealisticProfile(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{}, aiGoals["en"])
	const seeds = 20
	done := 0
	var total figures
	for seed := int64(1); seed <= seeds; seed++ {
		fp, err := NewPlanner(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, _, st, fig := run(t, sim.Config{Profile: "realistic", Seed: seed}, fp.Goal(), fp)
		total.wall += fig.wall
		total.simulated += fig.simulated
		total.dumps += fig.dumps
		if res.Status == lifecycle.Completed && st.LastSearch == "Mac mini" && len(st.Searches) == 1 {
			done++
		} else {
			t.Logf("seed %d: %s (%s), searches %q", seed, res.Status, res.Reason, st.Searches)
		}
	}
	t.Logf("FIGURES realistic: %d/%d completed; total %s", done, seeds, total)
	if done*100 < 95*seeds {
		t.Errorf("%d of %d seeds completed, want at least 95%%", done, seeds)
	}
}

// The flow exported from the AI planner's run, as a file: what `phonepilot
// flow export` writes (UPDATE_GOLDEN=1 rewrites it).
func TestExportOfTheAIRunIsGolden(t *testing.T) {
	for _, loc := range []string{"en", "zh"} {
		f, _, _ := aiFlow(t, sim.Config{Locale: loc}, aiGoals[loc])
		data, err := Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/taobao_search_ai_"+loc+".yaml", data)
	}
}

func aitestServer(t *testing.T) *aitest.ModelServer { return aitest.NewModelServer(t, taobaoModel) }

// Selectors by id survive a change of language: the flow recorded on the
// English phone replays on the Chinese one, where every label differs.
func TestFlowRecordedInEnglishReplaysInChinese(t *testing.T) {
	f, _, _ := aiFlow(t, sim.Config{Locale: "en"}, aiGoals["en"])
	fp, err := NewPlanner(f, Options{Params: map[string]string{"query": "蓝牙耳机"}})
	if err != nil {
		t.Fatal(err)
	}
	res, _, st, _ := run(t, sim.Config{Locale: "zh"}, fp.Goal(), fp)
	if res.Status != lifecycle.Completed || st.LastSearch != "蓝牙耳机" {
		t.Fatalf("%s (%s), searches %q", res.Status, res.Reason, st.Searches)
	}
}
