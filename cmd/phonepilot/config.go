package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"phonepilot/api"
	"phonepilot/device/sim"
	"phonepilot/plan/ai"
	"phonepilot/runtime"
	"phonepilot/safety"
)

// appConfig is every setting of phonepilot, one section per part. It is
// filled in this order, each layer overriding the one before: defaults, the
// config file the user chose (--config, else PHONEPILOT_CONFIG, else
// phonepilot.toml in the user's config directory; never the working
// directory's, which a cloned repository could plant), PHONEPILOT_*
// environment variables, and the flags the user set. API keys come only from the provider's usual
// environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY): never from the
// file, never printed. Unknown keys in the file are refused by name.
//
// A phonepilot.toml with every key (durations are Go durations):
//
//	device  = "sim"            # sim, adb, adb:SERIAL    (PHONEPILOT_DEVICE, --device)
//	planner = "rule"           # rule or ai              (PHONEPILOT_PLANNER, --planner)
//	observer = ""              # auto (adb: phonepilot's helper, uiautomator when it fails), helper or uiautomator;
//	                           # on the simulator the path whose costs it charges (PHONEPILOT_OBSERVER, --observer)
//
//	[runtime]
//	max_steps      = 30        # PHONEPILOT_MAX_STEPS, --max-steps
//	step_retries   = 3         # PHONEPILOT_STEP_RETRIES
//	wait_timeout   = "10s"     # PHONEPILOT_WAIT_TIMEOUT
//	poll_interval  = "100ms"
//	settle_timeout = "3s"
//	backoff_base   = "200ms"
//	backoff_max    = "2s"
//	fixed_delay    = "0s"      # >0 replaces settling (PHONEPILOT_FIXED_DELAY, --fixed-delay)
//	stale_after    = "250ms"   # a step planned on an older read is checked on a fresh one first ("0s": whenever any time passed)
//
//	[ai]
//	provider   = "anthropic"   # or openai               (PHONEPILOT_AI_PROVIDER, --provider)
//	model      = ""            # PHONEPILOT_AI_MODEL, --model
//	base_url   = ""            # PHONEPILOT_AI_BASE_URL, --base-url
//	vision     = true          # PHONEPILOT_AI_VISION, --vision
//	image_edge = 1024          # screenshot long side in px, up to 1568 (PHONEPILOT_AI_IMAGE_EDGE, --image-edge)
//	max_reasks = 2             # PHONEPILOT_AI_MAX_REASKS
//	max_tokens = 1024
//	timeout    = "60s"
//
//	[sim]
//	locale  = "en"             # en or zh                (PHONEPILOT_SIM_LOCALE, --sim-locale)
//	profile = ""               # "", realistic, slow, flaky, injected, hostile (PHONEPILOT_SIM_PROFILE, --sim-profile)
//	seed    = 1                # PHONEPILOT_SIM_SEED, --sim-seed
//
//	[adb]
//	server = ""                # host:port of the adb server (PHONEPILOT_ADB_SERVER, --adb-server)
//
//	[storage]
//	db = ""                    # SQLite file or postgres:// DSN; "" = phonepilot.db in the user's data directory (PHONEPILOT_DB, --db)
//
//	[serve]
//	addr  = "127.0.0.1:8080"   # PHONEPILOT_ADDR, --addr
//	token = ""                 # bearer token for the API (PHONEPILOT_TOKEN, --token)
//	allowed_hosts   = []       # a reverse proxy's Host names (PHONEPILOT_ALLOWED_HOSTS, --allowed-hosts)
//	allowed_origins = []       # its origins, https://name (PHONEPILOT_ALLOWED_ORIGINS, --allowed-origins)
//	max_steps_ceiling = 200    # the most max_steps a task may ask for; [runtime] max_steps is the default (PHONEPILOT_MAX_STEPS_CEILING, --max-steps-ceiling)
type appConfig struct {
	// Device is the phone to drive: sim, adb or adb:SERIAL.
	Device  string `toml:"device"`
	Planner string `toml:"planner"`
	// Observer is how the phone is read and driven (docs/device-helper.md).
	Observer string         `toml:"observer"`
	Runtime  runtimeSection `toml:"runtime"`
	AI       aiSection      `toml:"ai"`
	Sim      simSection     `toml:"sim"`
	ADB      adbSection     `toml:"adb"`
	Storage  storageSection `toml:"storage"`
	Serve    serveSection   `toml:"serve"`
	Safety   safetySection  `toml:"safety"`
	Farm     farmSection    `toml:"farm"` // phonepilot worker (worker.go)

	// Source says where the file layer came from ("" when there was none).
	Source string `toml:"-"`
	// Ignored names a ./phonepilot.toml that was there and not read.
	Ignored string `toml:"-"`
}

