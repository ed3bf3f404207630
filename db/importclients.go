package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"iolab/bench/fio"
)

// ClientExports are fio's client output of several servers
// (`fio --client=A --client=B`) as one run each (fio.ParseFioHosts; fio's
// "All clients" sum is no run), each with its server's address, which
// names its host. They are nil for anything else — one server's output,
// fio's own, an iolab export, or output ParseImport refuses — which
// imports as one run.
func ClientExports(data []byte, o ImportOptions) ([]*Export, []string) {
	if !bytes.Contains(data, []byte(`"client_stats"`)) {
		return nil, nil
	}
	if _, ok := exportFormat(bytes.TrimSpace(data)); ok {
		return nil, nil
	}
	imps, err := fio.ParseFioHosts(data)
	if err != nil || len(imps) < 2 {
		return nil, nil
	}
	// One hostname for every server would be wrong of all but one.
	o.Hostname = ""
	exps := make([]*Export, len(imps))
	hosts := make([]string, len(imps))
	for i, imp := range imps {
		exps[i], hosts[i] = FioExport(imp, o), imp.Server.Hostname
	}
	return exps, hosts
}

// ImportGroup stores exps, one run per host (hosts, fio servers), as a
// group named name, as a group run on fio servers stores it. A run
// already stored (by uid) is kept; when every one was, their group is
// found rather than made again (existed). A run that cannot be stored
// stops the import; the runs before it stay, without a group.
func (s *Store) ImportGroup(ctx context.Context, exps []*Export, hosts []string, name, source string) (uid string, ids []int64, existed bool, err error) {
	if len(exps) != len(hosts) || len(exps) == 0 {
		return "", nil, false, fmt.Errorf("db: import group: %d runs for %d hosts", len(exps), len(hosts))
	}
	fresh := false
	for _, e := range exps {
		id, had, err := s.ImportRun(ctx, e, source)
		if err != nil {
			return "", nil, false, err
		}
		ids = append(ids, id)
		fresh = fresh || !had
	}
	if !fresh {
		uid, _, err := s.FleetRunOf(ctx, ids[0])
		if err == nil {
			return uid, ids, true, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", nil, false, err
		}
	}
	g := &FleetRun{Name: name}
	if err := s.CreateFleetRun(ctx, g); err != nil {
		return "", nil, false, err
	}
	for i, id := range ids {
		if err := s.AddFleetRunMember(ctx, g.UID, FleetRunMember{RunID: id, Position: i, HostKind: HostFio, HostName: hosts[i]}); err != nil {
			return "", nil, false, err
		}
	}
	return g.UID, ids, false, nil
}
