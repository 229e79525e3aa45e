// Package render turns a loaded site into output files in memory. It is pure:
// it reads no files and writes none (site/publish writes).
//
// A Renderer plans the build as jobs, each producing one or more outputs from
// declared inputs. Every job carries a fingerprint of those inputs; with
// Options.Cache set, a job whose fingerprint did not change since the last
// Render is not run again and its previous outputs are reused. This is the
// dependency graph of incremental rebuilds: editing one page's body changes
// that page's fingerprint only, while a new title also changes the lists
// that show it.
//
//	r, err := render.New(render.Options{})
//	stats, err := r.Render(ctx, site, true, func(o render.Output) error { ... })
package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/templates"
	"github.com/yuin/goldmark"
)

// Output is one file of the built site.
type Output struct {
	Path string // slash-separated, relative to the output directory
	Data []byte
}

// Artifact is a file generated outside the site (the OpenAPI document, the
// gate demo transcript, the verifier source) that the build publishes.
type Artifact struct {
	Path         string // output path, e.g. "openapi.json"
	Data         []byte
	Title        string // label in llms.txt and on the home page; "" keeps it unlisted
	Description  string
	Downloadable bool // publish a .sha256 beside it
}

// Endpoint is one route of the live API, listed in llms.txt.
type Endpoint struct {
	Method  string
	Path    string
	Summary string
	OnAPI   bool // served from the verification API origin (api_url) rather than base_url
}

// TrustDocumentPath is where the build publishes the chain's trust
// document, when it is given one as an artifact.
const TrustDocumentPath = "keys.json"

// Key is a published key, listed in ai.json: a ledger key, or a node's
// receipt key (role node, with the node's designation).
type Key struct {
	Node      string `json:"node,omitempty"`
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
	Role      string `json:"role"`
}

// Options configure a Renderer. The zero value renders a plain build.
type Options struct {
	Artifacts []Artifact
	// Endpoints are the live routes (llms.txt's endpoint map, the routes
	// _redirects sends to the API origin).
	Endpoints []Endpoint
	// Answers reports whether the live edge answers a path (concrete or a
	// template): a node's public route, a town or the MCP entry point is
	// published as live only when it does, and as roadmap otherwise. It is
	// derived from the same route definition as Endpoints (whose digest
	// stands for it); nil answers nothing.
	Answers func(path string) bool
	Keys    []Key
	// Ledger is the chain the explorer shows (explorer/), as the build
	// read and verified it; nil publishes the explorer without rows, and
	// it says so.
	Ledger *Ledger
	// ReloadURL, when set, is the base URL of the watch server's reload
	// endpoints; every page then loads the live-reload script. Plain builds
	// leave it empty, so their output stays reproducible.
	ReloadURL string
	// BrowserVerifier, when set, is the site path of the browser's
	// verifier script: the home page then shows the ledger's verdict as
	// that script computes it from the log's tiles.
	BrowserVerifier string
	// Cache keeps outputs between Render calls so unchanged jobs are reused.
	Cache bool
}

// Stats counts what one Render did.
type Stats struct {
	Jobs     int // jobs planned
	Rendered int // jobs whose outputs changed (the others were reused or gave the same bytes)
	Pages    int // HTML pages in the output
	Files    int // output files
	Bytes    int64
	Paths    []string // every output path, in plan order
}

// A Renderer renders sites. Render may not be called concurrently.
type Renderer struct {
	opts       Options
	md         goldmark.Markdown
	stylesheet Output
	optsDigest [32]byte
	chain      *chainView         // the explorer's view of Options.Ledger
	cache      map[string]*cached // by job key; only with Options.Cache
	generation int                // of the current Render; entries not used by it are dropped
	planned    plannedPages       // the pages of the last Render and their plans (Options.Cache)
	taxonomy   taxonomyPlan       // the taxonomy jobs of the last Render (Options.Cache)
	paths      []string           // the output paths of the last Render, checked then
	pages      int                // how many of paths are HTML pages
	listed     listedPaths        // the paths the file lists of the last Render name (Options.Cache)
}

// plannedPages pairs the pages of a Render with their plans, by position:
// an edit keeps every other page where it was.
type plannedPages struct {
	pages []*content.Page
	plans []*pagePlan
}

type cached struct {
	fp         [32]byte
	outputs    []Output
	generation int
}

