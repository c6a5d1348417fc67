package ai_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/perception/frame"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	"phonepilot/plan/ai/anthropic"
	"phonepilot/plan/ai/openai"
)

// baseURL is how a user points each provider at a server: Anthropic's SDK
// appends /v1/messages, OpenAI-compatible base URLs include /v1.
func baseURL(provider, server string) string {
	if provider == "openai" {
		return server + "/v1"
	}
	return server
}

// tapSearchField is a scripted model: it reads the [N] lines of the
// listing and taps the search field.
func tapSearchField(t aitest.Turn) (string, string) {
	if i, ok := t.Find(`EditText`); ok {
		return "tap", `{"element":` + strconv.Itoa(i) + `}`
	}
	return "finish_task", `{"success":false,"reason":"no search field"}`
}

func TestProviderSelectedViaConfiguration(t *testing.T) {
	for _, name := range []string{"anthropic", "openai"} {
		t.Run(name, func(t *testing.T) {
			srv := aitest.NewModelServer(t, tapSearchField)
			cfg := ai.Defaults()
			cfg.Provider, cfg.APIKey, cfg.BaseURL, cfg.Logger = name, "key-"+name, baseURL(name, srv.URL), testlog.New(t)
			p, err := ai.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Plan(context.Background(), input(aitest.TaobaoHome())); err != nil {
				t.Fatal(err)
			}
			turns := srv.Turns()
			if len(turns) != 1 || turns[0].Provider != name || turns[0].Auth != "Bearer key-"+name {
				t.Fatalf("turns = %+v, want one %s request with its key", turns, name)
			}
		})
	}
	cfg := ai.Defaults()
	cfg.Provider, cfg.APIKey = "gemini", "k"
	if _, err := ai.New(cfg); !errors.Is(err, ai.ErrUnknownProvider) || !strings.Contains(err.Error(), "anthropic, openai") {
		t.Errorf("unknown provider: err = %v, want ErrUnknownProvider naming the choices", err)
	}
}

