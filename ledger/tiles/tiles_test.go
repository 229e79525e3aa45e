package tiles_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/chain/chaintest"
	"github.com/proofsite/proofsite/ledger/tiles"
	"github.com/proofsite/proofsite/ledger/tlog"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/client"
)

// newChain initialises a real chain (Badger store, ed25519 keys) from the
// bundled history: 224 rows.
func newChain(t testing.TB) (*chain.Chain, string) {
	t.Helper()
	opts := chain.Options{DataDir: filepath.Join(t.TempDir(), "data"), LogOrigin: "proof.example/ledger"}
	return chaintest.Open(t, opts), opts.DataDir
}

func appendRows(t testing.TB, c *chain.Chain, n int) {
	t.Helper()
	for range n {
		if _, err := c.Append(context.Background(), ledger.Entry{Kind: "audit", Payload: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// An independent reader (tessera's client, over the files) builds proofs
// from the tiles, and they verify against the store's own roots; the
// entries hash to the level-0 tiles. Tiles resume from the folder after a
// restart and extend across a full tile.
func TestTilesReadByTessera(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := newChain(t)
	dir := t.TempDir()
	l, err := tiles.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := c.Store().Checkpoint()
	root, err := l.Extend(ctx, c.Store(), first.Size)
	if err != nil || root != tlog.Hash(first.Root) {
		t.Fatalf("extend to %d: %v, root %s want %s", first.Size, err, root, first.Root)
	}
	note, err := c.SignCheckpoint(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(note); err != nil {
		t.Fatal(err)
	}

	appendRows(t, c, 40) // 224 -> 264: the first level-0 tile fills up
	l, err = tiles.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(tlog.Hash(first.Root)); err != nil || l.Size() != uint64(first.Size) {
		t.Fatalf("resumed at %d: %v", l.Size(), err)
	}
	second := c.Store().Checkpoint()
	if root, err = l.Extend(ctx, c.Store(), second.Size); err != nil || root != tlog.Hash(second.Root) {
		t.Fatalf("extend to %d: %v", second.Size, err)
	}
	for _, p := range []string{"tile/0/000", "tile/0/001.p/8", "tile/1/000.p/1", "tile/entries/000", "tile/entries/001.p/8", "checkpoint"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tile/0/000.p")); !os.IsNotExist(err) {
		t.Errorf("the partial versions of a full tile stay: %v", err)
	}

	fetch := client.FileFetcher{Root: dir}
	pb, err := client.NewProofBuilder(ctx, uint64(second.Size), fetch.ReadTile)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := pb.ConsistencyProof(ctx, uint64(first.Size), uint64(second.Size))
	if err != nil {
		t.Fatal(err)
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, uint64(first.Size), uint64(second.Size), cons, first.Root[:], second.Root[:]); err != nil {
		t.Fatalf("consistency proof from the tiles: %v", err)
	}
	for _, i := range []uint64{0, 153, 255, 256, 263} {
		b, err := client.GetEntryBundle(ctx, fetch.ReadEntryBundle, i/256, uint64(second.Size))
		if err != nil {
			t.Fatal(err)
		}
		row, err := c.Store().BlockByIndex(int64(i))
		if err != nil {
			t.Fatal(err)
		}
		entry := b.Entries[i%256]
		if !bytes.Equal(entry, row.Leaf()) {
			t.Fatalf("entry %d is not the row's canonical public form", i)
		}
		incl, err := pb.InclusionProof(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, uint64(second.Size), rfc6962.DefaultHasher.HashLeaf(entry), incl, second.Root[:]); err != nil {
			t.Fatalf("inclusion of %d: %v", i, err)
		}
	}
	var bundle api.EntryBundle
	data, _ := os.ReadFile(filepath.Join(dir, "tile/entries/001.p/8"))
	if err := bundle.UnmarshalText(data); err != nil || len(bundle.Entries) != 8 {
		t.Fatalf("partial bundle: %d entries, %v", len(bundle.Entries), err)
	}
}

// A checkpoint that is not of the tiles' rows is refused; a damaged
// partial tile makes Open fail, and a tile folder of another chain fails
// Check.
func TestTilesRefuseWhatDoesNotMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := newChain(t)
	dir := t.TempDir()
	l, _ := tiles.Open(dir)
	cp := c.Store().Checkpoint()
	if _, err := l.Extend(ctx, c.Store(), cp.Size-1); err != nil {
		t.Fatal(err)
	}
	note, _ := c.SignCheckpoint(cp)
	if err := l.Publish(note); !errors.Is(err, tiles.ErrDiverged) {
		t.Fatalf("publish a checkpoint of other rows: %v", err)
	}
	if _, err := l.Extend(ctx, c.Store(), cp.Size-2); !errors.Is(err, tiles.ErrDiverged) {
		t.Fatalf("extend backwards: %v", err)
	}
	if err := l.Check(tlog.Hash(cp.Root)); !errors.Is(err, tiles.ErrDiverged) {
		t.Fatalf("check against another root: %v", err)
	}
	path := filepath.Join(dir, "tile/0/000.p/223")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[5] ^= 1
	os.WriteFile(path, data, 0o644)
	if _, err := tiles.Open(dir); !errors.Is(err, tiles.ErrCorrupt) {
		t.Fatalf("open with a damaged tile: %v", err)
	}
	os.WriteFile(path, data[:64], 0o644)
	if _, err := tiles.Open(dir); !errors.Is(err, tiles.ErrCorrupt) {
		t.Fatalf("open with a truncated tile: %v", err)
	}
}

// The chain keeps its tiles as it appends, publishes the signed checkpoint
// once a walk passed, and rebuilds tiles that do not match its rows.
func TestChainPublishesTiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, data := newChain(t)
	if _, err := c.Walk(ctx); err != nil {
		t.Fatal(err)
	}
	appendRows(t, c, 3)
	dir := filepath.Join(data, chain.TilesDir)
	published := func() ledger.Checkpoint {
		t.Helper()
		note, err := os.ReadFile(filepath.Join(dir, tiles.CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ledger.OpenCheckpoint(note, c.Trust().Log.CheckpointKey)
		if err != nil || got != c.Store().Checkpoint() {
			t.Fatalf("published checkpoint %+v, %v; the store's %+v", got, err, c.Store().Checkpoint())
		}
		return got
	}
	if published().Size != 227 {
		t.Fatal("the checkpoint does not cover the appended rows")
	}
	// Another process left tiles of other rows: the chain rebuilds them.
	c.Close()
	os.WriteFile(filepath.Join(dir, "tile/0/000.p/227"), bytes.Repeat([]byte{7}, 227*32), 0o644)
	c2, err := chain.Open(chain.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c = c2
	if _, err := c.Walk(ctx); err != nil {
		t.Fatal(err)
	}
	appendRows(t, c, 1)
	if published().Size != 228 {
		t.Fatal("the rebuilt tiles do not cover the appended row")
	}
}

// Read gives back every row the tiles cover, as the store holds them, and
// the signed checkpoint; when the full bundle has replaced the partial one
// a checkpoint names, the full bundle is read. An entry that is not the
// canonical form of its row, a missing bundle and a folder without tiles
// are refused.
func TestRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, data := newChain(t)
	dir := filepath.Join(data, chain.TilesDir)
	if _, err := c.Walk(ctx); err != nil {
		t.Fatal(err)
	}
	appendRows(t, c, 40) // 264 rows: one full bundle and a partial one
	rows, note, err := tiles.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := int64(len(rows)), c.Store().Count(); got != want {
		t.Fatalf("read %d rows, the store holds %d", got, want)
	}
	for i, b := range rows {
		s, err := c.Store().BlockByIndex(int64(i))
		if err != nil || !bytes.Equal(s.Leaf(), b.Leaf()) {
			t.Fatalf("row %d differs from the store's (%v)", i, err)
		}
	}
	if cp, err := ledger.OpenCheckpoint(note, c.Trust().Log.CheckpointKey); err != nil || cp != c.Store().Checkpoint() {
		t.Fatalf("checkpoint %+v, %v; the store's %+v", cp, err, c.Store().Checkpoint())
	}

	partial := filepath.Join(dir, "tile/entries/001.p/8")
	if err := os.Remove(partial); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tiles.Read(dir); !errors.Is(err, tiles.ErrCorrupt) {
		t.Fatalf("read without the partial bundle its size names: %v", err)
	}
	full := filepath.Join(dir, "tile/entries/000")
	bundle, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(partial), 0o755)
	os.WriteFile(filepath.Join(dir, "tile/entries/001"), bundle, 0o644) // as if the bundle had filled since
	if got, _, err := tiles.Read(dir); err != nil || len(got) != len(rows) {
		t.Fatalf("read with the full bundle in place of the partial one: %d rows, %v", len(got), err)
	}

	spaced := bytes.Replace(bundle, []byte(`"index":0,`), []byte(`"index": 0,`), 1)
	spaced[1]++ // the entry's length, one byte longer
	os.WriteFile(full, spaced, 0o644)
	if _, _, err := tiles.Read(dir); !errors.Is(err, tiles.ErrCorrupt) || !strings.Contains(err.Error(), "entry 0: not the canonical form") {
		t.Fatalf("read an entry that is not canonical: %v", err)
	}
	if _, _, err := tiles.Read(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read a folder without tiles: %v", err)
	}
}
