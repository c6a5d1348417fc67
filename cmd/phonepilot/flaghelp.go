package main

import (
	"strings"

	"github.com/spf13/pflag"

	"phonepilot/device/sim"
	"phonepilot/plan/ai"
)

// simProfileHelp is the help of every --sim-profile flag: the profiles the
// simulator has, from its own list (docs/sim.md says what each does).
func simProfileHelp(what string) string {
	return what + `: "" (none), ` + strings.Join(sim.ProfileNames(), ", ") + " (docs/sim.md)"
}

// defaultProvider is the AI provider of a command that names none.
const defaultProvider = "anthropic"

// addPlannerFlags registers --planner and the AI planner's --provider,
// --model and --base-url, with help built from the planners and the
// registered providers; what says whose planner --planner picks. Every
// command that runs tasks takes them from here (the settings read them by
// name: cmd/phonepilot/config.go).
func addPlannerFlags(f *pflag.FlagSet, what string) {
	f.String("planner", plannerRule, what+": "+strings.Join(plannerNames, " or ")+" ("+plannerRule+" needs no model)")
	addProviderFlags(f, "the "+plannerAI+" planner")
}

// addProviderFlags registers --provider, --model and --base-url for the
// AI planner of, its help naming the registered providers.
func addProviderFlags(f *pflag.FlagSet, of string) {
	f.String("provider", defaultProvider, "AI provider of "+of+": "+strings.Join(ai.Providers(), " or "))
	f.String("model", "", "AI model id of "+of+" (default: the provider's default)")
	f.String("base-url", "", "AI endpoint of "+of+" (OpenAI-compatible servers such as vLLM or Ollama: include /v1)")
}
