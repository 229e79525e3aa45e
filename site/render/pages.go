package render

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/templates"
)

// pageJob renders one markdown document: its HTML page, its markdown twin
// and, for downloadable documents, the twin's checksum.
func (b *build) pageJob(i int, p *content.Page) (job, *pagePlan) {
	prev, next := b.neighbours(p)
	var plan *pagePlan
	if old := b.r.planned; i < len(old.pages) && old.pages[i] == p {
		plan = old.plans[i]
	}
	// A section page lists every page's summary. An unchanged page's plan
	// says whether it is one, so the page itself is not read again.
	var deps [32]byte
	if plan != nil && plan.section || plan == nil && p.Section {
		deps = b.summaries
	}
	if plan == nil || plan.layout != b.layout || plan.deps != deps || plan.prev != prev || plan.next != next {
		// A parsed page is immutable and a loader reuses it until its file
		// changes, so the plan of an unchanged page is kept.
		plan = &pagePlan{layout: b.layout, deps: deps, prev: prev, next: next, key: "page:" + p.Source, paths: []string{p.Path, p.TwinPath()},
			section: p.Section, aliases: len(p.Aliases) > 0, changelog: p.Type == content.ChangelogType}
		if p.Kind == content.KindDoc {
			plan.paths = append(plan.paths, p.TwinPath()+".sha256")
		}
		fp := newDigest().str("page").sums(p.Digest, b.layout, deps)
		for _, n := range []*content.Page{prev, next} {
			if n != nil {
				fp.sums(n.SummaryDigest)
			}
		}
		plan.fp = fp.sum()
	}
	b.plans[i] = plan
	return job{key: plan.key, paths: plan.paths, fp: plan.fp, run: func() ([][]byte, error) {
		var body bytes.Buffer
		body.Grow(len(p.Body) * 2)
		toc, err := convert(b.r.md, p.Body, &body)
		if err != nil {
			return nil, fmt.Errorf("%s: markdown: %w", p.Source, err)
		}
		kicker := articleKicker(p)
		twin := pageTwin(p, kicker)
		v := templates.PageView{
			Title: p.Title, Kicker: kicker, BodyHTML: body.String(), TOC: toc,
			Tags: termLinks(tagsTaxonomy, p.Tags), Categories: termLinks(categoriesTaxonomy, p.Categories),
		}
		if p.SummaryWritten { // a summary taken from the body is shown as part of it
			v.Summary = p.Summary
		}
		m := b.meta(p.Title, p.Description, p.Path, "")
		section, checksum := "", []byte(nil)
		switch p.Kind {
		case content.KindPage:
			section = "pages"
			v.Date = dateView(p.Date)
			if !p.Date.IsZero() {
				m.Kind, m.Published, m.Modified = "article", p.Date.Format(time.RFC3339), p.Lastmod.Format(time.RFC3339)
			}
			if p.Path != pagesIndexPath {
				v.Up = &templates.Link{Href: "/pages/", Label: "All pages"}
			}
			if p.Section {
				v.List = b.listItems(b.pagesUnder(path.Dir(p.Path)))
				m.Feeds = b.siteFeeds()
				twin = append(twin, listTwin("", "", v.List)...)
			}
			if p.Type == content.ChangelogType {
				feed := templates.Link{Href: "/" + changelogFeedPath(p), Label: p.Title + " (Atom feed)"}
				v.Feed, m.Feeds = &feed, append(m.Feeds, feed)
			}
		case content.KindArticle:
			section = "constitution"
			v.Up = &templates.Link{Href: "/constitution/", Label: b.cfg.Constitution.Title}
			if prev != nil {
				v.Prev = &templates.Link{Href: prev.URL(), Label: fmt.Sprintf("Article %d", prev.Article)}
			}
			if next != nil {
				v.Next = &templates.Link{Href: next.URL(), Label: fmt.Sprintf("Article %d", next.Article)}
			}
		case content.KindDoc:
			var sum string
			sum, checksum = shaFile(p.TwinPath(), twin)
			v.Download = &templates.Download{Href: "/" + p.TwinPath(), SHA256: sum, SHA256Href: "/" + p.TwinPath() + ".sha256", License: p.License}
			switch {
			case strings.HasPrefix(p.Source, "docs/"):
				section = "verify"
			case strings.HasPrefix(p.Source, "products/gate/"):
				section = "gate"
			}
		}
		m.Section = section
		out, err := htmlAndTwin(m, templates.Page(v), string(twin))
		if err != nil {
			return nil, err
		}
		if checksum != nil {
			out = append(out, checksum)
		}
		return out, nil
	}}, plan
}

