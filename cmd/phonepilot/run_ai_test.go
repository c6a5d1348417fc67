package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/perception/frame"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	"phonepilot/runtime"
)

const aiGoal = "open Taobao and search Mac mini"

// taobaoModel plays the model for the simulator's Taobao: it reads the [N]
// lines of the listing it is sent and answers with one tool call.
func taobaoModel(t aitest.Turn) (string, string) {
	header, _, _ := strings.Cut(t.Listing, "\n")
	switch {
	case t.N > 20:
		return "finish_task", `{"success":false,"reason":"the scripted model got lost"}`
	case !strings.Contains(header, "com.taobao.taobao"):
		return "launch_app", `{"app":"Taobao"}`
	}
	if i, ok := t.Find(`id=poplayer_close`); ok {
		return "tap", `{"element":` + strconv.Itoa(i) + `}`
	}
	if _, ok := t.Find(`id=search_item|id=search_result_list`); ok {
		return "finish_task", `{"success":true,"reason":"search results for Mac mini are shown"}`
	}
	if i, ok := t.Find(`EditText`); ok {
		return "type_text", `{"text":"Mac mini","element":` + strconv.Itoa(i) + `,"submit":true}`
	}
	if i, ok := t.Find(`id=home_searchbar`); ok {
		return "tap", `{"element":` + strconv.Itoa(i) + `}`
	}
	return "wait", `{"seconds":0.5}`
}

// runAI runs phonepilot with args, capturing stdout and stderr.
func runAI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	func() {
		defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
		code = run(ctx, args)
	}()
	read := func(f *os.File) string {
		_, _ = f.Seek(0, io.SeekStart)
		b, _ := io.ReadAll(f)
		f.Close()
		return string(b)
	}
	return code, read(outF), read(errF)
}

// hermetic clears settings that would leak in from the environment.
func hermetic(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir()) // no ./phonepilot.toml
	for _, k := range []string{"PHONEPILOT_CONFIG", "PHONEPILOT_PLANNER", "PHONEPILOT_AI_PROVIDER", "PHONEPILOT_AI_MODEL",
		"PHONEPILOT_AI_BASE_URL", "PHONEPILOT_AI_VISION", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
		"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

type runDoc struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
	Steps  []struct {
		Tool   string          `json:"tool"`
		Args   json.RawMessage `json:"args"`
		Status string          `json:"status"`
		Usage  *struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"steps"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func TestRunAIPlannerOnTheSimulator(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			hermetic(t)
			key := "sk-" + provider + "-e2e-SECRET-42"
			if provider == "anthropic" {
				t.Setenv("ANTHROPIC_API_KEY", key)
			} else {
				t.Setenv("OPENAI_API_KEY", key)
			}
			srv := aitest.NewModelServer(t, taobaoModel)
			base := srv.URL
			if provider == "openai" {
				base += "/v1"
			}
			// A 720x1600 phone: screenshots are still downscaled (to
			// 705x1568) but cost less to render on a busy CI machine.
			code, stdout, stderr := runAI(t, "run", "--device", "sim", "--sim-width", "720", "--sim-height", "1600",
				"--planner", "ai", "--provider", provider, "--base-url", base, "--json", "-v", aiGoal)
			var doc runDoc
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("exit %d; stdout is not the JSON result: %v\n%s\nstderr:\n%s", code, err, stdout, stderr)
			}
			turns := srv.Turns()
			if code != 0 || doc.Status != "completed" {
				t.Fatalf("exit %d status %s (%s) after %d model turns\nstdout:\n%s\nstderr:\n%s", code, doc.Status, doc.Reason, len(turns), stdout, stderr)
			}
			var tools []string
			for _, s := range doc.Steps {
				tools = append(tools, s.Tool)
			}
			if got := strings.Join(tools, ","); !strings.Contains(got, "launch_app") || !strings.Contains(got, "type_text") {
				t.Errorf("steps %s, want launch_app … type_text", got)
			}
			for _, tr := range turns {
				if tr.Provider != provider || tr.Images != 1 || tr.Auth != "Bearer "+key {
					t.Errorf("turn %d: provider %s, %d images, auth %q; want %s with exactly one screenshot and the key", tr.N, tr.Provider, tr.Images, tr.Auth, provider)
				}
				if !strings.Contains(tr.Listing, "Screen 720x1600") {
					t.Errorf("turn %d has no Scene listing", tr.N)
				}
			}
			if len(turns) != len(doc.Steps)+1 {
				t.Errorf("%d model turns for %d steps + finish_task", len(turns), len(doc.Steps))
			}
			if doc.Usage.InputTokens == 0 || doc.Usage.OutputTokens == 0 {
				t.Errorf("task usage %+v, want the tokens counted", doc.Usage)
			}
			for i, s := range doc.Steps {
				if s.Usage == nil || s.Usage.InputTokens == 0 {
					t.Errorf("step %d keeps no token usage", i+1)
				}
			}
			if strings.Contains(stdout+stderr, key) {
				t.Errorf("the API key appears in the output")
			}
		})
	}
}

