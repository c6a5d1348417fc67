package ai

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/perception/frame"
	"phonepilot/tools"
)

// Config is everything the AIPlanner and its provider need. cmd/ fills it
// from flags, env and the config file; this package never reads either.
type Config struct {
	// Provider names a registered provider: "anthropic" or "openai".
	Provider string
	// Model is the provider's model id; empty means the provider's default.
	Model string
	// BaseURL overrides the provider's endpoint. For OpenAI-compatible
	// servers (vLLM, Ollama, LM Studio) it includes /v1.
	BaseURL string
	// APIKey authenticates with the provider. It may be empty only when
	// BaseURL points at a local server that does not check keys.
	APIKey string
	// Vision sends the current screenshot beside the Scene listing.
	Vision bool
	// Camera gives the current screenshot; nil means none (plan from the
	// Scene alone).
	Camera frame.Camera
	// Tools are the tools offered to the model: tools.SpecsFor the keys
	// the device has (device.KeysOf), so press_key offers only those. Nil
	// offers every tool with every key (tools.Specs).
	Tools []tools.Spec
	// ImageEdge is the long side of the screenshot sent, in pixels (at
	// most MaxImageEdge); zero means DefaultImageEdge.
	ImageEdge int
	// MaxReasks bounds how often one decision re-asks the model after an
	// invalid reply (no tool call, unknown tool, bad arguments, an element
	// not in the Scene). Zero means the default (2).
	MaxReasks int
	// MaxTokens caps the model's output per request.
	MaxTokens int
	// HistorySteps bounds the conversation: it replays up to this many
	// steps as tool call/result pairs; one step more and it starts again
	// from a one-line summary of every step so far (at most 30 lines), and
	// grows from there. Between two such starts each request is the
	// previous one plus the new turn, which the providers' prompt caches
	// serve. Zero means the default.
	HistorySteps int
	// CacheKey names the task's conversation in the provider's prompt
	// cache (OpenAI's prompt_cache_key); empty means a random one per
	// Planner, that is per task.
	CacheKey string
	// Timeout bounds one HTTP attempt to the provider.
	Timeout time.Duration
	// MaxRetries is the provider SDK's retry budget for 429, 529, 5xx and
	// timeouts; MaxRetryDelay caps one wait between them.
	MaxRetries    int
	MaxRetryDelay time.Duration
	Logger        *slog.Logger
	Clock         clock.Clock
}

// Default values used by Defaults.
const (
	DefaultMaxReasks     = 2
	DefaultMaxTokens     = 1024
	DefaultHistorySteps  = 32
	DefaultTimeout       = 60 * time.Second
	DefaultMaxRetries    = 2
	DefaultMaxRetryDelay = 30 * time.Second
)

// Defaults returns a Config with every tunable set; Provider, Model, BaseURL
// and APIKey are left for the caller.
func Defaults() Config {
	return Config{
		Vision:        true,
		MaxReasks:     DefaultMaxReasks,
		MaxTokens:     DefaultMaxTokens,
		HistorySteps:  DefaultHistorySteps,
		Timeout:       DefaultTimeout,
		MaxRetries:    DefaultMaxRetries,
		MaxRetryDelay: DefaultMaxRetryDelay,
	}
}

// ErrUnknownProvider is returned for a provider name nobody registered.
var ErrUnknownProvider = errors.New("unknown AI provider")

// ErrMissingAPIKey is returned when no API key is configured for a hosted
// provider endpoint.
var ErrMissingAPIKey = errors.New("missing API key")