func TestProviderResponseResolvesToASingleDecision(t *testing.T) {
	var decisions []any
	for _, name := range []string{"anthropic", "openai"} {
		srv := aitest.NewModelServer(t, tapSearchField)
		cfg := ai.Defaults()
		cfg.Provider, cfg.APIKey, cfg.BaseURL = name, "k", baseURL(name, srv.URL)
		p, err := ai.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Plan(context.Background(), input(aitest.TaobaoHome()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(d.Steps) != 1 || d.Steps[0].Call.Name != "tap" || string(d.Steps[0].Call.Args) != `{"element":2}` {
			t.Fatalf("%s: decision %+v, want one step tap {\"element\":2}", name, d)
		}
		if d.Usage.InputTokens == 0 || d.Usage.OutputTokens == 0 {
			t.Errorf("%s: usage %+v, want the reply's token counts", name, d.Usage)
		}
		d.Usage = plan.Usage{} // token counts differ between the recorded bodies
		decisions = append(decisions, d)
	}
	if !reflect.DeepEqual(decisions[0], decisions[1]) {
		t.Errorf("the providers' decisions differ:\n%+v\n%+v", decisions[0], decisions[1])
	}
}

// smallCamera returns a tiny screenshot so the golden bodies stay small.
type smallCamera struct{ png []byte }

func (c smallCamera) Capture(context.Context) (frame.Frame, error) {
	return frame.New(c.png, 9, 20, time.Unix(0, 0)), nil
}

func TestPlannerRequestBodiesGolden(t *testing.T) {
	// The whole request as each API receives it from the planner: the
	// contract's tools with their schemas, tool_choice and the parallel
	// flag, the history as paired tool calls and results, and the image
	// beside the listing in the current turn.
	hist := []plan.StepRecord{
		step(1, `launch_app {"app":"Taobao"}`, lifecycle.StepSucceeded, true),
		step(2, `tap {"element":2}`, lifecycle.StepFailed, false),
	}
	hist[1].Reason = "the screen did not change after 3 attempts"
	cam := smallCamera{png: aitest.PNG(t, 9, 20)}
	for _, name := range []string{"anthropic", "openai"} {
		t.Run(name, func(t *testing.T) {
			srv := aitest.NewModelServer(t, tapSearchField)
			cfg := ai.Defaults()
			cfg.Provider, cfg.APIKey, cfg.BaseURL, cfg.Camera = name, "k", baseURL(name, srv.URL), cam
			cfg.CacheKey = "phonepilot-task-1"
			cfg.Tools = goldenTools(t)
			p, err := ai.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Plan(context.Background(), input(aitest.TaobaoHome(), hist...)); err != nil {
				t.Fatal(err)
			}
			turns := srv.Turns()
			if len(turns) != 1 || turns[0].Images != 1 {
				t.Fatalf("turns %d, images %d; want one request with one image", len(turns), turns[0].Images)
			}
			aitest.Golden(t, "request_"+name+".golden.json", aitest.PrettyJSON(t, turns[0].Body))
		})
	}
}

// counting wraps a provider and counts each request itself (ai.Estimate,
// what the bench and run --json use when a server reports no usage) beside
// the usage the server reported.
type counting struct {
	name     string
	inner    ai.Provider
	counted  []ai.TokenUsage
	reported []ai.TokenUsage
}

func (c *counting) Complete(ctx context.Context, req ai.Request) (ai.Reply, error) {
	r, err := c.inner.Complete(ctx, req)
	if err == nil {
		c.counted = append(c.counted, ai.Estimate(c.name, req, r))
		c.reported = append(c.reported, r.Usage)
	}
	return r, err
}

// The counted tokens of a request, screenshot included, are within 10% of
// what a server that counts like the provider reports.
func TestCountedUsageMatchesTheReportedUsage(t *testing.T) {
	hist := []plan.StepRecord{
		step(1, `launch_app {"app":"Taobao"}`, lifecycle.StepSucceeded, true),
		step(2, `tap {"element":2}`, lifecycle.StepFailed, false),
	}
	for _, name := range []string{"anthropic", "openai"} {
		t.Run(name, func(t *testing.T) {
			srv := aitest.NewModelServer(t, tapSearchField)
			cfg := ai.Defaults()
			cfg.Provider, cfg.APIKey, cfg.BaseURL, cfg.Camera = name, "k", baseURL(name, srv.URL), phoneCamera(t)
			var inner ai.Provider
			var err error
			if name == "anthropic" {
				inner, err = anthropic.New(cfg)
			} else {
				inner, err = openai.New(cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			c := &counting{name: name, inner: inner}
			p := ai.NewWithProvider(cfg, c)
			for n := 0; n <= len(hist); n++ {
				if _, err := p.Plan(context.Background(), input(aitest.TaobaoResults(), hist[:n]...)); err != nil {
					t.Fatal(err)
				}
			}
			turns := srv.Turns()
			for i, tr := range turns {
				if tr.Images != 1 {
					t.Fatalf("turn %d sent %d images, want the screenshot", tr.N, tr.Images)
				}
				got, want := float64(c.counted[i].Input), float64(c.reported[i].Input)
				if want == 0 || got < want*0.9 || got > want*1.1 {
					t.Errorf("turn %d: counted %.0f input tokens, the server reported %.0f (more than 10%% apart)", tr.N, got, want)
				}
				if int(want) != tr.Usage.Input || c.reported[i].CacheRead != int64(tr.Usage.CacheRead) || c.reported[i].CacheWrite != int64(tr.Usage.CacheWrite) {
					t.Errorf("turn %d: the provider read %+v from the reply, the server reported %+v", tr.N, c.reported[i], tr.Usage)
				}
				t.Logf("turn %d: counted %.0f, reported %.0f (cache read %d, written %d)", tr.N, got, want, tr.Usage.CacheRead, tr.Usage.CacheWrite)
			}
		})
	}
}
