package content

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger/charter"
)

// Site is a whole content directory, loaded and validated.
type Site struct {
	Charter  *charter.Charter // site.yaml
	Pages    []*Page          // every markdown document, sorted by output path
	Articles []*Page          // constitution articles in number order (also in Pages)
	Runtime  *RuntimeArtifact // the constitution runtime artifact
	Static   []*StaticFile    // files under static/, sorted by output path
	// Records are the published governance records (records/NAME.json), by
	// name; each is a JSON object served as written.
	Records map[string]json.RawMessage

	ConfigDigest [32]byte // SHA-256 of site.yaml
}

// StaticFile is a file copied to the output unchanged.
type StaticFile struct {
	Source string // content path, e.g. "static/favicon.svg"
	Path   string // output path, e.g. "favicon.svg"
	Data   []byte
	Digest [32]byte // SHA-256 of Data
}

const (
	staticDir  = "static/"
	recordsDir = "records/"
)

// Ignored reports whether a content path is noise that no build reads: hidden
// files and folders, and the temporaries editors write while saving.
func Ignored(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "#") {
			return true
		}
	}
	base := path.Base(p)
	return strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") ||
		strings.HasSuffix(base, ".swx") || strings.HasSuffix(base, ".tmp") ||
		strings.Contains(base, "___jb_") || base == "4913"
}

// A Loader loads a content directory and remembers what it parsed, so later
// loads re-read only the files that changed. It is not safe for concurrent
// use.
type Loader struct {
	fsys  fs.FS
	vis   Visibility
	files map[string]*parsedFile
	order []string // the keys of files, sorted, so assembling meets pages nearly in order
}

// parsedFile is the cached result of reading one content file. A changed
// file gets a new parsedFile, so what is memoised here stays true.
type parsedFile struct {
	raw    []byte
	page   *Page
	static *StaticFile
	record json.RawMessage
	errs   []*Error
	// What decides whether the page is published, copied here so that a
	// load decides it without reading every page again.
	visibility pageVisibility

	// Parsed on first use by assemble, which alone knows a file's role
	// (site.yaml's is known: parse reads it as the charter).
	sum        *[32]byte
	charter    *charter.Charter
	configDoc  *yamlDoc
	configErrs []*Error
	runtime    *RuntimeArtifact
	runtimeErr []*Error
	parsed     bool
}

func (f *parsedFile) digest() [32]byte {
	if f.sum == nil {
		sum := sha256.Sum256(f.raw)
		f.sum = &sum
	}
	return *f.sum
}

func (f *parsedFile) asCharter() (*charter.Charter, *yamlDoc, []*Error) {
	if !f.parsed {
		f.charter, f.configDoc, f.configErrs = parseCharter(f.raw)
		f.parsed = true
	}
	return f.charter, f.configDoc, f.configErrs
}

func (f *parsedFile) asRuntime(file string) (*RuntimeArtifact, []*Error) {
	if f.runtime == nil && f.runtimeErr == nil {
		f.runtime, f.runtimeErr = parseRuntime(file, f.raw)
	}
	return f.runtime, f.runtimeErr
}

// Visibility decides which pages a load publishes, as Hugo's flags
// --buildDrafts, --buildFuture and --buildExpired do. The zero value
// publishes what Hugo publishes by default.
type Visibility struct {
	Drafts  bool // publish pages marked "draft: true"
	Future  bool // publish pages whose publishDate is after Now
	Expired bool // publish pages whose expiryDate is not after Now
	// Now is the moment publishDate and expiryDate are compared with; zero
	// means the time of each Load. Only pages with those dates depend on it.
	Now time.Time
}

// pageVisibility is what of a page decides whether it is published.
type pageVisibility struct {
	draft           bool
	publish, expiry time.Time // zero: no limit
}

// publishes reports whether a page is published at now.
func (v *Visibility) publishes(p pageVisibility, now time.Time) bool {
	return (v.Drafts || !p.draft) &&
		(v.Future || p.publish.IsZero() || !p.publish.After(now)) &&
		(v.Expired || p.expiry.IsZero() || p.expiry.After(now))
}

// NewLoader returns a Loader reading from fsys, the content directory, and
// publishing the pages vis allows.
func NewLoader(fsys fs.FS, vis Visibility) *Loader {
	return &Loader{fsys: fsys, vis: vis, files: map[string]*parsedFile{}}
}

