package fio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
)

// fio's client output. `fio --client=HOST1 --client=HOST2 --output-format=json`
// prints one document whose results are under "client_stats", not "jobs"
// (fio client.c: fio_client_json_init, handle_ts, handle_du):
//
//   - each entry is a job's (or reporting group's) thread status as fio
//     prints it locally, plus "hostname" and "port": the server as the
//     client was given it (the address on the command line, not the
//     server's own hostname);
//   - once the client has received as many entries as the servers
//     announced, and there were more than one in all, fio adds "All
//     clients": every entry summed, without "job options", carrying the
//     last server's hostname. It is not a job and is never imported;
//   - "disk_util" entries carry their server's hostname and port too;
//   - fio 3.33 adds every server's global options to one "global options"
//     object (keys repeated once per server); fio 3.39 and later print an
//     array of objects, one per server, each with its hostname and port;
//   - "timestamp" is when the client started its servers, not when they
//     finished, and there is no "timestamp_ms";
//   - a server that refused its jobs has no entries: what it said comes
//     before the document, as lines "<hostname> …";
//   - with --status-interval the client adds each interim status as more
//     entries of the one document, printed at the end; they cannot be
//     told from the final ones (or from numjobs clones), and the import
//     takes them as jobs. iolab's fleet runs without it.

// Server is a fio server as fio's client output names it.
type Server struct {
	Hostname string // as the client was given it: usually an address
	Port     int
}

func (s Server) String() string {
	return s.Hostname + "," + strconv.Itoa(s.Port)
}

// HostOptions is one server's "global options" in fio 3.39's client
// output.
type HostOptions struct {
	Server
	Options Options
}

// allClients is the name of fio's sum of every client's entries.
const allClients = "All clients"

// UnmarshalJSON reads a report; "global options" may be fio's object or,
// in the client output of fio 3.39 and later, an array of one object per
// server.
func (r *Report) UnmarshalJSON(data []byte) error {
	type plain Report
	aux := struct {
		*plain
		Global json.RawMessage `json:"global options"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	g := bytes.TrimSpace(aux.Global)
	if len(g) == 0 || g[0] != '[' {
		if len(g) == 0 {
			return nil
		}
		return json.Unmarshal(g, &r.GlobalOptions)
	}
	var objs []json.RawMessage
	if err := json.Unmarshal(g, &objs); err != nil {
		return fmt.Errorf(`"global options": %w`, err)
	}
	for _, obj := range objs {
		var ho HostOptions
		if err := json.Unmarshal(obj, &ho.Options); err != nil {
			return fmt.Errorf(`"global options": %w`, err)
		}
		ho.Options = slices.DeleteFunc(ho.Options, func(o bench.Option) bool {
			switch o.Name {
			case "hostname":
				ho.Hostname = o.Value
			case "port":
				ho.Port, _ = strconv.Atoi(o.Value)
			default:
				return false
			}
			return true
		})
		r.HostGlobalOptions = append(r.HostGlobalOptions, ho)
	}
	return nil
}

// IsClient reports whether r is fio's client output.
func (r *Report) IsClient() bool { return r.ClientStats != nil }

// isAllClients reports whether entry i of client_stats is fio's sum of
// all of them: named "All clients", without job options (fio prints
// them for every job that has any), among several entries. A job of that
// name with all its options in [global] would be taken for it.
func (r *Report) isAllClients(i int) bool {
	j := &r.ClientStats[i]
	return j.JobName == allClients && j.JobOptions == nil && len(r.ClientStats) > 1
}

// Hosts splits fio's client output into one report per server, in the
// order the servers first appear in client_stats: each with that
// server's jobs (the "All clients" sum left out), its disk_util entries,
// its global options, Hostname and Server set. Notes say what could not
// be split cleanly. A report that is not client output is returned as
// it is.
func (r *Report) Hosts() ([]Report, []string) {
	if !r.IsClient() {
		return []Report{*r}, nil
	}
	var (
		servers []Server
		notes   []string
	)
	index := map[Server]int{}
	for i := range r.ClientStats {
		if r.isAllClients(i) {
			continue
		}
		s := Server{r.ClientStats[i].Hostname, r.ClientStats[i].Port}
		if _, ok := index[s]; !ok {
			index[s] = len(servers)
			servers = append(servers, s)
		}
	}
	shared, conflict := dedupeOptions(r.GlobalOptions)
	if conflict != "" && len(servers) > 1 {
		notes = append(notes, fmt.Sprintf("fio's client output mixes the servers' global options in one object and they differ (%s): each server's cannot be told apart; the last value of each is taken", conflict))
	}
	out := make([]Report, len(servers))
	for k, s := range servers {
		h := &out[k]
		h.FioVersion, h.IolabVersion = r.FioVersion, r.IolabVersion
		h.Timestamp, h.TimestampMS, h.Time = r.Timestamp, r.TimestampMS, r.Time
		h.Hostname, h.Kernel = s.Hostname, r.Kernel
		h.Server = &Server{s.Hostname, s.Port}
		h.Jobs = []JobReport{}
		h.GlobalOptions = shared
		for _, ho := range r.HostGlobalOptions {
			if ho.Server == s {
				h.GlobalOptions = slices.Clone(ho.Options)
			}
		}
	}
	for i := range r.ClientStats {
		if r.isAllClients(i) {
			continue
		}
		j := r.ClientStats[i]
		h := &out[index[Server{j.Hostname, j.Port}]]
		h.Jobs = append(h.Jobs, j)
	}
	for _, d := range r.DiskUtil {
		if k, ok := index[Server{d.Hostname, d.Port}]; ok {
			out[k].DiskUtil = append(out[k].DiskUtil, d)
		}
	}
	return out, notes
}

// dedupeOptions drops repeats of the same option and value (fio 3.33's
// client adds each server's global options to one object). conflict
// names the options given different values, "" when none.
func dedupeOptions(opts Options) (Options, string) {
	var (
		out       Options
		conflicts []string
	)
	for _, o := range opts {
		if slices.Contains(out, o) {
			continue
		}
		if slices.ContainsFunc(out, func(x bench.Option) bool { return x.Name == o.Name }) && !slices.Contains(conflicts, o.Name) {
			conflicts = append(conflicts, o.Name)
		}
		out = append(out, o)
	}
	return out, strings.Join(conflicts, ", ")
}

// ClientMessages are the lines a fio client printed before its JSON
// document about its servers, in order, as written: what a server said
// ("<fleet-a> fio: job reader dropped") and what the client says of one
// ("client <10.0.0.2>: exited with error 1").
func ClientMessages(data []byte) []string {
	var out []string
	if start := nextDocument(data, 0); start >= 0 {
		data = data[:start]
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if (strings.HasPrefix(line, "<") || strings.HasPrefix(line, "client <")) && strings.Contains(line, ">") {
			out = append(out, line)
		}
	}
	return out
}
