package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// maxSafeInteger is 2^53−1, the largest integer every RFC 8785
// implementation represents exactly.
const maxSafeInteger = 1<<53 - 1

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// Canonicalize returns the RFC 8785 (JCS) canonical form of the JSON text in
// data. Before handing the text to the JCS library it applies the stricter
// rules this ledger needs (ARCHITECTURE §7): it rejects invalid UTF-8
// (ErrInvalidUTF8), \u escapes naming a lone surrogate (ErrLoneSurrogate),
// duplicate object keys after unescaping (ErrDuplicateKey), numbers beyond
// ±(2^53−1) (ErrIntegerRange: every double that large is an integer that
// cannot be represented exactly, whether written 9007199254740993 or 1E30;
// encode such values, nanosecond times for example, as strings) and
// anything RFC 8259 does not allow (ErrInvalidJSON). The result is itself
// accepted and unchanged by Canonicalize.
//
// The canonical form is written by jsontext (the JSON v2 prototype of the
// Go team, RFC 8785 canonicalization), which is about five times faster
// than the JCS library it replaced on the live edge's receipts;
// FuzzCanonicalize holds the two to the same bytes.
func Canonicalize(data []byte) ([]byte, error) {
	if err := ValidateJSON(data); err != nil {
		return nil, err
	}
	out := jsontext.Value(bytes.Clone(data))
	if err := out.Canonicalize(); err != nil {
		// The checks above are stricter than the library's, so this is
		// unexpected; report it as invalid input all the same.
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return out, nil
}

// MarshalCanonical encodes v with encoding/json and returns its canonical
// form. It fails for values Canonicalize rejects, such as integers beyond
// ±(2^53−1).
func MarshalCanonical(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return Canonicalize(data)
}

// ValidateJSON reports whether data is one JSON value that Canonicalize
// accepts, with the same typed errors. It allocates little and never
// builds the value.
func ValidateJSON(data []byte) error { return validate(data, nil) }

// keyFunc is told each object member as the validator meets it: the
// nesting depth of its object (1 for the top level), its decoded name and
// the first byte of its value.
type keyFunc func(depth int, key string, first byte) error

func validate(data []byte, onKey keyFunc) error {
	if !utf8.Valid(data) {
		return ErrInvalidUTF8
	}
	v := validator{data: data, onKey: onKey}
	v.skipSpace()
	if err := v.value(0); err != nil {
		return err
	}
	v.skipSpace()
	if v.pos != len(v.data) {
		return v.errorf("trailing data")
	}
	return nil
}

// validator is a recursive-descent checker for the RFC 8259 grammar plus
// the rules of Canonicalize.
type validator struct {
	data  []byte
	pos   int
	onKey keyFunc
}

func (v *validator) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrInvalidJSON, v.pos, fmt.Sprintf(format, args...))
}

func (v *validator) skipSpace() {
	for v.pos < len(v.data) {
		switch v.data[v.pos] {
		case ' ', '\t', '\n', '\r':
			v.pos++
		default:
			return
		}
	}
}

func (v *validator) value(depth int) error {
	if depth > maxDepth {
		return v.errorf("nesting deeper than %d", maxDepth)
	}
	if v.pos >= len(v.data) {
		return v.errorf("unexpected end of input")
	}
	switch c := v.data[v.pos]; {
	case c == '{':
		return v.object(depth)
	case c == '[':
		return v.array(depth)
	case c == '"':
		_, err := v.str(false)
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(v.data[v.pos:], []byte(lit)) {
				v.pos += len(lit)
				return nil
			}
		}
		return v.errorf("unexpected character %q", c)
	}
}

func (v *validator) object(depth int) error {
	v.pos++ // '{'
	v.skipSpace()
	if v.pos < len(v.data) && v.data[v.pos] == '}' {
		v.pos++
		return nil
	}
	var seen []string // objects are small: a slice beats a map
	for {
		v.skipSpace()
		if v.pos >= len(v.data) || v.data[v.pos] != '"' {
			return v.errorf("expected object key")
		}
		key, err := v.str(true)
		if err != nil {
			return err
		}
		if slices.Contains(seen, key) {
			return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
		}
		seen = append(seen, key)
		v.skipSpace()
		if v.pos >= len(v.data) || v.data[v.pos] != ':' {
			return v.errorf("expected ':'")
		}
		v.pos++
		v.skipSpace()
		if v.onKey != nil && v.pos < len(v.data) {
			if err := v.onKey(depth+1, key, v.data[v.pos]); err != nil {
				return err
			}
		}
		if err := v.value(depth + 1); err != nil {
			return err
		}
		v.skipSpace()
		if v.pos >= len(v.data) {
			return v.errorf("unterminated object")
		}
		switch v.data[v.pos] {
		case ',':
			v.pos++
		case '}':
			v.pos++
			return nil
		default:
			return v.errorf("expected ',' or '}'")
		}
	}
}

