// Package postgres is the storage.Store for teams that share one PostgreSQL
// database (pgx). It behaves exactly like storage/sqlite (the same
// conformance suite runs on both); migrations are embedded and applied under
// a session lock, so several processes may start at once.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"phonepilot/storage"
	"phonepilot/storage/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a storage.Store in PostgreSQL.
type Store struct {
	*sqlstore.Store
}

var _ storage.Store = (*Store)(nil)

// Open connects to dsn (a postgres:// URL or key=value string) and migrates
// the schema.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("postgres: empty connection string")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db.SetMaxOpenConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &Store{Store: sqlstore.New(db, db, sqlstore.Dialect{Numbered: true}, db.Close)}, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrations lock: %w", err)
	}
	return sqlstore.Migrate(ctx, db, goose.DialectPostgres, migrations, goose.WithSessionLocker(locker))
}

// CreateTaskTx stores a new task as CreateTask does, inside tx (a pgx
// transaction on the same database), so that whatever else tx writes (a
// farm's job for the task) commits with it or not at all. It returns the
// task as it will be stored.
func (s *Store) CreateTaskTx(ctx context.Context, tx pgx.Tx, t storage.Task) (storage.Task, error) {
	t, query, args, err := s.InsertTask(t)
	if err != nil {
		return storage.Task{}, err
	}
	if _, err := tx.Exec(ctx, query, args...); err != nil {
		return storage.Task{}, fmt.Errorf("create task: %w", err)
	}
	return t, nil
}
