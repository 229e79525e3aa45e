package render

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/dlclark/regexp2/v2"
	"github.com/proofsite/proofsite/site/mdtext"
	"github.com/proofsite/proofsite/templates"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// codeFormatter is shared by every page: chroma formatters are safe for
// concurrent use. Code is highlighted with CSS classes, so one stylesheet
// serves both colour schemes and pages carry no inline styles.
var codeFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithPreWrapper(focusablePre{}))

// codePre opens every code block. A long line makes the block scroll
// sideways, so it takes the keyboard focus: arrow keys then scroll it.
const codePre = `<pre tabindex="0"`

// focusablePre writes chroma's code blocks with codePre.
type focusablePre struct{}

// Start implements chromahtml.PreWrapper.
func (focusablePre) Start(code bool, styleAttr string) string {
	if code {
		return codePre + styleAttr + "><code>"
	}
	return codePre + styleAttr + ">"
}

// End implements chromahtml.PreWrapper.
func (focusablePre) End(code bool) string {
	if code {
		return "</code></pre>"
	}
	return "</pre>"
}

// newMarkdown returns the one goldmark instance of the site: GitHub-flavoured
// markdown, footnotes, heading ids, highlighted code blocks and tables that
// scroll sideways on narrow screens. Raw HTML in content is not passed
// through. It is safe for concurrent use.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithParserOptions(parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(tableScroller{}, 100))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(nodeRenderer{}, 100))),
	)
}

// A page gets a table of contents when it is long: this many bytes of
// markdown and at least tocMinSections level-2 headings.
const (
	tocMinBytes    = 3000
	tocMinSections = 3
)

// convert renders markdown to HTML and returns the table of contents of a
// long page (its level-2 and level-3 headings).
func convert(md goldmark.Markdown, src []byte, w io.Writer) ([]templates.TOCEntry, error) {
	doc := md.Parser().Parse(text.NewReader(src))
	var toc []templates.TOCEntry
	if len(src) >= tocMinBytes {
		toc = contents(doc, src)
	}
	return toc, md.Renderer().Render(w, src, doc)
}

// contents lists the level-2 headings of doc with the level-3 headings under
// each; nil when there are fewer than tocMinSections.
func contents(doc ast.Node, src []byte) []templates.TOCEntry {
	var toc []templates.TOCEntry
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok || h.Level > 3 {
			continue
		}
		id, _ := h.AttributeString("id")
		idb, _ := id.([]byte)
		e := templates.TOCEntry{ID: string(idb), Text: mdtext.Plain(h, src)}
		switch {
		case h.Level == 2:
			toc = append(toc, e)
		case h.Level == 3 && len(toc) > 0:
			last := &toc[len(toc)-1]
			last.Children = append(last.Children, e)
		}
	}
	if len(toc) < tocMinSections {
		return nil
	}
	return toc
}

// tableScroll holds one table: a focusable region that scrolls sideways when
// the table is wider than the screen, so no column is clipped.
type tableScroll struct {
	ast.BaseBlock
	label string
}

var kindTableScroll = ast.NewNodeKind("TableScroll")

// Kind implements ast.Node.
func (n *tableScroll) Kind() ast.NodeKind { return kindTableScroll }

// Dump implements ast.Node.
func (n *tableScroll) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// tableScroller puts every table in a tableScroll, labelled with its number
// and its column headings.
type tableScroller struct{}

// Transform implements parser.ASTTransformer.
func (tableScroller) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	var tables []ast.Node
	findTables(doc, &tables)
	for i, t := range tables {
		var heads []string
		if h := t.FirstChild(); h != nil && h.Kind() == east.KindTableHeader {
			for c := h.FirstChild(); c != nil; c = c.NextSibling() {
				if s := mdtext.Plain(c, reader.Source()); s != "" {
					heads = append(heads, s)
				}
			}
		}
		label := fmt.Sprintf("Table %d", i+1)
		if len(heads) > 0 {
			label += ": " + strings.Join(heads, ", ")
		}
		wrap := &tableScroll{label: label}
		parent := t.Parent()
		parent.ReplaceChild(parent, t, wrap)
		wrap.AppendChild(wrap, t)
	}
}

// findTables appends the tables under n, in document order. Tables are
// blocks: only blocks that hold blocks (lists, quotes, footnotes) are
// searched, never the inline text of paragraphs and headings.
func findTables(n ast.Node, tables *[]ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch {
		case c.Kind() == east.KindTable:
			*tables = append(*tables, c)
		case c.Type() == ast.TypeBlock && c.FirstChild() != nil && c.FirstChild().Type() == ast.TypeBlock:
			findTables(c, tables)
		}
	}
}

