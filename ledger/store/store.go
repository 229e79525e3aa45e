// Package store keeps the ledger in an embedded Badger database. It is the
// only package that knows the database's keys; everything else calls its
// typed API.
//
//	opts, _ := trust.Options()                             // pins from the trust document
//	s, err := store.Open(dir, store.Options{Keys: opts.Keys, Seams: opts.Seams, WitnessQuorum: opts.WitnessQuorum, Log: opts.Log, Logger: log})
//	res, err := s.FullWalk(ctx, nil, progress)             // full verification, cached
//	b, err := s.AppendEntry(ctx, entry, signers)           // build, sign, verify against the head, sync, acknowledge
//	v, ok := s.Verdict()                                   // O(1): the cached verdict
//	note, err := s.SignedCheckpoint(signers.Writer)        // the C2SP checkpoint over every row
//
// Appends are serialised through one writer, written with the block's
// indexes and the Merkle tree nodes it completes in one transaction, and
// synced to disk (Badger SyncWrites) before they return; concurrent appends
// share one transaction and one sync (group commit, see append.go). Each append is
// verified against the verified head and the cached verdict is extended in
// O(1); the tree's right border is kept in memory, so an append hashes
// O(log n) nodes and reads nothing. A full walk checks every row, every
// stored payload, where each row is stored, the stored count, and the
// stored tree's root. Reads never block appends. A Store is safe for
// concurrent use.
package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// Errors of the store. Verification failures of an append wrap the ledger
// sentinels (ledger.ErrBrokenLink, ledger.ErrBadSignature, …) as well.
var (
	// ErrNotInitialized reports a data directory with no ledger in it.
	ErrNotInitialized = errors.New("ledger: no ledger in the data directory (run \"proofsite ledger init\")")
	// ErrExists reports an attempt to create a ledger where one exists.
	ErrExists = errors.New("ledger: a ledger already exists in the data directory")
	// ErrNotFound reports a block that is not in the store.
	ErrNotFound = errors.New("ledger: block not found")
	// ErrRejected reports a block refused by the append checks.
	ErrRejected = errors.New("ledger: append rejected")
	// ErrCorrupt reports stored data the store cannot decode.
	ErrCorrupt = errors.New("ledger: store corrupt")
)

// formatVersion is stored under metaFormat; a store with another value is
// not opened.
const formatVersion = "proofsite-ledger-store/1"

// Badger keys. No other package reads them.
var (
	prefixBlock   = []byte("b") // b + index (8 bytes big-endian) -> block JSON
	prefixHash    = []byte("h") // h + hash (32 bytes) -> index (8 bytes)
	prefixPrivate = []byte("p") // p + index -> private JSON {description, payload}
	prefixNode    = []byte("t") // t + level (1 byte) + index (8 bytes) -> Merkle node hash (32 bytes)
	metaFormat    = []byte("m/format")
	metaGenesis   = []byte("m/genesis") // hash of block 0 at creation
	metaCount     = []byte("m/count")   // number of rows
	metaTreeSize  = []byte("m/tree")    // number of leaves whose tree nodes are stored
)

func nodeKey(id tlog.NodeID) []byte {
	k := append(append([]byte(nil), prefixNode...), byte(id.Level))
	return binary.BigEndian.AppendUint64(k, id.Index)
}

