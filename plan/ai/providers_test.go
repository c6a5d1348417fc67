package ai_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"phonepilot/internal/testlog"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	_ "phonepilot/plan/ai/anthropic"
	_ "phonepilot/plan/ai/openai"
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