func (v *validator) array(depth int) error {
	v.pos++ // '['
	v.skipSpace()
	if v.pos < len(v.data) && v.data[v.pos] == ']' {
		v.pos++
		return nil
	}
	for {
		v.skipSpace()
		if err := v.value(depth + 1); err != nil {
			return err
		}
		v.skipSpace()
		if v.pos >= len(v.data) {
			return v.errorf("unterminated array")
		}
		switch v.data[v.pos] {
		case ',':
			v.pos++
		case ']':
			v.pos++
			return nil
		default:
			return v.errorf("expected ',' or ']'")
		}
	}
}

// str checks a string token and, when decode is set, returns its decoded
// value (object keys, for duplicate detection).
func (v *validator) str(decode bool) (string, error) {
	v.pos++ // opening quote
	var out []byte
	for {
		if v.pos >= len(v.data) {
			return "", v.errorf("unterminated string")
		}
		c := v.data[v.pos]
		switch {
		case c == '"':
			v.pos++
			if !decode {
				return "", nil
			}
			return string(out), nil
		case c < 0x20:
			return "", v.errorf("control character in string")
		case c != '\\':
			if decode {
				out = append(out, c)
			}
			v.pos++
			continue
		}
		// An escape.
		if v.pos+1 >= len(v.data) {
			return "", v.errorf("unterminated escape")
		}
		e := v.data[v.pos+1]
		v.pos += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := v.hex4()
			if err != nil {
				return "", err
			}
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return "", ErrLoneSurrogate
			case r >= 0xD800 && r <= 0xDBFF:
				if v.pos+1 >= len(v.data) || v.data[v.pos] != '\\' || v.data[v.pos+1] != 'u' {
					return "", ErrLoneSurrogate
				}
				v.pos += 2
				lo, err := v.hex4()
				if err != nil {
					return "", err
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return "", ErrLoneSurrogate
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", v.errorf("invalid escape \\%c", e)
		}
	}
}

func (v *validator) hex4() (rune, error) {
	if v.pos+4 > len(v.data) {
		return 0, v.errorf("short \\u escape")
	}
	var r rune
	for _, c := range v.data[v.pos : v.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, v.errorf("bad hex digit in \\u escape")
		}
	}
	v.pos += 4
	return r, nil
}

// number checks the RFC 8259 number grammar
//
//	number = [ "-" ] int [ frac ] [ exp ]
//	int    = "0" / ( digit1-9 *DIGIT )
//
// and the exact-integer range for literals without fraction or exponent.
func (v *validator) number() error {
	start := v.pos
	if v.data[v.pos] == '-' {
		v.pos++
	}
	digits := v.pos
	switch {
	case v.pos < len(v.data) && v.data[v.pos] == '0':
		v.pos++
	case v.pos < len(v.data) && v.data[v.pos] >= '1' && v.data[v.pos] <= '9':
		for v.pos < len(v.data) && isDigit(v.data[v.pos]) {
			v.pos++
		}
	default:
		return v.errorf("invalid number")
	}
	intEnd := v.pos
	integer := true
	if v.pos < len(v.data) && v.data[v.pos] == '.' {
		integer = false
		v.pos++
		if v.pos >= len(v.data) || !isDigit(v.data[v.pos]) {
			return v.errorf("invalid number: digit expected after '.'")
		}
		for v.pos < len(v.data) && isDigit(v.data[v.pos]) {
			v.pos++
		}
	}
	if v.pos < len(v.data) && (v.data[v.pos] == 'e' || v.data[v.pos] == 'E') {
		integer = false
		v.pos++
		if v.pos < len(v.data) && (v.data[v.pos] == '+' || v.data[v.pos] == '-') {
			v.pos++
		}
		if v.pos >= len(v.data) || !isDigit(v.data[v.pos]) {
			return v.errorf("invalid number: digit expected in exponent")
		}
		for v.pos < len(v.data) && isDigit(v.data[v.pos]) {
			v.pos++
		}
	}
	if integer && !safeInteger(v.data[digits:intEnd]) {
		return fmt.Errorf("%w: %s", ErrIntegerRange, v.data[start:intEnd])
	}
	if !integer {
		// Every double beyond 2^53 is an integer, and RFC 8785 prints
		// those below 1e21 as plain digits (1E20 becomes
		// 100000000000000000000), so a float of that size would come out
		// as an inexact integer literal. Refuse it here too, which keeps
		// Canonicalize idempotent.
		f, err := strconv.ParseFloat(string(v.data[start:v.pos]), 64)
		if err != nil || math.Abs(f) > maxSafeInteger {
			return fmt.Errorf("%w: %s", ErrIntegerRange, v.data[start:v.pos])
		}
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// safeInteger reports whether the decimal digits name a value ≤ 2^53−1.
func safeInteger(digits []byte) bool {
	if len(digits) > 16 {
		return false
	}
	var n int64
	for _, d := range digits {
		n = n*10 + int64(d-'0')
	}
	return n <= maxSafeInteger
}
