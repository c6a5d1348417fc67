package archtest

// The import rules of docs/ARCHITECTURE.md. Keys and values are package
// paths relative to the module (phonepilot/...). A value "x/*" allows any
// package below x; "*" allows every phonepilot package. Standard library and
// third-party modules are not restricted here, except by restrictedModules.
//
// A package that is not a key fails the test: add it here AND to the table
// in docs/ARCHITECTURE.md, in the same commit.
var allowedImports = map[string][]string{
	"scene":             nil,
	"apps":              nil,
	"perception":        {"scene"},
	"perception/frame":  nil,
	"device":            {"scene"},
	"device/fake":       {"device", "scene"},
	"device/devicetest": {"device", "scene", "perception", "internal/*"},
	"device/adb":        {"apps", "device", "scene", "perception", "perception/frame", "internal/clock"},
	"device/sim":        {"device", "scene", "perception", "perception/frame", "internal/clock"},
	"device/sim/adbd":   {"internal/*"},
	// A hand-written adbd.Phone for the transport's and simadb's tests.
	"device/sim/adbd/adbdtest": nil,
	"device/sim/simadb":        {"device/sim", "device/sim/adbd", "internal/*"},
	"tools":                    {"apps", "device", "scene", "internal/clock"},
	"plan":                     {"scene", "tools", "task/lifecycle"},
	"plan/rule":                {"apps", "plan", "scene", "tools", "task/lifecycle"},
	"plan/ai":                  {"plan", "scene", "tools", "perception/frame", "internal/clock", "task/lifecycle"},
	"safety":                   {"scene", "tools"},
	"plan/ai/anthropic":        {"plan/ai", "plan", "tools", "scene", "perception/frame"},
	"plan/ai/openai":           {"plan/ai", "plan", "tools", "scene", "perception/frame"},
	// Test helpers shared by the AIPlanner's and the providers' tests.
	"plan/ai/aitest": {"plan/ai", "plan", "tools", "scene", "perception/frame", "internal/*", "task/lifecycle"},
	"runtime":        {"apps", "plan", "tools", "device", "scene", "perception", "internal/clock", "task/lifecycle", "safety"},
	"storage":        {"scene", "plan", "tools", "task/lifecycle"},
	// SQL shared by the two stores.
	"storage/internal/sqlstore": {"storage", "scene", "plan", "tools", "task/lifecycle"},
	"storage/sqlite":            {"storage", "storage/internal/sqlstore", "task/lifecycle"},
	"storage/postgres":          {"storage", "storage/internal/sqlstore", "task/lifecycle"},
	"storage/storagetest":       {"storage", "scene", "plan", "tools", "task/lifecycle"},
	"api":                       {"task", "runtime", "storage", "device", "scene", "plan", "tools", "internal/*", "task/lifecycle"},
	// The vocabulary of a task's life: statuses, causes, event and step types.
	"task/lifecycle": nil,
	// The task service: queue, recorder, recovery, ownership.
	"task": {"runtime", "storage", "device", "scene", "plan", "tools", "internal/*", "task/lifecycle"},
	// The device farm on River over PostgreSQL: workers, fronts, leases.
	"farm":           {"task", "storage", "storage/postgres", "device", "device/fake", "scene", "runtime", "internal/*", "task/lifecycle"},
	"cmd/phonepilot": {"*"},
	"internal/*":     nil,
}

// frameImporters are the only packages that may import perception/frame, in
// any file, tests included: the drivers that make frames, the AIPlanner and
// its providers that send them to a model, and cmd that wires them.
var frameImporters = []string{"device/adb", "device/sim", "device/sim/*", "plan/ai", "plan/ai/*", "cmd/phonepilot"}

const framePkg = "perception/frame"

// restrictedModules are third-party modules only some packages may import:
// the provider SDKs (so the rule path never calls into them) and database
// drivers. A module matches its own path and everything below it.
// cmd/phonepilot may import anything.
var restrictedModules = []struct {
	module string
	only   []string
}{
	{"github.com/anthropics/anthropic-sdk-go", []string{"plan/ai/anthropic"}},
	{"github.com/openai/openai-go", []string{"plan/ai/openai"}},
	{"modernc.org/sqlite", []string{"storage/*"}},
	{"github.com/jackc/pgx", []string{"storage/*", "farm"}},
	{"github.com/riverqueue/river", []string{"farm"}},
	{"github.com/lib/pq", []string{"storage/*"}},
	{"github.com/mattn/go-sqlite3", []string{"storage/*"}},
}