func blockKey(i int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixBlock...), uint64(i))
}
func privateKey(i int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixPrivate...), uint64(i))
}
func hashKey(h ledger.Hash) []byte {
	return append(append([]byte(nil), prefixHash...), h[:]...)
}
func be64(i int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

// Options configure a Store. The zero value of each field is documented.
type Options struct {
	// Keys are the pinned writer and witness keys blocks are verified
	// with. Required.
	Keys ledger.KeySet
	// Genesis is the pinned genesis hash; zero means the hash recorded when
	// the store was created.
	Genesis ledger.Hash
	// Seams are the documented strict-table seams, pinned by hash and
	// prev_hash (a seam without them documents nothing).
	Seams []ledger.Seam
	// WitnessQuorum is the number of distinct pinned witness signatures
	// every block needs, on append and in the walk; zero means
	// ledger.DefaultWitnessQuorum.
	WitnessQuorum int
	// Log names the log: its origin labels checkpoints (SignedCheckpoint
	// needs it) and its checkpoint key is what verifiers pin.
	Log ledger.LogPin
	// Logger receives the store's and Badger's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock for last_full_walk_at and new blocks; nil means
	// time.Now.
	Now func() time.Time
	// Workers bounds the goroutines of a full walk; zero means all cores.
	Workers int
	// MaxBatch bounds how many concurrent appends share one synced commit
	// (group commit); zero means DefaultMaxBatch, and 1 syncs every append
	// on its own.
	MaxBatch int
}

func (o *Options) fill() error {
	if o.Keys.Len() == 0 {
		return errors.New("ledger: store: no pinned keys")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	return nil
}

// Store is an open ledger.
type Store struct {
	db   *badger.DB
	opts Options
	log  *slog.Logger

	mu     sync.Mutex            // held by the one writer (appends, end of full walks)
	closed bool                  // under mu
	state  atomic.Pointer[state] // what O(1) reads see

	leader  chan struct{} // holds one token while a batch of appends is committed
	queueMu sync.Mutex
	queue   []*pending // appends waiting for a leader
}

// state is an immutable snapshot of the chain's ends and cached verdict.
type state struct {
	head, genesis ledger.Block
	count         int64
	tree          *tlog.Tree          // the Merkle tree's right border over count rows; never mutated once stored
	verdict       *ledger.Verdict     // nil until the first full walk
	table         *ledger.StrictTable // strict-table breaks of the last walk, kept current by appends
	version       uint64              // one more than the snapshot it replaced
}

// checkpoint returns the checkpoint of st's tree.
func (st *state) checkpoint(origin string) ledger.Checkpoint {
	return ledger.Checkpoint{Origin: origin, Size: int64(st.tree.Size()), Root: ledger.Hash(st.tree.Root())}
}

func badgerOptions(dir string, log *slog.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithSyncWrites(true). // durable before acknowledged (ARCHITECTURE §7)
		WithLogger(badgerLogger{log.With("component", "badger")}).
		WithNumVersionsToKeep(1).
		WithMemTableSize(16 << 20).
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(32 << 20).
		WithIndexCacheSize(16 << 20).
		WithNumCompactors(2)
}

// Open opens the ledger in dir. It fails with ErrNotInitialized when dir
// holds no ledger; it does not verify the chain (call FullWalk).
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotInitialized, dir)
	}
	db, err := badger.Open(badgerOptions(dir, opts.Logger))
	if err != nil {
		return nil, fmt.Errorf("ledger: open store %s: %w", dir, err)
	}
	s := &Store{db: db, opts: opts, log: opts.Logger.With("component", "ledger.store"), leader: make(chan struct{}, 1)}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.catchUpTree(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	st := s.state.Load()
	s.log.Debug("store opened", "dir", dir, "count", st.count, "head", st.head.Index())
	return s, nil
}

// load reads the chain's ends into s.state.
func (s *Store) load() error {
	return s.db.View(func(txn *badger.Txn) error {
		format, err := getValue(txn, metaFormat)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotInitialized
		}
		if err != nil {
			return err
		}
		if string(format) != formatVersion {
			return fmt.Errorf("%w: format %q, want %q", ErrCorrupt, format, formatVersion)
		}
		g, err := getValue(txn, metaGenesis)
		if err != nil {
			return fmt.Errorf("%w: genesis hash: %w", ErrCorrupt, err)
		}
		if s.opts.Genesis.IsZero() {
			copy(s.opts.Genesis[:], g)
		}
		cnt, err := getValue(txn, metaCount)
		if err != nil || len(cnt) != 8 {
			return fmt.Errorf("%w: count: %v", ErrCorrupt, err)
		}
		st := &state{count: int64(binary.BigEndian.Uint64(cnt))}
		if st.genesis, err = blockAt(txn, 0); err != nil {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefixBlock})
		defer it.Close()
		it.Seek(append(append([]byte(nil), prefixBlock...), 0xff))
		if !it.Valid() {
			return fmt.Errorf("%w: no blocks", ErrCorrupt)
		}
		if st.head, err = decodeItem(it.Item()); err != nil {
			return err
		}
		treeSize, err := getValue(txn, metaTreeSize)
		if errors.Is(err, badger.ErrKeyNotFound) {
			treeSize = be64(0) // a store written before the tree: built below
		} else if err != nil || len(treeSize) != 8 {
			return fmt.Errorf("%w: tree size: %v", ErrCorrupt, err)
		}
		if st.tree, err = treeAt(txn, binary.BigEndian.Uint64(treeSize)); err != nil {
			return err
		}
		s.state.Store(st)
		return nil
	})
}

// treeAt rebuilds the tree of size leaves from its stored border nodes.
func treeAt(txn *badger.Txn, size uint64) (*tlog.Tree, error) {
	var border []tlog.Hash
	for _, id := range tlog.BorderNodes(size) {
		h, err := nodeAt(txn, id)
		if err != nil {
			return nil, err
		}
		border = append(border, h)
	}
	return tlog.TreeFrom(size, border)
}

func nodeAt(txn *badger.Txn, id tlog.NodeID) (tlog.Hash, error) {
	v, err := getValue(txn, nodeKey(id))
	if err != nil || len(v) != len(tlog.Hash{}) {
		return tlog.Hash{}, fmt.Errorf("%w: Merkle node %d/%d: %v", ErrCorrupt, id.Level, id.Index, err)
	}
	return tlog.Hash(v), nil
}

// catchUpTree hashes the rows the stored tree does not cover yet (a store
// written before the tree existed) and stores their nodes, once.
func (s *Store) catchUpTree(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state.Load()
	if int64(st.tree.Size()) >= st.count {
		return nil
	}
	s.log.Info("building the Merkle tree over stored rows", "from", st.tree.Size(), "rows", st.count)
	tree := st.tree.Clone()
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	var err error
	for b, rerr := range s.Range(ctx, int64(tree.Size()), st.count) {
		if rerr != nil {
			return rerr
		}
		tree.Append(tlog.LeafHash(b.Leaf()), func(id tlog.NodeID, h tlog.Hash) {
			if err == nil {
				err = wb.Set(nodeKey(id), h[:])
			}
		})
	}
	if err == nil && int64(tree.Size()) != st.count {
		err = fmt.Errorf("%w: %d rows stored under their indexes, the count says %d", ErrCorrupt, tree.Size(), st.count)
	}
	if err == nil {
		err = wb.Set(metaTreeSize, be64(int64(tree.Size())))
	}
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return fmt.Errorf("ledger: build the Merkle tree: %w", err)
	}
	next := *st
	next.tree, next.version = tree, st.version+1
	s.state.Store(&next)
	return nil
}

// Close closes the database (once; closing again does nothing). Appends
// in flight finish first; later ones fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

// Keys returns the pinned keys.
func (s *Store) Keys() ledger.KeySet { return s.opts.Keys }

// Seams returns the documented seams.
func (s *Store) Seams() []ledger.Seam { return append([]ledger.Seam(nil), s.opts.Seams...) }

// GenesisHash returns the pinned genesis hash.
func (s *Store) GenesisHash() ledger.Hash { return s.opts.Genesis }

// WitnessQuorum returns the quorum every block is checked against.
func (s *Store) WitnessQuorum() int { return s.opts.WitnessQuorum }

// Log returns the log's origin and checkpoint key.
func (s *Store) Log() ledger.LogPin { return s.opts.Log }

// SpineHead returns the head of the canonical spine as the cached verdict
// has it (kept current by appends), and false before the first full walk.
// It is the spine's head, which Head (the highest stored index) need not
// be on a tampered store. O(1).
func (s *Store) SpineHead() (ledger.Point, bool) {
	v := s.state.Load().verdict
	if v == nil || v.Head == nil {
		return ledger.Point{}, false
	}
	return *v.Head, true
}

// Checkpoint returns the checkpoint of every stored row: the Merkle root
// over the table, under the log's origin. O(1).
func (s *Store) Checkpoint() ledger.Checkpoint { return s.state.Load().checkpoint(s.opts.Log.Origin) }

// SignedCheckpoint returns Checkpoint as a C2SP signed note, signed by the
// writer key w under a note key named after the log's origin.
func (s *Store) SignedCheckpoint(w ledger.PrivateKey) ([]byte, error) {
	return ledger.SignCheckpoint(s.Checkpoint(), w)
}

