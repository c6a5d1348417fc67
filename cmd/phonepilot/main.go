// Command phonepilot drives an Android phone (or the built-in simulator)
// toward a goal written in plain language.
//
// Each subcommand lives in its own file and registers itself with
// register(); main only builds the root command and runs it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// exitError carries a process exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitWith makes a command end the process with code after printing err.
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// subcommands is filled by each subcommand file's init.
var subcommands []func() *cobra.Command

func register(f func() *cobra.Command) { subcommands = append(subcommands, f) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "phonepilot",
		Short:         "Drive an Android phone toward a goal in plain language",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.SetVersionTemplate("phonepilot {{.Version}}\n")
	for _, f := range subcommands {
		root.AddCommand(f())
	}
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

// run executes the CLI and returns the process exit status.
func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "phonepilot:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "phonepilot:", err)
	return 2
}
