package tiles_test

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tiles"
)

// repeatedRows is n copies of one real signed row: tiling hashes and
// writes rows, it does not verify them, so its cost is the same as for n
// distinct rows of that size.
type repeatedRows struct{ b ledger.Block }

func (r repeatedRows) Range(_ context.Context, from, to int64) iter.Seq2[ledger.Block, error] {
	return func(yield func(ledger.Block, error) bool) {
		for i := from; i < to; i++ {
			if !yield(r.b, nil) {
				return
			}
		}
	}
}

func benchRow(b *testing.B) repeatedRows {
	c, _ := newChain(b)
	row, err := c.Store().BlockByIndex(100)
	if err != nil {
		b.Fatal(err)
	}
	return repeatedRows{row}
}

// BenchmarkTileFromScratch tiles a log of n rows into an empty folder:
// every hash tile and entry bundle written once (run with -benchtime 1x
// for the 1,000,000-row figure).
func BenchmarkTileFromScratch(b *testing.B) {
	rows := benchRow(b)
	for _, n := range []int64{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			for b.Loop() {
				l, err := tiles.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Extend(context.Background(), rows, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/row")
		})
	}
}

// BenchmarkTileAppend extends a log of 1,000,000 rows by one row at a
// time: the row's bundle and tiles, the partial tiles of every level and
// the size, as an append does (the checkpoint's signature excluded).
func BenchmarkTileAppend(b *testing.B) {
	rows := benchRow(b)
	l, err := tiles.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	size := int64(1_000_000)
	if _, err := l.Extend(context.Background(), rows, size); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		size++
		if _, err := l.Extend(context.Background(), rows, size); err != nil {
			b.Fatal(err)
		}
	}
}
