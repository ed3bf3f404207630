package fio

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// WriteJSON writes rep as fio writes its JSON output (fio's json.c):
// members in the types' order, two spaces of indent per level, `"key" :
// value`, doubles with C's "%f" (six decimals: "iops" : 57213.893053,
// "bw_agg" : 100.000000) and integers as integers, an empty object as
// "{", a blank line and "}", and a newline after the document. Readers
// that parse JSON see the same document as with encoding/json; the ones
// that look at the text (or at a number's type) see fio's.
func WriteJSON(w io.Writer, rep *Report) error {
	compact, err := appendFioValue(nil, reflect.ValueOf(rep).Elem())
	if err != nil {
		return fmt.Errorf("bench: fio json: %w", err)
	}
	out := indentFio(compact)
	_, err = w.Write(append(out, '\n'))
	return err
}

// appendFioFloat appends v as C's printf("%f") does. fio never prints a
// NaN or an infinity in its JSON; neither does iolab (they would not be
// JSON).
func appendFioFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return strconv.AppendFloat(b, v, 'f', 6, 64)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// appendFioValue appends v as compact JSON with fio's numbers: the
// reflection half of encoding/json that the report's types use (structs
// with json tags and omitempty, strings, integers, doubles, slices,
// pointers, maps, and json.Marshaler types, whose output is kept as it
// is).
func appendFioValue(b []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() != reflect.Pointer && v.Type().Implements(marshalerType) {
		out, err := v.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return nil, err
		}
		return append(b, out...), nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendFioValue(b, v.Elem())
	case reflect.Struct:
		return appendFioStruct(b, v)
	case reflect.String:
		return appendJSONString(b, v.String())
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return appendFioFloat(b, v.Float()), nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendFioValue(b, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case reflect.Map:
		return appendFioMap(b, v)
	}
	return nil, fmt.Errorf("cannot write a %s", v.Type())
}

func appendFioStruct(b []byte, v reflect.Value) ([]byte, error) {
	b = append(b, '{')
	first := true
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if strings.Contains(opts, "omitempty") && (fv.Kind() != reflect.Struct && fv.IsZero() || isEmpty(fv)) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		var err error
		if b, err = appendJSONString(b, name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendFioValue(b, fv); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return append(b, '}'), nil
}

// isEmpty is encoding/json's empty for omitempty beyond the zero value:
// an empty slice or map.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array:
		return v.Len() == 0
	}
	return false
}

// appendFioMap writes a map with its keys in order: numbers by value,
// other keys as strings.
func appendFioMap(b []byte, v reflect.Value) ([]byte, error) {
	type entry struct {
		key string
		num float64
		val reflect.Value
	}
	var entries []entry
	numeric := true
	for it := v.MapRange(); it.Next(); {
		k := fmt.Sprint(it.Key().Interface())
		n, err := strconv.ParseFloat(k, 64)
		numeric = numeric && err == nil
		entries = append(entries, entry{k, n, it.Value()})
	}
	slices.SortFunc(entries, func(a, c entry) int {
		if numeric && a.num != c.num {
			if a.num < c.num {
				return -1
			}
			return 1
		}
		return strings.Compare(a.key, c.key)
	})
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, e.key); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendFioValue(b, e.val); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// indentFio lays compact JSON out as fio's json_print_object does.
func indentFio(in []byte) []byte {
	out := make([]byte, 0, len(in)*2)
	level := 0
	indent := func() {
		for range level {
			out = append(out, ' ', ' ')
		}
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(in) && in[j] != '"' {
				if in[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, in[i:min(j+1, len(in))]...)
			i = j
		case '{', '[':
			out = append(out, c, '\n')
			if i+1 < len(in) && (in[i+1] == '}' || in[i+1] == ']') {
				// fio's empty object: its line break, then the closing
				// one.
				out = append(out, '\n')
				indent()
				out = append(out, in[i+1])
				i++
				continue
			}
			level++
			indent()
		case '}', ']':
			level--
			out = append(out, '\n')
			indent()
			out = append(out, c)
		case ',':
			out = append(out, ',', '\n')
			indent()
		case ':':
			out = append(out, " : "...)
		default:
			out = append(out, c)
		}
	}
	return out
}
