package content

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/proofsite/proofsite/site/mdtext"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Kind is what a markdown document is; it decides the document's layout.
type Kind string

// The kinds of document. A document's kind comes from its folder unless its
// front matter names another with "type".
const (
	KindPage    Kind = "page"    // pages/**: general pages, dated and tagged
	KindDoc     Kind = "doc"     // downloadable documents (kits, guides), published as .md with a .sha256
	KindArticle Kind = "article" // constitution/articles/*: one article of the published constitution
)

var kinds = []Kind{KindPage, KindDoc, KindArticle}

const (
	pagesDir    = "pages/"
	articlesDir = "constitution/articles/"
)

// Page is one markdown document.
type Page struct {
	Source string // content path, e.g. "pages/about.md"
	Kind   Kind
	Path   string // output path of the HTML page, e.g. "pages/about.html"

	Title   string
	Summary string // from "summary", else the text before <!--more-->, else "description", else the first words of the body
	// SummaryWritten says that Summary is the front matter's (summary or
	// description), not text of the body, which the page shows anyway.
	SummaryWritten bool
	Description    string // from "description", else Summary: the page's meta description
	Date           time.Time
	Lastmod        time.Time // last change; Date when the front matter names none
	PublishDate    time.Time // not published before this moment (zero: no such limit)
	ExpiryDate     time.Time // not published from this moment on (zero: never expires)
	Draft          bool      // not published unless drafts are asked for
	Tags           []Term
	Categories     []Term
	Aliases        []string // output paths of the pages that redirect here, e.g. "old/index.html"
	Weight         int
	License        string
	Type           string // the front matter's "type"; "changelog" makes the page's dated sections a feed
	Section        bool   // an _index.md: the page lists every page under its folder
	Article        int    // article number, constitution articles only
	Part           string // constitution part heading, articles only
	// Params are the front matter keys without a meaning here (Hugo's custom
	// parameters), by their lower-case names. Nothing renders them.
	Params map[string]any

	Body     []byte   // markdown after the front matter
	BodyLine int      // file line on which Body starts
	Digest   [32]byte // SHA-256 of the whole source file
	// SummaryDigest covers what lists, indexes, feeds and neighbours show of
	// the page (everything but the body), so a body edit leaves it unchanged.
	SummaryDigest [32]byte

	pathLine  int // line that decides Path (the slug or url), for duplicate reports
	aliasLine int // line of the aliases
}

// Term is one tag or category of a page.
type Term struct {
	Name string // as written, e.g. "Release notes"
	Slug string // its address, e.g. "release-notes"
}

// URL returns the page's site-absolute URL path, e.g. "/pages/about.html",
// or "/pages/posts/" for a page published as a folder's index.html.
func (p *Page) URL() string { return URLPath(p.Path) }

// TwinPath returns the output path of the page's markdown twin.
func (p *Page) TwinPath() string { return strings.TrimSuffix(p.Path, ".html") + ".md" }

// URLPath is the URL path an output path is reached at: a folder for an
// index.html, the file itself otherwise.
func URLPath(outPath string) string {
	if outPath == "index.html" {
		return "/"
	}
	if dir, ok := strings.CutSuffix(outPath, "/index.html"); ok {
		return "/" + dir + "/"
	}
	return "/" + outPath
}

// ChangelogType is the front matter "type" of a changelog: a page whose
// level-2 headings start with a date, each the entry of a feed.
const ChangelogType = "changelog"

var (
	slugPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	urlPattern    = regexp.MustCompile(`^[A-Za-z0-9._~/-]+$`)
	articlePrefix = regexp.MustCompile(`^(\d+)-`)
	moreDivider   = regexp.MustCompile(`(?m)^[ \t]*<!--\s*more\s*-->[ \t]*\r?$`)
)

const (
	summaryWords = 70          // length of a summary taken from the body (Hugo's default summaryLength)
	sectionPage  = "_index.md" // a folder's own page, which lists the pages under it
)

