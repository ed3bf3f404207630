package units

import "strconv"

// Setter makes an option's setter: it reads a value with parse and stores
// it in the field of a T that field picks, leaving the field as it was on
// an error. The job's options (bench) and the engines' own (bench/engine)
// are made with it, each over its own struct.
func Setter[T, V any](parse func(string) (V, error), field func(*T) *V) func(*T, string) error {
	return func(t *T, v string) error {
		x, err := parse(v)
		if err == nil {
			*field(t) = x
		}
		return err
	}
}

// SetBool sets a bool field from fio's 0/1 (ParseFlag): both fio's bool
// options (value required, checked by the parser) and its flags (value
// optional).
func SetBool[T any](field func(*T) *bool) func(*T, string) error {
	return Setter(ParseFlag, field)
}

// SetInt sets an int field from a whole number in [lo, hi] (ParseInt).
func SetInt[T any](lo, hi int, field func(*T) *int) func(*T, string) error {
	return Setter(func(v string) (int, error) { return ParseInt(v, lo, hi) }, field)
}

// GetBool reads a bool field back as fio writes it: "1" or "0".
func GetBool[T any](field func(*T) *bool) func(*T) string {
	return func(t *T) string {
		if *field(t) {
			return "1"
		}
		return "0"
	}
}

// GetInt reads an int field back in decimal.
func GetInt[T any](field func(*T) *int) func(*T) string {
	return func(t *T) string { return strconv.Itoa(*field(t)) }
}
