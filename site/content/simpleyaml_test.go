package content

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestSimpleYAMLFrontAsParser: whatever front matter simpleYAMLFront reads,
// the YAML parser reads without error and the same way (keys, values,
// lines). The inputs are the front matter of the project's content and of
// the test sites, lines written to probe each rule, and random mixtures of
// those lines.
func TestSimpleYAMLFrontAsParser(t *testing.T) {
	var inputs []string
	for _, root := range []string{"../../content", "../testdata"} {
		err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			raw, err := fs.ReadFile(os.DirFS(root), p)
			if err != nil {
				return err
			}
			first, rest, _ := bytes.Cut(raw, []byte("\n"))
			if string(bytes.TrimSpace(first)) == "---" {
				if fm, _, ok := bytes.Cut(rest, []byte("\n---")); ok {
					inputs = append(inputs, string(fm)+"\n")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	lines := []string{
		`title: "Always so evidence duty 1"`, `summary: "Class listed canonical: action chain."`, "date: 2020-03-30",
		"tags: [keys, verify]", "tags: []", "tags: [ keys ,verify ]", `tags: ["a b", 'c', d e]`, "tags: [a, , b]", "tags: [a, b,]",
		`tags: ["a, b"]`, "tags: [yes, no]", "tags: [2020-01-01]", "tags: [a [b]]", "tags: [a] # c",
		"draft: true", "draft: false", "draft: True", "draft: TRUE", "draft: yes", "draft: No", "draft: on", "draft: Off", "draft: y",
		"title: plain words here", "title:   spaced  ", "title: two  spaces", "title: a: b", "title: a # comment", "title: a#b",
		"title: Null", "title: null", "title: ~", "title: nan", "title: .nan", "title: .inf", "title: e5", "title: x1.5",
		"title: path/to/x_y-z.md", "title: 0x1F", "title: 12", "title: -3", "title: 1.5", "title: 007",
		`title: ""`, `title: ''`, `title: "it's"`, `title: 'say "hi"'`, `title: "back\\slash"`, `title: "tab\there"`,
		`title: "naïve – ünïcode"`, "title: naïve", `title: "x" # c`, `title: "unterminated`, `title: 'x'y'`, "title: |", "title: >",
		"title: &a x", "title: *a", "title: !!str x", "title: @x", "title: `x`", "title: %x", "title: {a: b}", "title: [a, {b: c}]",
		"lastmod: 2024-05-06T07:08:09Z", "lastmod: 2024-05-06T07:08:09.123+02:00", "lastmod: 2024-05-06T07:08:09.+02:00",
		"lastmod: 2024-05-06 07:08:09", "lastmod: 2024-5-6", "lastmod: 2024-05-06t07:08:09z", "lastmod: 2024-05-06T07:08:09-0700",
		"Title: other case", "TITLE: upper", "publishDate: 2030-01-01", "my_key: v", "my-key: v", "_key: v", "9key: v", `"title": x`,
		"title:x", "title:", "title: ", "  title: indented", "- item", "# a comment", "", "   ", "---", "...", "key: [a, 'b', \"c\"]",
		"params: x", "title: trailing. dot", "title: a/b/c", "weight: 3", "article: 47",
	}
	inputs = append(inputs, strings.Join(lines, "\n")+"\n")
	for _, l := range lines {
		inputs = append(inputs, l+"\n", "title: x\n"+l+"\n", l)
	}
	// Mixtures of every line, and of lines read without the parser.
	var simple []string
	for _, l := range lines {
		if _, ok := simpleYAMLFront("f.md", []byte(l)); ok {
			simple = append(simple, l)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 10000 {
		from := lines
		if i%2 == 1 {
			from = simple
		}
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(from[r.IntN(len(from))])
			b.WriteByte('\n')
		}
		inputs = append(inputs, b.String())
	}

	accepted := 0
	for _, in := range inputs {
		fast, ok := simpleYAMLFront("f.md", []byte(in))
		if !ok {
			continue
		}
		accepted++
		slow, err := parseYAML("f.md", []byte(in))
		if err != nil {
			t.Errorf("%q: read, but the parser says %v", in, err)
		} else if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%q:\n read   %+v\n parser %+v", in, fast.fields, slow.fields)
		}
	}
	// The rules must not decline everything: the generated pages' front
	// matter and a good share of the mixtures are read without the parser.
	if accepted < len(inputs)/5 {
		t.Errorf("only %d of %d inputs read without the parser", accepted, len(inputs))
	}
	if _, ok := simpleYAMLFront("f.md", []byte("title: \"T 1\"\nsummary: \"S.\"\ndate: 2020-03-30\ntags: [keys, verify]\n")); !ok {
		t.Error("a generated page's front matter is left to the parser")
	}
	t.Logf("%d of %d inputs read without the parser", accepted, len(inputs))
}
