package render

import (
	"bytes"
	"context"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/templates"
)

// build is one Render: the site, the digests of its shared inputs, and the
// helpers every job uses.
type build struct {
	r   *Renderer
	s   *content.Site
	cfg *charter.Charter

	base, api string // origins without a trailing slash

	// Digests of the inputs jobs declare.
	layout    [32]byte // what every page's frame shows
	config    [32]byte // site.yaml
	summaries [32]byte // every page's summary (titles, dates, paths, ...)
	articles  [32]byte // every constitution article, bodies included
	docs      [32]byte // every downloadable document, bodies included (their checksums are listed)
	runtime   [32]byte // the runtime artifact

	textOnce sync.Once
	text     []byte // constitution.txt

	plans []*pagePlan // this build's plan of each page, kept for the next (Options.Cache)
}

func newBuild(r *Renderer, s *content.Site) *build {
	cfg := s.Charter
	b := &build{
		r: r, s: s, cfg: cfg,
		base:   strings.TrimSuffix(cfg.BaseURL, "/"),
		api:    strings.TrimSuffix(cfg.APIURL, "/"),
		config: s.ConfigDigest,
	}
	b.layout = newDigest().str(cfg.Title, cfg.Language, cfg.License, cfg.Organisation.Name, b.base).
		sums(r.optsDigest).sum()
	sd, ad, dd := newDigest(), newDigest(), newDigest()
	for _, p := range s.Pages {
		sd.sums(p.SummaryDigest)
		if p.Kind == content.KindDoc {
			dd.sums(p.Digest)
		}
	}
	b.docs = dd.sum()
	for _, a := range s.Articles {
		ad.sums(a.Digest)
	}
	b.summaries, b.articles = sd.sum(), ad.str(cfg.Constitution.Title, cfg.Constitution.Version, cfg.Constitution.Status, cfg.Constitution.License).sum()
	if s.Runtime != nil {
		b.runtime = s.Runtime.Digest
	}
	return b
}

// plan lists every job of the build. Each job declares its inputs through
// its fingerprint.
func (b *build) plan() []job {
	jobs := make([]job, 0, len(b.s.Pages)+32)
	b.plans = make([]*pagePlan, len(b.s.Pages))
	for i, p := range b.s.Pages {
		j, plan := b.pageJob(i, p)
		jobs = append(jobs, j)
		if plan.aliases {
			jobs = append(jobs, b.aliasJobs(p)...)
		}
		if plan.changelog {
			jobs = append(jobs, b.changelogFeedJob(p))
		}
	}
	if b.r.opts.Cache {
		b.r.planned = plannedPages{pages: b.s.Pages, plans: b.plans}
	}
	st := b.r.stylesheet
	jobs = append(jobs,
		job{key: "stylesheet", paths: []string{st.Path}, fp: b.r.optsDigest, run: func() ([][]byte, error) { return [][]byte{st.Data}, nil }},
		b.homeJob(),
		b.gateJob(),
		b.constitutionIndexJob(),
		b.constitutionTextJob(),
		b.constitutionStatusJob(),
		b.stewardshipJob(),
		b.llmsJob(),
		b.aiJob(),
		b.robotsJob(),
		b.notFoundJob(),
		b.iconsJob(),
	)
	if !slices.ContainsFunc(b.s.Pages, func(p *content.Page) bool { return p.Path == pagesIndexPath }) {
		jobs = append(jobs, b.pagesIndexJob())
	}
	jobs = append(jobs, b.pagesFeedJob()...)
	jobs = append(jobs, b.explorerJobs()...)
	jobs = append(jobs, b.taxonomyJobs()...)

	if rt := b.s.Runtime; rt != nil {
		jobs = append(jobs, b.downloadJob("runtime", b.runtimePath(), rt.Raw, b.runtime))
	}
	for _, f := range b.s.Static {
		jobs = append(jobs, job{key: "static:" + f.Source, paths: []string{f.Path}, fp: f.Digest,
			run: func() ([][]byte, error) { return [][]byte{f.Data}, nil }})
	}
	for _, a := range b.r.opts.Artifacts {
		if a.Downloadable {
			jobs = append(jobs, b.downloadJob("artifact", a.Path, a.Data, b.r.optsDigest))
		} else {
			jobs = append(jobs, job{key: "artifact:" + a.Path, paths: []string{a.Path}, fp: b.r.optsDigest,
				run: func() ([][]byte, error) { return [][]byte{a.Data}, nil }})
		}
	}
	// The lists of every file come last: they read the paths planned above,
	// in plan order (deterministic), and sort them only when they render.
	all := make([]string, 0, 2*len(jobs)+2)
	for _, j := range jobs {
		all = append(all, j.paths...)
	}
	all = append(all, sitemapPath, indexTxtPath, headersPath, redirectsPath)
	allSum := b.r.listed.sum(all, b.r.opts.Cache)
	return append(jobs, b.sitemapJob(all, allSum), b.indexTxtJob(all, allSum), b.hostFilesJob(all, allSum))
}

