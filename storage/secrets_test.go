package storage_test

import (
	"strings"
	"testing"

	"phonepilot/storage"
)

// Both forms of a PostgreSQL DSN are recognised (a key=value one was taken
// for a SQLite file name and stored with its password), and secrets in
// DSNs and URLs are redacted wherever RedactSecrets or RedactConfig is
// used: the task's stored config, the API's answer, serve's log line.
func TestDSNsAndURLSecrets(t *testing.T) {
	for _, c := range []struct {
		in, want, secret string
		postgres         bool
	}{
		{"postgres://pp:s3cr3t@db:5432/pp?sslmode=disable", "postgres://pp:xxxxx@db:5432/pp?sslmode=disable", "s3cr3t", true},
		{"postgresql://pp:s3cr3t@db/pp?password=s3cr3t", "postgresql://pp:xxxxx@db/pp?password=%5Bredacted%5D", "s3cr3t", true},
		{"host=db port=5432 dbname=pp user=pp password=s3cr3t sslmode=disable", "host=db port=5432 dbname=pp user=pp password=[redacted] sslmode=disable", "s3cr3t", true},
		{"host=db password = 's3 cr\\'3t' dbname=pp", "host=db password = [redacted] dbname=pp", "cr", true},
		{"  dbname=pp PASSWORD=s3cr3t", "  dbname=pp PASSWORD=[redacted]", "s3cr3t", true},
		{"https://llm.example/v1?key=sk-123&api-version=2", "https://llm.example/v1?api-version=2&key=%5Bredacted%5D", "sk-123", false},
		{"https://llm.example/v1?api_key=sk-123", "https://llm.example/v1?api_key=%5Bredacted%5D", "sk-123", false},
		{"https://u:sk-123@llm.example/v1", "https://u:xxxxx@llm.example/v1", "sk-123", false},
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1", "", false},
		{"/home/me/phonepilot.db", "/home/me/phonepilot.db", "", false},
		{"sqlite:pp.db", "sqlite:pp.db", "", false},
		{"my password=file.db", "my password=[redacted]", "file.db", false},
	} {
		got := storage.RedactSecrets(c.in)
		if got != c.want || (c.secret != "" && strings.Contains(got, c.secret)) {
			t.Errorf("RedactSecrets(%q) = %q, want %q", c.in, got, c.want)
		}
		if storage.IsPostgresDSN(c.in) != c.postgres {
			t.Errorf("IsPostgresDSN(%q) = %v", c.in, !c.postgres)
		}
	}
	raw, err := storage.RedactConfig(map[string]any{"storage": map[string]any{"db": "host=db user=pp password=s3cr3t"},
		"ai": map[string]any{"base_url": "https://llm.example/v1?key=sk-123"}})
	if err != nil || strings.Contains(string(raw), "s3cr3t") || strings.Contains(string(raw), "sk-123") {
		t.Errorf("RedactConfig kept a secret: %s (%v)", raw, err)
	}
}