// safetySection is the safety gate's policy (safety.Policy: per category
// allow, confirm or deny, per-app overrides under [safety.apps."pkg"]) and
// how long a task waits for a person (task.Config; 10 minutes when unset).
//
//	[safety]
//	payment = "deny"
//	approval_timeout = "5m"
//	[safety.apps."com.tencent.mm"]
//	send = "allow"
type safetySection struct {
	safety.Policy
	ApprovalTimeout time.Duration `toml:"approval_timeout"`
	AnswerTimeout   time.Duration `toml:"answer_timeout"`
}

// runtimeSection tunes the task loop (see runtime.Config).
type runtimeSection struct {
	MaxSteps      int           `toml:"max_steps"`
	StepRetries   int           `toml:"step_retries"`
	WaitTimeout   time.Duration `toml:"wait_timeout"`
	PollInterval  time.Duration `toml:"poll_interval"`
	SettleTimeout time.Duration `toml:"settle_timeout"`
	BackoffBase   time.Duration `toml:"backoff_base"`
	BackoffMax    time.Duration `toml:"backoff_max"`
	FixedDelay    time.Duration `toml:"fixed_delay"`
	StaleAfter    time.Duration `toml:"stale_after"`
}

// aiSection configures the AIPlanner (see ai.Config).
type aiSection struct {
	Provider  string        `toml:"provider"`
	Model     string        `toml:"model"`
	BaseURL   string        `toml:"base_url"`
	Vision    bool          `toml:"vision"`
	ImageEdge int           `toml:"image_edge"`
	MaxReasks int           `toml:"max_reasks"`
	MaxTokens int           `toml:"max_tokens"`
	Timeout   time.Duration `toml:"timeout"`
	// APIKey is read from the environment only.
	APIKey string `toml:"-"`
}

// simSection shapes the simulated phone.
type simSection struct {
	Locale  string `toml:"locale"`
	Profile string `toml:"profile"`
	Seed    int64  `toml:"seed"`
}

// adbSection says where the adb server is.
type adbSection struct {
	Server string `toml:"server"`
}

// storageSection says where tasks are recorded: a SQLite file path, or a
// postgres:// DSN; empty means phonepilot.db in the user's data directory,
// so run, serve, tasks and show meet in one place by default.
type storageSection struct {
	DB string `toml:"db"`
}

// serveSection configures `phonepilot serve` and the listeners of
// `phonepilot mcp`.
type serveSection struct {
	Addr  string `toml:"addr"`
	Token string `toml:"token"`
	// AllowedHosts and AllowedOrigins are a reverse proxy's public names
	// and origins (api.DoorConfig); loopback names need none.
	AllowedHosts   []string `toml:"allowed_hosts"`
	AllowedOrigins []string `toml:"allowed_origins"`
	// MaxStepsCeiling is the most max_steps a task may ask for through the
	// API; [runtime] max_steps is the default (api.Config).
	MaxStepsCeiling int `toml:"max_steps_ceiling"`
}

// door is the listeners' api.DoorConfig.
func (s serveSection) door() api.DoorConfig {
	return api.DoorConfig{Hosts: s.AllowedHosts, Origins: s.AllowedOrigins}
}

// configFileName is the config file's name in the user's config directory
// (and the one a working directory's stray file is noticed by).
const configFileName = "phonepilot.toml"

// configFlagHelp is the help of every command's --config.
const configFlagHelp = "config file (default: $PHONEPILOT_CONFIG, else phonepilot.toml in the user's config directory; never ./phonepilot.toml unless named)"

// Limits checked before a config file is decoded: a config is a page of
// settings, and the TOML decoder's cost grows with the square of an inline
// table's nesting.
const (
	maxConfigBytes = 256 << 10
	maxConfigDepth = 16
)

// userConfigFile is phonepilot.toml in the user's config directory
// ($XDG_CONFIG_HOME/phonepilot, else ~/.config/phonepilot; on macOS
// ~/Library/Application Support/phonepilot), "" without a home.
func userConfigFile(env lookupEnv) string {
	dir, _ := env("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, _ := env("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
		if goruntime.GOOS == "darwin" {
			dir = filepath.Join(home, "Library", "Application Support")
		}
	}
	return filepath.Join(dir, "phonepilot", configFileName)
}

