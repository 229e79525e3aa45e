package eval

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// contentFS copies the project's eval data into a MapFS, applying edit to
// patterns.yaml.
func contentFS(t *testing.T, edit func(string) string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	raw, err := os.ReadFile(contentDir + "/" + PatternsFile)
	if err != nil {
		t.Fatal(err)
	}
	fsys[PatternsFile] = &fstest.MapFile{Data: []byte(edit(string(raw)))}
	model, err := os.ReadFile(contentDir + "/" + LexicalFile)
	if err != nil {
		t.Fatal(err)
	}
	fsys[LexicalFile] = &fstest.MapFile{Data: model}
	return fsys
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		desc string
		edit func(string) string
		want string
	}{
		{"unknown field", func(s string) string {
			return strings.Replace(s, "    title: Instruction override", "    title: Instruction override\n    colour: red", 1)
		}, "colour"},
		{"a pattern too few", func(s string) string {
			i := strings.Index(s, "  - id: GC-05")
			return s[:i]
		}, "holds 51 patterns"},
		{"duplicate id", func(s string) string { return strings.Replace(s, "id: PI-02", "id: PI-01", 1) }, "duplicate id"},
		{"unknown category", func(s string) string {
			return strings.Replace(s, "category: prompt_injection\n    severity: high", "category: spam\n    severity: high", 1)
		}, `unknown category "spam"`},
		{"unknown severity", func(s string) string { return strings.Replace(s, "severity: critical", "severity: dire", 1) }, "unknown severity"},
		{"unknown validator", func(s string) string { return strings.Replace(s, "validator: luhn", "validator: crc32", 1) }, `unknown validator "crc32"`},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			data, err := LoadFS(contentFS(t, tc.edit))
			if err == nil {
				_, err = New(Options{Data: data})
			}
			if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrData mentioning %q", err, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	data, _ := testData(t)
	tests := []struct {
		desc string
		edit func(p *Pattern)
		want string
	}{
		{"upper case in a lowered regex", func(p *Pattern) { p.Regex = `\bIgnore\b` }, "upper-case letter"},
		{"bad regex", func(p *Pattern) { p.Regex = `(unclosed` }, "regex"},
		{"signal validator with a regex", func(p *Pattern) { p.Validator = "invisible" }, "takes no regex"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			d := data
			d.Patterns = append([]Pattern(nil), data.Patterns...)
			tc.edit(&d.Patterns[0])
			_, err := New(Options{Data: d})
			if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrData mentioning %q", err, tc.want)
			}
		})
	}
	d := data
	_, err := New(Options{Data: d, Articles: map[int]string{1: "Name and Purpose"}})
	if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "not in the constitution") {
		t.Errorf("articles missing: %v", err)
	}
}
