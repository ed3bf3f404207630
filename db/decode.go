package db

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// repeatDecoder decodes JSON columns whose text repeats from row to row:
// the config of each repeat of a step, the host of every step. It decodes
// each distinct text of a column once and gives the rows after a deep
// copy, several times cheaper than encoding/json. It lives for one read
// and is no cache: what it returns shares no memory.
type repeatDecoder map[repeatKey]reflect.Value

type repeatKey struct{ column, text string }

// unmarshal decodes each field into its v, as unmarshalFields does.
func (d repeatDecoder) unmarshal(fields ...jsonField) error {
	for _, f := range fields {
		k := repeatKey{f.name, f.text}
		dst := reflect.ValueOf(f.v).Elem()
		if src, ok := d[k]; ok {
			deepCopy(dst, src)
			continue
		}
		if err := json.Unmarshal([]byte(f.text), f.v); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		// The first row's value, read again only to copy it while the
		// decoder lives, before any caller can change it.
		d[k] = dst
	}
	return nil
}

// deepCopy sets dst to a copy of src that shares no slice, map, pointer or
// interface value with it, as decoding the same text again would. Only
// unexported fields are copied as they are (time.Time's location, which
// nothing changes).
func deepCopy(dst, src reflect.Value) {
	if !hasRefs(src.Type()) {
		dst.Set(src)
		return
	}
	switch src.Kind() {
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Array:
		for i := range src.Len() {
			deepCopy(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			deepCopy(v, it.Value())
			m.SetMapIndex(it.Key(), v) // keys from JSON: strings and numbers
		}
		dst.Set(m)
	case reflect.Pointer, reflect.Interface:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		if src.Kind() == reflect.Pointer {
			p := reflect.New(src.Type().Elem())
			deepCopy(p.Elem(), src.Elem())
			dst.Set(p)
			return
		}
		v := reflect.New(src.Elem().Type()).Elem()
		deepCopy(v, src.Elem())
		dst.Set(v)
	case reflect.Struct:
		dst.Set(src)
		for i := range src.NumField() {
			if f := dst.Field(i); f.CanSet() {
				deepCopy(f, src.Field(i))
			}
		}
	default: // channels and functions, which JSON does not decode
		dst.Set(src)
	}
}

// hasRefs reports whether a value of type t can share memory with another:
// whether it is or holds a slice, map, pointer or interface. Strings are
// immutable and do not count.
func hasRefs(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasRefs(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasRefs(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
