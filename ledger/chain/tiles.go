package chain

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

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
	return c.tiles.Publish(note)
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
