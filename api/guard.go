package api

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinTokenLen is the shortest bearer token the server accepts: 16
// characters of `openssl rand -hex 8` are 64 bits, beyond online guessing.
// `openssl rand -hex 16` (32 characters) is what the docs suggest.
const MinTokenLen = 16

// streamPattern is the one route that also takes ?access_token=: browsers'
// EventSource cannot send an Authorization header. Everywhere else a token
// in the URL would only leak into logs and histories.
const streamPattern = "/v1/tasks/{id}/events"

// CheckToken refuses a token that is easy to guess or cannot be sent in a
// header as typed. The empty token means "no token" and is the caller's
// (CheckBind's) business.
func CheckToken(token string) error {
	if token == "" {
		return nil
	}
	if n := utf8.RuneCountInString(token); n < MinTokenLen {
		return fmt.Errorf("token is %d characters; use at least %d (e.g. --token \"$(openssl rand -hex 16)\")", n, MinTokenLen)
	}
	for _, r := range token {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("token has a space or control character (%q); use letters, digits and punctuation only", r)
		}
	}
	return nil
}

// bearerToken takes the credentials of an "Authorization: Bearer <token>"
// header. The scheme word is case-insensitive (RFC 9110 §11.1).
func bearerToken(header string) (string, bool) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.TrimSpace(rest)
	return tok, tok != ""
}

// queryTokenAllowed says whether r may carry its token as ?access_token=.
// r.Pattern is the ServeMux pattern that matched.
func queryTokenAllowed(r *http.Request) bool { return r.Pattern == streamPattern }

// uncleanPath reports a request path that ServeMux would answer with a
// redirect (and an HTML body) to its cleaned form: "." or ".." segments,
// "//". The API answers those itself, in its own error shape.
func uncleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false // "*" of OPTIONS, CONNECT's host:port: ServeMux's own business
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c != p
}
