package fio

import (
	"strconv"
)

// num2str writes num as fio's num2str (lib/num2str.c) does for its
// normal output: at most maxlen digits, dividing by 1000 (or 1024 with
// pow2) and taking the next prefix (k, M, … or Ki, Mi, …) until it fits,
// then as many decimals of the remainder as the room left allows, with
// fio's carry rounding; unit follows the prefix ("B", "B/s" or ""). base
// is the multiplier num is in (1 for plain numbers).
func num2str(num uint64, maxlen, base int, pow2 bool, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	thousand := uint64(1000)
	if pow2 {
		prefixes = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
		thousand = 1024
	}
	post := 0
	for ; base > 1; post++ {
		base /= int(thousand)
	}
	var modulo uint64
	divided, carry := false, false
	for post < len(prefixes) {
		if len(strconv.FormatUint(num, 10)) <= maxlen {
			break
		}
		modulo = num % thousand
		num /= thousand
		carry = modulo >= thousand/2
		divided = true
		post++
	}
	if post >= len(prefixes) {
		post = 0
	}
	if !divided {
		return strconv.FormatUint(num, 10) + prefixes[post] + unit
	}
	room := maxlen - len(strconv.FormatUint(num, 10))
	if room <= 1 {
		if carry {
			num++
		}
		return strconv.FormatUint(num, 10) + prefixes[post] + unit
	}
	frac := strconv.FormatFloat(float64(modulo)/float64(thousand), 'f', room-1, 64)
	if frac[0] == '1' {
		num++
	}
	return strconv.FormatUint(num, 10) + "." + frac[2:] + prefixes[post] + unit
}
