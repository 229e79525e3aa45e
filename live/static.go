package live

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// staticSite serves the built site from memory. It is loaded whole at start,
// patched file by file in watch mode (Update), and reloaded whole when the
// output folder was replaced by another build (checked at most once a second
// from the request path).
type staticSite struct {
	dir string

	mu    sync.RWMutex
	files map[string]*staticFile // by output path, e.g. "pages/about.html"
	ident uint64                 // inode of dir when loaded

	nextCheck atomic.Int64 // unix nanoseconds of the next folder check
	reloading atomic.Bool
	onError   func(error)
}

// staticFile is one published file with everything a response needs.
type staticFile struct {
	data   []byte
	etag   string
	ctype  string
	gzOnce sync.Once
	gz     []byte // nil when compression does not pay
}

// Files that are published but never served: the host routing files are
// instructions for a static host, and the placeholder keeps the folder in git.
var unserved = map[string]bool{"_headers": true, "_redirects": true, ".gitkeep": true}

func newStaticSite(dir string, onError func(error)) (*staticSite, error) {
	s := &staticSite{dir: dir, onError: onError}
	if err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// reload reads the whole folder.
func (s *staticSite) reload() error {
	ident := dirIdent(s.dir)
	files := map[string]*staticFile{}
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == s.dir && errors.Is(err, fs.ErrNotExist) {
				return nil // nothing built yet: serve 404s
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(s.dir, p)
		f, err := readStatic(p, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		if f != nil {
			files[filepath.ToSlash(rel)] = f
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("live: reading %s: %w", s.dir, err)
	}
	s.mu.Lock()
	s.files, s.ident = files, ident
	s.mu.Unlock()
	return nil
}

// Update re-reads the given output paths; paths that no longer exist are
// dropped.
func (s *staticSite) Update(paths []string) error {
	for _, p := range paths {
		f, err := readStatic(filepath.Join(s.dir, filepath.FromSlash(p)), p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("live: %w", err)
		}
		s.mu.Lock()
		if f == nil {
			delete(s.files, p)
		} else {
			s.files[p] = f
		}
		s.mu.Unlock()
	}
	return nil
}

func readStatic(full, rel string) (*staticFile, error) {
	if _, tile := TileName("/" + rel); unserved[rel] || hidden(rel) || tile {
		return nil, nil
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &staticFile{data: data, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: contentType(rel)}, nil
}

// hidden reports temporaries and dot files, except the .well-known folder.
func hidden(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") && seg != ".well-known" {
			return true
		}
	}
	return false
}

// contentTypes covers what a build publishes; anything else falls back to
// the mime package.
var contentTypes = map[string]string{
	".html":   "text/html; charset=utf-8",
	".md":     "text/markdown; charset=utf-8",
	".txt":    "text/plain; charset=utf-8",
	".sha256": "text/plain; charset=utf-8",
	".go":     "text/plain; charset=utf-8",
	".json":   "application/json",
	".xml":    "application/xml; charset=utf-8",
	".css":    "text/css; charset=utf-8",
	".js":     "text/javascript; charset=utf-8",
	".svg":    "image/svg+xml",
	".ico":    "image/x-icon",
}

func contentType(name string) string {
	ext := path.Ext(name)
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ct := mime.TypeByExtension(ext); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// gzipped returns the file compressed, computing it on first use, or nil
// when compression does not pay.
func (f *staticFile) gzipped() []byte {
	f.gzOnce.Do(func() {
		if len(f.data) < 1024 || !compressible(f.ctype) {
			return
		}
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		w.Write(f.data)
		w.Close()
		if b.Len() < len(f.data)*9/10 {
			f.gz = b.Bytes()
		}
	})
	return f.gz
}

func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || strings.HasPrefix(ct, "application/json") ||
		strings.HasPrefix(ct, "application/xml") || strings.HasPrefix(ct, "image/svg")
}

// lookup resolves a request path to a published file: "/" and folders serve
// their index.html, a path without .html its page ("/gate" is /gate.html);
// with markdown preferred, an HTML page serves its twin. redirect is set
// when the path names a folder without its trailing slash.
func (s *staticSite) lookup(urlPath string, wantMarkdown bool) (f *staticFile, redirect string) {
	s.maybeReload()
	clean := path.Clean("/" + urlPath)
	name := strings.TrimPrefix(clean, "/")
	if strings.HasSuffix(urlPath, "/") || name == "" {
		name = strings.TrimPrefix(name+"/index.html", "/")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if wantMarkdown && strings.HasSuffix(name, ".html") {
		if twin := s.files[strings.TrimSuffix(name, ".html")+".md"]; twin != nil {
			return twin, ""
		}
	}
	if f := s.files[name]; f != nil {
		return f, ""
	}
	if page := s.files[name+".html"]; page != nil { // a page without .html
		if twin := s.files[name+".md"]; wantMarkdown && twin != nil {
			return twin, ""
		}
		return page, ""
	}
	if s.files[name+"/index.html"] != nil {
		return nil, clean + "/"
	}
	return nil, ""
}

// exists reports whether a request path names a published file or folder.
func (s *staticSite) exists(urlPath string) bool {
	f, redirect := s.lookup(urlPath, false)
	return f != nil || redirect != ""
}

// notFound returns the site's 404 page, if it has one: its markdown twin
// when markdown is preferred.
func (s *staticSite) notFound(wantMarkdown bool) *staticFile {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if f := s.files["404.md"]; wantMarkdown && f != nil {
		return f
	}
	return s.files["404.html"]
}

// maybeReload reloads the site in the background when another process
// replaced the output folder (a build swaps in a new folder).
func (s *staticSite) maybeReload() {
	now := time.Now().UnixNano()
	next := s.nextCheck.Load()
	if now < next || !s.nextCheck.CompareAndSwap(next, now+int64(time.Second)) {
		return
	}
	s.mu.RLock()
	same := dirIdent(s.dir) == s.ident
	s.mu.RUnlock()
	if same || !s.reloading.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.reloading.Store(false)
		if err := s.reload(); err != nil && s.onError != nil {
			s.onError(err)
		}
	}()
}

func dirIdent(dir string) uint64 {
	info, err := os.Stat(dir)
	if err != nil {
		return 0
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return uint64(info.ModTime().UnixNano())
}

// serve answers GET and HEAD from the published site (Server.fallback
// sends it nothing else).
func (s *staticSite) serve(c *fiber.Ctx) error {
	wantMD := prefersMarkdown(c.Get(fiber.HeaderAccept))
	f, redirect := s.lookup(c.Path(), wantMD)
	if redirect != "" {
		return c.Redirect(redirect, fiber.StatusMovedPermanently)
	}
	status := fiber.StatusOK
	if f == nil {
		if f = s.notFound(wantMD); f == nil {
			return fiber.ErrNotFound
		}
		status = fiber.StatusNotFound
	}
	varyHeader.set(c)
	c.Set(fiber.HeaderETag, f.etag)
	if strings.HasPrefix(c.Path(), "/assets/") {
		immutableHeader.set(c)
	} else {
		revalidateHeader.set(c)
	}
	if strings.HasPrefix(f.ctype, "text/html") {
		htmlCSPHeader.set(c)
	}
	if status == fiber.StatusOK && etagMatches(c.Get(fiber.HeaderIfNoneMatch), f.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Status(status)
	c.Response().Header.SetContentType(f.ctype)
	body := f.data
	if acceptsGzip(c.Get(fiber.HeaderAcceptEncoding)) {
		if gz := f.gzipped(); gz != nil {
			gzipHeader.set(c)
			body = gz
		}
	}
	if c.Method() == fiber.MethodHead {
		c.Response().Header.SetContentLength(len(body))
		c.Response().SkipBody = true
		return nil
	}
	return c.Send(body)
}

// htmlCSP allows the site's own stylesheet and scripts only.
const htmlCSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"

func etagMatches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tag), "W/"))
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}

func acceptsGzip(header string) bool {
	q, ok := mediaQuality(header, "gzip")
	return ok && q > 0
}

// prefersMarkdown reports whether an Accept header ranks text/markdown above
// text/html.
func prefersMarkdown(accept string) bool {
	md, ok := mediaQuality(accept, "text/markdown")
	if !ok || md == 0 {
		return false
	}
	html, _ := mediaQuality(accept, "text/html")
	return md > html
}

// mediaQuality returns the q value given to name in an Accept or
// Accept-Encoding header, and whether it is named at all.
func mediaQuality(header, name string) (float64, bool) {
	if header == "" { // most requests of scripts and benchmarks
		return 0, false
	}
	for part := range strings.SplitSeq(header, ",") {
		fields := strings.Split(part, ";")
		if !strings.EqualFold(strings.TrimSpace(fields[0]), name) {
			continue
		}
		q := 1.0
		for _, p := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				fmt.Sscanf(v, "%g", &q)
			}
		}
		return q, true
	}
	return 0, false
}