// defaultAppConfig is the configuration without file, env or flags.
func defaultAppConfig() appConfig {
	rt := runtime.Defaults()
	ad := ai.Defaults()
	return appConfig{
		Device:  "sim",
		Planner: plannerRule,
		Runtime: runtimeSection{
			MaxSteps: rt.MaxSteps, StepRetries: rt.StepRetries, WaitTimeout: rt.WaitTimeout,
			PollInterval: rt.PollInterval, SettleTimeout: rt.SettleTimeout,
			BackoffBase: rt.BackoffBase, BackoffMax: rt.BackoffMax, StaleAfter: rt.StaleAfter,
		},
		AI:    aiSection{Provider: defaultProvider, Vision: ad.Vision, ImageEdge: ai.DefaultImageEdge, MaxReasks: ad.MaxReasks, MaxTokens: ad.MaxTokens, Timeout: ad.Timeout},
		Sim:   simSection{Locale: "en", Seed: 1},
		Serve: serveSection{Addr: "127.0.0.1:8080", MaxStepsCeiling: api.Defaults().MaxStepsCeiling},
	}
}

// lookupEnv is os.LookupEnv, replaceable in tests.
type lookupEnv func(string) (string, bool)

// loadConfig builds the configuration from defaults, the file (path, or
// PHONEPILOT_CONFIG, or the user's config directory's phonepilot.toml when
// it exists) and the environment. Flags are applied after, with applyFlags.
// A ./phonepilot.toml is not read unless named: it is noted in Ignored.
func loadConfig(path string, env lookupEnv) (appConfig, error) {
	if env == nil {
		env = os.LookupEnv
	}
	c := defaultAppConfig()
	if path == "" {
		if p, ok := env("PHONEPILOT_CONFIG"); ok && p != "" {
			path = p
		}
	}
	if path == "" {
		if p := userConfigFile(env); p != "" {
			if _, err := os.Stat(p); err == nil {
				path = p
			}
		}
	}
	if st, err := os.Stat(configFileName); err == nil && !st.IsDir() && !sameFile(path, configFileName) {
		c.Ignored = configFileName
	}
	if path != "" {
		if err := c.readFile(path); err != nil {
			return c, err
		}
	}
	if err := c.applyEnv(env); err != nil {
		return c, err
	}
	c.AI.APIKey = apiKeyFor(c.AI.Provider, env)
	return c, nil
}

// tellSource says which config file was read, and that a working
// directory's phonepilot.toml was not.
func (c appConfig) tellSource(w io.Writer) {
	if c.Source != "" {
		fmt.Fprintf(w, "phonepilot: config %s\n", c.Source)
	}
	if c.Ignored != "" {
		fmt.Fprintf(w, "phonepilot: ./%s is NOT read (a working directory's config may be a cloned repository's, not yours); name it with --config to use it\n", c.Ignored)
	}
}

// sameFile says whether a and b name one existing file.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func (c *appConfig) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	f.Close()
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return fmt.Errorf("config %s: larger than %d KiB; a config file is a page of settings", path, maxConfigBytes>>10)
	}
	if err := checkTOMLDepth(data, maxConfigDepth); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return fmt.Errorf("config %s: unknown key(s): %s (known sections: runtime, ai, sim, adb, storage, serve, safety; top-level: device, planner)",
			path, strings.Join(keys, ", "))
	}
	c.Source = path
	return nil
}

// setting is one value the environment (PHONEPILOT_*) and, on the
// subcommands that have the flag, a flag may set.
type setting struct {
	env, flag string
	p         any // *string, *[]string (comma-separated), *int, *int64, *bool or *time.Duration
}

