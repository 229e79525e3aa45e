package render

import (
	"bytes"
	"fmt"

	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// Code is highlighted with CSS classes, so one stylesheet serves both colour
// schemes and pages carry no inline styles.
const (
	lightCodeStyle = "github"
	darkCodeStyle  = "github-dark"
)

// newMarkdown returns the one goldmark instance of the site: GitHub-flavoured
// markdown, footnotes, heading ids and highlighted code blocks. Raw HTML in
// content is not passed through. It is safe for concurrent use.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(
			extension.GFM,
			extension.Footnote,
			highlighting.NewHighlighting(
				highlighting.WithFormatOptions(html.WithClasses(true)),
			),
		),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
}

// codeCSS returns the highlighting rules for the light scheme and, inside a
// media query, for the dark one.
func codeCSS() ([]byte, error) {
	f := html.New(html.WithClasses(true))
	var b bytes.Buffer
	b.WriteString("\n/* Code highlighting (chroma " + lightCodeStyle + " / " + darkCodeStyle + "). */\n")
	if err := f.WriteCSS(&b, styles.Get(lightCodeStyle)); err != nil {
		return nil, fmt.Errorf("render: code style %s: %w", lightCodeStyle, err)
	}
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	if err := f.WriteCSS(&b, styles.Get(darkCodeStyle)); err != nil {
		return nil, fmt.Errorf("render: code style %s: %w", darkCodeStyle, err)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
