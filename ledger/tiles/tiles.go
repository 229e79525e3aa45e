// Package tiles publishes the ledger as a C2SP tlog-tiles log in a folder:
// the signed checkpoint at "checkpoint", hash tiles at
// "tile/<L>/<N>[.p/<W>]" and entry bundles of the canonical public rows
// (Block.Leaf) at "tile/entries/<N>[.p/<W>]", so any static host, CDN or
// bucket can carry the ledger's read path.
//
//	l, err := tiles.Open(dir)                   // resume where the folder stopped
//	cp, err := l.Extend(ctx, rows, n)           // tiles and bundles for rows [l.Size(), n)
//	err = l.Publish(signedNote)                 // the checkpoint of exactly l.Size() rows
//
// A full tile or bundle is written once and never changes; a partial one
// (of width W) never changes either, and is removed once its full tile is
// written, as the specification allows. Files are written to a temporary
// name and renamed, so a crash leaves whole files; nothing is synced,
// because everything here can be derived again from the store, and Open
// rebuilds the right edge of the tree from the partial tiles, which the
// caller checks against the store's own root (ErrDiverged).
//
// Paths come from github.com/transparency-dev/tessera/api/layout and the
// hashing from ledger/tlog (github.com/transparency-dev/merkle). A Log is
// safe for concurrent use; one process writes a folder.
package tiles

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
	"github.com/transparency-dev/tessera/api/layout"
)

// Width is the number of hashes of a full tile and entries of a full bundle.
const Width = layout.TileWidth

// Files of the folder beside the tiles.
const (
	// CheckpointFile is the published signed checkpoint.
	CheckpointFile = layout.CheckpointPath
	// sizeFile records how many rows the tiles cover; it is not published.
	sizeFile = ".size"
)

// Errors of the package.
var (
	// ErrDiverged reports tiles that do not hash to the root the caller
	// expects: the folder was written for another chain, or damaged.
	ErrDiverged = errors.New("tiles: the tiles do not match the chain")
	// ErrCorrupt reports a folder the package cannot read back.
	ErrCorrupt = errors.New("tiles: folder corrupt")
)

// Rows is what the tiles are made of: the rows of the chain in table
// order (ledger/store.Store has it).
type Rows interface {
	Range(ctx context.Context, from, to int64) iter.Seq2[ledger.Block, error]
}

// Log is a tile folder.
type Log struct {
	dir string

	mu      sync.Mutex
	tree    *tlog.Tree
	partial [][]tlog.Hash // per tile level, the hashes of its incomplete tile
	bundle  [][]byte      // the entries of the incomplete bundle
}

// Open opens the tile folder dir, creating it if needed, and rebuilds the
// tree's right edge from its partial tiles. The caller compares Root with
// the chain's root at Size before extending (Check).
func Open(dir string) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tiles: %w", err)
	}
	l := &Log{dir: dir, tree: tlog.NewTree()}
	data, err := os.ReadFile(filepath.Join(dir, sizeFile))
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tiles: %w", err)
	}
	size, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, sizeFile, err)
	}
	if err := l.load(size); err != nil {
		return nil, err
	}
	return l, nil
}

// load reads the partial tiles and bundle of a tree of size leaves.
func (l *Log) load(size uint64) error {
	var border []tlog.Hash
	for level := uint64(0); size>>(8*level) > 0; level++ {
		n := size >> (8 * level)
		w := n % Width
		var hashes []tlog.Hash
		if w > 0 {
			data, err := os.ReadFile(filepath.Join(l.dir, layout.TilePath(level, n/Width, uint8(w))))
			if err != nil || len(data) != int(w)*32 {
				return fmt.Errorf("%w: partial tile %d/%d.p/%d: %v", ErrCorrupt, level, n/Width, w, err)
			}
			for i := range int(w) {
				hashes = append(hashes, tlog.Hash(data[32*i:32*i+32]))
			}
		}
		l.partial = append(l.partial, hashes)
		// The border nodes inside this tile, left to right, go before those
		// of the levels below it.
		border = append(tileBorder(hashes), border...)
	}
	if w := size % Width; w > 0 {
		data, err := os.ReadFile(filepath.Join(l.dir, layout.EntriesPath(size/Width, uint8(w))))
		if err != nil {
			return fmt.Errorf("%w: partial bundle %d.p/%d: %v", ErrCorrupt, size/Width, w, err)
		}
		if l.bundle, err = splitBundle(data); err != nil || uint64(len(l.bundle)) != w {
			return fmt.Errorf("%w: partial bundle %d.p/%d: %d entries, %v", ErrCorrupt, size/Width, w, len(l.bundle), err)
		}
		for i, e := range l.bundle {
			if tlog.LeafHash(e) != l.partial[0][i] {
				return fmt.Errorf("%w: entry %d does not hash to its tile", ErrCorrupt, size-w+uint64(i))
			}
		}
	}
	t, err := tlog.TreeFrom(size, border)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	l.tree = t
	return nil
}

