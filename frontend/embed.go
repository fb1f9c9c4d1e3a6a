// Package frontend embeds the built dashboard so the server and the Wails
// window serve the same assets. dist/.gitkeep is committed (and restored by
// vite from public/) so this compiles on a fresh clone before `npm run build`.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var Dist embed.FS

// FS returns the dist sub-tree, rooted so that "index.html" is at the top.
func FS() fs.FS {
	s, err := fs.Sub(Dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal embedded path; failure is a build bug
	}
	return s
}
