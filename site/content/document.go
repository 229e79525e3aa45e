package content

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/proofsite/proofsite/ledger/charter"
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
	Summary string
	Date    charter.Date
	Tags    []string
	Weight  int
	License string
	Article int    // article number, constitution articles only
	Part    string // constitution part heading, articles only

	Body     []byte   // markdown after the front matter
	BodyLine int      // file line on which Body starts
	Digest   [32]byte // SHA-256 of the whole source file
	// SummaryDigest covers what lists, indexes and neighbours show of the
	// page (path, kind, title, summary, date, tags, weight, license, article,
	// part), so a body edit leaves it unchanged.
	SummaryDigest [32]byte

	pathLine int // line that decides Path (the slug), for duplicate reports
}

// URL returns the page's site-absolute URL path, e.g. "/pages/about.html".
func (p *Page) URL() string { return "/" + p.Path }

// TwinPath returns the output path of the page's markdown twin.
func (p *Page) TwinPath() string { return strings.TrimSuffix(p.Path, ".html") + ".md" }

// frontMatter is every key a document may set.
type frontMatter struct {
	Title   string       `yaml:"title"`
	Summary string       `yaml:"summary"`
	Date    charter.Date `yaml:"date"`
	Tags    []string     `yaml:"tags"`
	Weight  int          `yaml:"weight"`
	License string       `yaml:"license"`
	Slug    string       `yaml:"slug"`
	Type    string       `yaml:"type"`
	Article int          `yaml:"article"`
	Part    string       `yaml:"part"`
}

var (
	slugPattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	tagPattern     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	articlePrefix  = regexp.MustCompile(`^(\d+)-`)
	frontDelimiter = []byte("---")
)

// parseDocument parses one markdown file: front matter, then body.
func parseDocument(file string, src []byte) (*Page, []*Error) {
	fmSrc, body, bodyLine, err := splitFrontMatter(file, src)
	if err != nil {
		return nil, []*Error{err}
	}
	var fm frontMatter
	doc, yerr := decodeYAML(file, fmSrc, 1, &fm)
	if yerr != nil {
		return nil, []*Error{yerr}
	}

	p := &Page{
		Source: file, Title: fm.Title, Summary: strings.TrimSpace(fm.Summary), Date: fm.Date,
		Tags: fm.Tags, Weight: fm.Weight, License: fm.License, Article: fm.Article, Part: fm.Part,
		Body: body, BodyLine: bodyLine, Digest: sha256.Sum256(src),
	}
	var errs []*Error
	need := func(key, value string) {
		if strings.TrimSpace(value) == "" {
			errs = append(errs, doc.errorf("$."+key, "front matter needs %q", key))
		}
	}
	need("title", fm.Title)
	need("summary", fm.Summary)

	dir, name := path.Split(file)
	stem := strings.TrimSuffix(name, ".md")
	isArticleFile := strings.HasPrefix(file, articlesDir)
	switch {
	case isArticleFile:
		p.Kind = KindArticle
	case strings.HasPrefix(file, pagesDir):
		p.Kind = KindPage
	default:
		p.Kind = KindDoc
	}
	if fm.Type != "" {
		k := Kind(fm.Type)
		switch {
		case !slices.Contains(kinds, k):
			errs = append(errs, doc.errorf("$.type", "unknown type %q (known: page, doc, article)", fm.Type))
		case (k == KindArticle) != isArticleFile:
			errs = append(errs, doc.errorf("$.type", "type article is for files under %s and only those", articlesDir))
		default:
			p.Kind = k
		}
	}

	switch {
	case isArticleFile:
		if fm.Article <= 0 {
			errs = append(errs, doc.errorf("$.article", "front matter needs \"article\", the article number (1, 2, ...)"))
		} else if m := articlePrefix.FindStringSubmatch(stem); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != fm.Article {
				errs = append(errs, doc.errorf("$.article", "article %d is in a file numbered %s", fm.Article, m[1]))
			}
		}
		p.Path = fmt.Sprintf("constitution/article-%02d.html", fm.Article)
	case fm.Article != 0 || fm.Part != "":
		errs = append(errs, doc.errorf("$.article", "\"article\" and \"part\" are only for files under %s", articlesDir))
	}
	if strings.HasPrefix(file, pagesDir) {
		if p.Kind == KindPage && fm.Date.IsZero() {
			errs = append(errs, doc.errorf("$", "front matter needs \"date\" (YYYY-MM-DD) on pages"))
		}
		slug := stem
		if fm.Slug != "" {
			slug = fm.Slug
		}
		if !slugPattern.MatchString(slug) {
			errs = append(errs, doc.errorf("$.slug", "slug %q must be lower case letters, digits and -", slug))
		}
		p.Path = dir + slug + ".html"
		p.pathLine = doc.line("$.slug")
	} else if fm.Slug != "" {
		errs = append(errs, doc.errorf("$.slug", "\"slug\" is only for files under %s", pagesDir))
	}
	if p.Path == "" {
		p.Path = dir + stem + ".html"
	}
	for i, t := range fm.Tags {
		if !tagPattern.MatchString(t) {
			errs = append(errs, doc.errorf(fmt.Sprintf("$.tags[%d]", i), "tag %q must be lower case letters, digits and -", t))
		}
	}
	p.SummaryDigest = summaryDigest(p)
	if line, ok := leadingH1(body); ok {
		errs = append(errs, errorf(file, bodyLine+line, "the body starts with a level-1 heading; the title comes from front matter, start the body at ##"))
	}
	return p, errs
}

// splitFrontMatter separates the YAML between the leading "---" lines from
// the markdown body.
func splitFrontMatter(file string, src []byte) (fm, body []byte, bodyLine int, err *Error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	first, rest, _ := cutLine(src)
	if !bytes.Equal(bytes.TrimSpace(first), frontDelimiter) {
		return nil, nil, 0, errorf(file, 1, "missing front matter: the file must start with a line \"---\"")
	}
	line := 2
	start := rest
	for len(rest) > 0 {
		l, next, _ := cutLine(rest)
		if t := bytes.TrimSpace(l); bytes.Equal(t, frontDelimiter) || bytes.Equal(t, []byte("...")) {
			fm = start[:len(start)-len(rest)]
			return fm, next, line + 1, nil
		}
		rest = next
		line++
	}
	return nil, nil, 0, errorf(file, 1, "front matter is not closed: add a line \"---\" after it")
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
	for _, s := range []string{p.Path, string(p.Kind), p.Title, p.Summary, p.Date.String(), p.License, p.Part,
		strconv.Itoa(p.Weight), strconv.Itoa(p.Article), strings.Join(p.Tags, "\x1f")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return [32]byte(h.Sum(nil))
}
