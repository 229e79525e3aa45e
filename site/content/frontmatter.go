package content

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Front matter is read as Hugo reads it: YAML between "---" lines, TOML
// between "+++" lines, or a JSON object at the very start of the file. Keys
// are not case-sensitive ("publishDate" and "publishdate" are one key). The
// keys below have a meaning; any other key is kept in Page.Params, as Hugo
// keeps custom parameters, and renders nothing.

// frontField is one top-level key of a front matter block.
type frontField struct {
	key   string // as written
	value any    // string, bool, a number, time.Time, []any, a map, or nil
	line  int
}

// frontBlock is the front matter of one file, parsed but not yet checked.
type frontBlock struct {
	file   string
	lang   string // "YAML", "TOML" or "JSON"
	fields map[string]frontField
	start  int // line on which the front matter's keys start
}

var (
	yamlDelimiter = []byte("---")
	tomlDelimiter = []byte("+++")
)

// readFront separates the front matter from the markdown body and parses it.
func readFront(file string, src []byte) (fb *frontBlock, body []byte, bodyLine int, err *Error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	first, rest, _ := cutLine(src)
	switch t := bytes.TrimSpace(first); {
	case bytes.Equal(t, yamlDelimiter):
		fm, body, bodyLine, err := splitDelimited(file, rest, yamlDelimiter, []byte("..."))
		if err != nil {
			return nil, nil, 0, err
		}
		fb, err := parseYAMLFront(file, fm)
		return fb, body, bodyLine, err
	case bytes.Equal(t, tomlDelimiter):
		fm, body, bodyLine, err := splitDelimited(file, rest, tomlDelimiter, nil)
		if err != nil {
			return nil, nil, 0, err
		}
		fb, err := parseTOMLFront(file, fm)
		return fb, body, bodyLine, err
	case bytes.HasPrefix(t, []byte("{")):
		return parseJSONFront(file, src)
	}
	return nil, nil, 0, errorf(file, 1, `missing front matter: the file must start with a line "---" (YAML), "+++" (TOML) or "{" (JSON)`)
}

// splitDelimited returns the front matter up to the closing delimiter line
// (rest starts on line 2 of the file) and the body after it.
func splitDelimited(file string, rest, delim, alt []byte) (fm, body []byte, bodyLine int, err *Error) {
	line := 2
	start := rest
	for len(rest) > 0 {
		l, next, _ := cutLine(rest)
		if t := bytes.TrimSpace(l); bytes.Equal(t, delim) || (alt != nil && bytes.Equal(t, alt)) {
			return start[:len(start)-len(rest)], next, line + 1, nil
		}
		rest = next
		line++
	}
	return nil, nil, 0, errorf(file, 1, "front matter is not closed: add a line %q after it", delim)
}

func parseYAMLFront(file string, src []byte) (*frontBlock, *Error) {
	if fb, ok := simpleYAMLFront(file, src); ok {
		return fb, nil
	}
	return parseYAML(file, src)
}

// parseYAML is parseYAMLFront with the YAML parser.
func parseYAML(file string, src []byte) (*frontBlock, *Error) {
	const offset = 1 // the opening "---"
	fb := &frontBlock{file: file, lang: "YAML", fields: map[string]frontField{}, start: offset + 1}
	root, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, yamlError(file, offset, err)
	}
	if len(root.Docs) > 1 {
		return nil, errorf(file, offset+1, "expected one YAML document, found %d", len(root.Docs))
	}
	if len(root.Docs) == 0 || root.Docs[0].Body == nil {
		return fb, nil
	}
	var pairs []*ast.MappingValueNode
	switch body := root.Docs[0].Body.(type) {
	case *ast.MappingNode:
		pairs = body.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{body}
	default:
		return nil, errorf(file, nodeLine(body, offset), "front matter must be keys with values (key: value), found %s", body.Type())
	}
	for _, pair := range pairs {
		key := pair.Key.String()
		if s, ok := pair.Key.(*ast.StringNode); ok {
			key = s.Value
		}
		var v any
		if err := yaml.NodeToValue(pair.Value, &v); err != nil {
			return nil, yamlError(file, offset, err)
		}
		if e := fb.add(key, v, nodeLine(pair.Key, offset)); e != nil {
			return nil, e
		}
	}
	return fb, nil
}

func nodeLine(n ast.Node, offset int) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line + offset
	}
	return offset + 1
}

// tomlKey finds a top-level key assignment ("key = ..." before any [table]).
var tomlKey = regexp.MustCompile(`^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*[=.]`)