func TestRunAIPlannerWithoutScreenshots(t *testing.T) {
	hermetic(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv := aitest.NewModelServer(t, taobaoModel)
	code, stdout, stderr := runAI(t, "run", "--device", "sim", "--planner", "ai", "--provider", "openai",
		"--base-url", srv.URL+"/v1", "--vision=false", "--json", aiGoal)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tr := range srv.Turns() {
		if tr.Images != 0 || !strings.Contains(tr.Text, "Screenshot: none this turn") {
			t.Errorf("turn %d carries %d images, want none", tr.N, tr.Images)
		}
	}
}

func TestAIPlannerEnabledViaConfiguration(t *testing.T) {
	// Environment only: PHONEPILOT_PLANNER=ai with provider, base URL and
	// key from the environment.
	hermetic(t)
	srv := aitest.NewModelServer(t, taobaoModel)
	t.Setenv("PHONEPILOT_PLANNER", "ai")
	t.Setenv("PHONEPILOT_AI_PROVIDER", "anthropic")
	t.Setenv("PHONEPILOT_AI_MODEL", "claude-test-model")
	t.Setenv("PHONEPILOT_AI_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-env")
	code, stdout, stderr := runAI(t, "run", "--device", "sim", "--sim-width", "720", "--sim-height", "1600", "--json", aiGoal)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	turns := srv.Turns()
	if len(turns) == 0 {
		t.Fatal("the model was never asked: the AI planner was not used")
	}
	var body struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(turns[0].Body, &body)
	if body.Model != "claude-test-model" || turns[0].Auth != "Bearer sk-ant-env" {
		t.Errorf("model %q auth %q, want the configured model and key", body.Model, turns[0].Auth)
	}
}

func TestAIPlannerDisabledDefault(t *testing.T) {
	// Without --planner ai the rule planner runs: the model server, though
	// configured, is never called.
	hermetic(t)
	srv := aitest.NewModelServer(t, taobaoModel)
	t.Setenv("PHONEPILOT_AI_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-unused")
	code, stdout, stderr := runAI(t, "run", "--device", "sim", "--json", aiGoal)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := len(srv.Turns()); n != 0 {
		t.Errorf("the model was asked %d times with the AI planner off", n)
	}
	var doc struct {
		Planner string `json:"planner"`
	}
	_ = json.Unmarshal([]byte(stdout), &doc)
	if doc.Planner != "rule" {
		t.Errorf("planner = %q, want rule", doc.Planner)
	}
}

func TestAIConfigErrorsComeBeforeTheDevice(t *testing.T) {
	hermetic(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "gemini"}, "gemini"},
		{[]string{"--provider", "anthropic"}, "ANTHROPIC_API_KEY"},
		{[]string{"--provider", "openai"}, "OPENAI_API_KEY"},
	} {
		args := append([]string{"run", "--device", "adb:no-such-serial", "--planner", "ai"}, c.args...)
		code, _, stderr := runAI(t, append(args, aiGoal)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "no-such-serial") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q before opening the device", c.args, code, stderr, c.want)
		}
	}
}

// failingCamera is a Camera whose every capture fails, as a phone whose
// screencap broke would.
type failingCamera struct{ calls int }

func (c *failingCamera) Capture(ctx context.Context) (frame.Frame, error) {
	c.calls++
	return frame.Frame{}, errors.New("screencap: exit status 1")
}

