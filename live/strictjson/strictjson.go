// Package strictjson checks and decodes JSON request bodies strictly. A
// document is refused when it is not valid UTF-8 (or escapes a lone UTF-16
// surrogate), repeats a member name in one object, names a member that
// differs only in letter case from a declared field, names a member a
// closed struct does not declare, or carries anything but white space after
// its value. encoding/json accepts all of these silently (last duplicate
// wins, case-insensitive matching, U+FFFD substitution); a request that
// means two things must not be read as one of them.
//
//	var in Declaration
//	if err := strictjson.Unmarshal(body, &in); err != nil {
//		var e *strictjson.Error // says which rule, where
//	}
//
// A struct is closed unless it declares a blank field tagged
// additionalProperties:"true", the same tag huma reads for the schema's
// additionalProperties, so the OpenAPI description and the decoder agree.
// Field names follow encoding/json: the json tag's name, or the Go name.
// Values of a type with its own UnmarshalJSON, of an interface type, and
// map values of interface type are checked for duplicates and Unicode only.
//
// The functions are safe for concurrent use.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The rules a document can break; an *Error wraps one of them.
var (
	ErrSyntax        = errors.New("malformed JSON")
	ErrInvalidUTF8   = errors.New("invalid UTF-8")
	ErrDuplicate     = errors.New("duplicate member")
	ErrCaseMismatch  = errors.New("member name differs only in letter case from a declared field")
	ErrUnknownMember = errors.New("unknown member")
	ErrTrailingData  = errors.New("trailing data after the JSON value")
	// ErrType is a well-formed document whose values do not fit the Go
	// type (Unmarshal only).
	ErrType = errors.New("value does not fit the declared type")
)

// maxDepth is encoding/json's nesting limit: deeper documents are refused
// by both.
const maxDepth = 10000

// Error is a refused document: the rule it breaks and where. It never
// quotes the document: Pointer holds declared field names and array
// indexes only, and Field is a declared name.
type Error struct {
	Err error // one of the Err* rules
	// Pointer is the JSON Pointer (RFC 6901) of the object or value where
	// the rule broke, made of declared names and indexes; a member the type
	// does not declare ends it.
	Pointer string
	// Field is the declared field concerned (a duplicate declared member,
	// or the field a member's name differs from in case), or empty.
	Field string
	// Offset is the byte offset in the document where the rule broke.
	Offset int64
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("strictjson: ")
	b.WriteString(e.Err.Error())
	if e.Field != "" {
		fmt.Fprintf(&b, " %q", e.Field)
	}
	if e.Pointer != "" {
		fmt.Fprintf(&b, " in %s", e.Pointer)
	}
	fmt.Fprintf(&b, " at byte %d", e.Offset)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Unmarshal checks data with Check against v's type and then decodes it
// into v with encoding/json. v must be a non-nil pointer.
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("strictjson: Unmarshal needs a non-nil pointer")
	}
	if err := Check(data, rv.Type().Elem()); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		e := &Error{Err: ErrType}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			e.Offset = te.Offset
		}
		return e
	}
	return nil
}

// Check reports whether data is one strict JSON document for a value of
// type t; t nil means any JSON value. It returns nil or an *Error.
func Check(data []byte, t reflect.Type) error {
	if wellFormed(data) {
		if t == nil {
			return nil
		}
		if ct := constrained(t); ct != nil && ct.Kind() == reflect.Struct && acceptsFlat(data, fieldsOf(ct)) {
			return nil
		}
	}
	if off, ok := invalidUnicode(data); ok {
		return &Error{Err: ErrInvalidUTF8, Offset: int64(off)}
	}
	return walk(data, t)
}

// wellFormed reports quickly that data is what walk accepts for a value
// of any type: one well-formed value within the depth limit with nothing
// but white space after it, valid UTF-8, no escaped lone surrogate and no
// object naming a member twice (jsontext's default rules; its depth
// limit is maxDepth too). It only accepts: anything else is left to
// invalidUnicode and walk, which say what is wrong and where. walk reads
// a document token by token through encoding/json's Decoder, which costs
// some fifty times more, and json.Valid alone about four times more.
func wellFormed(data []byte) bool {
	return jsontext.Value(data).IsValid()
}

