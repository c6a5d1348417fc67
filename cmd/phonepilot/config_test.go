package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"phonepilot/device/sim"
)

func envOf(m map[string]string) lookupEnv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "phonepilot.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigDefaultsAreValid(t *testing.T) {
	c, err := loadConfig("", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Planner != "rule" || c.Runtime.MaxSteps != 30 || c.Runtime.StepRetries != 3 || c.Runtime.WaitTimeout != 10*time.Second {
		t.Errorf("defaults %+v", c)
	}
}

func TestConfigLayersFileEnvFlags(t *testing.T) {
	path := writeFile(t, `
planner = "ai"
[runtime]
max_steps = 12
wait_timeout = "4s"
stale_after = "2s"
[ai]
provider = "openai"
model = "gpt-test"
[sim]
locale = "zh"
profile = "realistic"
seed = 7
[storage]
db = "/tmp/x.db"
[serve]
addr = "127.0.0.1:9999"
`)
	env := envOf(map[string]string{
		"PHONEPILOT_MAX_STEPS":   "20",
		"PHONEPILOT_AI_MODEL":    "gpt-env",
		"PHONEPILOT_DB":          "postgres://localhost/pp",
		"OPENAI_API_KEY":         "sk-secret-123",
		"PHONEPILOT_SIM_PROFILE": "slow",
	})
	c, err := loadConfig(path, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Runtime.MaxSteps != 20 || c.Runtime.WaitTimeout != 4*time.Second || c.AI.Model != "gpt-env" || c.AI.Provider != "openai" {
		t.Errorf("file+env: %+v", c)
	}
	if rc := c.runtimeConfig(); rc.StaleAfter != 2*time.Second {
		t.Errorf("stale_after = \"2s\" reaches the runtime as %s", rc.StaleAfter)
	}
	if c.Storage.DB != "postgres://localhost/pp" || c.Sim.Locale != "zh" || c.Sim.Profile != "slow" || c.Sim.Seed != 7 || c.Serve.Addr != "127.0.0.1:9999" {
		t.Errorf("file+env: %+v", c)
	}
	if c.AI.APIKey != "sk-secret-123" {
		t.Errorf("API key not taken from OPENAI_API_KEY")
	}
	if strings.Contains(c.String(), "sk-secret") {
		t.Errorf("String() shows the API key: %s", c)
	}

	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.Int("max-steps", 30, "")
	fs.String("planner", "rule", "")
	fs.String("sim-locale", "en", "")
	if err := fs.Parse([]string{"--max-steps", "5"}); err != nil {
		t.Fatal(err)
	}
	if err := c.applyFlags(fs, env); err != nil {
		t.Fatal(err)
	}
	// Only the flag the user set wins; unset flags keep their defaults out.
	if c.Runtime.MaxSteps != 5 || c.Planner != "ai" || c.Sim.Locale != "zh" {
		t.Errorf("after flags: max_steps %d planner %s locale %s", c.Runtime.MaxSteps, c.Planner, c.Sim.Locale)
	}
}

func TestConfigRefusesUnknownKeysByName(t *testing.T) {
	path := writeFile(t, "[runtime]\nmax_stepz = 3\n[ai]\napi_key = \"sk-in-file\"\n")
	_, err := loadConfig(path, envOf(nil))
	if err == nil {
		t.Fatal("unknown keys accepted")
	}
	for _, want := range []string{"runtime.max_stepz", "ai.api_key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "sk-in-file") {
		t.Errorf("error shows the key's value")
	}
}

func TestConfigBadValuesNameTheirSource(t *testing.T) {
	_, err := loadConfig("", envOf(map[string]string{"PHONEPILOT_MAX_STEPS": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "PHONEPILOT_MAX_STEPS") {
		t.Errorf("err = %v, want it to name PHONEPILOT_MAX_STEPS", err)
	}
	c, _ := loadConfig("", envOf(map[string]string{"PHONEPILOT_PLANNER": "magic"}))
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "planner") {
		t.Errorf("err = %v, want the planner named", err)
	}
	c, _ = loadConfig("", envOf(map[string]string{"PHONEPILOT_SIM_LOCALE": "fr"}))
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sim.locale") {
		t.Errorf("err = %v, want sim.locale named", err)
	}
	// Every profile the simulator has is accepted, the injected one too;
	// an unknown one is refused with the list.
	for _, prof := range append(sim.ProfileNames(), "") {
		c, _ = loadConfig("", envOf(map[string]string{"PHONEPILOT_SIM_PROFILE": prof}))
		if err := c.Validate(); err != nil {
			t.Errorf("sim.profile %q: %v", prof, err)
		}
	}
	c, _ = loadConfig("", envOf(map[string]string{"PHONEPILOT_SIM_PROFILE": "haunted"}))
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sim.profile") || !strings.Contains(err.Error(), "injected") {
		t.Errorf("err = %v, want sim.profile named with the profiles (injected among them)", err)
	}
	// The AI planner without a key is refused before any device opens.
	c, _ = loadConfig("", envOf(map[string]string{"PHONEPILOT_PLANNER": "ai", "PHONEPILOT_AI_PROVIDER": "anthropic"}))
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("err = %v, want the missing key's variable named", err)
	}
}

// The example in appConfig's comment is a file loadConfig accepts and that
// yields the defaults.
func TestConfigDocumentedExampleParses(t *testing.T) {
	src, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case strings.Contains(line, "A phonepilot.toml with every key"):
			in = true
		case in && strings.HasPrefix(line, "type appConfig"):
			in = false
		case in && strings.HasPrefix(line, "//\t"):
			body = append(body, strings.TrimPrefix(line, "//\t"))
		}
	}
	if len(body) < 20 {
		t.Fatalf("example not found (%d lines)", len(body))
	}
	c, err := loadConfig(writeFile(t, strings.Join(body, "\n")), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	c.Source = ""
	if d := defaultAppConfig(); c.String() != d.String() {
		t.Errorf("example differs from the defaults:\n%s\n%s", c, d)
	}
}
