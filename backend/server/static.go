package server

import (
	"io/fs"
	"net/http"
)

// placeholder is served at / when the dashboard has not been built, so that
// `go test ./...` and a plain `go build` work before `npm run build`.
const placeholder = `<!doctype html><meta charset="utf-8"><title>quotagate</title>
<h1>quotagate</h1><p>The dashboard has not been built into this binary. Run <code>make build</code>
(or <code>npm --prefix frontend run build</code> before <code>go build</code>). The admin API at
<code>/admin/api/state</code> works regardless.</p>
`

// dashboard serves the embedded frontend, or the placeholder page.
func dashboard(assets fs.FS) http.Handler {
	var files http.Handler
	if assets != nil {
		if _, err := fs.Stat(assets, "index.html"); err == nil {
			files = http.FileServerFS(assets)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		if files == nil {
			h.Set("Content-Type", "text/html; charset=utf-8")
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(placeholder))
			return
		}
		if r.URL.Path == "/" || r.URL.Path == "/index.html" {
			h.Set("Cache-Control", "no-cache") // assets are content-hashed; the page is not
		}
		files.ServeHTTP(w, r)
	})
}
