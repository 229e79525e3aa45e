package chain

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// walkProgressEvery is how often a long walk logs how far it got.
const walkProgressEvery = time.Second

// Walk re-verifies the whole chain (the store caches the verdict for
// readers) and logs its progress once a second and its verdict. A failing
// verdict is logged at error level and returned, not an error: the error is
// for a walk that could not run.
func (c *Chain) Walk(ctx context.Context) (ledger.Result, error) {
	c.walkMu.Lock()
	defer c.walkMu.Unlock()
	start := time.Now()
	var mu sync.Mutex
	next := start.Add(walkProgressEvery)
	progress := func(checked int64) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.After(next) {
			next = now.Add(walkProgressEvery)
			c.log.Info("full walk", "rows_checked", checked, "of", c.store.Count())
		}
	}
	res, err := c.store.FullWalk(ctx, nil, progress)
	if err != nil {
		return res, fmt.Errorf("chain: full walk: %w", err)
	}
	c.lastWalk = start
	level := c.log.Info
	if !res.Verdict.Pass() {
		level = c.log.Error
	}
	level("full walk", "verdict", res.Verdict.Verdict, "canonical_spine_valid", res.Verdict.CanonicalSpineValid,
		"rows", res.Verdict.RowsChecked, "took", time.Since(start).Round(time.Millisecond))
	if c.signers != nil {
		if err := c.PublishTiles(ctx); err != nil {
			c.log.Error("publishing the tiles", "err", err)
		}
	}
	return res, nil
}

// WalkIfDue walks when Options.WalkEvery has passed since the last walk
// began; the live edge calls it on every heartbeat. Errors are logged.
func (c *Chain) WalkIfDue(ctx context.Context) {
	c.walkMu.Lock()
	due := time.Since(c.lastWalk) >= c.opts.WalkEvery
	c.walkMu.Unlock()
	if !due {
		return
	}
	if _, err := c.Walk(ctx); err != nil && ctx.Err() == nil {
		c.log.Error("scheduled full walk", "err", err)
	}
}