// listedPaths are the output paths the file lists of a Render name, and
// their digest, kept for the next Render: an edit that adds and removes no
// file (most) lists the same paths, and comparing them is cheaper than
// hashing them again.
type listedPaths struct {
	paths  []string
	digest [32]byte
}

// sum is the digest of all; keep remembers it for the next Render.
func (l *listedPaths) sum(all []string, keep bool) [32]byte {
	if l.paths != nil && slices.Equal(all, l.paths) {
		return l.digest
	}
	d := newDigest()
	for _, p := range all {
		d.str(p)
	}
	sum := d.sum()
	if keep {
		*l = listedPaths{paths: all, digest: sum}
	}
	return sum
}

// downloadJob publishes data at p with its .sha256 beside it.
func (b *build) downloadJob(kind, p string, data []byte, fp [32]byte) job {
	return job{key: kind + ":" + p, paths: []string{p, p + ".sha256"}, fp: newDigest().sums(fp).str(p).sum(),
		run: func() ([][]byte, error) {
			_, sum := shaFile(p, data)
			return [][]byte{data, sum}, nil
		}}
}

func (b *build) runtimePath() string {
	return "constitution/" + path.Base(b.s.Runtime.Source)
}

// abs returns the absolute URL of a site path.
func (b *build) abs(sitePath string) string { return b.base + sitePath }

// origin is where an endpoint is served: the API origin or the site.
func (b *build) origin(e Endpoint) string {
	if e.OnAPI {
		return b.api
	}
	return b.base
}

// urlPath is the URL path an output path is reached at: folders for index
// pages, the file itself otherwise.
func urlPath(outPath string) string { return content.URLPath(outPath) }

func twinPath(outPath string) string { return strings.TrimSuffix(outPath, ".html") + ".md" }

// meta is the frame of the page published at outPath.
func (b *build) meta(title, description, outPath, section string) templates.Meta {
	cfg := b.cfg
	return templates.Meta{
		SiteTitle:    cfg.Title,
		Title:        title,
		Description:  description,
		Canonical:    b.abs(urlPath(outPath)),
		Twin:         "/" + twinPath(outPath),
		Stylesheet:   "/" + b.r.stylesheet.Path,
		Language:     cfg.Language,
		Section:      section,
		License:      cfg.License,
		Organisation: cfg.Organisation.Name,
		ReloadURL:    b.r.opts.ReloadURL,
		ReloadPath:   outPath,
		Kind:         "website",
		Image:        b.abs("/" + iconImagePath),
	}
}

// page renders body inside the layout.
func page(m templates.Meta, body templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(8 << 10)
	if err := templates.Layout(m).Render(templ.WithChildren(context.Background(), body), &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// htmlAndTwin is the common shape of a generated page job.
func htmlAndTwin(m templates.Meta, body templ.Component, twin string) ([][]byte, error) {
	h, err := page(m, body)
	if err != nil {
		return nil, err
	}
	return [][]byte{h, []byte(twin)}, nil
}
