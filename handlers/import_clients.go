package handlers

import (
	"context"

	"iolab/db"
)

// importClients imports fio's client output of several servers as a
// group (db.ClientExports, db.Store.ImportGroup): one run per server,
// named by its address, whose group page shows the servers as one system.
// ok is false for anything else, which imports as one run.
func (s *Server) importClients(ctx context.Context, body []byte, o db.ImportOptions) (importedRun, bool, error) {
	exps, hosts := db.ClientExports(body, o)
	if exps == nil {
		return importedRun{}, false, nil
	}
	name := o.Name
	if name == "" {
		name = "fio clients"
	}
	uid, ids, existed, err := s.store.ImportGroup(ctx, exps, hosts, name, db.SourceFio)
	if db.FaultOf(err) != db.NoFault {
		return importedRun{}, true, err // the store's fault, not the document's
	}
	if err != nil {
		return importedRun{}, true, &ValidationError{Field: "file", Msg: err.Error()}
	}
	return importedRun{ID: ids[0], URL: groupURL(uid), Group: uid, Existing: existed}, true, nil
}
