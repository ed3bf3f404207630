package units

import "testing"

func TestPrintable(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"qd sweep", "qd sweep"},
		{"µs – naïve", "µs – naïve"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"nul\x00", `nul\x00`},
		{"tab\tnl\n", `tab\tnl\n`},
		{"c1\u009b", `c1\u009b`},
		{"rtl\u202eabc", `rtl\u202eabc`},
		{"bad\xffutf8", `bad\xffutf8`},
	} {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
