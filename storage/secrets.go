package storage

import (
	"net/url"
	"regexp"
	"strings"
)

// conninfoKeyword is the start of a libpq key=value connection string
// ("host=db user=pp password=…"), PostgreSQL's other DSN form.
var conninfoKeyword = regexp.MustCompile(`(?i)^\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|service|connect_timeout|application_name|target_session_attrs)\s*=`)

// conninfoSecret is a secret's value in a key=value connection string:
// a quoted value (with \' and \\ escapes) or up to the next space.
var conninfoSecret = regexp.MustCompile(`(?i)\b(password|sslpassword)(\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

// IsPostgresDSN says whether s names a PostgreSQL database: a postgres://
// or postgresql:// URL, or a libpq key=value string ("host=db dbname=pp
// password=…"), which must never be taken for a SQLite file name.
func IsPostgresDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") || conninfoKeyword.MatchString(s)
}

// RedactSecrets removes the secrets a configuration string can carry: a
// URL's password and the values of its query parameters named like secrets
// (key, api_key, token, password…), and the password of a key=value
// connection string. Everything else is kept, so the reader still sees
// which server and database.
func RedactSecrets(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && (u.Host != "" || u.User != nil) {
		changed := false
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx") // as url.URL.Redacted writes it
				changed = true
			}
		}
		if u.RawQuery != "" {
			q := u.Query()
			for k := range q {
				if secretKey(k) {
					q.Set(k, "[redacted]")
					changed = true
				}
			}
			if changed {
				u.RawQuery = q.Encode()
			}
		}
		if changed {
			return u.String()
		}
		return s
	}
	return conninfoSecret.ReplaceAllString(s, "${1}${2}[redacted]")
}