func TestRunAIPlannerWithAFailingCamera(t *testing.T) {
	// The same wiring run does (runtime.Config with the AIPlanner on the
	// simulator), with a Camera that always fails: the task still
	// completes, from the Scene alone.
	hermetic(t)
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			srv := aitest.NewModelServer(t, taobaoModel)
			phone, err := sim.New(sim.Config{})
			if err != nil {
				t.Fatal(err)
			}
			cam := &failingCamera{}
			var logs testlog.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			spec := plannerSpec{Name: plannerAI, AI: ai.Defaults()}
			spec.AI.Provider, spec.AI.APIKey, spec.AI.BaseURL = provider, "sk-cam-test", srv.URL
			if provider == "openai" {
				spec.AI.BaseURL += "/v1"
			}
			planner, err := newPlanner(spec, cam, nil, log)
			if err != nil {
				t.Fatal(err)
			}
			runner, err := runtime.New(runtime.Defaults(), phone.Device(), planner, runtime.Options{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res := runner.Run(ctx, aiGoal)
			if res.Status != lifecycle.Completed {
				t.Fatalf("status %s (%s)\n%s", res.Status, res.Reason, logs.String())
			}
			turns := srv.Turns()
			if cam.calls != len(turns) {
				t.Errorf("camera asked %d times for %d decisions", cam.calls, len(turns))
			}
			for _, tr := range turns {
				if tr.Images != 0 || !strings.Contains(tr.Text, "screencap: exit status 1") {
					t.Errorf("turn %d: %d images; want none and the reason in the prompt", tr.N, tr.Images)
				}
			}
			if !strings.Contains(logs.String(), "planning from the scene alone") {
				t.Errorf("the missing screenshot was not logged")
			}
		})
	}
}

func TestRunAIModelSignalsItCannotCompleteTheGoal(t *testing.T) {
	hermetic(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	srv := aitest.NewModelServer(t, func(aitest.Turn) (string, string) {
		return "finish_task", `{"success":false,"reason":"Taobao asks for a login first"}`
	})
	code, stdout, stderr := runAI(t, "run", "--device", "sim", "--planner", "ai", "--provider", "anthropic",
		"--base-url", srv.URL, "--json", aiGoal)
	var doc runDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if code != 1 || doc.Status != "failed" || !strings.Contains(doc.Reason, "Taobao asks for a login first") {
		t.Errorf("exit %d status %s reason %q, want failed with the model's reason", code, doc.Status, doc.Reason)
	}
	if n := len(srv.Turns()); n != 1 || len(doc.Steps) != 0 {
		t.Errorf("%d model turns and %d steps, want 1 and none: no planning after the failure signal", n, len(doc.Steps))
	}
}

// The AI planner offers press_key with the keys of the device run opened:
// an iPhone's (home, enter, delete; no back, no app switcher) on sim:ios and
// on wda:, Android's full set on the simulated Android phone. The request
// the model server gets is read, so this fails if cmd hands the planner the
// full key set for an iPhone.
func TestAIPlannerOffersTheDevicesKeys(t *testing.T) {
	wdaName, _ := wdaPhone(t, "en")
	for _, tc := range []struct {
		device string
		want   []string
	}{
		{"sim:ios", []string{"delete", "enter", "home"}},
		{wdaName, []string{"delete", "enter", "home"}},
		{"sim", []string{"app_switch", "back", "delete", "enter", "home"}},
	} {
		hermetic(t)
		t.Setenv("ANTHROPIC_API_KEY", "sk-test")
		srv := aitest.NewModelServer(t, func(aitest.Turn) (string, string) {
			return "finish_task", `{"success":true,"reason":"looked at the screen"}`
		})
		code, stdout, stderr := runAI(t, "run", "--device", tc.device, "--no-record", "--planner", "ai", "--provider", "anthropic",
			"--base-url", srv.URL, "--vision=false", "--json", "look at the screen")
		turns := srv.Turns()
		if code != 0 || len(turns) == 0 {
			t.Fatalf("%s: exit %d, %d model turns\n%s\n%s", tc.device, code, len(turns), stdout, stderr)
		}
		var req struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Properties struct {
						Key struct {
							Enum []string `json:"enum"`
						} `json:"key"`
					} `json:"properties"`
				} `json:"input_schema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(turns[0].Body, &req); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tool := range req.Tools {
			if tool.Name == "press_key" {
				got = append([]string(nil), tool.InputSchema.Properties.Key.Enum...)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: press_key offers %v, want %v", tc.device, got, tc.want)
		}
	}
}