// New returns a Renderer with the given options.
func New(opts Options) (*Renderer, error) {
	for _, a := range opts.Artifacts {
		if err := checkOutputPath(a.Path); err != nil {
			return nil, fmt.Errorf("render: artifact: %w", err)
		}
	}
	css, err := codeCSS()
	if err != nil {
		return nil, err
	}
	chain, err := newChainView(opts.Ledger)
	if err != nil {
		return nil, err
	}
	style := slices.Concat(templates.Stylesheet, css)
	sum := sha256.Sum256(style)
	r := &Renderer{
		opts:       opts,
		md:         newMarkdown(),
		stylesheet: Output{Path: "assets/style." + hex.EncodeToString(sum[:4]) + ".css", Data: style},
		chain:      chain,
		cache:      map[string]*cached{},
	}
	d := newDigest()
	for _, a := range opts.Artifacts {
		d.str(a.Path, a.Title, a.Description).bool(a.Downloadable).bytes(a.Data)
	}
	for _, e := range opts.Endpoints {
		d.str(e.Method, e.Path, e.Summary).bool(e.OnAPI)
	}
	for _, k := range opts.Keys {
		d.str(k.KeyID, k.PublicKey, k.Role)
	}
	r.optsDigest = d.str(opts.ReloadURL, r.stylesheet.Path, opts.BrowserVerifier).sum()
	return r, nil
}

// job produces the outputs at paths from inputs summed up by fp.
type job struct {
	key   string
	paths []string
	fp    [32]byte
	run   func() ([][]byte, error) // one []byte per path, in order
}

