package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// Appends, with group commit.
//
// An append is acknowledged only once its block is synced to disk.
// Concurrent appends share one sync: the caller that finds no commit under
// way becomes the leader, takes the appends queued so far (at most
// Options.MaxBatch), seals them in chain order (each header links to the
// one before it; the signatures are made on all cores), verifies each
// against the block before it, writes them with their indexes, private
// parts and Merkle nodes in one transaction, and syncs once. Every caller
// of the batch is then acknowledged with its own block; appends queued
// meanwhile form the next batch. A rejected entry fails alone: the blocks
// before it are committed and the entries after it are sealed again on the
// new head.

// DefaultMaxBatch is the largest number of appends one commit holds when
// Options.MaxBatch is zero.
const DefaultMaxBatch = 256

// ErrClosed reports an append to a closed store.
var ErrClosed = errors.New("ledger: store closed")

// pending is one queued AppendEntry.
type pending struct {
	ctx     context.Context
	entry   ledger.Entry
	signers ledger.Signers
	payload ledger.Hash     // payload_hash of the entry's payload
	private *ledger.Private // description and canonical payload

	block ledger.Block // set before done is closed
	err   error
	done  chan struct{}
}

func (p *pending) finish(b ledger.Block, err error) {
	p.block, p.err = b, err
	close(p.done)
}

