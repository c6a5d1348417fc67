package ai

// Internals the external tests (package ai_test) check directly.
var (
	MaxSummaryLines = maxSummaryLines
	KeepReplayed    = keepReplayed
)
