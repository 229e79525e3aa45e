package content

import (
	"bytes"
	"unicode/utf8"
)

// simpleYAMLFront reads the front matter most pages have, one "key: value"
// per line, without the YAML parser, which is most of the cost of reading a
// page. It reads what the parser reads, or declines (ok false) and leaves
// the file to the parser, which also reports every problem: it accepts only
// front matter without one, each line blank or
// a key at the start of the line, a colon, a space and one of
//
//   - a double- or single-quoted string without escapes or inner quotes,
//   - true or false,
//   - a date (2006-01-02) or a date and time in RFC 3339 form, which YAML
//     reads as text,
//   - a plain word or words: a letter, then letters, digits, spaces and
//     "_./-", never a word YAML reads as anything but text,
//   - a flow list ([a, "b c"]) of plain words and quoted strings.
//
// TestSimpleYAMLFrontAsParser checks that it reads what the parser reads.
func simpleYAMLFront(file string, src []byte) (fb *frontBlock, ok bool) {
	if !utf8.Valid(src) || bytes.IndexByte(src, '\t') >= 0 || bytes.IndexByte(src, '\r') >= 0 {
		return nil, false
	}
	const offset = 1 // the opening "---"
	fb = &frontBlock{file: file, lang: "YAML", fields: map[string]frontField{}, start: offset + 1}
	seen := map[string]bool{}
	for i, rest := 0, src; len(rest) > 0; i++ {
		line, next, _ := bytes.Cut(rest, []byte("\n"))
		rest = next
		if len(bytes.TrimRight(line, " ")) == 0 {
			continue
		}
		colon := bytes.Index(line, []byte(": "))
		if colon <= 0 || !simpleKey(line[:colon]) {
			return nil, false
		}
		key := string(line[:colon])
		v, valid := simpleValue(bytes.Trim(line[colon+2:], " "))
		if !valid || seen[key] {
			return nil, false // the parser reports a key given twice
		}
		seen[key] = true
		if fb.add(key, v, i+offset+1) != nil {
			return nil, false // the parser finds the first problem
		}
	}
	if len(seen) == 0 {
		return nil, false
	}
	return fb, true
}

// simpleKey reports whether k is a letter or "_" followed by letters,
// digits, "_" and "-".
func simpleKey(k []byte) bool {
	for i, c := range k {
		if !(isLetter(c) || c == '_' || i > 0 && (isDigit(c) || c == '-')) {
			return false
		}
	}
	return len(k) > 0
}

// simpleValue reads one value of a simple line (see simpleYAMLFront).
func simpleValue(v []byte) (any, bool) {
	switch {
	case len(v) == 0:
		return nil, false
	case string(v) == "true":
		return true, true
	case string(v) == "false":
		return false, true
	case v[0] == '[':
		if v[len(v)-1] != ']' {
			return nil, false
		}
		items := []any{}
		inner := bytes.Trim(v[1:len(v)-1], " ")
		if len(inner) == 0 {
			return items, true
		}
		for item := range bytes.SplitSeq(inner, []byte(",")) {
			s, ok := simpleText(bytes.Trim(item, " "), true)
			if !ok {
				return nil, false
			}
			items = append(items, s)
		}
		return items, true
	}
	if s, ok := simpleText(v, false); ok {
		return s, true
	}
	return nil, false
}

// simpleText reads a quoted string, a date or plain words; in a flow list
// (inList) a quoted string holds no comma or bracket.
func simpleText(v []byte, inList bool) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	switch q := v[0]; q {
	case '"', '\'':
		if len(v) < 2 || v[len(v)-1] != q {
			return "", false
		}
		s := v[1 : len(v)-1]
		for _, c := range s {
			if c == '"' || c == '\'' || c == '\\' || c < ' ' || c == 0x7f || inList && (c == ',' || c == '[' || c == ']') {
				return "", false
			}
		}
		return string(s), true
	}
	if isDate(v) {
		return string(v), true
	}
	if !isLetter(v[0]) || yamlWords[string(bytes.ToLower(v))] || bytes.Contains(v, []byte("  ")) {
		return "", false
	}
	for _, c := range v {
		if !(isLetter(c) || isDigit(c) || c == ' ' || c == '_' || c == '.' || c == '/' || c == '-') {
			return "", false
		}
	}
	return string(v), true
}

// yamlWords are the plain words YAML (1.1 or 1.2) may read as other than
// text: simpleText leaves them to the parser.
var yamlWords = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"y": true, "n": true, "null": true, "nan": true, "inf": true}

// isDate reports whether v is 2006-01-02 or an RFC 3339 date and time
// (2006-01-02T15:04:05Z, with optional fraction and a Z or ±hh:mm zone).
func isDate(v []byte) bool {
	const date = "dddd-dd-dd"
	if len(v) < len(date) || !digitsAt(v, date) {
		return false
	}
	rest := v[len(date):]
	if len(rest) == 0 {
		return true
	}
	const clock = "Tdd:dd:dd"
	if len(rest) < len(clock) || !digitsAt(rest, clock) {
		return false
	}
	rest = rest[len(clock):]
	if len(rest) > 1 && rest[0] == '.' {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	return string(rest) == "Z" || len(rest) == len("+dd:dd") && (rest[0] == '+' || rest[0] == '-') && digitsAt(rest[1:], "dd:dd")
}

// digitsAt reports whether v starts with pattern, where "d" stands for a
// digit and every other byte for itself.
func digitsAt(v []byte, pattern string) bool {
	for i := range len(pattern) {
		if pattern[i] == 'd' && !isDigit(v[i]) || pattern[i] != 'd' && v[i] != pattern[i] {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