// settings lists every setting with its variable and its flag, so the two
// ways of setting it cannot drift apart.
func (c *appConfig) settings() []setting {
	return []setting{
		{"PHONEPILOT_DEVICE", "device", &c.Device},
		{"PHONEPILOT_PLANNER", "planner", &c.Planner},
		{"PHONEPILOT_OBSERVER", "observer", &c.Observer},
		{"PHONEPILOT_MAX_STEPS", "max-steps", &c.Runtime.MaxSteps},
		{"PHONEPILOT_STEP_RETRIES", "step-retries", &c.Runtime.StepRetries},
		{"PHONEPILOT_WAIT_TIMEOUT", "wait-timeout", &c.Runtime.WaitTimeout},
		{"PHONEPILOT_FIXED_DELAY", "fixed-delay", &c.Runtime.FixedDelay},
		{"PHONEPILOT_AI_PROVIDER", "provider", &c.AI.Provider},
		{"PHONEPILOT_AI_MODEL", "model", &c.AI.Model},
		{"PHONEPILOT_AI_BASE_URL", "base-url", &c.AI.BaseURL},
		{"PHONEPILOT_AI_VISION", "vision", &c.AI.Vision},
		{"PHONEPILOT_AI_IMAGE_EDGE", "image-edge", &c.AI.ImageEdge},
		{"PHONEPILOT_AI_MAX_REASKS", "max-reasks", &c.AI.MaxReasks},
		{"PHONEPILOT_SIM_LOCALE", "sim-locale", &c.Sim.Locale},
		{"PHONEPILOT_SIM_PROFILE", "sim-profile", &c.Sim.Profile},
		{"PHONEPILOT_SIM_SEED", "sim-seed", &c.Sim.Seed},
		{"PHONEPILOT_ADB_SERVER", "adb-server", &c.ADB.Server},
		{"PHONEPILOT_DB", "db", &c.Storage.DB},
		{"PHONEPILOT_ADDR", "addr", &c.Serve.Addr},
		{"PHONEPILOT_TOKEN", "token", &c.Serve.Token},
		{"PHONEPILOT_ALLOWED_HOSTS", "allowed-hosts", &c.Serve.AllowedHosts},
		{"PHONEPILOT_ALLOWED_ORIGINS", "allowed-origins", &c.Serve.AllowedOrigins},
		{"PHONEPILOT_MAX_STEPS_CEILING", "max-steps-ceiling", &c.Serve.MaxStepsCeiling},
	}
}

// applyEnv applies the PHONEPILOT_* variables that are set, in name order,
// so the one reported when several are bad does not vary.
func (c *appConfig) applyEnv(env lookupEnv) error {
	list := c.settings()
	slices.SortFunc(list, func(a, b setting) int { return strings.Compare(a.env, b.env) })
	for _, s := range list {
		v, ok := env(s.env)
		if !ok {
			continue
		}
		if err := setValue(s.p, v); err != nil {
			return fmt.Errorf("environment %s=%q: %w", s.env, v, err)
		}
	}
	return nil
}

// setValue parses s into the setting p points at.
func setValue(p any, s string) error {
	s = strings.TrimSpace(s)
	switch p := p.(type) {
	case *string:
		*p = s
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return errors.New("not a whole number")
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errors.New("not a whole number")
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("not true or false")
		}
		*p = b
	case *[]string: // comma-separated
		*p = nil
		for v := range strings.SplitSeq(s, ",") {
			if v = strings.TrimSpace(v); v != "" {
				*p = append(*p, v)
			}
		}
	case *time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return errors.New(`not a duration (like "10s" or "500ms")`)
		}
		*p = d
	default:
		return fmt.Errorf("unsupported setting type %T", p)
	}
	return nil
}

// apiKeyFor reads the provider's key from its usual environment variable.
func apiKeyFor(provider string, env lookupEnv) string {
	name, ok := ai.KeyEnv(provider)
	if !ok {
		return ""
	}
	v, _ := env(name)
	return strings.TrimSpace(v)
}

// applyFlags copies the flags the user set on fs over the configuration.
// The provider's API key is re-read when --provider changed it.
func (c *appConfig) applyFlags(fs *pflag.FlagSet, env lookupEnv) error {
	if env == nil {
		env = os.LookupEnv
	}
	before := c.AI.Provider
	byFlag := map[string]any{}
	for _, s := range c.settings() {
		byFlag[s.flag] = s.p
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		p, ok := byFlag[f.Name]
		if !ok || err != nil {
			return
		}
		if e := setValue(p, f.Value.String()); e != nil {
			err = fmt.Errorf("--%s=%q: %w", f.Name, f.Value.String(), e)
		}
	})
	if err != nil {
		return err
	}
	if c.AI.Provider != before {
		c.AI.APIKey = apiKeyFor(c.AI.Provider, env)
	}
	return nil
}

// commandConfig is what a command that runs tasks works from: the file and
// the environment (loadConfig), then the flags the user set, checked
// as a whole, and the runtime's Config from it. Every error is bad input.
// It tells notes which config file it read, and of a ./phonepilot.toml it
// did not.
func commandConfig(flags *pflag.FlagSet, path string, notes io.Writer) (appConfig, runtime.Config, error) {
	cfg, err := loadConfig(path, nil)
	if err != nil {
		return cfg, runtime.Config{}, err
	}
	cfg.tellSource(notes)
	if err := cfg.applyFlags(flags, nil); err != nil {
		return cfg, runtime.Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, runtime.Config{}, err
	}
	return cfg, cfg.runtimeConfig(), nil
}

