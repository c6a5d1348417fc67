package ai

// Internals the external tests (package ai_test) check directly.
var (
	FitSize         = fitSize
	FitImage        = fitImage
	MaxSummaryLines = maxSummaryLines
	KeepReplayed    = keepReplayed
)
