package chain

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/proofsite/proofsite/ledger"
)

// openInit initialises a chain of the bundled history and opens it.
func openInit(t testing.TB, opts Options) *Chain {
	t.Helper()
	h, err := os.Open(historyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := Init(context.Background(), opts, h); err != nil {
		t.Fatal(err)
	}
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Walk(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConcurrentAppends: appends from many goroutines, committed together
// by the store, each return a durable block; the tiles and their signed
// checkpoint end at every row, and the chain verifies.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	c := openInit(t, testOptions(t))
	const clients, each = 32, 4
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for j := range each {
				if _, err := c.Append(context.Background(), ledger.Entry{Kind: "wall_signature", Payload: fmt.Appendf(nil, `{"c":%d,"i":%d}`, i, j)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	want := int64(224 + clients*each)
	c.tilesMu.Lock()
	tilesSize, published := c.tiles.Size(), c.tilesPublished
	c.tilesMu.Unlock()
	if c.Store().Count() != want || int64(tilesSize) != want || published != want {
		t.Fatalf("%d rows, tiles over %d, checkpoint published at %d; want %d", c.Store().Count(), tilesSize, published, want)
	}
	res, err := c.Walk(context.Background())
	if err != nil || res.Verdict.Verdict != ledger.VerdictPassWithSeam || res.Verdict.Head.Index != want-1 {
		t.Fatalf("walk: %+v %v", res.Verdict, err)
	}
}

// BenchmarkAppend measures durable appends/s through the chain (the
// store's group commit, then the tiles and their signed checkpoint) from 1
// and 64 concurrent clients.
func BenchmarkAppend(b *testing.B) {
	for _, clients := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			opts := Options{DataDir: filepath.Join(b.TempDir(), "data"), Seams: seams, LogOrigin: "proof.example/ledger"}
			c := openInit(b, opts)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						if _, err := c.Append(context.Background(), ledger.Entry{Kind: "wall_signature", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}
