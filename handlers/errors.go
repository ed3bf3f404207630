package handlers

import (
	"net/http"
	"strings"

	"iolab/db"
)

// ValidationError is a request that names something wrong or impossible:
// the server answers it with 400, the field and the message.
type ValidationError struct {
	Field string // the query parameter or form field
	Msg   string // what is wrong and what is allowed
}

func (e *ValidationError) Error() string {
	if e.Field == "" || strings.HasPrefix(e.Msg, e.Field+":") {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// ValidationErrors are every field's error of one request, so that a form
// shows them all at once. As a ValidationError it is its first, which is
// what the API's "error" and "field" say; "errors" lists them all.
type ValidationErrors []*ValidationError

func (e ValidationErrors) Error() string {
	msgs := make([]string, len(e))
	for i, v := range e {
		msgs[i] = v.Error()
	}
	return strings.Join(msgs, "; ")
}

// As makes errors.As find the first error as a *ValidationError.
func (e ValidationErrors) As(target any) bool {
	if p, ok := target.(**ValidationError); ok && len(e) > 0 {
		*p = e[0]
		return true
	}
	return false
}

// fieldError is one field's error in the API's "errors" list.
type fieldErrorBody struct {
	Field string `json:"field"`
	Error string `json:"error"`
}

// storeFault is the answer to a fault of the store itself (db.FaultOf):
// 507 Insufficient Storage for a full disk, 503 for a read-only, busy or
// failing store, each with what happened and what to do; ok is false for
// any other error.
func storeFault(err error, path string) (status int, msg string, retry bool, ok bool) {
	f := db.FaultOf(err)
	switch f {
	case db.NoFault:
		return 0, "", false, false
	case db.FaultFull:
		return http.StatusInsufficientStorage, db.FaultMessage(f, path), false, true
	}
	return http.StatusServiceUnavailable, db.FaultMessage(f, path), f == db.FaultBusy, true
}