func parseTOMLFront(file string, src []byte) (*frontBlock, *Error) {
	const offset = 1 // the opening "+++"
	fb := &frontBlock{file: file, lang: "TOML", fields: map[string]frontField{}, start: offset + 1}
	var values map[string]any
	if _, err := toml.Decode(string(src), &values); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, errorf(file, pe.Position.Line+offset, "%s", pe.Message)
		}
		return nil, errorf(file, offset+1, "%v", err)
	}
	// The TOML decoder keeps no positions: find each top-level key's line.
	lines := map[string]int{}
	for n, rest := 1, src; len(rest) > 0; n++ {
		l, next, _ := cutLine(rest)
		if t := bytes.TrimSpace(l); bytes.HasPrefix(t, []byte("[")) {
			break // a table: the keys after it are not top-level
		}
		if m := tomlKey.FindSubmatch(l); m != nil {
			key := string(slices.Concat(m[1], m[2], m[3]))
			if _, seen := lines[key]; !seen {
				lines[key] = n + offset
			}
		}
		rest = next
	}
	for _, key := range slices.Sorted(maps.Keys(values)) {
		line, ok := lines[key]
		if !ok {
			line = fb.start
		}
		if e := fb.add(key, fromTOML(values[key]), line); e != nil {
			return nil, e
		}
	}
	return fb, nil
}

// fromTOML turns TOML's local dates and times, which carry no zone, into UTC
// as Hugo does with its default time zone.
func fromTOML(v any) any {
	if t, ok := v.(time.Time); ok && t.Location() != time.UTC {
		switch t.Location().String() {
		case "datetime-local", "date-local", "time-local":
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		}
	}
	return v
}

// parseJSONFront reads a JSON object at the start of src; the body follows it.
func parseJSONFront(file string, src []byte) (*frontBlock, []byte, int, *Error) {
	fb := &frontBlock{file: file, lang: "JSON", fields: map[string]frontField{}, start: 1}
	lineAt := func(off int64) int { return 1 + bytes.Count(src[:min(int(off), len(src))], []byte("\n")) }
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	fail := func(err error) (*frontBlock, []byte, int, *Error) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, 0, errorf(file, lineAt(se.Offset), "JSON front matter: %v", err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, 0, errorf(file, 1, "JSON front matter is not closed: the object needs its closing }")
		}
		return nil, nil, 0, errorf(file, lineAt(dec.InputOffset()), "JSON front matter: %v", err)
	}
	if _, err := dec.Token(); err != nil { // the opening {
		return fail(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string)
		line := lineAt(dec.InputOffset())
		var v any
		if err := dec.Decode(&v); err != nil {
			return fail(err)
		}
		if e := fb.add(key, v, line); e != nil {
			return nil, nil, 0, e
		}
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return fail(err)
	}
	end := int(dec.InputOffset())
	_, body, _ := cutLine(src[end:]) // the rest of the closing line
	return fb, body, lineAt(int64(end)) + 1, nil
}

// add records a key; keys differing only in case are the same key.
func (fb *frontBlock) add(key string, v any, line int) *Error {
	lower := strings.ToLower(key)
	if prev, dup := fb.fields[lower]; dup {
		return errorf(fb.file, line, "%q is given twice (also on line %d; front matter keys are not case-sensitive)", key, prev.line)
	}
	fb.fields[lower] = frontField{key: key, value: v, line: line}
	return nil
}

// line returns the line of a key (lower case), or the first line of the
// front matter when the key is absent.
func (fb *frontBlock) line(key string) int {
	if f, ok := fb.fields[key]; ok {
		return f.line
	}
	return fb.start
}

func (fb *frontBlock) errorf(key, format string, args ...any) *Error {
	return errorf(fb.file, fb.line(key), format, args...)
}

// frontMatter is every front matter key that means something here.
type frontMatter struct {
	Title, Description, Summary, License, Slug, URL, Type, Part string

	Date, Lastmod, PublishDate, ExpiryDate time.Time

	Draft           bool
	Weight, Article int

	Tags, Categories, Aliases []string
	Params                    map[string]any // every other key, by its lower-case name
}

// The keys Hugo reads dates from, in order of preference, for each date of a
// page (Hugo's default "frontmatter" configuration, without the file system
// and git sources, which would make a build depend on the checkout).
var (
	dateKeys        = []string{"date", "publishdate", "pubdate", "published", "lastmod", "modified"}
	lastmodKeys     = []string{"lastmod", "modified", "date", "publishdate", "pubdate", "published"}
	publishDateKeys = []string{"publishdate", "pubdate", "published", "date"}
	expiryDateKeys  = []string{"expirydate", "unpublishdate"}
)