// walk checks data, valid Unicode, token by token for a value of type t.
func walk(data []byte, t reflect.Type) error {
	w := walker{dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	if err := w.value(t, 0); err != nil {
		return err
	}
	end := w.dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return &Error{Err: ErrTrailingData, Offset: int64(len(data) - len(rest))}
	}
	return nil
}

// invalidUnicode returns the offset of the first byte that is not UTF-8, or
// of the first escaped lone surrogate ("\ud800"), which encoding/json would
// replace with U+FFFD.
func invalidUnicode(data []byte) (int, bool) {
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return i, true
			}
			i += size
		}
	}
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(data):
			if data[i+1] != 'u' {
				i++ // a one-letter escape, perhaps \" or \\
				continue
			}
			r, ok := hex4(data[i+2:])
			if !ok {
				i++ // malformed: the decoder reports it
				continue
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 { // a low surrogate with no high one before it
					return i, true
				}
				low, ok := rune(0), false
				if i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					low, ok = hex4(data[i+8:])
				}
				if !ok || low < 0xdc00 || low > 0xdfff {
					return i, true
				}
				i += 6
			}
			i += 5
		}
	}
	return 0, false
}

// acceptsFlat reports quickly that data, a wellFormed document, is what
// walk accepts for a struct declaring fields: one object whose every
// member has a declared name written without escapes (wellFormed has
// refused a name given twice), and a value that is no object or array (a
// scalar is encoding/json's to check). Request bodies mostly are such
// objects. It only accepts: anything else is left to walk.
func acceptsFlat(data []byte, fields *structFields) bool {
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return false
	}
	for i = skipSpace(data, i+1); data[i] != '}'; i = skipSpace(data, i+1) { // i+1: after the comma
		end := stringEnd(data, i)
		name := data[i+1 : end-1]
		if _, ok := fields.byName[string(name)]; !ok || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, skipSpace(data, end)+1) // after the colon
		switch data[i] {
		case '{', '[':
			return false
		case '"':
			i = stringEnd(data, i)
		default: // a number or a literal
			for data[i] != ',' && data[i] != '}' && data[i] != ' ' && data[i] != '\t' && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		}
		if i = skipSpace(data, i); data[i] == '}' {
			break
		}
	}
	return true
}

// stringEnd returns the index after the string that starts at data[i], in
// a well-formed document.
func stringEnd(data []byte, i int) int {
	for i++; data[i] != '"'; i++ {
		if data[i] == '\\' {
			i++
		}
	}
	return i + 1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}

// walker reads one value's tokens while following the Go type that will
// receive it.
type walker struct {
	dec    *json.Decoder
	path   []string // declared names and indexes from the root
	hidden int      // > 0 inside a member the type does not name
}

func (w *walker) fail(err error, field string, off int64) *Error {
	var p strings.Builder
	for _, seg := range w.path {
		p.WriteByte('/')
		p.WriteString(pointerEscaper.Replace(seg))
	}
	return &Error{Err: err, Pointer: p.String(), Field: field, Offset: off}
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// push enters a declared member or an index, unless the pointer already
// stopped at a member that is the sender's.
func (w *walker) push(seg string) {
	if w.hidden == 0 {
		w.path = append(w.path, seg)
	}
}

func (w *walker) pop() {
	if w.hidden == 0 {
		w.path = w.path[:len(w.path)-1]
	}
}

func (w *walker) token() (json.Token, error) {
	tok, err := w.dec.Token()
	if err != nil {
		return nil, w.fail(ErrSyntax, "", w.dec.InputOffset())
	}
	return tok, nil
}

// value reads one value for a t; t nil accepts any value.
func (w *walker) value(t reflect.Type, depth int) error {
	tok, err := w.token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar: its type is encoding/json's to check
	}
	if depth++; depth > maxDepth {
		return w.fail(ErrSyntax, "", w.dec.InputOffset())
	}
	t = constrained(t)
	if delim == '[' {
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			w.push(strconv.Itoa(i))
			if err := w.value(elem, depth); err != nil {
				return err
			}
			w.pop()
		}
	} else if err := w.object(t, depth); err != nil {
		return err
	}
	_, err = w.token() // the closing delimiter
	return err
}

