package api

import (
	"embed"
	"io/fs"
	"net/http"
)

// The page and the OpenAPI document are embedded: nothing to build or
// install on the user's machine.
//
//go:embed web/index.html web/app.js web/style.css
var webFiles embed.FS

//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) webRoutes(mux *http.ServeMux) {
	sub, _ := fs.Sub(webFiles, "web")
	files := http.FileServerFS(sub)
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /tasks/{id}", page) // the page routes itself from the URL
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "index.html" || r.URL.Path == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})))
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, err := w.Write(openAPIDoc)
	return err
}