// parseDocument parses one markdown file: front matter, then body.
func parseDocument(file string, src []byte) (*Page, []*Error) {
	fb, body, bodyLine, err := readFront(file, src)
	if err != nil {
		return nil, []*Error{err}
	}
	fm, errs := fb.decode()

	p := &Page{
		Source: file, Title: strings.TrimSpace(fm.Title), Summary: strings.TrimSpace(fm.Summary),
		Description: strings.TrimSpace(fm.Description), Date: fm.Date, Lastmod: fm.Lastmod,
		PublishDate: fm.PublishDate, ExpiryDate: fm.ExpiryDate, Draft: fm.Draft, Weight: fm.Weight,
		License: fm.License, Type: fm.Type, Article: fm.Article, Part: fm.Part, Params: fm.Params,
		Body: body, BodyLine: bodyLine, Digest: sha256.Sum256(src), aliasLine: fb.line("aliases"),
	}
	if p.Title == "" {
		errs = append(errs, fb.errorf("title", "front matter needs %q", "title"))
	}

	dir, name := path.Split(file)
	stem := strings.TrimSuffix(name, ".md")
	isArticleFile := strings.HasPrefix(file, articlesDir)
	isPageFile := strings.HasPrefix(file, pagesDir)
	switch {
	case isArticleFile:
		p.Kind = KindArticle
	case isPageFile:
		p.Kind = KindPage
	default:
		p.Kind = KindDoc
	}
	switch k := Kind(fm.Type); {
	case fm.Type == "" || fm.Type == ChangelogType && isPageFile:
	case fm.Type == ChangelogType:
		errs = append(errs, fb.errorf("type", "type %s is for pages under %s", ChangelogType, pagesDir))
	case !slices.Contains(kinds, k):
		// Another Hugo content type (it picks a Hugo layout): kept, and the
		// folder decides the kind.
	case (k == KindArticle) != isArticleFile:
		errs = append(errs, fb.errorf("type", "type article is for files under %s and only those", articlesDir))
	default:
		p.Kind = k
	}

	if !p.summarise() {
		errs = append(errs, fb.errorf("summary", "front matter needs %q", "summary"))
	}
	if p.Description == "" {
		p.Description = p.Summary
	}

	switch {
	case isArticleFile:
		if fm.Article <= 0 {
			errs = append(errs, fb.errorf("article", "front matter needs \"article\", the article number (1, 2, ...)"))
		} else if m := articlePrefix.FindStringSubmatch(stem); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != fm.Article {
				errs = append(errs, fb.errorf("article", "article %d is in a file numbered %s", fm.Article, m[1]))
			}
		}
		p.Path = fmt.Sprintf("constitution/article-%02d.html", fm.Article)
	case fm.Article != 0 || fm.Part != "":
		errs = append(errs, fb.errorf("article", "\"article\" and \"part\" are only for files under %s", articlesDir))
	}
	switch {
	case isPageFile:
		errs = append(errs, p.pagePath(fb, fm, dir, name)...)
	case fm.Slug != "":
		errs = append(errs, fb.errorf("slug", "\"slug\" is only for files under %s", pagesDir))
	case fm.URL != "":
		errs = append(errs, fb.errorf("url", "\"url\" is only for files under %s", pagesDir))
	case name == sectionPage:
		errs = append(errs, errorf(file, 1, "a section page (%s) lists the pages of its folder: it belongs under %s", sectionPage, pagesDir))
	}
	if p.Path == "" {
		p.Path = dir + stem + ".html"
	}
	var terms []*Error
	p.Tags, terms = fb.terms("tags", fm.Tags)
	errs = append(errs, terms...)
	p.Categories, terms = fb.terms("categories", fm.Categories)
	errs = append(errs, terms...)
	for _, a := range fm.Aliases {
		out, err := aliasPath(a, path.Dir(p.Path))
		switch {
		case err != nil:
			errs = append(errs, fb.errorf("aliases", "alias %q: %v", a, err))
		case out == p.Path:
			errs = append(errs, fb.errorf("aliases", "alias %q is the page's own address", a))
		case !slices.Contains(p.Aliases, out):
			p.Aliases = append(p.Aliases, out)
		}
	}
	p.SummaryDigest = summaryDigest(p)
	if line, ok := leadingH1(p.Body); ok {
		errs = append(errs, errorf(file, bodyLine+line, "the body starts with a level-1 heading; the title comes from front matter, start the body at ##"))
	}
	return p, errs
}

// summarise sets the page's summary when the front matter gave none, as
// Hugo does: the text before a <!--more--> line (which leaves the body), or
// the description, or for a general page the first words of the body. It
// reports false when a document that needs a summary has none.
func (p *Page) summarise() bool {
	var more string
	// Most bodies hold no comment, and the divider's pattern is slow to
	// rule out over a whole body.
	if bytes.Contains(p.Body, []byte("<!--")) {
		if loc := moreDivider.FindIndex(p.Body); loc != nil {
			more = mdtext.Words(plainText(p.Body[:loc[0]]), summaryWords)
			p.Body = slices.Concat(p.Body[:loc[0]], p.Body[loc[1]:]) // the line stays, empty, so lines still count right
		}
	}
	switch {
	case p.Summary != "":
		p.SummaryWritten = true
	case more != "":
		p.Summary = more
	case p.Description != "":
		p.Summary, p.SummaryWritten = p.Description, true
	case p.Kind == KindPage:
		p.Summary = mdtext.Words(firstParagraph(p.Body), summaryWords)
	default:
		return false
	}
	return true
}

