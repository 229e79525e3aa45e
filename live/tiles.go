package live

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
	"github.com/transparency-dev/tessera/api/layout"
)

// TilesPrefix is where the ledger's C2SP tlog-tiles log is served: the
// checkpoint at /ledger/checkpoint, the tiles under /ledger/tile/. The
// log's origin (site host + "/ledger") names the same prefix.
const TilesPrefix = "/ledger/"

// Cache headers of the log: tiles and bundles never change; the checkpoint
// does, and may be cached for a few seconds only (tlog-tiles).
var (
	checkpointCacheHeader = newFixedHeader(fiber.HeaderCacheControl, "public, max-age=5")
	varyEncodingHeader    = newFixedHeader(fiber.HeaderVary, "Accept-Encoding")
)

// TileName returns the file of the tile folder that a request path names
// ("checkpoint", "tile/0/x001/234.p/7", "tile/entries/012"), and false for
// any other path, so nothing else of the folder is ever served.
func TileName(urlPath string) (string, bool) {
	rest, ok := strings.CutPrefix(urlPath, TilesPrefix)
	if !ok {
		return "", false
	}
	if rest == layout.CheckpointPath {
		return layout.CheckpointPath, true // not rest: fiber's path is only valid during the request
	}
	rest, ok = strings.CutPrefix(rest, "tile/")
	if !ok {
		return "", false
	}
	level, index, ok := strings.Cut(rest, "/")
	if !ok {
		return "", false
	}
	n, w, err := layout.ParseTileIndexPartial(index)
	if err != nil {
		return "", false
	}
	if level == "entries" {
		return layout.EntriesPath(n, w), layout.EntriesPath(n, w) == "tile/"+rest
	}
	l, err := layout.ParseTileLevel(level)
	return layout.TilePath(l, n, w), err == nil && layout.TilePath(l, n, w) == "tile/"+rest
}

// tileDir returns the folder the log is served from: the chain's own
// (Options.TilesDir), else the copy a build published under PublicDir.
func (s *Server) tileDir() string {
	if s.opts.TilesDir != "" {
		return s.opts.TilesDir
	}
	return filepath.Join(s.opts.PublicDir, strings.Trim(TilesPrefix, "/"))
}

// Bounds of the tile cache.
const (
	// maxTileCacheBytes bounds the bytes the cache holds, gzipped bundles
	// included: when a file would take it over, the cache is emptied and
	// fills again with what is asked for.
	maxTileCacheBytes = 64 << 20
	// maxCachedTile is the largest file kept; a larger one (an entry
	// bundle of long rows) is read from disk on every request.
	maxCachedTile = 4 << 20
)

// tileCache keeps the files of the log in memory. Each file is kept with
// the identity of the file it was read from (device and inode, size and
// modification time), and a request stats the file before answering from
// memory: the writer replaces files by renaming (ledger/tiles), so a new
// checkpoint, a partial tile removed once its full tile is written, and a
// folder rebuilt for another chain are seen on the next request, never
// served stale. A stat is one system call, where reading the file was
// five and a copy. It is safe for concurrent use.
type tileCache struct {
	dir          string
	max, maxFile int // maxTileCacheBytes, maxCachedTile

	mu    sync.RWMutex
	files map[string]*tileFile // by name in the folder
	bytes int                  // held by files
}

// tileFile is a file of the log as it was read.
type tileFile struct {
	name, path string // in the folder; on disk
	info       fs.FileInfo
	data       []byte
	// gz is the gzipped entry bundle, made on its first request that
	// accepts gzip.
	gz atomic.Pointer[[]byte]
}

func newTileCache(dir string) *tileCache {
	return &tileCache{dir: dir, max: maxTileCacheBytes, maxFile: maxCachedTile, files: map[string]*tileFile{}}
}

// tileName is TileName, answered from the cache for a file it holds.
func (t *tileCache) tileName(urlPath string) (string, bool) {
	if rest, ok := strings.CutPrefix(urlPath, TilesPrefix); ok {
		t.mu.RLock()
		f := t.files[rest] // kept under the name TileName gave
		t.mu.RUnlock()
		if f != nil {
			return f.name, true
		}
	}
	return TileName(urlPath)
}

