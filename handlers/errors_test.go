package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

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

// A request whose client hangs up mid-answer (an agent whose upload timed
// out: it sends the step again) is no server error: logged 499, not an
// error with a 500.
func TestClientGoneIsNoError(t *testing.T) {
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "iolab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logged bytes.Buffer
	srv, err := New(Config{Store: store, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	srv.Register(e)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // gone before the store is asked
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/api/hosts", nil).WithContext(ctx))
	if rec.Code != statusClientClosed || strings.Contains(logged.String(), "level=ERROR") || !strings.Contains(logged.String(), "status=499") {
		t.Errorf("%d %s\nlogged:\n%s", rec.Code, rec.Body, logged.String())
	}
	// The same request with its client there is answered.
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/api/hosts", nil))
	if rec.Code != 200 {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}
