package units

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable is s as a terminal may print it: control characters (ESC,
// NUL, C1 controls…), bidirectional overrides and bytes that are not
// UTF-8 are written as Go escapes (\x1b, \x00, \u202e), everything else
// as it is. A stored name can then neither move the cursor nor hide
// text from whoever lists it.
func Printable(s string) string {
	if !strings.ContainsFunc(s, needsEscape) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case needsEscape(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
