package site_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// straySpace is a space before , . ; : ) or after (: "openapi.json ,",
// "( publish_rule )". Templates make them when a line break of the template
// source falls between a word and its punctuation.
var straySpace = regexp.MustCompile(`\s[,.;:)]|\(\s`)

// TestNoStraySpaces reads the text of every built page as a reader sees it
// (code shown as a word, code blocks left out, block elements as line
// breaks) and fails on a space before punctuation or after "(".
func TestNoStraySpaces(t *testing.T) {
	for _, tc := range []struct{ desc, content string }{
		{"fixture and Hugo pages", hugoSite(t)},
		{"project content", "../content"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "public")
			build(t, tc.content, out)
			pages := 0
			err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
				if err != nil || !strings.HasSuffix(p, ".html") {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				pages++
				rel, _ := filepath.Rel(out, p)
				for _, line := range strings.Split(visibleText(data), "\n") {
					if loc := straySpace.FindStringIndex(line); loc != nil {
						from, to := max(0, loc[0]-30), min(len(line), loc[1]+30)
						t.Errorf("%s: stray space in %q", rel, line[from:to])
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if pages < 10 {
				t.Fatalf("only %d pages read", pages)
			}
		})
	}
}

// blocks are the elements whose text stands apart from what surrounds it.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Li: true, atom.Div: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.Td: true, atom.Th: true, atom.Tr: true, atom.Ul: true, atom.Ol: true, atom.Table: true, atom.Caption: true,
	atom.Section: true, atom.Header: true, atom.Footer: true, atom.Nav: true, atom.Main: true, atom.Article: true,
	atom.Aside: true, atom.Br: true, atom.Title: true, atom.Blockquote: true, atom.Body: true, atom.Hr: true,
}

// visibleText is the text of an HTML page, one line per block; inline code
// reads as the word "code", and code blocks, scripts and styles are left
// out.
func visibleText(page []byte) string {
	var b strings.Builder
	z := html.NewTokenizer(bytes.NewReader(page))
	skip, code := 0, 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch a := atom.Lookup(name); {
			case a == atom.Pre || a == atom.Script || a == atom.Style:
				skip++
			case a == atom.Code:
				if code == 0 && skip == 0 {
					b.WriteString("code")
				}
				code++
			case blocks[a]:
				b.WriteByte('\n')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch a := atom.Lookup(name); {
			case a == atom.Pre || a == atom.Script || a == atom.Style:
				skip--
			case a == atom.Code:
				code--
			case blocks[a]:
				b.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 && code == 0 {
				b.WriteString(strings.ReplaceAll(string(z.Text()), "\n", " "))
			}
		}
	}
}
