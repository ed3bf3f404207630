package cli

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// storeCommandFiles hold the commands that read the store and write what
// they find: report, compare, show, export, runs and presets, and the
// store helpers they share.
var storeCommandFiles = []string{"cmd_report.go", "cmd_compare.go", "cmd_show.go", "cmd_export.go", "cmd_runs.go", "cmd_presets.go", "store.go"}

// webServerCode reports whether a package is the web server's: package
// handlers itself (not its sub-packages: the report, the charts) or echo.
func webServerCode(path string) bool {
	return path == "iolab/handlers" || strings.HasPrefix(path, "github.com/labstack/echo")
}

// fileImports are the import paths of a Go file.
func fileImports(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, path)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no imports parsed", file)
	}
	return out
}

// The store's commands import no code of the web server: the report is
// package handlers/report, the CSV writer handlers/chart's.
func TestReportCompareShowExportImportNoHTTP(t *testing.T) {
	for _, file := range storeCommandFiles {
		for _, path := range fileImports(t, file) {
			if webServerCode(path) {
				t.Errorf("%s imports %s", file, path)
			}
		}
	}
}

// What those commands import — the report's package and the CSV
// writer's among them — links no HTTP code at all: neither the web
// server's packages nor echo nor net/http (they write files and writers,
// they answer no request).
func TestReportPackageLinksNoHTTP(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the packages' dependencies")
	}
	pkgs := []string{"iolab/handlers/report", "iolab/handlers/chart"}
	for _, file := range storeCommandFiles {
		for _, path := range fileImports(t, file) {
			if strings.HasPrefix(path, "iolab/") && !slices.Contains(pkgs, path) {
				pkgs = append(pkgs, path)
			}
		}
	}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", strings.Join(pkgs, " "), err)
	}
	deps := strings.Fields(string(out))
	for _, p := range pkgs {
		if !slices.Contains(deps, p) {
			t.Fatalf("go list -deps did not list %s itself: %q", p, deps)
		}
	}
	for _, d := range deps {
		if d == "net/http" || webServerCode(d) {
			t.Errorf("%s depends on %s", strings.Join(pkgs, ", "), d)
		}
	}
}

// The repository's root holds main.go and no other Go file: the commands
// are this package's, main hands it the command line.
func TestRootHoldsOnlyMain(t *testing.T) {
	goFiles, err := filepath.Glob(filepath.Join(repoRoot, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range goFiles {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(names, []string{"main.go"}) {
		t.Errorf("the root's Go files are %q; want main.go alone (the commands live in handlers/cli)", names)
	}
}

// goListDeps is `go list -deps` of pkgs: every package they link.
func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the packages' dependencies")
	}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", strings.Join(pkgs, " "), err)
	}
	deps := strings.Fields(string(out))
	for _, p := range pkgs {
		if !strings.HasSuffix(p, "/...") && !slices.Contains(deps, p) {
			t.Fatalf("go list -deps did not list %s itself: %q", p, deps)
		}
	}
	return deps
}

// runningCode reports whether a package runs plans or speaks to other
// hosts: the launcher, the fio servers' client, the agents' protocol,
// the fleet, or anything of the handlers.
func runningCode(path string) bool {
	for _, p := range []string{"iolab/bench/launch", "iolab/bench/fioserver", "iolab/handlers"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	for _, word := range []string{"launch", "fleet", "agent", "fioserver"} {
		if strings.HasPrefix(path, "iolab/") && slices.Contains(strings.Split(path, "/"), word) {
			return true
		}
	}
	return false
}

// db is the store and nothing else: no package under db/ is, or links, a
// launcher, fleet, agent or fio server package or HTTP code (the store
// runs no plan, opens no device, answers no request).
func TestStoreIsOnlyTheStore(t *testing.T) {
	for _, d := range goListDeps(t, "iolab/db/...") {
		if d == "net/http" || runningCode(d) || webServerCode(d) {
			t.Errorf("iolab/db/... depends on %s", d)
		}
	}
}

// The launcher records runs through its Recorder and imports no store;
// no package under bench imports db or handlers.
func TestLauncherImportsNoStore(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the packages' dependencies")
	}
	out, err := exec.Command(goTool, "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "iolab/bench/...").Output()
	if err != nil {
		t.Fatalf("go list iolab/bench/...: %v", err)
	}
	seen := false
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		seen = seen || f[0] == "iolab/bench/launch"
		for _, d := range f[1:] {
			if d == "iolab/db" || strings.HasPrefix(d, "iolab/db/") || d == "iolab/handlers" || strings.HasPrefix(d, "iolab/handlers/") {
				t.Errorf("%s depends on %s", f[0], d)
			}
		}
	}
	if !seen {
		t.Fatalf("go list iolab/bench/... did not list iolab/bench/launch: %s", out)
	}
}