// nodeRenderer renders code blocks (highlighted when their language is
// known) and table scroll regions.
type nodeRenderer struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, renderCodeBlock)
	reg.Register(ast.KindCodeBlock, renderCodeBlock)
	reg.Register(kindTableScroll, renderTableScroll)
}

func renderTableScroll(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		w.WriteString(`<div class="table-scroll" role="region" tabindex="0" aria-label="` + html.EscapeString(node.(*tableScroll).label) + "\">\n")
	} else {
		w.WriteString("</div>\n")
	}
	return ast.WalkContinue, nil
}

func renderCodeBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	var code strings.Builder
	for i := range node.Lines().Len() {
		line := node.Lines().At(i)
		code.Write(line.Value(source))
	}
	var lang string
	if n, ok := node.(*ast.FencedCodeBlock); ok {
		lang = string(n.Language(source))
	}
	if lexer := lexers.Get(lang); lexer != nil && lang != "" {
		if err := untime(lexer); err != nil {
			return ast.WalkStop, fmt.Errorf("highlighting %s: %w", lang, err)
		}
		if tokens, err := chroma.Coalesce(lexer).Tokenise(nil, code.String()); err == nil {
			// The light style decides which tokens get a class; codeCSS
			// colours every class in both schemes.
			if err := codeFormatter.Format(w, styles.Get(codeSchemes[0].style), tokens); err != nil {
				return ast.WalkStop, fmt.Errorf("highlighting %s: %w", lang, err)
			}
			return ast.WalkSkipChildren, nil
		}
	}
	// No known language: plain, escaped.
	w.WriteString(codePre + `><code`)
	if lang != "" {
		w.WriteString(` class="language-` + html.EscapeString(lang) + `"`)
	}
	w.WriteString(">" + html.EscapeString(code.String()) + "</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// untimed remembers the lexers untime prepared: *chroma.RegexLexer ->
// *untimedLexer.
var untimed sync.Map

type untimedLexer struct {
	once sync.Once
	err  error
}

// untime lifts the 250 ms wall-clock limit chroma puts on every rule's
// regular expression, once per lexer, before the lexer's first use here.
// chroma treats a rule that runs out of time as a rule that does not match,
// so on a loaded machine (a stalled goroutine, a pause of the collector, the
// race detector) the same code came out highlighted differently from one
// build to the next: "chain" as an error "c" and a name "hain". A build must
// be a function of its content; a rule that really backtracks without end
// would show as a build that does not finish, which is how it is found.
// chroma keeps compiled rules private (RegexLexer.rules, compiled by Rules),
// so they are reached by reflection; TestUntimedLexers fails if that field
// changes. Lexers another lexer hands embedded code to keep the limit.
func untime(l chroma.Lexer) error {
	rl, ok := l.(*chroma.RegexLexer)
	if !ok {
		return nil
	}
	v, _ := untimed.LoadOrStore(rl, &untimedLexer{})
	u := v.(*untimedLexer)
	u.once.Do(func() {
		var rules map[string][]*chroma.CompiledRule
		if rules, u.err = compiledRules(rl); u.err == nil {
			for _, state := range rules {
				for _, r := range state {
					if r.Regexp != nil {
						r.Regexp.MatchTimeout = regexp2.DefaultMatchTimeout
					}
				}
			}
		}
	})
	return u.err
}

// compiledRules compiles l's rules and returns them.
func compiledRules(l *chroma.RegexLexer) (map[string][]*chroma.CompiledRule, error) {
	if _, err := l.Rules(); err != nil {
		return nil, err
	}
	f := reflect.ValueOf(l).Elem().FieldByName("rules")
	if !f.IsValid() {
		return nil, errors.New("chroma.RegexLexer has no rules field: see render.untime")
	}
	rules, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(map[string][]*chroma.CompiledRule)
	if !ok {
		return nil, fmt.Errorf("chroma.RegexLexer.rules is a %s: see render.untime", f.Type())
	}
	return rules, nil
}

// codeScheme is how code looks in one colour scheme: a chroma style for the
// token colours, drawn on the stylesheet's code background.
type codeScheme struct {
	name       string // "light" or "dark"
	style      string // chroma style name
	background string // the stylesheet's --card colour in this scheme
}

// codeSchemes are the two schemes of the stylesheet; the backgrounds are the
// --card values of templates/assets/style.css, on which code blocks sit.
var codeSchemes = []codeScheme{
	{name: "light", style: "github", background: "#f3f5f8"},
	{name: "dark", style: "github-dark", background: "#1b1f24"},
}

// minCodeContrast is WCAG AA for normal text.
const minCodeContrast = 4.5

// codeCSS returns the highlighting rules: the light scheme, then the dark
// one inside a media query. Every token class gets a colour in both schemes
// (a class the dark style leaves unstyled would otherwise keep its light
// colour and vanish), darkened or lightened where needed until it reaches
// minCodeContrast against its background; the dark rules undo whatever
// else the light ones set.
func codeCSS() ([]byte, error) {
	schemes := make([]*chroma.Style, len(codeSchemes))
	for i, s := range codeSchemes {
		if schemes[i] = styles.Get(s.style); schemes[i].Name != s.style {
			return nil, fmt.Errorf("render: code style %s: not in chroma", s.style)
		}
	}
	var b bytes.Buffer
	b.WriteString("\n/* Code highlighting: chroma's github and github-dark styles, every class in both schemes, at least 4.5:1 contrast. */\n")
	var light map[chroma.TokenType]tokenLook
	for i, s := range codeSchemes {
		looks := map[chroma.TokenType]tokenLook{}
		if i > 0 {
			b.WriteString("@media (prefers-color-scheme: dark) {\n")
		}
		for _, tt := range tokenTypes() {
			look := newTokenLook(schemes[i], tt, chroma.ParseColour(s.background))
			looks[tt] = look
			fmt.Fprintf(&b, ".chroma .%s { %s }\n", chroma.StandardTypes[tt], look.css(light[tt]))
		}
		if i > 0 {
			b.WriteString("}\n")
		}
		light = looks
	}
	return b.Bytes(), nil
}

// tokenLook is how one token class is drawn in one scheme.
type tokenLook struct {
	fg, bg                  chroma.Colour // bg unset: the code block's background
	bold, italic, underline bool
}

func newTokenLook(style *chroma.Style, tt chroma.TokenType, page chroma.Colour) tokenLook {
	e := style.Get(tt)
	look := tokenLook{fg: e.Colour, bold: e.Bold == chroma.Yes, italic: e.Italic == chroma.Yes, underline: e.Underline == chroma.Yes}
	if !look.fg.IsSet() {
		look.fg = style.Get(chroma.Text).Colour
	}
	if e.Background.IsSet() && e.Background != style.Get(chroma.Background).Background {
		look.bg = e.Background
	}
	on := page
	if look.bg.IsSet() {
		on = look.bg
	}
	look.fg = withContrast(look.fg, on, minCodeContrast)
	return look
}

// css writes the declarations of l, and those that undo what an earlier
// rule (under, zero for none) set and l does not.
func (l tokenLook) css(under tokenLook) string {
	decls := []string{"color: " + l.fg.String()}
	switch {
	case l.bg.IsSet():
		decls = append(decls, "background-color: "+l.bg.String())
	case under.bg.IsSet():
		decls = append(decls, "background-color: transparent")
	}
	for _, d := range []struct {
		set, under bool
		on, off    string
	}{
		{l.bold, under.bold, "font-weight: bold", "font-weight: normal"},
		{l.italic, under.italic, "font-style: italic", "font-style: normal"},
		{l.underline, under.underline, "text-decoration: underline", "text-decoration: none"},
	} {
		switch {
		case d.set:
			decls = append(decls, d.on)
		case d.under:
			decls = append(decls, d.off)
		}
	}
	return strings.Join(decls, "; ")
}

// tokenTypes are the token classes chroma writes on spans, in a fixed order.
func tokenTypes() []chroma.TokenType {
	var out []chroma.TokenType
	for tt, class := range chroma.StandardTypes {
		if class != "" && isToken(tt) {
			out = append(out, tt)
		}
	}
	slices.Sort(out)
	return out
}

// isToken tells the classes of tokens from those of the wrapper, lines and
// line numbers (Background down to CodeLine).
func isToken(tt chroma.TokenType) bool { return tt < chroma.CodeLine || tt > chroma.Background }

// withContrast moves fg towards black or white, whichever is further from
// bg, in small steps until its contrast with bg reaches want.
func withContrast(fg, bg chroma.Colour, want float64) chroma.Colour {
	target := chroma.NewColour(0, 0, 0)
	if relativeLuminance(bg) < 0.18 {
		target = chroma.NewColour(255, 255, 255)
	}
	for step := 0; contrastRatio(fg, bg) < want && step < 100; step++ {
		fg = mix(fg, target, 0.05)
	}
	return fg
}

func mix(a, b chroma.Colour, t float64) chroma.Colour {
	ch := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*t + 0.5) }
	return chroma.NewColour(ch(a.Red(), b.Red()), ch(a.Green(), b.Green()), ch(a.Blue(), b.Blue()))
}

// relativeLuminance is WCAG 2's relative luminance of an sRGB colour.
func relativeLuminance(c chroma.Colour) float64 {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.Red()) + 0.7152*lin(c.Green()) + 0.0722*lin(c.Blue())
}

// contrastRatio is WCAG 2's contrast ratio of two colours, from 1 to 21.
func contrastRatio(a, b chroma.Colour) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
