package fio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/testdev"
)

// TestJSONMatchesFio runs the same small jobs with fio 3.33 and with iolab
// on one loop device, both writing json+, and compares the documents the
// way a reader of fio's JSON would meet them: every member fio prints,
// recursively, is there in iolab's, in fio's order and of the same JSON
// type (string, integer, double, object, array) — except the differences
// listed in jsonDiffs — and the values that do not depend on timing are
// equal.
func TestJSONMatchesFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	args := []string{"--filename=" + dev, "--direct=1", "--bs=4k", "--size=4m",
		"--name=aio", "--rw=randread", "--ioengine=libaio", "--iodepth=4",
		"--name=sync", "--stonewall", "--rw=write", "--ioengine=psync", "--fsync=64", "--description=the sync job"}

	fioOut := runFio(t, fio, "", append([]string{"--output-format=json+"}, args...)...)
	cfg, res := runIolab(t, args...)
	ours := writtenJSON(t, NewReport(res, cfg, true))

	c := &jsonComparison{t: t}
	c.compare("", decodeOrdered(t, fioOut), decodeOrdered(t, ours))
	for _, d := range jsonDiffs {
		if !c.seen[d] {
			t.Errorf("the known difference %q did not show: remove it from jsonDiffs", d.path)
		}
	}
	if t.Failed() {
		t.Logf("fio:\n%s\niolab:\n%s", fioOut, ours)
	}
}

// writtenJSON writes iolab's report as `iolab run --output-format=json`
// does.
func writtenJSON(t *testing.T, rep Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, &rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// runFio runs fio with args in dir ("": here) and returns its standard
// output; it fails the test, with fio's standard error, if fio fails.
func runFio(t *testing.T, fio, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(fio, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// runIolab parses args as `iolab run` does and runs them here.
func runIolab(t *testing.T, args ...string) (*bench.Config, *bench.Result) {
	t.Helper()
	cfg, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, run(t, args...)
}

// jsonDiffs are where iolab's JSON differs from fio 3.33's on purpose.
var jsonDiffs = []*jsonDiff{
	// iolab is not fio: it names itself, and where it ran.
	{path: `fio version`, fioOnly: true},
	{path: `iolab version`},
	{path: `hostname`},
	{path: `kernel`},
	// fio 3.33 leaves out options given without a value (its json.c
	// cannot add an empty string); fio 3.39 prints them, as iolab does.
	{path: `jobs[].job options.stonewall`},
	// iolab's iostat -x figures of each disk.
	{path: `disk_util[].(r/s|w/s|rkB/s|wkB/s|rrqm/s|wrqm/s|r_await|w_await|aqu-sz)`},
}

type jsonDiff struct {
	path    string // a path pattern: members joined with '.', array indexes as []
	fioOnly bool   // fio prints it and iolab does not (else the other way)
	re      *regexp.Regexp
}

func (d *jsonDiff) match(path string, fioOnly bool) bool {
	if d.re == nil {
		d.re = regexp.MustCompile(`^` + strings.NewReplacer(`[]`, `\[\]`, `.`, `\.`, `/`, `/`).Replace(d.path) + `$`)
	}
	return d.fioOnly == fioOnly && d.re.MatchString(path)
}

// deterministic are the paths whose values must be equal: what the jobs
// did, as opposed to how fast.
var deterministic = regexp.MustCompile(`^(global options\..*|jobs\[\]\.(jobname|groupid|error|desc|job options\..*|` +
	`(read|write|trim)\.(io_bytes|io_kbytes|total_ios|short_ios|drop_ios|(slat_ns|clat_ns|lat_ns)\.N)|sync\.(total_ios|lat_ns\.N)|` +
	`iodepth_level\..*|iodepth_submit\..*|iodepth_complete\..*|latency_(depth|target|percentile|window))|disk_util\[\]\.name)$`)

// variableKeys are objects whose member names depend on the results.
var variableKeys = regexp.MustCompile(`\.bins$`)

type jsonComparison struct {
	t *testing.T
	// values, when set, replaces deterministic; extra are differences
	// known beyond jsonDiffs.
	values *regexp.Regexp
	extra  []*jsonDiff
	// seen are the differences this comparison met.
	seen map[*jsonDiff]bool
}

func (c *jsonComparison) compare(path string, want, got any) {
	c.t.Helper()
	norm := regexp.MustCompile(`\[\d+\]`).ReplaceAllString(path, "[]")
	if wt, gt := jsonType(want), jsonType(got); wt != gt {
		c.t.Errorf("%s: fio prints a %s (%v), iolab a %s (%v)", path, wt, want, gt, got)
		return
	}
	switch w := want.(type) {
	case orderedObject:
		g := got.(orderedObject)
		if variableKeys.MatchString(norm) {
			for _, m := range slices.Concat(w, g) {
				if jsonType(m.value) != "integer" {
					c.t.Errorf("%s.%s: a %s, want an integer", path, m.key, jsonType(m.value))
				}
			}
			return
		}
		var order []string
		for _, m := range w {
			sub := join(path, m.key)
			gv, ok := g.get(m.key)
			if !ok {
				if !c.known(join(norm, m.key), true) {
					c.t.Errorf("%s: fio prints it, iolab does not", sub)
				}
				continue
			}
			order = append(order, m.key)
			c.compare(sub, m.value, gv)
		}
		var gotOrder []string
		for _, m := range g {
			if _, ok := w.get(m.key); ok {
				gotOrder = append(gotOrder, m.key)
			} else if !c.known(join(norm, m.key), false) {
				c.t.Errorf("%s: iolab prints it, fio does not", join(path, m.key))
			}
		}
		if !slices.Equal(order, gotOrder) {
			c.t.Errorf("%s: members in the order %v, fio's is %v", path, gotOrder, order)
		}
	case []any:
		g := got.([]any)
		if len(w) != len(g) {
			c.t.Errorf("%s: %d entries, fio has %d", path, len(g), len(w))
		}
		for i := range min(len(w), len(g)) {
			c.compare(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	default:
		values := deterministic
		if c.values != nil {
			values = c.values
		}
		if values.MatchString(norm) && fmt.Sprint(want) != fmt.Sprint(got) {
			c.t.Errorf("%s = %v, fio has %v", path, got, want)
		}
	}
}

func (c *jsonComparison) known(path string, fioOnly bool) bool {
	for _, d := range slices.Concat(jsonDiffs, c.extra) {
		if d.match(path, fioOnly) {
			if c.seen == nil {
				c.seen = map[*jsonDiff]bool{}
			}
			c.seen[d] = true
			return true
		}
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonType names a decoded value's JSON type, telling fio's integers from
// its doubles (which always have a decimal point).
func jsonType(v any) string {
	switch x := v.(type) {
	case orderedObject:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "double"
		}
		return "integer"
	case bool:
		return "boolean"
	}
	return "null"
}

// orderedObject is a JSON object with its members in order.
type orderedObject []member

type member struct {
	key   string
	value any
}

func (o orderedObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// decodeOrdered decodes one JSON document keeping objects' order and
// numbers as written.
func decodeOrdered(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data[bytes.IndexByte(data, '{'):]))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		t.Fatalf("%v in\n%s", err, data)
	}
	return v
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := orderedObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{k.(string), v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}
