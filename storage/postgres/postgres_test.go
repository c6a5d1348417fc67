package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/storage/storagetest"
)

// dsn returns the server to test against: PHONEPILOT_TEST_POSTGRES, as
// printed by scripts/pg-start.sh. Without it the tests skip, unless
// PHONEPILOT_INTEGRATION=1 demands them.
func dsn(t *testing.T) string {
	t.Helper()
	d := os.Getenv("PHONEPILOT_TEST_POSTGRES")
	if d == "" {
		if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
			t.Fatal("PHONEPILOT_INTEGRATION=1 but PHONEPILOT_TEST_POSTGRES is not set; run: eval \"$(scripts/pg-start.sh)\"")
		}
		t.Skip("PostgreSQL not configured: set PHONEPILOT_TEST_POSTGRES (eval \"$(scripts/pg-start.sh)\")")
	}
	return d
}

// freshSchema makes an empty schema for one test and returns a DSN whose
// search_path points at it, so tests never see each other's rows.
func freshSchema(t *testing.T, base string) string {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	schema := "pp_test_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("PHONEPILOT_TEST_POSTGRES must be a postgres:// URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestConformance(t *testing.T) {
	base := dsn(t)
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := postgres.Open(t.Context(), freshSchema(t, base))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Two processes starting at once both migrate safely, and a second
// migration is a no-op.
func TestConcurrentOpen(t *testing.T) {
	d := freshSchema(t, dsn(t))
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			s, err := postgres.Open(t.Context(), d)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
}

func TestOpenBadDSN(t *testing.T) {
	if _, err := postgres.Open(t.Context(), ""); err == nil {
		t.Error("empty DSN accepted")
	}
	if _, err := postgres.Open(t.Context(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"); err == nil {
		t.Error("unreachable server accepted")
	}
}
