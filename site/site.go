// Package site builds the static site: it loads and validates content/,
// renders every page and publishes the output directory, in that order.
//
//	b, err := site.New(site.Options{ContentDir: "content", OutDir: "public"})
//	res, err := b.Build(ctx, nil) // nil: everything changed (a full build)
//
// A first build and an incremental rebuild are the same call: Build takes the
// content paths that changed since the last Build, and the loader, the
// renderer and the publisher each redo only what those changes reach. A
// failed build leaves the published output as it was.
package site

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/publish"
	"github.com/proofsite/proofsite/site/render"
)

// Options configure a Builder.
type Options struct {
	ContentDir string // required
	OutDir     string // required
	// Content, when set, is read instead of ContentDir (tests); ContentDir
	// still names it in messages.
	Content fs.FS
	// Render configures rendering: generated artifacts, the endpoint map,
	// the live-reload script. Its Cache field is set by Incremental.
	Render render.Options
	// Prepare, when set, returns the render options in place of Render. The
	// first Build calls it while it reads the content, so that what it
	// reads (the chain for the explorer, the live edge's routes) overlaps
	// with reading the pages; an error fails that Build, and the next
	// calls it again.
	Prepare func() (render.Options, error)
	// Visibility decides which pages are published: drafts, pages whose
	// publishDate is to come and expired pages are not, unless it says so.
	Visibility content.Visibility
	// Incremental keeps every rendered output in memory so later Builds with
	// a list of changes redo only what they reach (watch mode). A one-shot
	// build leaves it off and streams outputs to disk.
	Incremental bool
	// Trees are folders published as they are beside the rendered site on
	// full builds (hard-linked, see publish.Stage.Link), such as the
	// ledger's tiles; incremental builds leave them as they are.
	Trees []Tree
	// Logger receives progress of long builds; nil discards.
	Logger *slog.Logger
	// ProgressEvery is how often a running build logs progress; 0 means one
	// second.
	ProgressEvery time.Duration
}

// Tree is a folder published under an output prefix.
type Tree struct {
	Dir    string // the folder; one that does not exist publishes nothing
	Prefix string // output path it is published under, e.g. "ledger"
	// Skip reports files of the folder not to publish (slash-separated
	// paths relative to Dir); nil publishes every regular file.
	Skip func(rel string) bool
}

// Result summarises one Build.
type Result struct {
	Full     bool // the whole output was replaced (otherwise patched in place)
	Pages    int  // HTML pages in the site
	Files    int  // files in the site
	Bytes    int64
	Jobs     int      // render jobs planned
	Rendered int      // render jobs that ran (the rest were reused)
	Written  []string // output paths written, sorted
	Removed  []string // output paths removed because the site no longer produces them
	Duration time.Duration
}

// String is the one-line summary a build prints.
func (r Result) String() string {
	return fmt.Sprintf("built %d pages, %d files, %s in %d ms (rendered %d of %d jobs, wrote %d files)",
		r.Pages, r.Files, humanBytes(r.Bytes), r.Duration.Milliseconds(), r.Rendered, r.Jobs, len(r.Written))
}

// A Builder builds one content directory into one output directory. Build
// may not be called concurrently.
type Builder struct {
	opts      Options
	loader    *content.Loader
	renderer  *render.Renderer
	publisher *publish.Publisher
	published bool // a full build has been published
	log       *slog.Logger
}