// Load loads a whole content directory once, with the default Visibility.
func Load(fsys fs.FS) (*Site, error) {
	return NewLoader(fsys, Visibility{}).Load(context.Background(), nil)
}

// LoadCharter loads and validates site.yaml alone, for commands that need
// the charter but not the pages.
func LoadCharter(fsys fs.FS) (*charter.Charter, error) {
	raw, err := fs.ReadFile(fsys, ConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sortErrors([]*Error{errorf(ConfigFile, 0, "missing: a content directory needs a %s", ConfigFile)})
	}
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	cfg, _, errs := parseCharter(raw)
	if len(errs) > 0 {
		return nil, sortErrors(errs)
	}
	return cfg, nil
}

// Load re-reads the content paths in changed (files or folders, added,
// edited or removed) and returns the whole site. A nil changed reads
// everything. The error is Errors (matching ErrInvalid) when the content is
// invalid, or an I/O error.
func (l *Loader) Load(ctx context.Context, changed []string) (*Site, error) {
	if changed == nil {
		clear(l.files)
		changed = []string{"."}
	}
	var toRead []string
	for _, p := range changed {
		p = path.Clean(p)
		if p != "." && Ignored(p) {
			continue
		}
		info, err := fs.Stat(l.fsys, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.forget(p)
		case err != nil:
			return nil, fmt.Errorf("content: %w", err)
		case info.IsDir():
			l.forget(p)
			found, err := l.walk(p)
			if err != nil {
				return nil, err
			}
			toRead = append(toRead, found...)
		default:
			toRead = append(toRead, p)
		}
	}
	if err := l.read(ctx, toRead); err != nil {
		return nil, err
	}
	return l.assemble()
}

// forget drops a path and everything under it from the cache.
func (l *Loader) forget(p string) {
	if p == "." {
		clear(l.files)
	}
	for k := range l.files {
		if k == p || strings.HasPrefix(k, p+"/") {
			delete(l.files, k)
		}
	}
	l.order = nil
}