// pagePath decides the output path of a file under pages/: its url, else
// its folder and its slug (or file name), lower case as Hugo publishes them.
func (p *Page) pagePath(fb *frontBlock, fm frontMatter, dir, name string) []*Error {
	if name == sectionPage {
		p.Section = true
		p.Path, p.pathLine = dir+"index.html", 1
		if fm.Slug != "" || fm.URL != "" {
			return []*Error{fb.errorf("slug", "a section page (%s) is published at its folder; it takes no slug or url", sectionPage)}
		}
		return nil
	}
	if fm.URL != "" {
		out, err := urlOutput(fm.URL)
		if err != nil {
			return []*Error{fb.errorf("url", "url %q: %v", fm.URL, err)}
		}
		p.Path, p.pathLine = out, fb.line("url")
		return nil
	}
	slug := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(strings.TrimSuffix(name, ".md"))), " ", "-")
	if fm.Slug != "" {
		slug = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(fm.Slug)), " ", "-")
	}
	p.Path, p.pathLine = dir+slug+".html", fb.line("slug")
	if !slugPattern.MatchString(slug) {
		return []*Error{fb.errorf("slug", "slug %q must be letters, digits, - and _", slug)}
	}
	return nil
}

// urlOutput turns a page's "url" (a site path) into its output path: a
// folder ("/about/", or "/about" as Hugo reads it) gets an index.html.
func urlOutput(u string) (string, error) {
	if !strings.HasPrefix(u, "/") {
		return "", errors.New("must be a path on this site starting with /")
	}
	if !urlPattern.MatchString(u) {
		return "", errors.New("may hold only letters, digits and . _ ~ / -")
	}
	rel := strings.TrimPrefix(u, "/")
	if rel == "" || path.Clean(u) != strings.TrimSuffix(u, "/") && u != "/" {
		return "", errors.New("must be a clean path (no //, . or .. segments)")
	}
	switch ext := path.Ext(rel); {
	case strings.HasSuffix(rel, "/"):
		return rel + "index.html", nil
	case ext == "":
		return rel + "/index.html", nil
	case ext == ".html":
		return rel, nil
	default:
		return "", errors.New("must end with / or .html")
	}
}

// aliasPath turns an alias into the output path of its redirect page; a
// relative alias is relative to the page's folder, as in Hugo.
func aliasPath(alias, pageDir string) (string, error) {
	if strings.Contains(alias, "://") {
		return "", errors.New("an alias is a path on this site, not a URL")
	}
	if !strings.HasPrefix(alias, "/") {
		folder := strings.HasSuffix(alias, "/")
		alias = path.Join("/", pageDir, alias)
		if folder {
			alias += "/"
		}
	}
	return urlOutput(alias)
}

// terms checks the tags or categories of a page and gives each its slug.
func (fb *frontBlock) terms(key string, names []string) ([]Term, []*Error) {
	var out []Term
	var errs []*Error
	for _, n := range names {
		n = strings.TrimSpace(n)
		slug := TermSlug(n)
		if slug == "" {
			errs = append(errs, fb.errorf(key, "%s: %q has no letter or digit to make an address of", key, n))
			continue
		}
		if !slices.ContainsFunc(out, func(t Term) bool { return t.Slug == slug }) {
			out = append(out, Term{Name: n, Slug: slug})
		}
	}
	return out, errs
}

// TermSlug is the address of a tag or category, as Hugo makes it: lower
// case, letters and digits kept, every run of anything else one "-".
func TermSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

// summaryMarkdown parses markdown for summaries only; it is safe for
// concurrent use.
var summaryMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// plainText returns the text of markdown, without markup.
func plainText(md []byte) string {
	return mdtext.Plain(summaryMarkdown.Parse(text.NewReader(md)), md)
}

// firstParagraph returns the text of the first paragraph of markdown.
func firstParagraph(md []byte) string {
	doc := summaryMarkdown.Parse(text.NewReader(md))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == ast.KindParagraph {
			return mdtext.Plain(n, md)
		}
	}
	return ""
}

func cutLine(b []byte) (line, rest []byte, found bool) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
	}
	return b, nil, false
}

// leadingH1 reports whether the first non-blank line of body is an ATX
// level-1 heading, and its offset in lines.
func leadingH1(body []byte) (int, bool) {
	for n := 0; len(body) > 0; n++ {
		l, rest, _ := cutLine(body)
		if t := bytes.TrimSpace(l); len(t) > 0 {
			return n, bytes.HasPrefix(t, []byte("# ")) || bytes.Equal(t, []byte("#"))
		}
		body = rest
	}
	return 0, false
}

func summaryDigest(p *Page) [32]byte {
	h := sha256.New()
	terms := func(ts []Term) string {
		var b strings.Builder
		for _, t := range ts {
			b.WriteString(t.Name + "\x1e" + t.Slug + "\x1f")
		}
		return b.String()
	}
	for _, s := range []string{p.Path, string(p.Kind), p.Title, p.Summary, p.Description, p.Type, p.License, p.Part,
		p.Date.Format(time.RFC3339Nano), p.Lastmod.Format(time.RFC3339Nano), strconv.FormatBool(p.Section),
		strconv.Itoa(p.Weight), strconv.Itoa(p.Article), terms(p.Tags), terms(p.Categories), strings.Join(p.Aliases, "\x1f")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return [32]byte(h.Sum(nil))
}