// Validate reports the first configuration problem, before any device is
// touched. Errors never contain the API key.
func (c Config) Validate() error {
	name := strings.ToLower(strings.TrimSpace(c.Provider))
	if name == "" {
		return fmt.Errorf("ai: no provider configured (want one of %s): %w", strings.Join(Providers(), ", "), ErrUnknownProvider)
	}
	if _, ok := lookup(name); !ok {
		return fmt.Errorf("ai: provider %q (want one of %s): %w", c.Provider, strings.Join(Providers(), ", "), ErrUnknownProvider)
	}
	if c.APIKey == "" && c.BaseURL == "" {
		env, ok := KeyEnv(name)
		if !ok {
			env = "the API key"
		}
		return fmt.Errorf("ai: provider %s: set %s or point --base-url at a local server: %w", name, env, ErrMissingAPIKey)
	}
	switch {
	case c.MaxReasks < 0:
		return fmt.Errorf("ai: MaxReasks %d is negative", c.MaxReasks)
	case c.MaxTokens < 0:
		return fmt.Errorf("ai: MaxTokens %d is negative", c.MaxTokens)
	case c.HistorySteps < 0:
		return fmt.Errorf("ai: HistorySteps %d is negative", c.HistorySteps)
	case c.Timeout < 0:
		return fmt.Errorf("ai: Timeout %s is negative", c.Timeout)
	case c.MaxRetries < 0:
		return fmt.Errorf("ai: MaxRetries %d is negative", c.MaxRetries)
	case c.ImageEdge < 0 || c.ImageEdge > MaxImageEdge:
		return fmt.Errorf("ai: ImageEdge %d is not between 1 and %d pixels", c.ImageEdge, MaxImageEdge)
	case c.MaxRetryDelay < 0:
		return fmt.Errorf("ai: MaxRetryDelay %s is negative", c.MaxRetryDelay)
	}
	return nil
}

// KeyEnv names the environment variable that conventionally holds a
// provider's API key (ANTHROPIC_API_KEY, OPENAI_API_KEY), as the provider
// registered it; ok is false for an unknown provider or one without a key.
// cmd/ reads it; this package only names it in errors.
func KeyEnv(provider string) (name string, ok bool) {
	p, found := lookup(strings.ToLower(strings.TrimSpace(provider)))
	return p.KeyEnv, found && p.KeyEnv != ""
}

// DefaultModel is the model a provider is asked for when the Config names
// none, as the provider registered it ("" for an unknown provider).
func DefaultModel(provider string) string {
	p, _ := lookup(strings.ToLower(strings.TrimSpace(provider)))
	return p.DefaultModel
}

// withDefaults fills zero tunables so a partly filled Config still works.
func (c Config) withDefaults() Config {
	d := Defaults()
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	if c.MaxReasks == 0 {
		c.MaxReasks = d.MaxReasks
	}
	if c.HistorySteps == 0 {
		c.HistorySteps = d.HistorySteps
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = d.MaxTokens
	}
	if c.ImageEdge <= 0 {
		c.ImageEdge = DefaultImageEdge
	}
	c.ImageEdge = min(c.ImageEdge, MaxImageEdge)
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.MaxRetryDelay == 0 {
		c.MaxRetryDelay = d.MaxRetryDelay
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}

// ProviderFactory builds a Provider from the (validated, defaulted) Config.
type ProviderFactory func(Config) (Provider, error)

// ProviderInfo is what a provider registers: how to build it, and what the
// rest of phonepilot needs to know of it without importing its SDK.
type ProviderInfo struct {
	New ProviderFactory
	// KeyEnv names the environment variable that conventionally holds its
	// API key ("" when it has none).
	KeyEnv string
	// DefaultModel is the model it asks for when the Config names none.
	DefaultModel string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]ProviderInfo{}
)

// Register makes a provider available under name. Provider packages call it
// from init; cmd/phonepilot blank-imports them. Registering a name twice
// panics (a programming error, found at start-up).
func Register(name string, p ProviderInfo) {
	registryMu.Lock()
	defer registryMu.Unlock()
	name = strings.ToLower(name)
	if _, dup := registry[name]; dup {
		panic("ai: provider registered twice: " + name)
	}
	registry[name] = p
}

func lookup(name string) (ProviderInfo, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// Providers lists the registered provider names, sorted.
func Providers() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
