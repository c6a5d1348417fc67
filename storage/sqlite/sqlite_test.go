package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "phonepilot.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// A reopened database keeps what was written and migrating twice is a no-op.
func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "pp.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.CreateTask(t.Context(), storage.Task{Goal: "g", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateStatus(t.Context(), task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running, At: time.Now(), Owner: "h:1"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	ids, err := s.MarkInterrupted(t.Context(), []string{"h:1"}, "restarted", time.Now())
	if err != nil || len(ids) != 1 || ids[0] != task.ID {
		t.Fatalf("MarkInterrupted after reopen = %v, %v", ids, err)
	}
}

// The connection really runs in WAL mode with a busy timeout and foreign keys.
func TestPragmas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pp.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "foreign_keys": "1", "synchronous": "1"} {
		var got string
		if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if strings.ToLower(got) != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data/home")
	p, err := sqlite.DefaultPath()
	if err != nil || p != "/data/home/phonepilot/phonepilot.db" {
		t.Errorf("DefaultPath = %q, %v", p, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	p, _ = sqlite.DefaultPath()
	if p != "/home/u/.local/share/phonepilot/phonepilot.db" {
		t.Errorf("DefaultPath without XDG = %q", p)
	}
}

func TestOpenBadPath(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), ""); err == nil {
		t.Error("empty path accepted")
	}
}
