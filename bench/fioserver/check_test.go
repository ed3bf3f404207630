package fioserver

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
)

func TestAllowList(t *testing.T) {
	a, err := ParseAllowList("10.213.0.0/16, 192.0.2.7", "::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"10.213.4.2", true}, {"10.214.0.1", false}, {"192.0.2.7", true}, {"192.0.2.8", false},
		{"::1", true}, {"::ffff:10.213.0.9", true}, {"127.0.0.1", false},
	} {
		if got := a.Allows(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("Allows(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if s := a.String(); s != "10.213.0.0/16,192.0.2.7,::1" {
		t.Errorf("String() = %q", s)
	}
	var none AllowList
	if !none.Empty() || none.Allows(netip.MustParseAddr("127.0.0.1")) {
		t.Error("the zero allow-list allows something")
	}
	for _, bad := range []string{"10.213.0.1/16", "host.example", "10.0.0.0/33", "fe80::1%eth0"} {
		if _, err := ParseAllowList(bad); err == nil {
			t.Errorf("ParseAllowList(%q) took it", bad)
		}
	}
}

func parseArgs(t *testing.T, args ...string) *bench.Config {
	t.Helper()
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCheck: what is refused before anything starts, each named per host.
func TestCheck(t *testing.T) {
	allow, _ := ParseAllowList("10.213.0.0/16", "127.0.0.1", "::1")
	r := &Runner{Allow: allow}
	file := parseArgs(t, "--name=r", "--filename=/tmp/x", "--rw=randread", "--size=1m")
	dev := parseArgs(t, "--name=w", "--filename=/dev/sdz", "--rw=randwrite")
	shm := parseArgs(t, "--name=s", "--filename=/dev/shm/x", "--rw=randwrite", "--size=1m")
	sneaky := parseArgs(t, "--name=s", "--filename=/tmp/../dev/sdz", "--rw=read")
	null := parseArgs(t, "--name=n", "--ioengine=null", "--size=1m")
	logged := parseArgs(t, "--name=l", "--ioengine=null", "--size=1m", "--write_bw_log=/etc/x")
	dir := parseArgs(t, "--name=d", "--filename=f", "--directory=/tmp/a:/dev/sdz", "--rw=read", "--size=1m")
	a := Host{Name: "a", Addr: "10.213.1.2", AllowTargets: []string{"/tmp/x"}}
	for _, tt := range []struct {
		name  string
		hosts []Host
		cfg   *bench.Config
		kind  error  // nil: allowed
		want  string // in the error
	}{
		{"allowed", []Host{a, {Name: "b", Addr: "10.213.2.2", Port: 9000, AllowTargets: []string{"/dev/sdz", "/tmp/x"}}}, file, nil, ""},
		{"file not listed", []Host{{Name: "b", Addr: "10.213.2.2"}}, file, ErrTarget,
			"fio host b (10.213.2.2:8765): target refused: job r: filename=/tmp/x: not one of the host's allowed targets; the host allows no file or device"},
		{"off the list", []Host{a, {Name: "c", Addr: "192.0.2.9"}}, file, ErrNotAllowed, "fio host c (192.0.2.9): not allowed: 192.0.2.9 is not on the allow-list"},
		{"name resolved", []Host{{Name: "lo", Addr: "localhost", AllowTargets: []string{"/tmp/x"}}}, file, nil, ""},
		{"not an address", []Host{{Name: "x", Addr: "10.213.1.2,8765"}}, file, ErrNotAllowed, "neither an IP address nor a host name"},
		{"same server twice", []Host{a, {Name: "a2", Addr: "10.213.1.2", Port: DefaultPort, AllowTargets: a.AllowTargets}}, file, ErrNotAllowed, "the same fio server as a"},
		{"device", []Host{a}, dev, ErrTarget, "fio host a (10.213.1.2:8765): target refused: job w: filename=/dev/sdz: not one of the host's allowed targets; the host allows /tmp/x"},
		{"device allowed", []Host{{Name: "a", Addr: "10.213.1.2", AllowTargets: []string{"/dev/sdz"}}}, dev, nil, ""},
		{"device by another path", []Host{{Name: "a", Addr: "10.213.1.2", AllowTargets: []string{"/dev/sdz"}}}, sneaky, ErrTarget,
			"filename=/tmp/../dev/sdz: not written as listed"},
		{"shared memory, not listed", []Host{a}, shm, ErrTarget, "filename=/dev/shm/x"},
		{"no file", []Host{a}, null, nil, ""},
		{"no file, no targets", []Host{{Name: "e", Addr: "10.213.1.3"}}, null, nil, ""},
		{"log files", []Host{a}, logged, ErrTarget, "job l: write_bw_log=/etc/x: opens another file on the host"},
		{"directory", []Host{{Name: "a", Addr: "10.213.1.2", AllowTargets: []string{"/tmp/a/f", "/dev/sdz"}}}, dir, ErrTarget,
			"job d: directory=/tmp/a:/dev/sdz: makes up a file name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Check(context.Background(), tt.hosts, tt.cfg)
			if tt.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want %v containing %q", err, tt.kind, tt.want)
			}
			if he, ok := errors.AsType[*HostError](err); !ok || he.Host == "" {
				t.Errorf("err = %#v: want a *HostError naming its host", err)
			}
		})
	}
	if err := (&Runner{}).Check(context.Background(), []Host{a}, file); !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "no fio server is allowed") {
		t.Errorf("zero Runner: %v", err)
	}
	if err := r.Check(context.Background(), nil, file); err == nil {
		t.Error("no hosts: nil error")
	}
}

