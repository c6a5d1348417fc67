package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// RequireToken (what guards /mcp beside the API) lets through only the
// token it was given: no header, another scheme, a wrong token or a prefix
// of the right one is 401.
func TestRequireToken(t *testing.T) {
	const token = "0123456789abcdef-right"
	h := RequireToken(token, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for auth, want := range map[string]int{
		"":                              http.StatusUnauthorized,
		"Basic " + token:                http.StatusUnauthorized,
		"Bearer 0123456789abcdef-wrong": http.StatusUnauthorized,
		"Bearer 0123456789abcdef":       http.StatusUnauthorized,
		"Bearer " + token + "x":         http.StatusUnauthorized,
		"Bearer " + token:               http.StatusNoContent,
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Authorization %q: %d, want %d", auth, w.Code, want)
		}
	}
}
