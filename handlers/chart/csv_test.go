package chart

import (
	"errors"
	"strings"
	"testing"
)

func TestWriteCSV(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart Chart
		want  string
	}{
		{"rows", Chart{Kind: IOPS, Columns: []string{"iodepth", "ioengine", "iops_median"},
			Rows: [][]string{{"1", "io_uring", "11000"}, {"16", "io_uring+sqpoll", "155000.5"}}},
			"iodepth,ioengine,iops_median\n1,io_uring,11000\n16,io_uring+sqpoll,155000.5\n"},
		{"header only", Chart{Kind: IOPS, Columns: []string{"iodepth", "iops_median"}, Rows: [][]string{}},
			"iodepth,iops_median\n"},
		{"quoting", Chart{Kind: Fairness, Columns: []string{"scheduler", "job"},
			Rows: [][]string{{"mq-deadline", `reader, "fg"`}}},
			"scheduler,job\nmq-deadline,\"reader, \"\"fg\"\"\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteCSV(&b, &tc.chart); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("WriteCSV =\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}

	bad := Chart{Kind: IOPS, Columns: []string{"a", "b"}, Rows: [][]string{{"1", "2"}, {"3"}}}
	if err := WriteCSV(&strings.Builder{}, &bad); err == nil || !strings.Contains(err.Error(), "row 2 has 1 fields for 2 columns") {
		t.Errorf("WriteCSV of a short row: %v", err)
	}
	if err := WriteCSV(failingWriter{}, &Chart{Columns: []string{"a"}}); err == nil {
		t.Error("WriteCSV to a failing writer: no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestSafeCell: what a spreadsheet would run as a formula is quoted;
// numbers, negative ones included, stay numbers.
func TestSafeCell(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"io_uring", "io_uring"},
		{"=HYPERLINK(\"http://evil.example\",\"x\")", "'=HYPERLINK(\"http://evil.example\",\"x\")"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"-Inf", "'-Inf"},
		{"-0x10", "'-0x10"},
		{"-", "'-"},
		{"-.", "'-."},
		{"-1e", "'-1e"},
		{"-12", "-12"},
		{"-12.5", "-12.5"},
		{"+3", "+3"},
		{"-1.5e-07", "-1.5e-07"},
		{"-.5", "-.5"},
		{"12", "12"},
		{"a=b", "a=b"},
	} {
		if got := SafeCell(tt.in); got != tt.want {
			t.Errorf("SafeCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var b strings.Builder
	c := Chart{Kind: Fairness, Columns: []string{"job", "lat"}, Rows: [][]string{{"=1+1", "-3.5"}}}
	if err := WriteCSV(&b, &c); err != nil {
		t.Fatal(err)
	}
	if want := "job,lat\n'=1+1,-3.5\n"; b.String() != want {
		t.Errorf("WriteCSV = %q, want %q", b.String(), want)
	}
}