// dateView shows a front matter date as a day; the datetime attribute keeps
// the time of day and the zone when the front matter gave them.
func dateView(t time.Time) templates.Date {
	if t.IsZero() {
		return templates.Date{}
	}
	d := templates.Date{Text: t.Format(time.DateOnly), DateTime: t.Format(time.DateOnly)}
	if _, offset := t.Zone(); offset != 0 || !t.Equal(t.Truncate(24*time.Hour)) {
		d.DateTime = t.Format(time.RFC3339)
	}
	return d
}

// pagePlan is what planning a page job computed, and from which inputs.
type pagePlan struct {
	layout     [32]byte
	deps       [32]byte
	prev, next *content.Page
	key        string
	paths      []string
	fp         [32]byte

	section, aliases, changelog bool // what the page is, for planning without reading it
}

// neighbours returns the previous and next constitution articles of p.
func (b *build) neighbours(p *content.Page) (prev, next *content.Page) {
	if p.Kind != content.KindArticle {
		return nil, nil
	}
	i := slices.Index(b.s.Articles, p)
	if i > 0 {
		prev = b.s.Articles[i-1]
	}
	if i >= 0 && i+1 < len(b.s.Articles) {
		next = b.s.Articles[i+1]
	}
	return prev, next
}

func articleKicker(p *content.Page) string {
	if p.Kind != content.KindArticle {
		return ""
	}
	if p.Part == "" {
		return fmt.Sprintf("Article %d", p.Article)
	}
	return fmt.Sprintf("Article %d · %s", p.Article, p.Part)
}

// pageTwin is the markdown twin of a document: its title, summary and body.
// For downloadable documents it is the download itself.
func pageTwin(p *content.Page, kicker string) []byte {
	var w bytes.Buffer
	w.Grow(len(p.Body) + 256)
	fmt.Fprintf(&w, "# %s\n\n", p.Title)
	if kicker != "" {
		fmt.Fprintf(&w, "_%s_\n\n", kicker)
	}
	if p.SummaryWritten {
		fmt.Fprintf(&w, "%s\n\n", p.Summary)
	}
	if p.License != "" {
		fmt.Fprintf(&w, "License: %s\n\n", p.License)
	}
	w.Write(bytes.TrimSpace(p.Body))
	w.WriteByte('\n')
	return w.Bytes()
}

// docs returns the downloadable documents, by path.
func (b *build) docPages() []*content.Page {
	var out []*content.Page
	for _, p := range b.s.Pages {
		if p.Kind == content.KindDoc {
			out = append(out, p)
		}
	}
	return out
}

// datedPages returns the general pages, newest first (undated last), not
// the section pages, which are lists themselves.
func (b *build) datedPages() []*content.Page {
	var out []*content.Page
	for _, p := range b.s.Pages {
		if p.Kind == content.KindPage && !p.Section {
			out = append(out, p)
		}
	}
	sortNewestFirst(out)
	return out
}

// sortNewestFirst orders pages by date, newest first and undated last, then
// by weight and path.
func sortNewestFirst(pages []*content.Page) {
	slices.SortStableFunc(pages, func(x, y *content.Page) int {
		if c := y.Date.Compare(x.Date); c != 0 {
			return c
		}
		if x.Weight != y.Weight {
			return x.Weight - y.Weight
		}
		return strings.Compare(x.Path, y.Path)
	})
}