// decode checks the type of every known key and collects the rest as
// parameters. Every problem is reported, each on its key's line.
func (fb *frontBlock) decode() (frontMatter, []*Error) {
	var fm frontMatter
	var errs []*Error
	strs := map[string]*string{
		"title": &fm.Title, "description": &fm.Description, "summary": &fm.Summary, "license": &fm.License,
		"slug": &fm.Slug, "url": &fm.URL, "type": &fm.Type, "part": &fm.Part,
	}
	lists := map[string]*[]string{"tags": &fm.Tags, "categories": &fm.Categories, "aliases": &fm.Aliases}
	ints := map[string]*int{"weight": &fm.Weight, "article": &fm.Article}
	dates := map[string]time.Time{}
	for _, key := range slices.Sorted(maps.Keys(fb.fields)) {
		f := fb.fields[key]
		var err error
		switch {
		case strs[key] != nil:
			*strs[key], err = asString(f.value)
		case lists[key] != nil:
			*lists[key], err = asStrings(f.value)
		case ints[key] != nil:
			*ints[key], err = asInt(f.value)
		case key == "draft":
			fm.Draft, err = asBool(f.value)
		case slices.Contains(dateKeys, key) || slices.Contains(expiryDateKeys, key):
			dates[key], err = asTime(f.value)
		default:
			if fm.Params == nil {
				fm.Params = map[string]any{}
			}
			fm.Params[key] = f.value
		}
		if err != nil {
			errs = append(errs, errorf(fb.file, f.line, "%s: %v", f.key, err))
		}
	}
	first := func(keys []string) time.Time {
		for _, k := range keys {
			if t := dates[k]; !t.IsZero() {
				return t
			}
		}
		return time.Time{}
	}
	fm.Date, fm.Lastmod, fm.PublishDate, fm.ExpiryDate = first(dateKeys), first(lastmodKeys), first(publishDateKeys), first(expiryDateKeys)
	return fm, errs
}

func typeError(want string, v any) error {
	return fmt.Errorf("expected %s, found %s", want, describe(v))
}

// describe names a decoded value in the words of someone writing front matter.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case time.Time:
		return v.Format(time.RFC3339)
	default:
		return fmt.Sprint(v)
	}
}

func asString(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool, []any, map[string]any:
		return "", typeError("text", v)
	default: // numbers and dates as written: "version: 2.0" is text to a reader
		return describe(v), nil
	}
}

// asStrings accepts a list of text values, or one text value as a list of
// one (Hugo's "tags: go" means ["go"]).
func asStrings(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, err := asString(e)
			if err != nil {
				return nil, typeError("a list of text values", e)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, typeError("a list", v)
	}
}

func asInt(v any) (int, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return int(v), nil
	case uint64:
		if v <= 1<<31 {
			return int(v), nil
		}
	case float64:
		if v == float64(int(v)) {
			return int(v), nil
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n), nil
		}
	}
	return 0, typeError("a whole number", v)
}

func asBool(v any) (bool, error) {
	switch v := v.(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b, nil
		}
	}
	return false, typeError("true or false", v)
}

// dateLayouts are the written forms of a date Hugo accepts, tried in order.
// A date without a zone is in UTC (Hugo's default time zone).
var dateLayouts = []string{
	time.RFC3339,               // 2026-01-02T15:04:05Z, 2026-01-02T15:04:05+02:00 (fractions too)
	"2006-01-02T15:04:05Z0700", // 2026-01-02T15:04:05+0200
	"2006-01-02T15:04:05",      // no zone
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	time.DateOnly, // 2026-01-02
	time.RFC1123Z, // Mon, 02 Jan 2006 15:04:05 -0700
	time.RFC1123,
	time.RFC822Z,
	time.ANSIC,
	"2 January 2006",
	"2 Jan 2006",
	"January 2, 2006",
	"Jan 2, 2006",
}

func asTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v, nil
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return time.Time{}, nil
		}
		if len(s) > 10 && s[10] == 't' { // YAML allows lower-case separators
			s = s[:10] + "T" + s[11:]
		}
		if strings.HasSuffix(s, "z") {
			s = s[:len(s)-1] + "Z"
		}
		for _, layout := range dateLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, typeError("a date such as 2026-01-02 or 2026-01-02T15:04:05Z (RFC 3339)", v)
}
