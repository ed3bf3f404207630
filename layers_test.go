package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// webServerCode reports whether an import is the web server's: package
// handlers itself (not its sub-packages: the report, the charts) or echo.
func webServerCode(path string) bool {
	return path == "iolab/handlers" || strings.HasPrefix(path, "github.com/labstack/echo")
}

// The commands that read the store and write what they find — report,
// compare, show, and export (with runs and presets in cmd_store.go) —
// import no code of the web server: the report is package
// handlers/report, the CSV writer handlers/chart's.
func TestReportCompareShowExportImportNoHTTP(t *testing.T) {
	for _, file := range []string{"cmd_report.go", "cmd_compare.go", "cmd_show.go", "cmd_store.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Imports) == 0 {
			t.Errorf("%s: no imports parsed", file)
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if webServerCode(path) {
				t.Errorf("%s imports %s", file, path)
			}
		}
	}
}

// The report's package and the CSV writer's, which those commands use,
// link no HTTP code at all: neither the web server's packages nor echo
// nor net/http (they write files and writers, they answer no request).
func TestReportPackageLinksNoHTTP(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the packages' dependencies")
	}
	for _, pkg := range []string{"iolab/handlers/report", "iolab/handlers/chart"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 || deps[len(deps)-1] != pkg {
			t.Fatalf("go list -deps %s listed %q", pkg, deps)
		}
		for _, d := range deps {
			if d == "net/http" || webServerCode(d) {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
