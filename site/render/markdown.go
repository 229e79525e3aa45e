package render

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// Code is highlighted with CSS classes, so one stylesheet serves both colour
// schemes and pages carry no inline styles.
const (
	lightCodeStyle = "github"
	darkCodeStyle  = "github-dark"
)

// codeFormatter is shared by every page: chroma formatters cache the style
// they compute and are safe for concurrent use.
var codeFormatter = chromahtml.New(chromahtml.WithClasses(true))

// newMarkdown returns the one goldmark instance of the site: GitHub-flavoured
// markdown, footnotes, heading ids and highlighted code blocks. Raw HTML in
// content is not passed through. It is safe for concurrent use.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(codeBlockRenderer{}, 100))),
	)
}

// codeBlockRenderer renders fenced code blocks with chroma.
type codeBlockRenderer struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (codeBlockRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, renderCodeBlock)
}

func renderCodeBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var code strings.Builder
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		code.Write(line.Value(source))
	}
	lang := string(n.Language(source))
	if lexer := lexers.Get(lang); lexer != nil && lang != "" {
		if tokens, err := chroma.Coalesce(lexer).Tokenise(nil, code.String()); err == nil {
			if err := codeFormatter.Format(w, styles.Get(lightCodeStyle), tokens); err != nil {
				return ast.WalkStop, fmt.Errorf("highlighting %s: %w", lang, err)
			}
			return ast.WalkSkipChildren, nil
		}
	}
	// No known language: plain, escaped.
	w.WriteString(`<pre><code`)
	if lang != "" {
		w.WriteString(` class="language-` + html.EscapeString(lang) + `"`)
	}
	w.WriteString(">" + html.EscapeString(code.String()) + "</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// codeCSS returns the highlighting rules for the light scheme and, inside a
// media query, for the dark one.
func codeCSS() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("\n/* Code highlighting (chroma " + lightCodeStyle + " / " + darkCodeStyle + "). */\n")
	if err := codeFormatter.WriteCSS(&b, styles.Get(lightCodeStyle)); err != nil {
		return nil, fmt.Errorf("render: code style %s: %w", lightCodeStyle, err)
	}
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	if err := chromahtml.New(chromahtml.WithClasses(true)).WriteCSS(&b, styles.Get(darkCodeStyle)); err != nil {
		return nil, fmt.Errorf("render: code style %s: %w", darkCodeStyle, err)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
