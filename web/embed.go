// Package web holds the dashboard's templates and static files, embedded in
// the binary. echarts comes from the npm registry at build time
// (`go generate ./web` runs npm ci and copies echarts.min.js into
// static/vendor/); the browser never loads anything from elsewhere.
package web

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
)

//go:generate sh -c "npm ci --no-audit --no-fund --silent && mkdir -p static/vendor && cp node_modules/echarts/dist/echarts.min.js static/vendor/echarts.min.js"

//go:embed templates static
var files embed.FS

// Templates is the templates directory.
func Templates() fs.FS {
	sub, err := fs.Sub(files, "templates")
	if err != nil {
		panic(err) // the directory is embedded: cannot happen
	}
	return sub
}

// Static is the static directory, served under /static/. It fails when the
// build skipped `go generate ./web`, which fetches echarts.
func Static() (fs.FS, error) {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(sub, "vendor/echarts.min.js"); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("web: static/vendor/echarts.min.js is missing from this build: run `go generate ./web` (npm ci) before `go build`")
	}
	return sub, nil
}