// Validate checks every section that can be checked without a device, so a
// bad setting is reported before any phone is opened.
func (c appConfig) Validate() error {
	if err := c.Safety.Policy.Validate(); err != nil {
		return err
	}
	if c.Safety.ApprovalTimeout < 0 || c.Safety.AnswerTimeout < 0 {
		return fmt.Errorf("safety.approval_timeout and safety.answer_timeout must not be negative, got %s and %s",
			c.Safety.ApprovalTimeout, c.Safety.AnswerTimeout)
	}
	switch c.Sim.Locale {
	case "en", "zh":
	default:
		return fmt.Errorf("sim.locale must be en or zh, got %q", c.Sim.Locale)
	}
	if !slices.Contains(append(sim.ProfileNames(), ""), c.Sim.Profile) {
		return fmt.Errorf(`sim.profile must be "" or one of %s, got %q`, strings.Join(sim.ProfileNames(), ", "), c.Sim.Profile)
	}
	if strings.TrimSpace(c.Device) == "" {
		return errors.New("device must be sim, adb or adb:SERIAL")
	}
	if err := c.plannerSpec().Validate(); err != nil {
		return err
	}
	return c.runtimeConfig().Validate()
}

// runtimeConfig is the runtime's Config from these settings.
func (c appConfig) runtimeConfig() runtime.Config {
	rc := runtime.Defaults()
	r := c.Runtime
	rc.MaxSteps, rc.StepRetries, rc.WaitTimeout = r.MaxSteps, r.StepRetries, r.WaitTimeout
	rc.PollInterval, rc.SettleTimeout = r.PollInterval, r.SettleTimeout
	rc.BackoffBase, rc.BackoffMax, rc.FixedDelay = r.BackoffBase, r.BackoffMax, r.FixedDelay
	rc.StaleAfter = r.StaleAfter
	return rc
}

// gate is the safety gate of every task, from the [safety] policy
// (Validate has checked it).
func (c appConfig) gate() (*safety.Gate, error) { return safety.New(c.Safety.Policy) }

// aiConfig is the AIPlanner's Config from these settings (no Camera yet:
// the device is not open).
func (c appConfig) aiConfig() ai.Config {
	ac := ai.Defaults()
	ac.Provider, ac.Model, ac.BaseURL, ac.APIKey = c.AI.Provider, c.AI.Model, c.AI.BaseURL, c.AI.APIKey
	ac.Vision, ac.ImageEdge = c.AI.Vision, c.AI.ImageEdge
	ac.MaxReasks, ac.MaxTokens, ac.Timeout = c.AI.MaxReasks, c.AI.MaxTokens, c.AI.Timeout
	return ac
}

// String shows the configuration without secrets (the API key and the
// serve token are masked).
func (c appConfig) String() string {
	masked := c
	if masked.AI.APIKey != "" {
		masked.AI.APIKey = "set"
	}
	if masked.Serve.Token != "" {
		masked.Serve.Token = "set"
	}
	return fmt.Sprintf("device=%s planner=%s runtime=%+v ai={provider:%s model:%s base_url:%s vision:%t key:%s} sim=%+v adb=%+v storage=%+v serve={addr:%s token:%s}",
		masked.Device, masked.Planner, masked.Runtime, masked.AI.Provider, masked.AI.Model, masked.AI.BaseURL,
		masked.AI.Vision, keyState(masked.AI.APIKey), masked.Sim, masked.ADB, masked.Storage, masked.Serve.Addr, keyState(masked.Serve.Token))
}

func keyState(s string) string {
	if s == "" {
		return "unset"
	}
	return "set"
}

// checkTOMLDepth refuses a TOML text whose arrays and inline tables nest
// deeper than max, before the decoder sees it. It skips strings (basic,
// literal, multi-line) and comments, so brackets inside them do not count.
func checkTOMLDepth(data []byte, max int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			line++
		case '"', '\'':
			delim := string(c)
			if i+2 < len(data) && data[i+1] == c && data[i+2] == c {
				delim = strings.Repeat(delim, 3)
			}
			i += len(delim)
			for ; i < len(data); i++ {
				if data[i] == '\n' {
					line++
				}
				if c == '"' && data[i] == '\\' {
					i++
					continue
				}
				if strings.HasPrefix(string(data[i:min(len(data), i+len(delim))]), delim) {
					i += len(delim) - 1
					break
				}
			}
		case '[', '{':
			if depth++; depth > max {
				return fmt.Errorf("line %d: arrays and tables nest deeper than %d", line, max)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
