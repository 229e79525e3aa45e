package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/templates"
)

// taxonomy is a way of grouping pages by terms, as Hugo's tags and
// categories: an index of its terms at /KEY/ and a list of pages per term at
// /KEY/TERM/.
type taxonomy struct {
	key      string // the URL folder and front matter key
	title    string
	singular string
	terms    func(*content.Page) []content.Term
}

var (
	tagsTaxonomy       = taxonomy{key: "tags", title: "Tags", singular: "tag", terms: func(p *content.Page) []content.Term { return p.Tags }}
	categoriesTaxonomy = taxonomy{key: "categories", title: "Categories", singular: "category", terms: func(p *content.Page) []content.Term { return p.Categories }}
	taxonomies         = []taxonomy{tagsTaxonomy, categoriesTaxonomy}
)

// termPath is the output path of a term's list page.
func (t taxonomy) termPath(slug string) string { return t.key + "/" + slug + "/index.html" }

// termLinks links each term of a page to its list page.
func termLinks(t taxonomy, terms []content.Term) []templates.Link {
	links := make([]templates.Link, 0, len(terms))
	for _, term := range terms {
		links = append(links, templates.Link{Href: urlPath(t.termPath(term.Slug)), Label: term.Name})
	}
	return links
}

// termPages is one term and the pages that carry it.
type termPages struct {
	name, slug string // the name is the first spelling met, pages in path order
	pages      []*content.Page
}

// terms groups the site's pages by the taxonomy's terms, sorted by slug;
// each term's pages are in path order (planning needs no more; the page
// that lists them sorts them).
func (b *build) terms(t taxonomy) []*termPages {
	bySlug := map[string]*termPages{}
	var out []*termPages
	for _, p := range b.s.Pages {
		for _, term := range t.terms(p) {
			tp := bySlug[term.Slug]
			if tp == nil {
				tp = &termPages{name: term.Name, slug: term.Slug}
				bySlug[term.Slug] = tp
				out = append(out, tp)
			}
			tp.pages = append(tp.pages, p)
		}
	}
	slices.SortFunc(out, func(a, b *termPages) int { return strings.Compare(a.slug, b.slug) })
	return out
}

// taxonomyPlan keeps the taxonomy jobs of a Render for the next: grouping
// thousands of pages by term is most of the planning of a one-page edit,
// and what the term pages show (titles, dates, summaries, terms) is all in
// the pages' summaries and the frame. While neither changed, the jobs are
// the same, fingerprints included: the pages they list may be older copies
// of the same pages, with the same summaries.
type taxonomyPlan struct {
	layout, summaries [32]byte
	jobs              []job
	planned           bool
}

// taxonomyJobs are the pages of every taxonomy.
func (b *build) taxonomyJobs() []job {
	old := b.r.taxonomy
	if old.planned && old.layout == b.layout && old.summaries == b.summaries {
		return old.jobs
	}
	var jobs []job
	for _, t := range taxonomies {
		jobs = append(jobs, b.taxonomyPages(t)...)
	}
	if b.r.opts.Cache {
		b.r.taxonomy = taxonomyPlan{layout: b.layout, summaries: b.summaries, jobs: jobs, planned: true}
	}
	return jobs
}

// taxonomyPages are the index of a taxonomy and a list page per term; none
// when no page uses the taxonomy.
func (b *build) taxonomyPages(t taxonomy) []job {
	terms := b.terms(t)
	if len(terms) == 0 {
		return nil
	}
	jobs := make([]job, 0, len(terms)+1)
	index := newDigest().str("taxonomy", t.key).sums(b.layout)
	for _, tp := range terms {
		fp := newDigest().str("term", t.key, tp.name, tp.slug).sums(b.layout)
		for _, p := range tp.pages {
			fp.sums(p.SummaryDigest)
		}
		index.str(tp.name, tp.slug, fmt.Sprint(len(tp.pages)))
		out := t.termPath(tp.slug)
		jobs = append(jobs, job{key: "term:" + out, paths: []string{out, twinPath(out)}, fp: fp.sum(), run: func() ([][]byte, error) {
			pages := slices.Clone(tp.pages)
			sortNewestFirst(pages)
			v := templates.ListView{
				Title:   fmt.Sprintf("%s: %s", strings.ToUpper(t.singular[:1])+t.singular[1:], tp.name),
				Summary: fmt.Sprintf("%s with the %s %q, newest first.", countOf(len(tp.pages), "page"), t.singular, tp.name),
				Items:   b.listItems(pages),
			}
			return htmlAndTwin(b.meta(v.Title, v.Summary, out, "pages"), templates.List(v), listTwin(v.Title, v.Summary, v.Items))
		}})
	}
	out := t.key + "/index.html"
	jobs = append(jobs, job{key: "taxonomy:" + t.key, paths: []string{out, twinPath(out)}, fp: index.sum(), run: func() ([][]byte, error) {
		v := templates.ListView{Title: t.title, Summary: fmt.Sprintf("Every %s used on this site, with the number of pages that carry it.", t.singular)}
		for _, tp := range terms {
			v.Items = append(v.Items, templates.ListItem{Href: urlPath(t.termPath(tp.slug)), Title: tp.name, Summary: countOf(len(tp.pages), "page")})
		}
		return htmlAndTwin(b.meta(v.Title, v.Summary, out, "pages"), templates.List(v), listTwin(v.Title, v.Summary, v.Items))
	}})
	return jobs
}

// countOf writes "1 page", "2 pages".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
