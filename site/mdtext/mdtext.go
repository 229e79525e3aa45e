// Package mdtext reads the plain text of parsed markdown: what a reader sees
// of a heading or a paragraph, without markup. site/content uses it to write
// a summary for a page that has none; site/render uses it to label headings
// in a table of contents.
//
//	text := mdtext.Plain(node, source) // "A link and code" for "A [link](/x) and `code`"
package mdtext

import (
	"strings"

	"github.com/yuin/goldmark/ast"
)

// Plain returns the text of n and its descendants, with soft and hard line
// breaks as single spaces and raw HTML left out.
func Plain(n ast.Node, source []byte) string {
	var b strings.Builder
	write(&b, n, source)
	return strings.Join(strings.Fields(b.String()), " ")
}

func write(b *strings.Builder, n ast.Node, source []byte) {
	switch n := n.(type) {
	case *ast.Text:
		b.Write(n.Value(source))
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.WriteByte(' ')
		}
		return
	case *ast.String:
		b.Write(n.Value)
		return
	case *ast.AutoLink:
		b.Write(n.Label(source))
		return
	case *ast.RawHTML, *ast.HTMLBlock:
		return
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		write(b, c, source)
	}
}

// Words returns at most n words of s, ending with "…" when it cut.
func Words(s string, n int) string {
	words := strings.Fields(s)
	if len(words) <= n {
		return strings.Join(words, " ")
	}
	return strings.TrimRight(strings.Join(words[:n], " "), ",;:") + "…"
}
