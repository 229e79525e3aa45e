package content

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/proofsite/proofsite/ledger/charter"
)

// yamlDoc is one parsed YAML document that can locate its own fields, so
// validation errors point at the offending line.
type yamlDoc struct {
	file   string
	root   *ast.File
	offset int // lines before the YAML text in its file (front matter starts at line 2)
}

// decodeYAML parses src strictly (unknown fields, duplicate keys and type
// mismatches are errors) into v.
func decodeYAML(file string, src []byte, offset int, v any) (*yamlDoc, *Error) {
	root, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, yamlError(file, offset, err)
	}
	doc := &yamlDoc{file: file, root: root, offset: offset}
	if len(root.Docs) == 0 || root.Docs[0].Body == nil {
		return doc, nil
	}
	if len(root.Docs) > 1 {
		return nil, errorf(file, offset+1, "expected one YAML document, found %d", len(root.Docs))
	}
	if err := yaml.NodeToValue(root.Docs[0].Body, v, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(file, offset, err)
	}
	return doc, nil
}

func yamlError(file string, offset int, err error) *Error {
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return errorf(file, 0, "%v", err)
	}
	line := 0
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		line = tk.Position.Line + offset
	}
	msg := ye.GetMessage()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		found := "a value of another type"
		if tk := te.Token; tk != nil {
			found = fmt.Sprintf("%q", tk.Value)
		}
		msg = fmt.Sprintf("expected %s, found %s", kindName(te.DstType), found)
	}
	return errorf(file, line, "%s", msg)
}

// kindName describes a Go type in the words of someone writing YAML.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	if t == reflect.TypeFor[charter.Date]() {
		return "a date (YYYY-MM-DD)"
	}
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	default:
		return "a mapping"
	}
}

// line returns the line of the value at path ("$.nodes[2].id"), or of the
// nearest enclosing value that exists, or 0.
func (d *yamlDoc) line(path string) int {
	if d == nil || d.root == nil {
		return 0
	}
	for path != "" && path != "$" {
		if p, err := yaml.PathString(path); err == nil {
			if n, err := p.FilterFile(d.root); err == nil && n != nil {
				if tk := n.GetToken(); tk != nil && tk.Position != nil {
					return tk.Position.Line + d.offset
				}
			}
		}
		path = parentPath(path)
	}
	return d.offset + 1
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i <= 0 {
		return ""
	}
	return path[:i]
}

// errorf reports a problem with the value at path.
func (d *yamlDoc) errorf(path, format string, args ...any) *Error {
	return errorf(d.file, d.line(path), format, args...)
}