// object reads the members of an object for a t.
func (w *walker) object(t reflect.Type, depth int) error {
	var fields *structFields
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.token()
		if err != nil {
			return err
		}
		name := tok.(string) // the decoder allows only strings here
		at := w.dec.InputOffset()
		declared := ""
		next := elem
		if fields != nil {
			if f, ok := fields.byName[name]; ok {
				declared, next = name, f
			} else if f := fields.fold(name); f != "" {
				return w.fail(ErrCaseMismatch, f, at)
			} else if !fields.open {
				return w.fail(ErrUnknownMember, "", at)
			}
		}
		if seen[name] {
			return w.fail(ErrDuplicate, declared, at)
		}
		seen[name] = true
		if declared == "" {
			w.hidden++ // the name is the sender's: point at this object
		} else {
			w.push(declared)
		}
		if err := w.value(next, depth); err != nil {
			return err
		}
		if declared == "" {
			w.hidden--
		} else {
			w.pop()
		}
	}
	return nil
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// constrained returns the type whose members a value must match, or nil
// when anything goes: interfaces and types that decode themselves.
func constrained(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
			return nil
		}
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
		case reflect.Interface:
			return nil
		default:
			return t
		}
	}
	return nil
}

// structFields are the JSON member names a struct declares.
type structFields struct {
	byName map[string]reflect.Type
	names  []string // in declaration order, for fold
	open   bool     // other members are allowed
}

// fold returns the declared name that equals name ignoring case, as
// encoding/json would match it, or "".
func (f *structFields) fold(name string) string {
	for _, n := range f.names {
		if strings.EqualFold(n, name) {
			return n
		}
	}
	return ""
}

var fieldCache sync.Map // reflect.Type -> *structFields

func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{byName: map[string]reflect.Type{}}
	if blank, ok := t.FieldByName("_"); ok {
		f.open = blank.Tag.Get("additionalProperties") == "true"
	}
	for _, fl := range visibleFields(t) {
		f.byName[fl.name] = fl.typ
		f.names = append(f.names, fl.name)
	}
	fieldCache.Store(t, f)
	return f
}

type field struct {
	name   string
	typ    reflect.Type
	depth  int
	tagged bool
}

// visibleFields lists the members encoding/json decodes into t, with its
// rules for embedded structs: a shallower field hides deeper ones of the
// same name; at equal depth a single tagged field wins, otherwise the name
// is dropped.
func visibleFields(t reflect.Type) []field {
	var all []field
	var walk func(t reflect.Type, depth int, visited map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visited map[reflect.Type]bool) {
		if visited[t] {
			return
		}
		visited[t] = true
		defer delete(visited, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, depth+1, visited)
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			if !validTagName(name) {
				name = ""
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			all = append(all, field{name: name, typ: sf.Type, depth: depth, tagged: tagged})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})

	byName := map[string][]field{}
	var order []string
	for _, f := range all {
		if byName[f.name] == nil {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, name := range order {
		if f, ok := dominant(byName[name]); ok {
			out = append(out, f)
		}
	}
	return out
}

func dominant(fs []field) (field, bool) {
	min := fs[0].depth
	for _, f := range fs {
		if f.depth < min {
			min = f.depth
		}
	}
	var top []field
	for _, f := range fs {
		if f.depth == min {
			top = append(top, f)
		}
	}
	if len(top) == 1 {
		return top[0], true
	}
	var tagged []field
	for _, f := range top {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return field{}, false
}

// validTagName is encoding/json's test of a tag name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
