// Package archtest holds the architecture test: it lists every phonepilot
// package with `go list -deps -test -json ./...` and fails when a package
// imports something the import table (rules_test.go, mirrored in
// docs/ARCHITECTURE.md) does not allow, the Perception Boundary included.
// It has no code of its own; everything is in its tests.
package archtest