// AppendEntry builds the next block from e (index head+1, prev_hash the
// head's hash, the time of e or now), seals it with signers, verifies it
// against the head and returns it once it is synced to disk, committed
// together with the appends that run at the same time. A context ended
// before the entry is sealed appends nothing.
func (s *Store) AppendEntry(ctx context.Context, e ledger.Entry, signers ledger.Signers) (ledger.Block, error) {
	ph, canon, err := ledger.PayloadHash(e.Payload)
	if err != nil {
		return ledger.Block{}, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	if err := ctx.Err(); err != nil {
		return ledger.Block{}, err
	}
	p := &pending{ctx: ctx, entry: e, signers: signers, payload: ph,
		private: &ledger.Private{Description: e.Description, Payload: canon}, done: make(chan struct{})}
	s.queueMu.Lock()
	s.queue = append(s.queue, p)
	s.queueMu.Unlock()
	for {
		select {
		case <-p.done:
			return p.block, p.err
		default:
		}
		select {
		case <-p.done:
			return p.block, p.err
		case s.leader <- struct{}{}:
			s.commitQueued()
			<-s.leader
		}
	}
}

// commitQueued commits one batch of the queue, as its leader.
func (s *Store) commitQueued() {
	s.queueMu.Lock()
	n := min(len(s.queue), s.opts.MaxBatch)
	batch := append([]*pending(nil), s.queue[:n]...)
	s.queue = append(s.queue[:0:0], s.queue[n:]...)
	s.queueMu.Unlock()
	if n == 0 {
		return
	}
	s.mu.Lock()
	retry := s.commitEntries(batch)
	s.mu.Unlock()
	if len(retry) > 0 {
		s.queueMu.Lock()
		s.queue = append(retry, s.queue...)
		s.queueMu.Unlock()
	}
}

// commitEntries seals, verifies and commits batch in chain order, and
// finishes every entry it decides; it returns the entries to seal again
// on the new head (those after a rejected one, or beyond what fitted in
// one transaction). s.mu is held.
func (s *Store) commitEntries(batch []*pending) (retry []*pending) {
	var live []*pending
	for _, p := range batch {
		switch {
		case s.closed:
			p.finish(ledger.Block{}, ErrClosed)
		case p.ctx.Err() != nil:
			p.finish(ledger.Block{}, p.ctx.Err())
		default:
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil
	}
	st := s.state.Load()
	headers := make([]ledger.Header, len(live))
	prev := st.head.Header()
	prevHash := st.head.Hash()
	for i, p := range live {
		t := p.entry.Time
		if t.IsZero() {
			t = s.opts.Now()
		}
		headers[i] = ledger.Header{Index: prev.Index + 1, Timestamp: ledger.FormatTimestamp(t), Kind: p.entry.Kind,
			PayloadHash: p.payload, PrevHash: prevHash, Writer: p.signers.Writer.ID()}
		prev, prevHash = headers[i], headers[i].Hash()
	}
	blocks := make([]ledger.Block, len(live))
	privs := make([]*ledger.Private, len(live))
	errs := make([]error, len(live))
	parallel(len(live), func(i int) {
		blocks[i], errs[i] = ledger.Seal(headers[i], live[i].signers)
		privs[i] = live[i].private
	})
	k := 0 // blocks[:k] sealed without error
	for k < len(live) && errs[k] == nil {
		k++
	}
	checks, valid := s.verify(st.head, blocks[:k], privs[:k])
	if valid < k {
		k, errs[valid] = valid, checks[valid].Err
	}
	if k == 0 {
		live[0].finish(ledger.Block{}, fmt.Errorf("%w: %w", ErrRejected, errs[0]))
		return live[1:]
	}
	n, err := s.commit(st, blocks[:k], privs[:k], checks[:k])
	if err != nil {
		for _, p := range live[:k] {
			p.finish(ledger.Block{}, err)
		}
		return live[k:]
	}
	for i, p := range live[:n] {
		p.finish(blocks[i], nil)
	}
	return live[n:]
}

// Append verifies b against the head (hash, signatures with the pinned
// keys, witness quorum, index head+1, prev_hash = head hash, and the
// payload of priv against payload_hash), writes it with its indexes and
// private part in one synced transaction, and then updates the cached
// head and verdict. When Append returns nil the block is on disk.
func (s *Store) Append(ctx context.Context, b ledger.Block, priv *ledger.Private) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	st := s.state.Load()
	checks, valid := s.verify(st.head, []ledger.Block{b}, []*ledger.Private{priv})
	if valid == 0 {
		return fmt.Errorf("%w: %w", ErrRejected, checks[0].Err)
	}
	_, err := s.commit(st, []ledger.Block{b}, []*ledger.Private{priv}, checks)
	return err
}

// verify checks blocks in chain order on all cores, the first against
// head and each other against the block before it, and each payload in
// privs (nil: none) against its payload_hash. It returns the checks and
// how many blocks from the first are valid.
func (s *Store) verify(head ledger.Block, blocks []ledger.Block, privs []*ledger.Private) ([]ledger.BlockVerification, int) {
	checks := make([]ledger.BlockVerification, len(blocks))
	parallel(len(blocks), func(i int) {
		prev := head
		if i > 0 {
			prev = blocks[i-1]
		}
		c := ledger.VerifyBlock(blocks[i], &prev, s.opts.Keys, s.opts.WitnessQuorum)
		if p := privs[i]; c.Valid() && p != nil && p.Payload != nil {
			if h, _, err := ledger.PayloadHash(p.Payload); err != nil || h != blocks[i].Header().PayloadHash {
				c.PayloadValid = false
				c.Err = &ledger.BlockError{Index: c.Index, Err: ledger.ErrPayloadMismatch, Want: blocks[i].Header().PayloadHash, Got: h,
					Note: "the payload's canonical SHA-256 is not payload_hash"}
			}
		}
		checks[i] = c
	})
	valid := 0
	for valid < len(checks) && checks[valid].Valid() {
		valid++
	}
	return checks, valid
}

// commit writes blocks (verified by checks, the first following the head
// of st) with their private parts and the Merkle nodes they complete in one
// synced transaction, then updates the state. When the transaction is too
// big for Badger it writes the longest half that fits. It returns how many
// blocks it wrote, all from the first; zero with an error. s.mu is held.
func (s *Store) commit(st *state, blocks []ledger.Block, privs []*ledger.Private, checks []ledger.BlockVerification) (int, error) {
	if int64(st.tree.Size()) != st.count {
		return 0, fmt.Errorf("%w: the Merkle tree covers %d rows, the store has %d", ErrCorrupt, st.tree.Size(), st.count)
	}
	n := len(blocks)
	for {
		tree, err := s.write(st, blocks[:n], privs[:n], checks[:n])
		if errors.Is(err, badger.ErrTxnTooBig) && n > 1 {
			n /= 2
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, s.advance(st, blocks[n-1], tree, checks[:n])
	}
}

// write stores blocks after the rows of st in one transaction and syncs
// it (SyncWrites is on), returning the Merkle tree over every row.
func (s *Store) write(st *state, blocks []ledger.Block, privs []*ledger.Private, checks []ledger.BlockVerification) (*tlog.Tree, error) {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	tree := st.tree.Clone()
	var err error
	setNode := func(id tlog.NodeID, h tlog.Hash) {
		if err == nil {
			err = txn.Set(nodeKey(id), h[:])
		}
	}
	for i, b := range blocks {
		// Never overwrite: in a store edited behind our back the highest
		// key need not hold the highest index.
		if _, gerr := txn.Get(blockKey(b.Index())); !errors.Is(gerr, badger.ErrKeyNotFound) {
			return nil, fmt.Errorf("%w: block %d is already stored (%v)", ErrCorrupt, b.Index(), gerr)
		}
		if err := putBlock(txn, b, privs[i]); err != nil {
			return nil, err
		}
		tree.Append(tlog.Hash(checks[i].Leaf), setNode)
		if err != nil {
			return nil, err
		}
	}
	count := be64(st.count + int64(len(blocks)))
	if err := txn.Set(metaTreeSize, count); err != nil {
		return nil, err
	}
	if err := txn.Set(metaCount, count); err != nil {
		return nil, err
	}
	if err := txn.Commit(); err != nil {
		return nil, fmt.Errorf("ledger: append blocks %d-%d: %w", blocks[0].Index(), blocks[len(blocks)-1].Index(), err)
	}
	return tree, nil
}

// advance publishes the state after committed blocks: head, count, tree,
// and the cached verdict extended by each check.
func (s *Store) advance(st *state, head ledger.Block, tree *tlog.Tree, checks []ledger.BlockVerification) error {
	next := &state{head: head, genesis: st.genesis, count: st.count + int64(len(checks)), tree: tree, version: st.version + 1}
	if st.verdict != nil {
		cp := next.checkpoint(s.opts.Log.Origin)
		v := *st.verdict
		for _, c := range checks {
			var err error
			if v, err = v.Extend(c, cp); err != nil {
				return err // unreachable: each check is valid and follows the one before
			}
		}
		t := *st.table
		t.Rows += int64(len(checks))
		next.verdict, next.table = &v, &t
	}
	s.state.Store(next)
	s.log.Debug("appended", "from", checks[0].Index, "to", head.Index(), "head", head.Hash())
	return nil
}

// parallel calls f(i) for every i < n, on all cores when n > 1.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