// New returns a Builder.
func New(opts Options) (*Builder, error) {
	if opts.ContentDir == "" || opts.OutDir == "" {
		return nil, errors.New("site: ContentDir and OutDir are required")
	}
	if opts.Content == nil {
		info, err := os.Stat(opts.ContentDir)
		if err != nil {
			return nil, fmt.Errorf("site: content folder: %w", err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("site: content folder %s is not a folder", opts.ContentDir)
		}
		opts.Content = os.DirFS(opts.ContentDir)
	}
	if opts.ProgressEvery == 0 {
		opts.ProgressEvery = time.Second
	}
	p, err := publish.New(opts.OutDir)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Builder{opts: opts, loader: content.NewLoader(opts.Content, opts.Visibility), publisher: p, log: log}
	if opts.Prepare == nil {
		if err := b.newRenderer(opts.Render); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// newRenderer makes the Builder's renderer from opts.
func (b *Builder) newRenderer(opts render.Options) error {
	opts.Cache = b.opts.Incremental
	r, err := render.New(opts)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	b.renderer = r
	return nil
}

// prepare makes the renderer from Options.Prepare.
func (b *Builder) prepare() error {
	opts, err := b.opts.Prepare()
	if err != nil {
		return err
	}
	return b.newRenderer(opts)
}

// Build loads the content paths in changes (nil: all of it), validates the
// whole site, renders what changed and publishes it. Content errors come
// back as content.Errors, every problem with its file and line; the
// published output is then unchanged.
func (b *Builder) Build(ctx context.Context, changes []string) (Result, error) {
	start := time.Now()
	full := changes == nil || !b.published || !b.opts.Incremental
	if full {
		changes = nil
	}

	var prepared chan error
	if b.renderer == nil {
		prepared = make(chan error, 1)
		go func() { prepared <- b.prepare() }()
	}
	site, err := b.loader.Load(ctx, changes)
	if prepared != nil {
		if perr := <-prepared; perr != nil {
			return Result{}, perr
		}
	}
	if err != nil {
		return Result{}, fmt.Errorf("load: %w", err)
	}

	var (
		res      = Result{Full: full}
		progress atomic.Int64
		stage    *publish.Stage
		mu       sync.Mutex
		changed  []publish.File
	)
	if full {
		if stage, err = b.publisher.Stage(); err != nil {
			return Result{}, fmt.Errorf("publish: %w", err)
		}
	}
	stop := b.reportProgress(&progress)
	stats, err := b.renderer.Render(ctx, site, full, func(o render.Output) error {
		progress.Add(1)
		if full {
			return stage.Write(o.Path, o.Data)
		}
		mu.Lock()
		changed = append(changed, publish.File{Path: o.Path, Data: o.Data})
		mu.Unlock()
		return nil
	})
	stop()
	if err != nil {
		if stage != nil {
			stage.Abort()
		}
		b.renderer.Forget() // it may hold outputs that were never published
		return Result{}, fmt.Errorf("render: %w", err)
	}

	if full {
		err = b.linkTrees(stage)
		if err != nil {
			stage.Abort()
		} else {
			err = stage.Commit()
		}
		b.published = err == nil
		res.Written = slices.Clone(stats.Paths)
	} else {
		res.Removed, err = b.publisher.Patch(changed, stats.Paths)
		for _, f := range changed {
			res.Written = append(res.Written, f.Path)
		}
	}
	if err != nil {
		b.renderer.Forget()
		return Result{}, fmt.Errorf("publish: %w", err)
	}
	slices.Sort(res.Written)
	res.Pages, res.Files, res.Bytes, res.Jobs, res.Rendered = stats.Pages, stats.Files, stats.Bytes, stats.Jobs, stats.Rendered
	res.Duration = time.Since(start)
	return res, nil
}

// linkTrees publishes Options.Trees into stage, in lexical order (a
// folder's checkpoint before the tiles it names).
func (b *Builder) linkTrees(stage *publish.Stage) error {
	for _, t := range b.opts.Trees {
		err := filepath.WalkDir(t.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == t.Dir && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(t.Dir, p)
			rel = filepath.ToSlash(rel)
			if !d.Type().IsRegular() || (t.Skip != nil && t.Skip(rel)) {
				return nil
			}
			return stage.Link(path.Join(t.Prefix, rel), p)
		})
		if err != nil {
			return fmt.Errorf("publish %s: %w", t.Dir, err)
		}
	}
	return nil
}

// RenderAll makes the next Build render every page again, for changes the
// content does not show (template text in templ's watch mode).
func (b *Builder) RenderAll() {
	if b.renderer != nil {
		b.renderer.Forget()
	}
}

// reportProgress logs how many files are done while a build runs longer than
// ProgressEvery; the returned function stops it and returns once it has
// logged its last line, so nothing is logged after the build returns.
func (b *Builder) reportProgress(done *atomic.Int64) (stop func()) {
	t := time.NewTicker(b.opts.ProgressEvery)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-t.C:
				b.log.Info("building", "files_done", done.Load())
			case <-quit:
				return
			}
		}
	})
	return func() { t.Stop(); close(quit); wg.Wait() }
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
