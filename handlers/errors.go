package handlers

import "strings"

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
