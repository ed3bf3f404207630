package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"iolab/bench/fio"
)

var versionCommand = command{
	name:    "version",
	summary: "iolab's version, the commit it was built from and the Go that built it",
	flags: func(fs *flag.FlagSet) runFunc {
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			info, _ := debug.ReadBuildInfo()
			_, err := io.WriteString(e.stdout, versionText(info))
			return err
		}
	},
}

// versionText says which iolab this is: its version (what its JSON output
// calls "iolab version"), the commit go build recorded (vcs.revision,
// vcs.time, vcs.modified) and the Go release and platform. info is nil
// when the binary carries no build information.
func versionText(info *debug.BuildInfo) string {
	var b strings.Builder
	b.WriteString(fio.Version + "\n")
	settings := map[string]string{}
	goVersion := runtime.Version()
	if info != nil {
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		goVersion = info.GoVersion
	}
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "commit %s", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " of %s", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("commit unknown (not recorded: go build records it in a git clone, unless -buildvcs=false)\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
