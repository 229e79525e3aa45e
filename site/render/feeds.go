package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/mdtext"
	"github.com/proofsite/proofsite/templates"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Feeds are Atom 1.0 (RFC 4287). Every date in them comes from the content,
// never from the clock of the build, so a feed is the same on every build of
// the same content; ids are the pages' absolute URLs, stable while the
// addresses are.

// pagesFeedPath is the feed of the newest pages.
const pagesFeedPath = "pages/index.xml"

// feedSize is how many of the newest pages the pages feed carries.
const feedSize = 50

type atomFeed struct {
	XMLName  xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Lang     string      `xml:"http://www.w3.org/XML/1998/namespace lang,attr,omitempty"`
	ID       string      `xml:"id"`
	Title    string      `xml:"title"`
	Subtitle string      `xml:"subtitle,omitempty"`
	Updated  string      `xml:"updated"`
	Links    []atomLink  `xml:"link"`
	Author   atomPerson  `xml:"author"`
	Rights   string      `xml:"rights,omitempty"`
	Entries  []atomEntry `xml:"entry"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomPerson struct {
	Name string `xml:"name"`
	URI  string `xml:"uri,omitempty"`
}

type atomEntry struct {
	ID         string         `xml:"id"`
	Title      string         `xml:"title"`
	Updated    string         `xml:"updated"`
	Published  string         `xml:"published,omitempty"`
	Links      []atomLink     `xml:"link"`
	Categories []atomCategory `xml:"category"`
	Summary    *atomText      `xml:"summary,omitempty"`
	Content    *atomText      `xml:"content,omitempty"`
}

type atomCategory struct {
	Term  string `xml:"term,attr"`
	Label string `xml:"label,attr,omitempty"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Base string `xml:"http://www.w3.org/XML/1998/namespace base,attr,omitempty"`
	Body string `xml:",chardata"`
}

func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// feed returns a feed of entries, updated when its newest entry was (or at
// fallback, a date of the content, when it has none).
func (b *build) feed(title, subtitle, htmlPath, feedPath string, fallback time.Time, entries []atomEntry) ([]byte, error) {
	f := atomFeed{
		Lang: b.cfg.Language, ID: b.abs(urlPath(htmlPath)), Title: title, Subtitle: subtitle, Updated: atomTime(fallback),
		Links: []atomLink{
			{Rel: "self", Type: "application/atom+xml", Href: b.abs("/" + feedPath)},
			{Rel: "alternate", Type: "text/html", Href: b.abs(urlPath(htmlPath))},
		},
		Author: atomPerson{Name: b.cfg.Organisation.Name, URI: b.base + "/"}, Rights: b.cfg.License,
		Entries: entries,
	}
	if len(entries) > 0 {
		f.Updated = ""
	}
	for _, e := range entries {
		f.Updated = max(f.Updated, e.Updated) // RFC 3339 in UTC sorts as text
	}
	out, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("atom feed %s: %w", feedPath, err)
	}
	return append(append([]byte(xml.Header), out...), '\n'), nil
}

// siteFeeds are the feeds of the whole site a list page offers.
func (b *build) siteFeeds() []templates.Link {
	if len(b.feedPages()) == 0 {
		return nil
	}
	return []templates.Link{{Href: "/" + pagesFeedPath, Label: b.cfg.Title + ": new pages (Atom feed)"}}
}

// feedPages are the newest dated pages, the entries of the pages feed.
func (b *build) feedPages() []*content.Page {
	var out []*content.Page
	for _, p := range b.datedPages() {
		if p.Date.IsZero() || len(out) == feedSize {
			break
		}
		out = append(out, p)
	}
	return out
}

// pagesFeedJob is the feed of the newest pages; none when no page is dated.
func (b *build) pagesFeedJob() []job {
	if !slices.ContainsFunc(b.s.Pages, func(p *content.Page) bool { return p.Kind == content.KindPage && !p.Section && !p.Date.IsZero() }) {
		return nil
	}
	fp := newDigest().str("pages-feed").sums(b.layout, b.summaries).sum()
	return []job{{key: "pages-feed", paths: []string{pagesFeedPath}, fp: fp, run: func() ([][]byte, error) {
		pages := b.feedPages()
		entries := make([]atomEntry, 0, len(pages))
		for _, p := range pages {
			e := atomEntry{
				ID: b.abs(p.URL()), Title: p.Title, Updated: atomTime(p.Lastmod), Published: atomTime(p.Date),
				Links:   []atomLink{{Rel: "alternate", Type: "text/html", Href: b.abs(p.URL())}},
				Summary: &atomText{Type: "text", Body: p.Summary},
			}
			for _, t := range p.Categories {
				e.Categories = append(e.Categories, atomCategory{Term: t.Slug, Label: t.Name})
			}
			for _, t := range p.Tags {
				e.Categories = append(e.Categories, atomCategory{Term: t.Slug, Label: t.Name})
			}
			entries = append(entries, e)
		}
		data, err := b.feed(b.cfg.Title+": pages", "New and changed pages, newest first.", pagesIndexPath, pagesFeedPath, time.Time{}, entries)
		return [][]byte{data}, err
	}}}
}

// changelogFeedPath is where the feed of a changelog page is published.
func changelogFeedPath(p *content.Page) string { return strings.TrimSuffix(p.Path, ".html") + ".xml" }

// changelogEntry is a level-2 heading of a changelog: "2026-11-09 — Title".
var changelogEntry = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})\s*(?:[—–:-]\s*)?(.*)$`)

// changelogFeedJob turns each dated section of a changelog page into an
// entry: the heading's date and title, the section's HTML as content.
func (b *build) changelogFeedJob(p *content.Page) job {
	out := changelogFeedPath(p)
	fp := newDigest().str("changelog-feed", out).sums(p.Digest, b.layout).sum()
	return job{key: "changelog-feed:" + p.Source, paths: []string{out}, fp: fp, run: func() ([][]byte, error) {
		doc := b.r.md.Parser().Parse(text.NewReader(p.Body))
		var entries []atomEntry
		var current *bytes.Buffer
		for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
			if h, ok := n.(*ast.Heading); ok && h.Level <= 2 {
				current = nil
				m := changelogEntry.FindStringSubmatch(mdtext.Plain(h, p.Body))
				if m == nil {
					continue // a section without a date is not an entry
				}
				day, err := time.Parse(time.DateOnly, m[1])
				if err != nil {
					return nil, fmt.Errorf("%s: changelog heading %q: %w", p.Source, m[0], err)
				}
				id, _ := h.AttributeString("id")
				anchor, _ := id.([]byte)
				title := strings.TrimSpace(m[2])
				if title == "" {
					title = m[1]
				}
				entries = append(entries, atomEntry{
					ID: b.abs(p.URL()) + "#" + string(anchor), Title: title, Updated: atomTime(day),
					Links:   []atomLink{{Rel: "alternate", Type: "text/html", Href: b.abs(p.URL()) + "#" + string(anchor)}},
					Content: &atomText{Type: "html", Base: b.abs(p.URL())},
				})
				current = &bytes.Buffer{}
				continue
			}
			if current == nil {
				continue
			}
			if err := b.r.md.Renderer().Render(current, p.Body, n); err != nil {
				return nil, fmt.Errorf("%s: markdown: %w", p.Source, err)
			}
			entries[len(entries)-1].Content.Body = current.String()
		}
		data, err := b.feed(p.Title, p.Summary, p.Path, out, p.Lastmod, entries)
		return [][]byte{data}, err
	}}
}
