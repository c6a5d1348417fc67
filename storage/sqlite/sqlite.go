// Package sqlite is the default storage.Store: one SQLite file (pure Go,
// modernc.org/sqlite), in WAL mode with a busy timeout, migrated with
// versioned SQL files embedded in the binary.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"phonepilot/storage"
	"phonepilot/storage/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a storage.Store in one SQLite file.
type Store struct {
	*sqlstore.Store
	path string
}

var _ storage.Store = (*Store)(nil)

// DefaultPath is where the database lives unless the user says otherwise:
// $XDG_DATA_HOME/phonepilot/phonepilot.db, else ~/.local/share/phonepilot/phonepilot.db.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "phonepilot", "phonepilot.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("sqlite: no home directory for the default database path (give one with --db): %w", err)
	}
	return filepath.Join(home, ".local", "share", "phonepilot", "phonepilot.db"), nil
}

// DSN is the connection string for path. Every pragma is applied per
// connection; _txlock=immediate makes a transaction take the write lock at
// BEGIN, so a read-then-write transaction waits on busy_timeout instead of
// failing at once with SQLITE_BUSY.
func DSN(path string) string {
	v := url.Values{}
	v.Add("_pragma", "busy_timeout(10000)")
	v.Add("_pragma", "journal_mode(WAL)")
	v.Add("_pragma", "synchronous(NORMAL)")
	v.Add("_pragma", "foreign_keys(1)")
	v.Set("_txlock", "immediate")
	return "file:" + path + "?" + v.Encode()
}

// Open opens (creating it and its directory if needed) and migrates the
// database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create directory for %s: %w", path, err)
	}
	dsn := DSN(path)
	// Writes go through one connection so writers queue fairly in Go rather
	// than spinning in SQLite's busy handler; reads share a pool (WAL lets
	// them run beside the writer).
	write, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	if err := sqlstore.Migrate(ctx, write, goose.DialectSQLite3, migrations); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(8)
	closeBoth := func() error { return errors.Join(read.Close(), write.Close()) }
	return &Store{Store: sqlstore.New(write, read, sqlstore.Dialect{}, closeBoth), path: path}, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }
