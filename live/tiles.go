package live

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
		return rest, true
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

// readTile reads a file of the log, or nil when it does not exist.
func (s *Server) readTile(name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(s.tileDir(), filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// serveTile answers GET and HEAD for a file of the log, read from disk on
// every request: the folder grows with the chain and is never held in
// memory. Entry bundles are gzipped for clients that accept it.
func (s *Server) serveTile(c *fiber.Ctx, name string) error {
	data, err := s.readTile(name)
	if err != nil {
		return err
	}
	if data == nil {
		return fiber.ErrNotFound
	}
	if name == layout.CheckpointPath {
		checkpointCacheHeader.set(c)
		c.Response().Header.SetContentType("text/plain; charset=utf-8")
	} else {
		immutableHeader.set(c)
		c.Response().Header.SetContentType("application/octet-stream")
	}
	if strings.HasPrefix(name, "tile/entries/") {
		varyEncodingHeader.set(c)
		if acceptsGzip(c.Get(fiber.HeaderAcceptEncoding)) {
			var b bytes.Buffer
			w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
			w.Write(data)
			w.Close()
			gzipHeader.set(c)
			data = b.Bytes()
		}
	}
	if c.Method() == fiber.MethodHead {
		c.Response().Header.SetContentLength(len(data))
		c.Response().SkipBody = true
		return nil
	}
	return c.Send(data)
}

// tilesPublished reports whether the log's checkpoint answers.
func (s *Server) tilesPublished() bool {
	data, err := s.readTile(layout.CheckpointPath)
	return err == nil && data != nil
}
