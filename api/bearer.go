package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// RequireToken guards next with the API's bearer token check, for other
// handlers served beside the API (the MCP endpoint of `phonepilot mcp
// --http`): with a token set, a request without "Authorization: Bearer
// <token>" gets 401 and the API's error shape. The empty token lets every
// request through (CheckBind allows that on loopback only).
func RequireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearerToken(r.Header.Get("Authorization"))
		h := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
			writeError(w, nil, r, errUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