// pagesUnder returns the general pages below an output folder, newest first.
func (b *build) pagesUnder(dir string) []*content.Page {
	var out []*content.Page
	for _, p := range b.datedPages() {
		if strings.HasPrefix(p.Path, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// listItems are the entries of a list of pages.
func (b *build) listItems(pages []*content.Page) []templates.ListItem {
	items := make([]templates.ListItem, 0, len(pages))
	for _, p := range pages {
		items = append(items, templates.ListItem{Href: p.URL(), Title: p.Title, Summary: p.Summary, Date: dateView(p.Date)})
	}
	return items
}

// listTwin is the markdown twin of a list page; without a title, the list
// alone.
func listTwin(title, summary string, items []templates.ListItem) string {
	var md mdWriter
	if title != "" {
		md.h1(title).para(summary)
	}
	for _, it := range items {
		note := it.Summary
		if it.Date.Text != "" {
			note = it.Date.Text + ": " + note
		}
		md.item(it.Href, it.Title, note)
	}
	return md.String()
}

// proofLinks are the live and static surfaces an outsider checks.
func (b *build) proofLinks() []templates.Link {
	links := []templates.Link{
		{Href: "/api/ledger/verify", Label: "Ledger verdict", Note: "read canonical_spine_valid; computed at request time"},
		{Href: "/api/ledger/strict-table", Label: "Strict table", Note: "every row in index order, the documented seam included; metadata only"},
		{Href: "/api/chain/status", Label: "Chain status", Note: "head, genesis and the published key ids"},
		{Href: "/explorer/", Label: "Chain explorer", Note: "every row, block and signature, and the documented seam drawn, as the build verified them"},
		{Href: "/constitution-status.json", Label: "Constitution status", Note: "version, text SHA-256 and every article count"},
		{Href: "/stewardship-horizon.json", Label: "Stewardship horizon", Note: "readiness of the four closure layers"},
	}
	for _, a := range b.r.opts.Artifacts {
		if a.Title != "" {
			links = append(links, templates.Link{Href: "/" + a.Path, Label: a.Title, Note: a.Description})
		}
	}
	return links
}

func (b *build) homeJob() job {
	const out = "index.html"
	fp := newDigest().str("home").sums(b.layout, b.config, b.summaries, b.r.chain.digest).sum()
	return job{key: "home", paths: []string{out, twinPath(out)}, fp: fp, run: func() ([][]byte, error) {
		cfg := b.cfg
		v := templates.HomeView{
			Title: cfg.Title, Summary: cfg.Summary, Description: cfg.Description,
			Authority: cfg.Organisation.HumanAuthority, ProofLinks: b.proofLinks(),
			BrowserVerifier: b.r.opts.BrowserVerifier, BaseURL: strings.TrimSuffix(cfg.BaseURL, "/"),
		}
		v.Documents = append(v.Documents, templates.Link{Href: "/gate.html", Label: "The gate", Note: "authorization checkpoint and capability board"},
			templates.Link{Href: "/constitution/", Label: cfg.Constitution.Title, Note: "version " + cfg.Constitution.Version})
		for _, d := range b.docPages() {
			v.Documents = append(v.Documents, templates.Link{Href: d.URL(), Label: d.Title, Note: d.Summary})
		}
		for i, p := range b.datedPages() {
			if i == 10 {
				v.Pages = append(v.Pages, templates.Link{Href: "/pages/", Label: "All pages"})
				break
			}
			v.Pages = append(v.Pages, templates.Link{Href: p.URL(), Label: p.Title, Note: p.Summary})
		}
		var md mdWriter
		md.h1(v.Title).para(v.Summary).para(v.Description)
		if v.BrowserVerifier != "" {
			md.h2("Verified in your browser").para("The HTML version of this page runs " + v.BrowserVerifier + " in your browser: it reads the log's public tiles under /ledger/ and the trust document /keys.json and computes the ledger's verdict itself, never reading the server's own. Without scripts, run the downloadable verifier: go run verify-ledger.go --tiles --keys keys.json " + v.BaseURL + "/ledger/")
		}
		md.h2("Check it yourself").links(v.ProofLinks)
		md.h2("Human authority boundary").para(v.Authority)
		md.h2("Documents").links(v.Documents)
		if len(v.Pages) > 0 {
			md.h2("Pages").links(v.Pages)
		}
		m := b.meta(cfg.Title, cfg.Summary, out, "home")
		m.Feeds = b.siteFeeds()
		return htmlAndTwin(m, templates.Home(v), md.String())
	}}
}

// pagesIndexPath is the list of every page, unless a section page
// (pages/_index.md) takes its place.
const pagesIndexPath = "pages/index.html"

func (b *build) pagesIndexJob() job {
	const out = pagesIndexPath
	fp := newDigest().str("pages").sums(b.layout, b.summaries).sum()
	return job{key: "pages-index", paths: []string{out, twinPath(out)}, fp: fp, run: func() ([][]byte, error) {
		v := templates.ListView{Title: "Pages", Summary: "Everything published on this site, newest first.", Items: b.listItems(b.datedPages())}
		m := b.meta(v.Title, v.Summary, out, "pages")
		if m.Feeds = b.siteFeeds(); len(m.Feeds) > 0 {
			v.Feed = &m.Feeds[0]
		}
		return htmlAndTwin(m, templates.List(v), listTwin(v.Title, v.Summary, v.Items))
	}}
}

func (b *build) gateJob() job {
	const out = "gate.html"
	fp := newDigest().str("gate").sums(b.layout, b.config, b.summaries, b.r.optsDigest).sum()
	return job{key: "gate", paths: []string{out, twinPath(out)}, fp: fp, run: func() ([][]byte, error) {
		cfg := b.cfg
		rule := cfg.PublishRule
		v := templates.GateView{
			Title:       "The gate: an authorization checkpoint",
			Summary:     "Deny by default. Public claims change only with a signature of the Bridge, and the board below says what is live and what is roadmap.",
			Authority:   cfg.Organisation.HumanAuthority,
			PublishRule: rule.Text, Disclaimer: rule.Disclaimer, Action: rule.Action, Requires: rule.Requires,
		}
		v.Board = templates.Table{Label: "Capability maturity board", Columns: []string{"Capability key", "Value", "What it means"}}
		for _, c := range cfg.Capabilities {
			row := templates.BoardRow{Key: c.Key, Value: c.Value, Note: c.Note, Roadmap: c.Roadmap()}
			v.Board.Rows = append(v.Board.Rows, []templates.Cell{{Text: c.Key, Identifier: true}, {Text: c.Value, Identifier: true}, {Text: c.Note}})
			if row.Roadmap {
				v.Roadmap = append(v.Roadmap, row)
			} else {
				v.RealToday = append(v.RealToday, row)
			}
		}
		for _, d := range b.docPages() {
			if strings.HasPrefix(d.Path, "products/gate/") {
				v.Kits = append(v.Kits, templates.Link{Href: "/" + d.TwinPath(), Label: d.Title, Note: d.Summary + " (" + d.License + ")"})
			}
		}
		for _, a := range b.r.opts.Artifacts {
			if strings.HasPrefix(a.Path, "products/gate/") {
				v.Kits = append(v.Kits, templates.Link{Href: "/" + a.Path, Label: a.Title, Note: a.Description})
			}
		}

		var md mdWriter
		md.h1(v.Title).para(v.Summary)
		md.h2("Authorization model").para(v.Authority).
			para("The gate is deny-by-default: an action it does not know is denied, and an action it knows is allowed only when every control it requires is satisfied. Publish rule (`publish_rule`): " + v.PublishRule).
			para(fmt.Sprintf("**%s** requires **%s**. %s", v.Action, v.Requires, v.Disclaimer))
		md.h2("Capability board").table(v.Board)
		md.h2("Real today versus roadmap").h3("Real today")
		for _, r := range v.RealToday {
			md.line(fmt.Sprintf("- `%s` = `%s`: %s", r.Key, r.Value, r.Note))
		}
		md.line("").h3("Roadmap")
		for _, r := range v.Roadmap {
			md.line(fmt.Sprintf("- `%s` = `%s`: %s", r.Key, r.Value, r.Note))
		}
		md.line("")
		md.h2("Kits (CC0)").links(v.Kits)
		return htmlAndTwin(b.meta(v.Title, v.Summary, out, "gate"), templates.Gate(v), md.String())
	}}
}

func (b *build) constitutionIndexJob() job {
	const out = "constitution/index.html"
	fp := newDigest().str("constitution-index").sums(b.layout, b.config, b.summaries, b.articles).sum()
	return job{key: "constitution-index", paths: []string{out, twinPath(out)}, fp: fp, run: func() ([][]byte, error) {
		c := b.cfg.Constitution
		sum, _ := shaFile(constitutionTextPath, b.constitutionText())
		v := templates.ConstitutionView{
			Title: c.Title, Version: c.Version, Status: c.Status, Adopted: c.Adopted.String(), License: c.License,
			TextHref: "/" + constitutionTextPath, TextSHA256: sum, StatusHref: "/" + constitutionStatusPath,
			Runtime: templates.Link{Href: "/api/constitution", Label: "/api/constitution"},
		}
		if b.s.Runtime != nil {
			v.Runtime.Label = fmt.Sprintf("version %s, %d articles (/api/constitution)", b.s.Runtime.Version, len(b.s.Runtime.Articles))
		}
		v.Counts = templates.Table{Label: "Article count of every surface", Columns: []string{"Surface", "Articles", "How the count is known"}}
		for _, s := range c.Surfaces {
			how := "Declared; the surface is not part of this site."
			if s.Source != "declared" {
				how = "Counted from the text at build time."
			}
			v.Counts.Rows = append(v.Counts.Rows, []templates.Cell{{Text: s.Name}, {Text: strconv.Itoa(s.Articles)}, {Text: strings.TrimSpace(how + " " + s.Note)}})
		}
		for _, a := range b.s.Articles {
			if len(v.Parts) == 0 || v.Parts[len(v.Parts)-1].Title != a.Part {
				v.Parts = append(v.Parts, templates.PartView{Title: a.Part})
			}
			part := &v.Parts[len(v.Parts)-1]
			part.Articles = append(part.Articles, templates.ArticleLink{Number: a.Article, Href: a.URL(), Title: a.Title})
		}

		var md mdWriter
		md.h1(v.Title).para(fmt.Sprintf("Version %s, %s since %s. Published under %s.", v.Version, v.Status, v.Adopted, v.License))
		md.h2("Status").para(fmt.Sprintf("Full text: [%s](%s), SHA-256 `%s`. Machine-readable status: [%s](%s). Runtime artifact: [%s](%s).",
			v.TextHref, v.TextHref, v.TextSHA256, v.StatusHref, v.StatusHref, v.Runtime.Label, v.Runtime.Href))
		md.para("Surfaces do not all show the same number of articles. Every count is disclosed here:").table(v.Counts)
		for _, part := range v.Parts {
			md.h2(part.Title)
			for _, a := range part.Articles {
				md.line(fmt.Sprintf("%d. [%s](%s)", a.Number, a.Title, a.Href))
			}
			md.line("")
		}
		return htmlAndTwin(b.meta(c.Title, fmt.Sprintf("%s, version %s", c.Title, c.Version), out, "constitution"), templates.Constitution(v), md.String())
	}}
}

func (b *build) notFoundJob() job {
	const out = "404.html"
	return job{key: "404", paths: []string{out, twinPath(out)}, fp: newDigest().str("404").sums(b.layout).sum(), run: func() ([][]byte, error) {
		m := b.meta("Not found", "", out, "")
		m.NoIndex, m.Canonical = true, ""
		var md mdWriter
		md.h1("Not found").para("There is no page at this address. Try the home page (/), the sitemap (/sitemap.xml) or /llms.txt, which lists every public surface.")
		return htmlAndTwin(m, templates.NotFound(), md.String())
	}}
}

// aliasJobs leave a page at each of its old addresses (its aliases) that
// sends browsers on to the page; static hosts also get a redirect in
// _redirects.
func (b *build) aliasJobs(p *content.Page) []job {
	jobs := make([]job, 0, len(p.Aliases))
	for _, a := range p.Aliases {
		fp := newDigest().str("alias", a, p.URL(), p.Title, b.base, b.cfg.Language).sum()
		jobs = append(jobs, job{key: "alias:" + a, paths: []string{a, twinPath(a)}, fp: fp, run: func() ([][]byte, error) {
			var buf bytes.Buffer
			v := templates.AliasView{Language: b.cfg.Language, Title: p.Title, Target: p.URL(), Abs: b.abs(p.URL())}
			if err := templates.Alias(v).Render(context.Background(), &buf); err != nil {
				return nil, err
			}
			var md mdWriter
			md.h1(p.Title).para(fmt.Sprintf("This page has moved to [%s](%s).", p.URL(), p.URL()))
			return [][]byte{buf.Bytes(), []byte(md.String())}, nil
		}})
	}
	return jobs
}
