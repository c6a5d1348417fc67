package archtest

// The import rules of docs/ARCHITECTURE.md. Keys and values are package
// paths relative to the module (phonepilot/...). A value "x/*" allows any
// package below x; "*" allows every phonepilot package. Standard library and
// third-party modules are not restricted here, except by restrictedModules.
//
// A package that is not a key fails the test: add it here AND to the table
// in docs/ARCHITECTURE.md, in the same commit.
var allowedImports = map[string][]string{
	"scene":            {"apps", "internal/editdist"},
	"apps":             {"internal/editdist"},
	"perception":       {"scene"},
	"perception/frame": nil,
	// Fitting a screenshot to a model's limits: scale, encode.
	"perception/shot":   {"perception/frame"},
	"device":            {"scene"},
	"device/fake":       {"device", "scene"},
	"device/devicetest": {"device", "scene", "perception"},
	"device/adb":        {"apps", "device", "device/adb/helper", "scene", "perception", "perception/frame", "internal/clock"},
	// The simulator plays phonepilot's helper (its protocol server and the embedded dex it checks).
	"device/sim":      {"apps", "device", "device/adb/helper", "scene", "perception", "perception/frame", "internal/clock"},
	"device/sim/adbd": nil,
	// A hand-written adbd.Phone for the transport's and simadb's tests.
	"device/sim/adbd/adbdtest": nil,
	"device/adb/helper":        nil,
	"device/wda":               {"apps", "device", "scene", "perception/frame"},
	"device/sim/simwda":        {"device/sim"},
	// usbmuxd's protocol: list the iPhones on USB, tunnel to a port on one.
	"device/usbmux": nil,
	// The simulated iPhone on a simulated usbmuxd (phonepilot sim --usbmuxd).
	"device/sim/simusbmux": {"device/usbmux"},
	"device/sim/simadb":    {"device/sim", "device/sim/adbd", "internal/*"},
	// The table of backends: each backend's names, checks, opening (with
	// its camera), listing and labels; commands and servers loop over it.
	"device/backend": {"device", "device/adb", "device/sim", "device/sim/simwda", "device/usbmux", "device/wda", "perception/frame"},
	"tools":          {"apps", "device", "scene", "internal/clock"},
	"plan":           {"apps", "scene", "tools", "lifecycle"},
	"plan/rule":      {"apps", "plan", "scene", "tools", "lifecycle"},
	"plan/ai":        {"plan", "plan/ai/tokens", "scene", "tools", "perception/frame", "perception/shot", "internal/clock", "lifecycle"},
	// Token counts for servers that report none: a tokenizer, image rules.
	"plan/ai/tokens": nil,
	"safety":         {"apps", "scene", "tools"},
	// The touch table every front end's tests drive: the simulator's
	// irreversible targets, the ways to touch them, their effects.
	"safety/touchtest":  {"device", "device/sim", "safety", "tools"},
	"plan/ai/anthropic": {"plan/ai"},
	"plan/ai/openai":    {"plan/ai"},
	// Test helpers shared by the AIPlanner's and the providers' tests.
	"plan/ai/aitest": {"plan/ai", "plan/ai/tokens", "scene", "internal/*"},
	"runtime":        {"apps", "plan", "tools", "device", "scene", "perception", "internal/clock", "lifecycle", "safety"},
	"storage":        {"scene", "plan", "tools", "lifecycle"},
	// SQL shared by the two stores.
	"storage/internal/sqlstore": {"storage", "plan", "tools", "lifecycle"},
	"storage/sqlite":            {"storage", "storage/internal/sqlstore"},
	"storage/postgres":          {"storage", "storage/internal/sqlstore"},
	"storage/storagetest":       {"storage", "scene", "plan", "tools", "lifecycle"},
	"api":                       {"task", "storage", "internal/*", "lifecycle", "flow"},
	// Flows: the file format, export from a recorded task, the replay planner.
	"flow": {"plan", "plan/rule", "scene", "tools", "storage", "task", "lifecycle", "device"},
	// The vocabulary of a task's life: statuses, causes, event and step types.
	"lifecycle": nil,
	// phonebench's task definitions; its tests also run plan/rule through
	// the runtime and ask the safety gate, on the simulator.
	"phonebench/tasks": {"device/sim", "lifecycle"},
	// The phonebench harness: policies over the runtime (through the task
	// service, on a temporary SQLite store), the peer loop over a device,
	// the floor, records and the report.
	"phonebench": {"phonebench/tasks", "device", "device/sim", "device/sim/simwda", "device/wda", "scene", "tools", "plan", "plan/ai", "plan/rule", "runtime", "safety",
		"task", "lifecycle", "storage", "storage/sqlite", "internal/clock"},
	// The task service: queue, recorder, recovery, ownership.
	"task": {"runtime", "storage", "device", "scene", "plan", "tools", "internal/*", "lifecycle"},
	// phonepilot over MCP: direct tools on the runtime, delegating tools on
	// the task service; it sends a screenshot to the client that asks.
	"mcpserver": {"runtime", "task", "storage", "device", "scene", "tools", "perception/frame", "perception/shot", "internal/*", "lifecycle", "flow"},
	// The device farm on River over PostgreSQL: workers, fronts, leases.
	"farm":           {"task", "storage", "storage/postgres", "device", "lifecycle"},
	"cmd/phonepilot": {"*"},
	"internal/*":     nil,
}

// frameImporters are the only packages that may import perception/frame, in
// any file, tests included: the drivers that make frames, the AIPlanner and
// its providers that send them to a model, and cmd that wires them.
var frameImporters = []string{"device/adb", "device/wda", "device/sim", "device/sim/*", "device/backend", "perception/shot", "plan/ai", "plan/ai/*", "mcpserver", "cmd/phonepilot"}

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
	{"github.com/modelcontextprotocol/go-sdk", []string{"mcpserver"}},
	{"modernc.org/sqlite", []string{"storage/*"}},
	{"github.com/jackc/pgx", []string{"storage/*", "farm"}},
	{"github.com/riverqueue/river", []string{"farm"}},
	{"github.com/lib/pq", []string{"storage/*"}},
	{"github.com/mattn/go-sqlite3", []string{"storage/*"}},
}
