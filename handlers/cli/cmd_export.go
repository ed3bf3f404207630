package cli

import (
	"context"

	"iolab/db"
)

var exportCommand = command{
	name:    "export",
	summary: "a stored run as a self-contained JSON document, for iolab import",
	usage:   "[--db FILE] ID",
	flags: storedRunFlags(func(ctx context.Context, e *env, store *db.Store, id int64) error {
		doc, err := store.Export(ctx, id)
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, doc)
	}),
}