// InclusionProof proves that row index is in the tree of size rows
// (size <= Count). It checks the proof against the stored root before
// returning it, so a damaged node is ErrCorrupt, never a wrong proof.
func (s *Store) InclusionProof(index, size int64) (tlog.Proof, error) {
	var p tlog.Proof
	err := s.db.View(func(txn *badger.Txn) error {
		if err := s.checkSize(size); err != nil || index < 0 || index >= size {
			return fmt.Errorf("%w: leaf %d of a tree of size %d (%v)", ErrNotFound, index, size, err)
		}
		b, err := blockAt(txn, index)
		if err != nil {
			return err
		}
		read := func(id tlog.NodeID) (tlog.Hash, error) { return nodeAt(txn, id) }
		if p, err = tlog.InclusionProof(uint64(index), uint64(size), read); err != nil {
			return err
		}
		tree, err := treeAt(txn, uint64(size))
		if err != nil {
			return err
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(b.Leaf()), uint64(index), uint64(size), p, tree.Root()); err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil
	})
	return p, err
}

// ConsistencyProof proves that the tree of size1 rows is a prefix of the
// tree of size2 rows (size1 <= size2 <= Count), checked before returning.
func (s *Store) ConsistencyProof(size1, size2 int64) (tlog.Proof, error) {
	var p tlog.Proof
	err := s.db.View(func(txn *badger.Txn) error {
		if err := s.checkSize(size2); err != nil || size1 < 0 || size1 > size2 {
			return fmt.Errorf("%w: consistency of size %d with size %d (%v)", ErrNotFound, size1, size2, err)
		}
		read := func(id tlog.NodeID) (tlog.Hash, error) { return nodeAt(txn, id) }
		var err error
		if p, err = tlog.ConsistencyProof(uint64(size1), uint64(size2), read); err != nil {
			return err
		}
		t1, err := treeAt(txn, uint64(size1))
		if err != nil {
			return err
		}
		t2, err := treeAt(txn, uint64(size2))
		if err != nil {
			return err
		}
		if err := tlog.VerifyConsistency(uint64(size1), uint64(size2), p, t1.Root(), t2.Root()); err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil
	})
	return p, err
}

func (s *Store) checkSize(size int64) error {
	if n := int64(s.state.Load().tree.Size()); size < 0 || size > n {
		return fmt.Errorf("the tree has %d rows", n)
	}
	return nil
}

// Head returns the block with the highest index. O(1).
func (s *Store) Head() ledger.Block { return s.state.Load().head }

// Genesis returns block 0. O(1).
func (s *Store) Genesis() ledger.Block { return s.state.Load().genesis }

// Version returns a number that grows whenever Head, Count, Verdict or
// StrictTable would answer differently: an append or a full walk. Readers
// key what they derive from the chain on it. O(1).
func (s *Store) Version() uint64 { return s.state.Load().version }

// Count returns the number of rows (on and off the spine). O(1).
func (s *Store) Count() int64 { return s.state.Load().count }

// Day returns the number of whole days from the genesis timestamp to now
// (day 0 is the genesis day).
func (s *Store) Day(now time.Time) int64 {
	return int64(now.Sub(s.Genesis().Header().Time()) / (24 * time.Hour))
}

// Verdict returns the cached verdict in O(1), and false before the first
// full walk.
func (s *Store) Verdict() (ledger.Verdict, bool) {
	st := s.state.Load()
	if st.verdict == nil {
		return ledger.Verdict{}, false
	}
	return *st.verdict, true
}

// StrictTable returns the strict-table result of the last full walk, kept
// current by appends, and false before the first full walk. The rows
// themselves come from Range.
func (s *Store) StrictTable() (ledger.StrictTable, bool) {
	st := s.state.Load()
	if st.table == nil {
		return ledger.StrictTable{}, false
	}
	return *st.table, true
}

// BlockByIndex returns the block stored at index i.
func (s *Store) BlockByIndex(i int64) (ledger.Block, error) {
	var b ledger.Block
	err := s.db.View(func(txn *badger.Txn) (err error) {
		b, err = blockAt(txn, i)
		return err
	})
	return b, err
}

// BlockByHash returns the block with hash h.
func (s *Store) BlockByHash(h ledger.Hash) (ledger.Block, error) {
	var b ledger.Block
	err := s.db.View(func(txn *badger.Txn) error {
		idx, err := getValue(txn, hashKey(h))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("%w: hash %s", ErrNotFound, h)
		}
		if err != nil {
			return err
		}
		b, err = blockAt(txn, int64(binary.BigEndian.Uint64(idx)))
		if err == nil && b.Hash() != h {
			return fmt.Errorf("%w: hash index names block %d, whose hash is %s", ErrCorrupt, b.Index(), b.Hash())
		}
		return err
	})
	return b, err
}