// Render renders site and calls emit, from several goroutines at once, for
// the outputs to write: with all set, every output (a full publication);
// otherwise only the outputs whose bytes changed since the previous Render.
// It returns every output path of the site in Stats.Paths. The first error
// stops the render.
func (r *Renderer) Render(ctx context.Context, site *content.Site, all bool, emit func(Output) error) (Stats, error) {
	b := newBuild(r, site)
	jobs := b.plan()
	stats := Stats{Jobs: len(jobs), Paths: make([]string, 0, 2*len(jobs))}

	for _, j := range jobs {
		stats.Paths = append(stats.Paths, j.paths...)
	}
	// The same paths as last time (an edit that adds and removes nothing)
	// were checked then; strings shared with the last plan compare at once.
	if slices.Equal(stats.Paths, r.paths) {
		stats.Pages = r.pages
	} else {
		if err := checkPaths(jobs); err != nil {
			return stats, err
		}
		for _, p := range stats.Paths {
			if strings.HasSuffix(p, ".html") {
				stats.Pages++
			}
		}
	}
	if r.opts.Cache {
		r.paths, r.pages = stats.Paths, stats.Pages
	}
	stats.Files = len(stats.Paths)

	// Decide here, in one goroutine, what runs: workers only see the jobs
	// whose inputs changed (and, for a full publication, the cached outputs
	// to write again).
	r.generation++
	var work []task
	for _, j := range jobs {
		c := r.cache[j.key]
		if c != nil && c.fp == j.fp {
			c.generation = r.generation
			for _, o := range c.outputs {
				stats.Bytes += int64(len(o.Data))
			}
			if all {
				work = append(work, task{job: j, cached: c.outputs})
			}
			continue
		}
		t := task{job: j, run: true}
		if c != nil {
			t.cached = c.outputs // to compare the new bytes with
		}
		work = append(work, t)
	}
	if all {
		// Longest first: the plan lists the pages, short and many, before
		// the site-wide jobs (the icons, the lists of every page, the
		// feeds), each of which takes as long as many pages. Handed out in
		// plan order, those ran last, one core drawing the icons while the
		// other had nothing left to do; in reverse order the pages fill in
		// behind them. An incremental Render keeps the plan order, which
		// puts an edited page first.
		slices.Reverse(work)
	}

	var (
		next  atomic.Int64
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	// Jobs also write their outputs (emit), so more workers than cores keep
	// the cores busy while some wait on the file system.
	for range min(4*runtime.GOMAXPROCS(0), len(work)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(work); i = int(next.Add(1) - 1) {
				if ctx.Err() != nil {
					fail(ctx.Err())
					return
				}
				t := &work[i]
				outs := t.cached
				if t.run {
					var err error
					if outs, err = t.job.render(); err != nil {
						fail(fmt.Errorf("render: %s: %w", t.job.key, err))
						return
					}
					t.changed = !sameOutputs(t.cached, outs)
					t.cached = outs
					for _, o := range outs {
						t.bytes += int64(len(o.Data))
					}
					if !r.opts.Cache {
						// Nothing keeps the outputs: once written they
						// are garbage, and a full build holds no more
						// of the site in memory than it is writing.
						t.cached = nil
					}
				}
				if !all && !t.changed {
					continue
				}
				for _, o := range outs {
					if err := emit(o); err != nil {
						fail(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return stats, first
	}
	for _, t := range work {
		if !t.run {
			continue
		}
		stats.Bytes += t.bytes
		if t.changed {
			stats.Rendered++
		}
		if r.opts.Cache {
			r.cache[t.job.key] = &cached{fp: t.job.fp, outputs: t.cached, generation: r.generation}
		}
	}
	for k, c := range r.cache {
		if c.generation != r.generation {
			delete(r.cache, k)
		}
	}
	return stats, nil
}

// checkPaths rejects an output path that is not clean, or that two jobs
// produce.
func checkPaths(jobs []job) error {
	seen := make(map[string]string, 2*len(jobs))
	for _, j := range jobs {
		for _, p := range j.paths {
			if err := checkOutputPath(p); err != nil {
				return fmt.Errorf("render: %s: %w", j.key, err)
			}
			if other, dup := seen[p]; dup {
				return fmt.Errorf("render: %s and %s both produce %s", other, j.key, p)
			}
			seen[p] = j.key
		}
	}
	return nil
}

// task is one job of a Render as the workers see it.
type task struct {
	job     job
	run     bool     // inputs changed: render it
	cached  []Output // the previous outputs; after a run, the new ones
	changed bool     // the run changed the bytes
	bytes   int64    // the size of the run's outputs
}

// Forget empties the cache, so the next Render runs every job. Call it when
// the outputs of a Render could not be published.
func (r *Renderer) Forget() {
	clear(r.cache)
	r.planned, r.paths, r.taxonomy, r.listed = plannedPages{}, nil, taxonomyPlan{}, listedPaths{}
}

// render runs the job and names its outputs.
func (j job) render() ([]Output, error) {
	data, err := j.run()
	if err != nil {
		return nil, err
	}
	if len(data) != len(j.paths) {
		return nil, fmt.Errorf("produced %d files for %d paths", len(data), len(j.paths))
	}
	outs := make([]Output, len(data))
	for i := range data {
		outs[i] = Output{Path: j.paths[i], Data: data[i]}
	}
	return outs, nil
}

func sameOutputs(a, b []Output) bool {
	return slices.EqualFunc(a, b, func(x, y Output) bool { return x.Path == y.Path && bytes.Equal(x.Data, y.Data) })
}

// errBadPath is wrapped by every rejected output path.
var errBadPath = errors.New("output path must be a relative, clean, slash-separated path")

func checkOutputPath(p string) error {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." || strings.Contains(p, "\\") {
		return fmt.Errorf("%w: %q", errBadPath, p)
	}
	return nil
}

// digest accumulates a fingerprint; fields are separated so that ("ab","c")
// and ("a","bc") differ.
type digest struct{ h []byte }

func newDigest() *digest { return &digest{} }

func (d *digest) str(ss ...string) *digest {
	for _, s := range ss {
		d.h = append(d.h, s...)
		d.h = append(d.h, 0)
	}
	return d
}

func (d *digest) bytes(b []byte) *digest {
	s := sha256.Sum256(b)
	d.h = append(d.h, s[:]...)
	return d
}

func (d *digest) sums(ss ...[32]byte) *digest {
	for _, s := range ss {
		d.h = append(d.h, s[:]...)
	}
	return d
}

func (d *digest) bool(b bool) *digest {
	if b {
		d.h = append(d.h, 1)
	} else {
		d.h = append(d.h, 0)
	}
	return d
}

func (d *digest) sum() [32]byte { return sha256.Sum256(d.h) }

// shaFile is the content of a "NAME.sha256" file, in the format sha256sum -c
// reads when run beside the file.
func shaFile(name string, data []byte) (hexSum string, file []byte) {
	s := sha256.Sum256(data)
	hexSum = hex.EncodeToString(s[:])
	return hexSum, []byte(hexSum + "  " + path.Base(name) + "\n")
}
