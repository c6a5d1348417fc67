package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

func init() { register(newTasksCmd) }

// dbFlagHelp documents --db wherever it appears.
const dbFlagHelp = "database: a SQLite file path (default ~/.local/share/phonepilot/phonepilot.db) or PostgreSQL (a postgres:// URL or host=… dbname=… key=value); env PHONEPILOT_DB"

// openStore opens the store --db names: a PostgreSQL DSN (a postgres://
// URL or a key=value string, storage.IsPostgresDSN), a SQLite path (optionally "sqlite:" prefixed), or, when empty, the
// SQLite file in the user's data directory.
//
// Every command that opens the store first ends the tasks that processes
// now gone left running (a `run` killed with -9): they become interrupted.
func openStore(ctx context.Context, spec string) (storage.Store, error) {
	store, err := openStoreOnly(ctx, spec)
	if err != nil {
		return nil, err
	}
	// A failed recovery must not keep a user from reading the tasks; the
	// next command tries again.
	_, _ = task.Recover(ctx, store, task.DefaultOwner(), nil, nil, nil)
	return store, nil
}

func openStoreOnly(ctx context.Context, spec string) (storage.Store, error) {
	switch {
	case isPostgres(spec):
		return postgres.Open(ctx, spec)
	case spec == "":
		p, err := sqlite.DefaultPath()
		if err != nil {
			return nil, err
		}
		return sqlite.Open(ctx, p)
	}
	return sqlite.Open(ctx, strings.TrimPrefix(spec, "sqlite:"))
}

// resolveDB is the database a command uses: --db when given, else the
// configuration's storage.db (file, then PHONEPILOT_DB); "" means the SQLite
// file in the user's data directory (see openStore).
func resolveDB(cmd *cobra.Command, configPath string) (string, error) {
	if f := cmd.Flags().Lookup("db"); f != nil && f.Changed {
		return f.Value.String(), nil
	}
	cfg, err := loadConfig(configPath, nil)
	if err != nil {
		return "", err
	}
	return cfg.Storage.DB, nil
}

func newTasksCmd() *cobra.Command {
	var (
		status, config string
		limit          int
		asJSON         bool
	)
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List recorded tasks, newest first",
		Example: `  phonepilot tasks
  phonepilot tasks --status failed --limit 5
  phonepilot tasks --db postgres://pp@db/phonepilot --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" && !lifecycle.Status(status).Valid() {
				return exitWith(2, fmt.Errorf("--status %q: want one of %s", status, lifecycle.Join(lifecycle.Statuses, ", ")))
			}
			if limit < 1 || limit > storage.MaxPage {
				return exitWith(2, fmt.Errorf("--limit %d: want 1..%d", limit, storage.MaxPage))
			}
			db, err := resolveDB(cmd, config)
			if err != nil {
				return exitWith(2, err)
			}
			store, err := openStore(cmd.Context(), db)
			if err != nil {
				return exitWith(1, err)
			}
			defer store.Close()
			page, err := store.ListTasks(cmd.Context(), storage.Query{Status: lifecycle.Status(status), Limit: limit})
			if err != nil {
				return exitWith(1, err)
			}
			if asJSON {
				return writeJSONOut(cmd.OutOrStdout(), page)
			}
			printTasks(cmd.OutOrStdout(), page.Tasks)
			return nil
		},
	}
	f := cmd.Flags()
	f.String("db", "", dbFlagHelp)
	f.StringVar(&config, "config", "", configFlagHelp)
	f.StringVar(&status, "status", "", "only tasks with this status: "+lifecycle.Join(lifecycle.Statuses, ", "))
	f.IntVar(&limit, "limit", 20, "how many tasks")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func writeJSONOut(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printTasks(w io.Writer, tasks []storage.Task) {
	if len(tasks) == 0 {
		fmt.Fprintln(w, "no tasks")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tCAUSE\tDEVICE\tCREATED\tTOOK\tWAITED\tGOAL")
	now := time.Now()
	for _, t := range tasks {
		cause := string(t.Cause)
		if cause == "" {
			cause = "-"
		}
		// WAITED: how much of TOOK the task spent waiting for a person.
		waited := "-"
		if w := t.WaitedAt(now); w > 0 {
			waited = w.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, cause, t.Device,
			t.Created.Local().Format("2006-01-02 15:04:05"), took(t), waited, oneLine(t.Goal, 60))
	}
	tw.Flush()
}

// took is how long the task ran ("-" if it has not).
func took(t storage.Task) string {
	if t.Started == nil {
		return "-"
	}
	end := time.Now()
	if t.Finished != nil {
		end = *t.Finished
	}
	return end.Sub(*t.Started).Round(10 * time.Millisecond).String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
