package fio

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestErrorsOutputMatchesFio: a job that went on after I/O errors and one
// that met none, both under continue_on_error, as fio writes them — the
// JSON member by member (total_err, first_error and the job's error with
// their values, in fio's places) and the normal output line by line (the
// errors line and the job line's error word for word).
func TestErrorsOutputMatchesFio(t *testing.T) {
	fio := lookFio(t)
	dev := badDisk(t)
	args := []string{"--filename=" + dev, "--direct=1", "--bs=4k",
		"--name=bad", "--rw=read", "--size=2m", "--ioengine=libaio", "--iodepth=4", "--continue_on_error=read",
		"--name=clean", "--stonewall", "--rw=read", "--offset=2m", "--size=1m", "--ioengine=psync", "--continue_on_error=all"}
	dir := t.TempDir()
	fioJSON := runFio(t, fio, dir, append([]string{"--output-format=json"}, args...)...)
	fioNormal := runFio(t, fio, dir, args...)
	cfg, res := runIolab(t, args...)

	values := regexp.MustCompile(strings.Replace(deterministic.String(), `jobs\[\]\.(jobname|groupid|error|`, `jobs\[\]\.(jobname|groupid|error|total_err|first_error|`, 1))
	c := &jsonComparison{t: t, values: values}
	ours := writtenJSON(t, NewReport(res, cfg, false))
	c.compare("", decodeOrdered(t, fioJSON), decodeOrdered(t, ours))
	if !bytes.Contains(ours, []byte(`"total_err" : 16,`)) || !bytes.Contains(ours, []byte(`"total_err" : 0,`)) {
		t.Errorf("iolab's JSON lacks a job's total_err:\n%s", ours)
	}

	var normal bytes.Buffer
	if err := WriteNormal(&normal, res, cfg); err != nil {
		t.Fatal(err)
	}
	if want, got := normalShape(string(fioNormal)), normalShape(normal.String()); !slices.Equal(want, got) {
		t.Errorf("the normal outputs differ in shape\nfio:\n%s\niolab:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^     errors    : .*$`),
		regexp.MustCompile(`(?m)^\w+: \(groupid=\d+, jobs=\d+\): err=[^:]*`),
	} {
		want, got := re.FindAllString(string(fioNormal), -1), re.FindAllString(normal.String(), -1)
		if len(want) != 2 || !slices.Equal(want, got) {
			t.Errorf("fio writes\n%s\niolab\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
	if t.Failed() {
		t.Logf("fio:\n%s\niolab:\n%s", fioNormal, normal.Bytes())
	}
}