// TestClassifyProbe reads what fio 3.33's client printed in each case.
func TestClassifyProbe(t *testing.T) {
	h, addr := Host{Name: "a"}, netip.MustParseAddrPort("10.213.1.2:8765")
	exit1 := errors.New("exit status 1")
	probeLine := "hostname=fleet-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1\n"
	for _, tt := range []struct {
		name           string
		stdout, stderr string
		runErr         error
		kind           error
		want           string
	}{
		{"answered", probeLine, "", nil, nil, ""},
		{"refused", probeLine + "<fleet-a> Bad option <not_an_option=1>\n<fleet-a> fio: job reader dropped\n", "", nil,
			ErrRefused, "<fleet-a> Bad option <not_an_option=1>; <fleet-a> fio: job reader dropped"},
		{"other version", "client: host=10.213.1.2 disconnected\n", "fio: bad server cmd version 98\nfio: client/server version mismatch (98 != 97)\n", exit1,
			ErrVersion, "fio: client/server version mismatch (98 != 97)"},
		{"down", "", "fio: connect: Connection refused\nfio: failed to connect to 10.213.1.2:8765\n", exit1,
			ErrUnreachable, "fio: connect: Connection refused; fio: failed to connect to 10.213.1.2:8765"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := classifyProbe(h, addr, []byte(tt.stdout), tt.stderr, tt.runErr)
			if tt.kind == nil {
				if p.err != nil {
					t.Fatal(p.err)
				}
			} else if !errors.Is(p.err, tt.kind) || !strings.Contains(p.err.Error(), tt.want) {
				t.Fatalf("err = %v; want %v containing %q", p.err, tt.kind, tt.want)
			}
			if strings.HasPrefix(tt.stdout, "hostname=") {
				want := HostInfo{Hostname: "fleet-a", FioVersion: "fio-3.33", OS: "Linux", Arch: "x86_64", Bits: 64}
				if p.info != want {
					t.Errorf("info %+v, want %+v", p.info, want)
				}
			}
		})
	}
}

func TestExpectedRuntime(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want float64 // seconds
	}{
		{[]string{"--name=a", "--ioengine=null", "--size=1m", "--runtime=3", "--time_based", "--ramp_time=1"}, 4},
		{[]string{"--ioengine=null", "--size=1m", "--time_based", "--name=a", "--runtime=3", "--name=b", "--runtime=5", "--name=c", "--stonewall", "--runtime=2"}, 7},
		{[]string{"--name=a", "--ioengine=null", "--size=1m", "--runtime=3"}, 0},
	} {
		if got := expectedRuntime(parseArgs(t, tt.args...)).Seconds(); got != tt.want {
			t.Errorf("%v: %vs, want %vs", tt.args, got, tt.want)
		}
	}
}