// Private returns the description and payload of block i.
func (s *Store) Private(i int64) (ledger.Private, error) {
	var p ledger.Private
	err := s.db.View(func(txn *badger.Txn) error {
		v, err := getValue(txn, privateKey(i))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("%w: private part of block %d", ErrNotFound, i)
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("%w: private part of block %d: %w", ErrCorrupt, i, err)
		}
		return nil
	})
	return p, err
}

// Range returns the rows with index in [from, to) in index order, read from
// one consistent snapshot; to < 0 means to the end. It is the strict table.
func (s *Store) Range(ctx context.Context, from, to int64) iter.Seq2[ledger.Block, error] {
	return func(yield func(ledger.Block, error) bool) {
		txn := s.db.NewTransaction(false)
		defer txn.Discard()
		opt := badger.DefaultIteratorOptions
		opt.Prefix = prefixBlock
		opt.PrefetchSize = 256
		it := txn.NewIterator(opt)
		defer it.Close()
		for it.Seek(blockKey(from)); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				yield(ledger.Block{}, err)
				return
			}
			if to >= 0 && int64(binary.BigEndian.Uint64(it.Item().Key()[len(prefixBlock):])) >= to {
				return
			}
			b, err := decodeItem(it.Item())
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// Blocks returns every row in index order (Range(ctx, 0, -1)).
func (s *Store) Blocks(ctx context.Context) iter.Seq2[ledger.Block, error] {
	return s.Range(ctx, 0, -1)
}

// Rows returns the first n rows in index order (n < 0: every row), read
// from one consistent snapshot, each with its private part when private is
// true and one is stored: for exports. Checkpoint().Size taken before the
// call is the n whose rows a checkpoint covers.
func (s *Store) Rows(ctx context.Context, n int64, private bool) iter.Seq2[ledger.Row, error] {
	return func(yield func(ledger.Row, error) bool) {
		txn := s.db.NewTransaction(false)
		defer txn.Discard()
		var i int64
		for row, err := range walkRows(ctx, txn, private) {
			if n >= 0 && i >= n {
				return
			}
			i++
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

// FullWalk verifies the whole chain from one snapshot (ledger.VerifyRows
// on all cores): every row with its stored payload and the index of its
// storage key, the stored row count, and the stored Merkle tree's root
// against the root recomputed from the rows. It stamps the verdict with the
// walk's start time, brings it up to date with blocks appended during the
// walk, and caches it. checkpoint, if set, is a checkpoint the caller
// remembers, which the rows must extend. progress, if set, is called with
// the rows checked so far.
func (s *Store) FullWalk(ctx context.Context, checkpoint *ledger.Checkpoint, progress func(checked int64)) (ledger.Result, error) {
	started := s.opts.Now().UTC()
	txn := s.db.NewTransaction(false)
	defer txn.Discard()
	opts := ledger.Options{
		Keys: s.opts.Keys, Genesis: s.opts.Genesis, Seams: s.opts.Seams, WitnessQuorum: s.opts.WitnessQuorum, Log: s.opts.Log,
		Checkpoint: checkpoint, Check: ledger.CheckOptions{Workers: s.opts.Workers, Progress: progress},
	}
	// What the store records; unreadable values stay -1 or zero, which no
	// table matches.
	stored := ledger.Stored{Count: -1, TreeSize: -1}
	if cnt, err := getValue(txn, metaCount); err == nil && len(cnt) == 8 {
		stored.Count = int64(binary.BigEndian.Uint64(cnt))
	}
	if ts, err := getValue(txn, metaTreeSize); err == nil && len(ts) == 8 {
		stored.TreeSize = int64(binary.BigEndian.Uint64(ts))
		if tree, err := treeAt(txn, uint64(stored.TreeSize)); err == nil {
			stored.Root = ledger.Hash(tree.Root())
		}
	}
	opts.Stored = &stored
	res, err := ledger.VerifyRows(walkRows(ctx, txn, true), opts)
	if err != nil {
		return ledger.Result{}, err
	}
	res.Verdict.LastFullWalkAt = &started

	s.mu.Lock()
	defer s.mu.Unlock()
	v, table := res.Verdict, res.Table
	st := s.state.Load()
	if v.Head != nil && v.Head.Index < st.head.Index() && v.Pass() {
		// Blocks appended while the walk ran were each verified against
		// the head when appended; extend the walked verdict with them.
		prev, err := s.BlockByIndex(v.Head.Index)
		if err != nil {
			return ledger.Result{}, err
		}
		for i := v.Head.Index + 1; i <= st.head.Index(); i++ {
			b, err := s.BlockByIndex(i)
			if err != nil {
				return ledger.Result{}, err
			}
			if v, err = v.Extend(ledger.VerifyBlock(b, &prev, s.opts.Keys, s.opts.WitnessQuorum), st.checkpoint(s.opts.Log.Origin)); err != nil {
				return ledger.Result{}, err
			}
			table.Rows++
			prev = b
		}
	}
	next := *st
	next.verdict, next.table, next.version = &v, &table, st.version+1
	s.state.Store(&next)
	s.log.Debug("full walk", "verdict", v.Verdict, "rows", v.RowsChecked, "spine_length", v.SpineLength, "payloads", v.PayloadsChecked, "took", s.opts.Now().Sub(started))
	res.Verdict = v
	return res, nil
}

// walkRows yields every stored row of txn's snapshot in key order, with
// the index of the key it is stored under and, when private is true, its
// private part when one is stored. A row or private part that cannot be
// decoded ends it with ErrCorrupt.
func walkRows(ctx context.Context, txn *badger.Txn, private bool) iter.Seq2[ledger.Row, error] {
	return func(yield func(ledger.Row, error) bool) {
		opt := badger.DefaultIteratorOptions
		opt.PrefetchSize = 256
		opt.Prefix = prefixBlock
		blocks := txn.NewIterator(opt)
		defer blocks.Close()
		var privs *badger.Iterator
		if private {
			opt.Prefix = prefixPrivate
			privs = txn.NewIterator(opt)
			defer privs.Close()
			privs.Rewind()
		}
		for blocks.Rewind(); blocks.Valid(); blocks.Next() {
			if err := ctx.Err(); err != nil {
				yield(ledger.Row{}, err)
				return
			}
			key := int64(binary.BigEndian.Uint64(blocks.Item().Key()[len(prefixBlock):]))
			b, err := decodeItem(blocks.Item())
			row := ledger.Row{Block: b, StoredUnder: key, Stored: true}
			for ; private && err == nil && privs.Valid() && int64(binary.BigEndian.Uint64(privs.Item().Key()[len(prefixPrivate):])) < key; privs.Next() {
			}
			if private && err == nil && privs.Valid() && int64(binary.BigEndian.Uint64(privs.Item().Key()[len(prefixPrivate):])) == key {
				row.Private, err = decodePrivate(privs.Item(), key)
			}
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

func decodePrivate(item *badger.Item, i int64) (*ledger.Private, error) {
	p := &ledger.Private{}
	err := item.Value(func(v []byte) error { return json.Unmarshal(v, p) })
	if err != nil {
		return nil, fmt.Errorf("%w: private part of block %d: %w", ErrCorrupt, i, err)
	}
	return p, nil
}

func putBlock(txn *badger.Txn, b ledger.Block, priv *ledger.Private) error {
	data, err := b.MarshalJSON()
	if err != nil {
		return err
	}
	if err := txn.Set(blockKey(b.Index()), data); err != nil {
		return err
	}
	if err := txn.Set(hashKey(b.Hash()), be64(b.Index())); err != nil {
		return err
	}
	if priv != nil {
		p, err := json.Marshal(priv)
		if err != nil {
			return err
		}
		if err := txn.Set(privateKey(b.Index()), p); err != nil {
			return err
		}
	}
	return nil
}

// Create makes a new ledger in dir from blocks and their private parts
// (privs may be nil, or as long as blocks) and returns nothing half-done:
// it verifies the chain with opts first (the verdict must pass), writes it
// into a staging directory beside dir, syncs and closes it, and renames it
// into place. It fails with ErrExists when dir exists.
func Create(dir string, blocks []ledger.Block, privs []ledger.Private, opts Options) (ledger.Verdict, error) {
	if err := opts.fill(); err != nil {
		return ledger.Verdict{}, err
	}
	if _, err := os.Stat(dir); err == nil {
		return ledger.Verdict{}, fmt.Errorf("%w: %s", ErrExists, dir)
	}
	if privs != nil && len(privs) != len(blocks) {
		return ledger.Verdict{}, errors.New("ledger: create: privs and blocks differ in length")
	}
	if len(blocks) == 0 {
		return ledger.Verdict{}, ledger.ErrEmptyChain
	}
	if opts.Genesis.IsZero() {
		opts.Genesis = blocks[0].Hash()
	}
	res, err := ledger.VerifyRows(func(yield func(ledger.Row, error) bool) {
		for i, b := range blocks {
			row := ledger.Row{Block: b}
			if privs != nil {
				row.Private = &privs[i]
			}
			if !yield(row, nil) {
				return
			}
		}
	}, ledger.Options{Keys: opts.Keys, Genesis: opts.Genesis, Seams: opts.Seams, WitnessQuorum: opts.WitnessQuorum, Log: opts.Log})
	if err != nil {
		return ledger.Verdict{}, err
	}
	if !res.Verdict.Pass() {
		return res.Verdict, fmt.Errorf("%w: the chain does not verify: %s", ErrRejected, res.Verdict.Verdict)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return ledger.Verdict{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return ledger.Verdict{}, err
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	if err := writeAll(tmp, blocks, privs, opts); err != nil {
		return ledger.Verdict{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return ledger.Verdict{}, fmt.Errorf("ledger: create: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return ledger.Verdict{}, err
	}
	return res.Verdict, nil
}

func writeAll(dir string, blocks []ledger.Block, privs []ledger.Private, opts Options) (err error) {
	db, err := badger.Open(badgerOptions(dir, opts.Logger))
	if err != nil {
		return fmt.Errorf("ledger: create: %w", err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("ledger: create: close: %w", cerr)
		}
	}()
	wb := db.NewWriteBatch()
	defer wb.Cancel()
	set := func(k, v []byte) {
		if err == nil {
			err = wb.Set(k, v)
		}
	}
	tree := tlog.NewTree()
	for i, b := range blocks {
		data, merr := b.MarshalJSON()
		if merr != nil {
			return merr
		}
		tree.Append(tlog.LeafHash(b.Leaf()), func(id tlog.NodeID, h tlog.Hash) { set(nodeKey(id), h[:]) })
		set(blockKey(b.Index()), data)
		set(hashKey(b.Hash()), be64(b.Index()))
		if privs != nil {
			p, merr := json.Marshal(privs[i])
			if merr != nil {
				return merr
			}
			set(privateKey(b.Index()), p)
		}
	}
	set(metaGenesis, opts.Genesis[:])
	set(metaCount, be64(int64(len(blocks))))
	set(metaTreeSize, be64(int64(len(blocks))))
	set(metaFormat, []byte(formatVersion))
	if err != nil {
		return fmt.Errorf("ledger: create: %w", err)
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("ledger: create: %w", err)
	}
	return db.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func getValue(txn *badger.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

func blockAt(txn *badger.Txn, i int64) (ledger.Block, error) {
	item, err := txn.Get(blockKey(i))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ledger.Block{}, fmt.Errorf("%w: index %d", ErrNotFound, i)
	}
	if err != nil {
		return ledger.Block{}, err
	}
	return decodeItem(item)
}

func decodeItem(item *badger.Item) (ledger.Block, error) {
	var b ledger.Block
	err := item.Value(func(v []byte) error {
		var err error
		b, err = ledger.DecodeBlock(v)
		return err
	})
	if err != nil {
		return ledger.Block{}, fmt.Errorf("%w: key %x: %w", ErrCorrupt, item.Key(), err)
	}
	return b, nil
}

// badgerLogger sends Badger's logs to slog; Badger's info is our debug.
type badgerLogger struct{ l *slog.Logger }

// Errorf logs at error level.
func (b badgerLogger) Errorf(f string, a ...any) { b.l.Error(strings.TrimSpace(fmt.Sprintf(f, a...))) }

// Warningf logs at warning level.
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn(strings.TrimSpace(fmt.Sprintf(f, a...))) }

// Infof logs at debug level: Badger is chatty.
func (b badgerLogger) Infof(f string, a ...any) { b.l.Debug(strings.TrimSpace(fmt.Sprintf(f, a...))) }

// Debugf logs at debug level.
func (b badgerLogger) Debugf(f string, a ...any) { b.l.Debug(strings.TrimSpace(fmt.Sprintf(f, a...))) }
