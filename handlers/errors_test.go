package handlers

import "testing"

func TestValidationErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    ValidationError
		want string
	}{
		{ValidationError{Field: "step", Msg: "step: want 1 or more"}, "step: want 1 or more"},
		{ValidationError{Field: "step", Msg: "want 1 or more"}, "step: want 1 or more"},
		{ValidationError{Msg: "the body is not a plan"}, "the body is not a plan"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
