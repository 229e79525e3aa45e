package main

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tiles"
)

// repeatedRows is n copies of one real row: enough for the tiles, which
// are what a remembered checkpoint is checked against.
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

// BenchmarkRememberedCheckpoint measures what tiles mode does for a
// remembered checkpoint, whatever the log's size: read the tiles (from a
// folder, every file afresh) that give the remembered tree's border and
// check its root, then append the new rows' leaves (16 here) to reach the
// new root. Its cost grows with log2 of the size, not with the size.
func BenchmarkRememberedCheckpoint(b *testing.B) {
	tc := newTileChain(b, "proof.example/ledger", false)
	row, err := tc.c.Store().BlockByIndex(100)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int64{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			l, err := tiles.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			old := n - 16
			if _, err := l.Extend(context.Background(), repeatedRows{row}, old); err != nil {
				b.Fatal(err)
			}
			oldRoot := l.Root()
			newRoot, err := l.Extend(context.Background(), repeatedRows{row}, n)
			if err != nil {
				b.Fatal(err)
			}
			leaf := leafHash(row.Leaf())
			for b.Loop() {
				t := &tileLog{prefix: dir, size: n, cache: map[string][]byte{}}
				border, err := t.border(old)
				if err != nil || rootOf(border) != oldRoot {
					b.Fatalf("remembered root: %v", err)
				}
				for range n - old {
					border = appendLeaf(border, leaf)
				}
				if rootOf(border) != newRoot {
					b.Fatal("new root")
				}
			}
		})
	}
}