// get returns the file name of the log, nil when it does not exist.
func (t *tileCache) get(name string) (*tileFile, error) {
	t.mu.RLock()
	f := t.files[name]
	t.mu.RUnlock()
	if f != nil {
		info, err := os.Stat(f.path)
		if err == nil && sameFile(info, f.info) {
			return f, nil
		}
	}
	name = strings.Clone(name) // a name may point into a request's buffer
	f, err := readTileFile(name, filepath.Join(t.dir, filepath.FromSlash(name)))
	if f == nil || err != nil {
		t.forget(name)
		return nil, err
	}
	t.keep(f)
	return f, nil
}

// sameFile reports whether info describes the file a kept one was read
// from, unchanged.
func sameFile(info, kept fs.FileInfo) bool {
	return os.SameFile(info, kept) && info.Size() == kept.Size() && info.ModTime().Equal(kept.ModTime())
}

// readTileFile reads a file with the identity of what it read: stat of
// the open file, so the two cannot come from different files.
func readTileFile(name, path string) (*tileFile, error) {
	fd, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	info, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil
	}
	data, err := io.ReadAll(fd)
	if err != nil {
		return nil, err
	}
	return &tileFile{name: name, path: path, info: info, data: data}, nil
}

// keep adds a file read from disk, within the bounds.
func (t *tileCache) keep(f *tileFile) {
	if len(f.data) > t.maxFile {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.files[f.name]; old != nil {
		t.bytes -= old.size()
	}
	if t.bytes+len(f.data) > t.max {
		clear(t.files)
		t.bytes = 0
	}
	t.files[f.name] = f
	t.bytes += len(f.data)
}

// forget drops a file that is gone or changed.
func (t *tileCache) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.files[name]; old != nil {
		t.bytes -= old.size()
		delete(t.files, name)
	}
}

// size is what the file holds in memory.
func (f *tileFile) size() int {
	n := len(f.data)
	if gz := f.gz.Load(); gz != nil {
		n += len(*gz)
	}
	return n
}

// gzipped returns the file gzipped, made once; the cache counts it.
func (t *tileCache) gzipped(f *tileFile) []byte {
	if gz := f.gz.Load(); gz != nil {
		return *gz
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	w.Write(f.data)
	w.Close()
	gz := b.Bytes()
	if f.gz.CompareAndSwap(nil, &gz) {
		t.mu.Lock()
		if t.bytes+len(gz) <= t.max {
			t.bytes += len(gz)
		} else {
			clear(t.files)
			t.bytes = 0
		}
		t.mu.Unlock()
	}
	return gz
}

// serveTile answers GET and HEAD for a file of the log from the cache
// (tileCache), the file checked on disk first. Entry bundles are gzipped
// for clients that accept it.
func (s *Server) serveTile(c *fiber.Ctx, name string) error {
	f, err := s.tiles.get(name)
	if err != nil {
		return err
	}
	if f == nil {
		return fiber.ErrNotFound
	}
	if name == layout.CheckpointPath {
		checkpointCacheHeader.set(c)
		c.Response().Header.SetContentType("text/plain; charset=utf-8")
	} else {
		immutableHeader.set(c)
		c.Response().Header.SetContentType("application/octet-stream")
	}
	data := f.data
	if strings.HasPrefix(name, "tile/entries/") {
		varyEncodingHeader.set(c)
		if acceptsGzip(c.Get(fiber.HeaderAcceptEncoding)) {
			gzipHeader.set(c)
			data = s.tiles.gzipped(f)
		}
	}
	if c.Method() == fiber.MethodHead {
		c.Response().Header.SetContentLength(len(data))
		c.Response().SkipBody = true
		return nil
	}
	return c.Send(data)
}

// tileExists reports whether a file of the log exists.
func (s *Server) tileExists(name string) bool {
	f, err := s.tiles.get(name)
	return err == nil && f != nil
}

// tilesPublished reports whether the log's checkpoint answers.
func (s *Server) tilesPublished() bool { return s.tileExists(layout.CheckpointPath) }