// tileBorder returns the roots of the perfect subtrees that cover the
// hashes of an incomplete tile, left to right.
func tileBorder(hashes []tlog.Hash) []tlog.Hash {
	t := tlog.NewTree()
	for _, h := range hashes {
		t.Append(h, nil)
	}
	ids := tlog.BorderNodes(t.Size())
	out := make([]tlog.Hash, 0, len(ids))
	for _, id := range ids {
		out = append(out, subtreeRoot(hashes[id.Index<<id.Level:(id.Index+1)<<id.Level]))
	}
	return out
}

// subtreeRoot is the root of a perfect subtree given its bottom hashes.
func subtreeRoot(hashes []tlog.Hash) tlog.Hash {
	t := tlog.NewTree()
	for _, h := range hashes {
		t.Append(h, nil)
	}
	return t.Root()
}

// Size returns the number of rows the tiles cover.
func (l *Log) Size() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tree.Size()
}

// Root returns the Merkle root of the rows the tiles cover.
func (l *Log) Root() tlog.Hash {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tree.Root()
}

// Check compares the tiles with the chain's root at their size; a
// mismatch is ErrDiverged (rebuild with Reset).
func (l *Log) Check(root tlog.Hash) error {
	if got := l.Root(); got != root {
		return fmt.Errorf("%w: their root at size %d is %s, the chain's %s (remove %s to rebuild them)", ErrDiverged, l.Size(), got, root, l.dir)
	}
	return nil
}

// Reset removes every tile, bundle and checkpoint of the folder (Clear)
// and starts again from no rows.
func (l *Log) Reset() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := Clear(l.dir); err != nil {
		return err
	}
	l.tree, l.partial, l.bundle = tlog.NewTree(), nil, nil
	return nil
}

// Clear removes every tile, bundle and checkpoint of the folder dir, for a
// folder Open finds corrupt.
func Clear(dir string) error {
	for _, name := range []string{sizeFile, CheckpointFile, "tile"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("tiles: clear: %w", err)
		}
	}
	return nil
}

// Extend writes the tiles and bundles of rows [Size(), to), read from
// rows, and returns the Merkle root over the first to rows, for the caller
// to compare with the chain's and sign. Full tiles are written as they complete, the partial
// ones once at the end, then the size.
func (l *Log) Extend(ctx context.Context, rows Rows, to int64) (tlog.Hash, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := int64(l.tree.Size())
	if to < from {
		return tlog.Hash{}, fmt.Errorf("%w: the chain has %d rows, the tiles cover %d", ErrDiverged, to, from)
	}
	if to == from {
		return l.tree.Root(), nil
	}
	next := from
	for b, err := range rows.Range(ctx, from, to) {
		if err != nil {
			return tlog.Hash{}, fmt.Errorf("tiles: row %d: %w", next, err)
		}
		leaf := b.Leaf()
		if len(leaf) > 0xffff {
			return tlog.Hash{}, fmt.Errorf("tiles: row %d is %d bytes, more than an entry bundle holds", next, len(leaf))
		}
		if err := l.appendLeaf(leaf); err != nil {
			return tlog.Hash{}, err
		}
		next++
	}
	if next != to {
		return tlog.Hash{}, fmt.Errorf("tiles: read %d rows, want %d", next-from, to-from)
	}
	if err := l.writePartials(); err != nil {
		return tlog.Hash{}, err
	}
	if err := l.write(sizeFile, []byte(strconv.FormatUint(l.tree.Size(), 10)+"\n")); err != nil {
		return tlog.Hash{}, err
	}
	return l.tree.Root(), nil
}

// appendLeaf adds one entry: to the bundle, its hash to the level-0 tile,
// and every tile it completes to the level above.
func (l *Log) appendLeaf(leaf []byte) error {
	index := l.tree.Size()
	h := tlog.LeafHash(leaf)
	l.tree.Append(h, nil)
	l.bundle = append(l.bundle, leaf)
	if len(l.bundle) == Width {
		if err := l.write(layout.EntriesPath(index/Width, 0), joinBundle(l.bundle)); err != nil {
			return err
		}
		if err := l.removePartials(layout.EntriesPath(index/Width, 0)); err != nil {
			return err
		}
		l.bundle = l.bundle[:0]
	}
	for level := uint64(0); ; level++ {
		if int(level) == len(l.partial) {
			l.partial = append(l.partial, nil)
		}
		l.partial[level] = append(l.partial[level], h)
		if len(l.partial[level]) < Width {
			return nil
		}
		n := (index >> (8 * level)) / Width
		if err := l.write(layout.TilePath(level, n, 0), joinHashes(l.partial[level])); err != nil {
			return err
		}
		if err := l.removePartials(layout.TilePath(level, n, 0)); err != nil {
			return err
		}
		h = subtreeRoot(l.partial[level])
		l.partial[level] = l.partial[level][:0]
	}
}

