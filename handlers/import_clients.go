package handlers

import (
	"bytes"
	"context"
	"errors"

	"iolab/bench/fio"
	"iolab/db"
)

// importClients imports fio's client output of several servers
// (`fio --client=A --client=B`) as a group, as a group run on fio servers
// stores it: one run per server (fio.ParseFioHosts; fio's "All clients"
// sum is no run), each named by its server, and the group of them, whose
// page shows the servers as one system, beside fio's own "All clients".
// ok is false for anything else (one server's output, fio's own, an
// export), which imports as one run. Importing the same output again
// finds the runs and their group.
func (s *Server) importClients(ctx context.Context, body []byte, o db.ImportOptions) (importedRun, bool, error) {
	if !bytes.Contains(body, []byte(`"client_stats"`)) {
		return importedRun{}, false, nil
	}
	imps, err := fio.ParseFioHosts(body)
	if err != nil || len(imps) < 2 {
		return importedRun{}, false, nil // the one run's import says what is wrong
	}
	// The server's address names its run: one name for all would be
	// wrong of all but one.
	o.Hostname = ""
	var (
		members []db.FleetRunMember
		fresh   bool
	)
	for i, imp := range imps {
		res, err := s.storeImport(ctx, db.FioExport(imp, o), db.SourceFio)
		if err != nil {
			return importedRun{}, true, err
		}
		fresh = fresh || !res.Existing
		members = append(members, db.FleetRunMember{RunID: res.ID, Position: i, HostKind: db.HostFio, HostName: imp.Server.Hostname})
	}
	if !fresh {
		if uid, _, err := s.store.FleetRunOf(ctx, members[0].RunID); err == nil {
			return importedRun{ID: members[0].RunID, URL: groupURL(uid), Group: uid, Existing: true}, true, nil
		} else if !errors.Is(err, db.ErrNotFound) {
			return importedRun{}, true, err
		}
	}
	name := o.Name
	if name == "" {
		name = "fio clients"
	}
	g := &db.FleetRun{Name: name}
	if err := s.store.CreateFleetRun(ctx, g); err != nil {
		return importedRun{}, true, err
	}
	for _, m := range members {
		if err := s.store.AddFleetRunMember(ctx, g.UID, m); err != nil {
			return importedRun{}, true, err
		}
	}
	return importedRun{ID: members[0].RunID, URL: groupURL(g.UID), Group: g.UID}, true, nil
}