// walk lists the files under dir that the site reads.
func (l *Loader) walk(dir string) ([]string, error) {
	var found []string
	err := fs.WalkDir(l.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && Ignored(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return found, nil
}

// read reads and parses paths on every core.
func (l *Loader) read(ctx context.Context, paths []string) error {
	// site.yaml first: it takes longest to parse (parse, below), and so
	// no core is left parsing it alone at the end.
	if i := slices.Index(paths, ConfigFile); i > 0 {
		paths = slices.Concat([]string{ConfigFile}, paths[:i], paths[i+1:])
	}
	results := make([]*parsedFile, len(paths))
	errs := make([]error, len(paths))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(paths), 1)) {
		wg.Go(func() {
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= len(paths) || ctx.Err() != nil {
					return
				}
				results[j], errs[j] = l.parse(paths[j])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for j, p := range paths {
		if errors.Is(errs[j], fs.ErrNotExist) { // removed between the walk and the read
			delete(l.files, p)
			l.order = nil
			continue
		}
		if errs[j] != nil {
			return fmt.Errorf("content: %w", errs[j])
		}
		if results[j] != nil {
			if _, known := l.files[p]; !known {
				l.order = nil // a new file: sort again
			}
			l.files[p] = results[j]
		}
	}
	return nil
}

// parse reads one file; a nil result means the site does not read it.
func (l *Loader) parse(p string) (*parsedFile, error) {
	isStatic := strings.HasPrefix(p, staticDir)
	isDoc := !isStatic && strings.HasSuffix(p, ".md")
	isData := p == ConfigFile || (!isStatic && strings.HasSuffix(p, ".json") &&
		(strings.HasPrefix(p, "constitution/") || strings.HasPrefix(p, recordsDir)))
	if !isStatic && !isDoc && !isData {
		return nil, nil
	}
	raw, err := fs.ReadFile(l.fsys, p)
	if err != nil {
		return nil, err
	}
	f := &parsedFile{raw: raw}
	switch {
	case isStatic:
		f.static = &StaticFile{Source: p, Path: strings.TrimPrefix(p, staticDir), Data: raw, Digest: sha256.Sum256(raw)}
	case isDoc:
		f.page, f.errs = parseDocument(p, raw)
		if f.page != nil {
			f.visibility = pageVisibility{draft: f.page.Draft, publish: f.page.PublishDate, expiry: f.page.ExpiryDate}
		}
	case p == ConfigFile:
		f.asCharter() // here, on every core, rather than in assemble
	case strings.HasPrefix(p, recordsDir):
		f.record, f.errs = parseRecord(p, raw)
	}
	return f, nil
}

// checkAliases reports an alias that another page or alias already takes.
func checkAliases(pages []*Page) []*Error {
	if !slices.ContainsFunc(pages, func(p *Page) bool { return len(p.Aliases) > 0 }) {
		return nil
	}
	taken := map[string]*Page{}
	for _, p := range pages {
		taken[p.Path] = p
	}
	var errs []*Error
	for _, p := range pages {
		for _, a := range p.Aliases {
			if other, dup := taken[a]; dup {
				errs = append(errs, errorf(p.Source, p.aliasLine, "alias %s is taken: %s publishes it too", URLPath(a), other.Source))
				continue
			}
			taken[a] = p
		}
	}
	return errs
}

// assemble builds the Site from the cached files and checks what spans files.
func (l *Loader) assemble() (*Site, error) {
	s := &Site{}
	var errs []*Error
	cfgFile, ok := l.files[ConfigFile]
	if !ok {
		return nil, sortErrors([]*Error{errorf(ConfigFile, 0, "missing: a content directory needs a %s", ConfigFile)})
	}
	cfg, doc, cfgErrs := cfgFile.asCharter()
	errs = append(errs, cfgErrs...)
	s.Charter, s.ConfigDigest = cfg, cfgFile.digest()

	s.Records = map[string]json.RawMessage{}
	now := l.vis.Now
	if now.IsZero() {
		now = time.Now()
	}
	if len(l.order) != len(l.files) {
		l.order = slices.Sorted(maps.Keys(l.files))
	}
	for _, p := range l.order {
		f := l.files[p]
		errs = append(errs, f.errs...)
		switch {
		case f.record != nil:
			s.Records[strings.TrimSuffix(path.Base(p), ".json")] = f.record
		case f.page != nil:
			if l.vis.publishes(f.visibility, now) { // unpublished pages are still checked
				s.Pages = append(s.Pages, f.page)
			}
		case f.static != nil:
			s.Static = append(s.Static, f.static)
		}
	}
	slices.SortFunc(s.Pages, func(a, b *Page) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Source, b.Source))
	})
	slices.SortFunc(s.Static, func(a, b *StaticFile) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(s.Pages); i++ {
		if a, b := s.Pages[i-1], s.Pages[i]; a.Path == b.Path {
			errs = append(errs, errorf(b.Source, b.pathLine, "duplicate slug: %s and %s both publish %s", a.Source, b.Source, b.Path))
		}
	}
	errs = append(errs, checkAliases(s.Pages)...)
	for _, p := range s.Pages {
		if p.Kind == KindArticle {
			s.Articles = append(s.Articles, p)
		}
	}
	slices.SortStableFunc(s.Articles, func(a, b *Page) int { return a.Article - b.Article })

	if cfg != nil {
		rtPath := cfg.Constitution.RuntimeArtifact
		if f, ok := l.files[rtPath]; !ok && rtPath != "" {
			errs = append(errs, doc.errorf("$.constitution.runtime_artifact", "runtime artifact %q does not exist", rtPath))
		} else if ok {
			var rtErrs []*Error
			s.Runtime, rtErrs = f.asRuntime(rtPath)
			errs = append(errs, rtErrs...)
		}
		errs = append(errs, checkConstitution(s, doc)...)
		for i, f := range cfg.Gate.ClaimFiles {
			if _, read := l.files[f]; read || !validClaimFile(f) {
				continue
			}
			if info, err := fs.Stat(l.fsys, f); err != nil || !info.Mode().IsRegular() {
				errs = append(errs, doc.errorf(fmt.Sprintf("$.gate.claim_files[%d]", i), "claim file %q does not exist", f))
			}
		}
	}
	if len(errs) > 0 {
		return nil, sortErrors(errs)
	}
	return s, nil
}