// writePartials writes the incomplete tile of every level and the
// incomplete bundle at the current size.
func (l *Log) writePartials() error {
	size := l.tree.Size()
	for level, hashes := range l.partial {
		if len(hashes) == 0 {
			continue
		}
		n := (size >> (8 * uint64(level))) / Width
		if err := l.write(layout.TilePath(uint64(level), n, uint8(len(hashes))), joinHashes(hashes)); err != nil {
			return err
		}
	}
	if len(l.bundle) > 0 {
		return l.write(layout.EntriesPath(size/Width, uint8(len(l.bundle))), joinBundle(l.bundle))
	}
	return nil
}

// removePartials removes the partial versions of the full tile at path.
func (l *Log) removePartials(path string) error {
	if err := os.RemoveAll(filepath.Join(l.dir, path+".p")); err != nil {
		return fmt.Errorf("tiles: %w", err)
	}
	return nil
}

// Publish writes the signed checkpoint note, which must be of the rows the
// tiles cover (its body is checked, not its signature: that is the
// signer's).
func (l *Log) Publish(signed []byte) error {
	text, _ := tlog.SplitNote(signed)
	cp, err := tlog.ParseBody(text)
	if err != nil {
		return fmt.Errorf("tiles: publish: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cp.Size != l.tree.Size() || cp.Root != l.tree.Root() {
		return fmt.Errorf("%w: the checkpoint is of size %d root %s, the tiles of size %d root %s", ErrDiverged, cp.Size, cp.Root, l.tree.Size(), l.tree.Root())
	}
	return l.write(CheckpointFile, signed)
}

// write writes data to name under the folder: a temporary file renamed
// into place.
func (l *Log) write(name string, data []byte) error {
	path := filepath.Join(l.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tiles: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("tiles: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("tiles: %w", err)
	}
	return nil
}

func joinHashes(hashes []tlog.Hash) []byte {
	out := make([]byte, 0, 32*len(hashes))
	for _, h := range hashes {
		out = append(out, h[:]...)
	}
	return out
}

// joinBundle encodes entries as a bundle: each a big-endian uint16 length,
// then its bytes.
func joinBundle(entries [][]byte) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		b.Write(binary.BigEndian.AppendUint16(nil, uint16(len(e))))
		b.Write(e)
	}
	return b.Bytes()
}

// splitBundle decodes a bundle.
func splitBundle(data []byte) ([][]byte, error) {
	var out [][]byte
	for len(data) > 0 {
		if len(data) < 2 {
			return nil, fmt.Errorf("%w: bundle ends inside a length", ErrCorrupt)
		}
		n := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+n {
			return nil, fmt.Errorf("%w: bundle ends inside an entry", ErrCorrupt)
		}
		out = append(out, bytes.Clone(data[2:2+n]))
		data = data[2+n:]
	}
	return out, nil
}

// Read reads back what a tile folder holds, as a reader of the folder
// (the build's explorer) sees it, writing nothing: the signed checkpoint
// note (nil when none is published yet) and every row the tiles cover,
// decoded from the entry bundles. It checks that each entry is the
// canonical form of the row it decodes to and nothing more: the rows'
// hashes and signatures, and the checkpoint's signature and root, are the
// caller's to verify with pins it trusts (ledger.VerifyRows with
// Options.PresentedCheckpoint). A folder without tiles is fs.ErrNotExist;
// a missing or malformed bundle is ErrCorrupt. The checkpoint is read
// before the size, so a folder another process extends meanwhile still
// gives a checkpoint the rows cover.
func Read(dir string) (rows []ledger.Block, checkpoint []byte, err error) {
	checkpoint, err = os.ReadFile(filepath.Join(dir, CheckpointFile))
	if errors.Is(err, fs.ErrNotExist) {
		checkpoint = nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("tiles: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, sizeFile))
	if err != nil {
		return nil, nil, fmt.Errorf("tiles: %w", err)
	}
	size, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, sizeFile, err)
	}
	rows = make([]ledger.Block, 0, size)
	for n := uint64(0); n*Width < size; n++ {
		entries, err := readBundle(dir, n, min(Width, size-n*Width))
		if err != nil {
			return nil, nil, err
		}
		for i, e := range entries {
			b, err := ledger.DecodeBlock(e)
			if err == nil && !bytes.Equal(b.Leaf(), e) {
				err = errors.New("not the canonical form of its row")
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, n*Width+uint64(i), err)
			}
			rows = append(rows, b)
		}
	}
	return rows, checkpoint, nil
}

// readBundle reads the first w entries of bundle n: the partial bundle of
// width w, or the full bundle once it has replaced it.
func readBundle(dir string, n, w uint64) ([][]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, layout.EntriesPath(n, uint8(w%Width))))
	if errors.Is(err, fs.ErrNotExist) && w < Width {
		data, err = os.ReadFile(filepath.Join(dir, layout.EntriesPath(n, 0)))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: bundle %d: %w", ErrCorrupt, n, err)
	}
	entries, err := splitBundle(data)
	if err == nil && uint64(len(entries)) < w {
		err = fmt.Errorf("%d entries, want %d", len(entries), w)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: bundle %d: %w", ErrCorrupt, n, err)
	}
	return entries[:w], nil
}
