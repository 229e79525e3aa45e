package chain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tiles"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// TilesDir is where the chain publishes itself as a C2SP tlog-tiles log
// (ledger/tiles), under the data folder: the live edge serves it under
// /ledger/ and the build copies it into the site.
const TilesDir = "tiles"

// PublishTiles extends the tile folder to every stored row and, while the
// cached verdict passes, publishes the checkpoint of exactly those rows,
// signed with the writer key. Tiles that do not extend to the store's tree
// (another chain's, or damaged) are rebuilt from the rows. Walk and Append
// call it; a read-only chain publishes nothing.
func (c *Chain) PublishTiles(ctx context.Context) error {
	if c.signers == nil {
		return ErrReadOnly
	}
	c.tilesMu.Lock()
	defer c.tilesMu.Unlock()
	return c.publishTiles(ctx)
}

// publishTilesFor is PublishTiles after the append of block index, unless
// a checkpoint published since covers it: concurrent appends, committed
// together, share one publish as they share one sync.
func (c *Chain) publishTilesFor(ctx context.Context, index int64) error {
	c.tilesMu.Lock()
	defer c.tilesMu.Unlock()
	if c.tilesPublished > index {
		return nil
	}
	return c.publishTiles(ctx)
}

// publishTiles is PublishTiles with tilesMu held.
func (c *Chain) publishTiles(ctx context.Context) error {
	dir := c.TilesDir()
	if c.tiles == nil {
		l, err := tiles.Open(dir)
		if errors.Is(err, tiles.ErrCorrupt) {
			c.log.Warn("rebuilding the tiles", "err", err)
			if err = tiles.Clear(dir); err == nil {
				l, err = tiles.Open(dir)
			}
		}
		if err != nil {
			return fmt.Errorf("chain: %w", err)
		}
		c.tiles = l
	}
	cp := c.store.Checkpoint() // the tiles go up to exactly these rows
	if err := c.tilesPrefixOf(cp); err != nil {
		c.log.Warn("rebuilding the tiles", "err", err)
		if err := c.tiles.Reset(); err != nil {
			return fmt.Errorf("chain: %w", err)
		}
	}
	root, err := c.tiles.Extend(ctx, c.store, cp.Size)
	if err != nil {
		return fmt.Errorf("chain: %w", err)
	}
	if root != tlog.Hash(cp.Root) {
		return fmt.Errorf("chain: %w: root %s over %d rows, the store's %s", tiles.ErrDiverged, root, cp.Size, cp.Root)
	}
	if v, ok := c.store.Verdict(); !ok || !v.Pass() {
		return nil // the tiles grow; the checkpoint waits for a passing verdict
	}
	note, err := c.SignCheckpoint(cp)
	if err != nil {
		return err
	}
	if err := c.tiles.Publish(c.cosign(ctx, note, cp)); err != nil {
		return err
	}
	c.tilesPublished = cp.Size
	return nil
}

// witnessTimeout bounds one log witness's answer.
const witnessTimeout = 10 * time.Second

// cosign submits the signed checkpoint to each log witness, with a
// consistency proof from the size it last cosigned, and returns the note
// with the cosignatures they returned. A witness that refuses or does not
// answer is logged and left out: verifiers that require its cosignature
// then fail, which is what they are for.
func (c *Chain) cosign(ctx context.Context, note []byte, cp ledger.Checkpoint) []byte {
	if c.witnessed == nil {
		c.witnessed = map[string]uint64{}
	}
	out := bytes.Clone(note)
	proof := func(old uint64) (tlog.Proof, error) { return c.store.ConsistencyProof(int64(old), cp.Size) }
	for i := range c.opts.LogWitnesses {
		w := &c.opts.LogWitnesses[i]
		wctx, cancel := context.WithTimeout(ctx, witnessTimeout)
		line, held, err := w.Cosign(wctx, note, c.witnessed[w.URL], proof)
		cancel()
		c.witnessed[w.URL] = held
		if err != nil {
			c.log.Error("a log witness did not cosign the checkpoint", "witness", w.URL, "size", cp.Size, "err", err)
			continue
		}
		out = append(out, line...)
	}
	return out
}

// tilesPrefixOf checks that the tiles' tree is a prefix of the store's
// tree at cp.
func (c *Chain) tilesPrefixOf(cp ledger.Checkpoint) error {
	have := int64(c.tiles.Size())
	switch {
	case have == 0:
		return nil
	case have > cp.Size:
		return fmt.Errorf("%w: the tiles cover %d rows, the store has %d", tiles.ErrDiverged, have, cp.Size)
	}
	proof, err := c.store.ConsistencyProof(have, cp.Size)
	if err == nil {
		err = tlog.VerifyConsistency(uint64(have), uint64(cp.Size), proof, c.tiles.Root(), tlog.Hash(cp.Root))
	}
	if err != nil {
		return fmt.Errorf("%w: %w", tiles.ErrDiverged, err)
	}
	return nil
}

// TilesDir returns the folder of the chain's tiles (DataDir/TilesDir).
func (c *Chain) TilesDir() string { return filepath.Join(c.opts.DataDir, TilesDir) }
