package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// commitLog counts the store's "appended" records: one per synced commit,
// with the first and last index it held.
type commitLog struct {
	mu      sync.Mutex
	commits [][2]int64
}

func (c *commitLog) Enabled(context.Context, slog.Level) bool { return true }
func (c *commitLog) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *commitLog) WithGroup(string) slog.Handler            { return c }
func (c *commitLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "appended" {
		return nil
	}
	var span [2]int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "from":
			span[0] = a.Value.Int64()
		case "to":
			span[1] = a.Value.Int64()
		}
		return true
	})
	c.mu.Lock()
	c.commits = append(c.commits, span)
	c.mu.Unlock()
	return nil
}

// waitQueued waits until n appends are queued (behind a commit token the
// test holds).
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.queueMu.Lock()
		queued := len(s.queue)
		s.queueMu.Unlock()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d appends queued, want %d", queued, n)
		}
	}
}

// TestGroupCommit runs many concurrent appends: every acknowledged block is
// stored under its index with its payload, the indexes are contiguous, far
// fewer commits than appends were synced, and the chain, its stored Merkle
// tree and the cached verdict agree with a full walk.
func TestGroupCommit(t *testing.T) {
	log := &commitLog{}
	opts := testOptions()
	opts.Logger = slog.New(log)
	s, _, _ := newStoreWith(t, opts)
	if _, err := s.FullWalk(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	const clients, each = 64, 5
	signers := testSigners()
	var mu sync.Mutex
	acked := map[int64]ledger.Block{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				payload := fmt.Appendf(nil, `{"client":%d,"i":%d}`, c, i)
				b, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "wall_signature", Payload: payload}, signers)
				if err != nil {
					t.Error(err)
					return
				}
				if h, _, _ := ledger.PayloadHash(payload); b.Header().PayloadHash != h {
					t.Errorf("block %d does not commit to the payload it was asked to", b.Index())
				}
				mu.Lock()
				acked[b.Index()] = b
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(acked) != clients*each || s.Count() != 200+clients*each {
		t.Fatalf("%d blocks acknowledged, %d rows stored", len(acked), s.Count())
	}
	for i := int64(200); i < s.Count(); i++ {
		stored, err := s.BlockByIndex(i)
		if err != nil || stored.Hash() != acked[i].Hash() {
			t.Fatalf("row %d: %v, stored %s, acknowledged %s", i, err, stored.Hash(), acked[i].Hash())
		}
		if _, err := s.Private(i); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	cached, _ := s.Verdict()
	res, err := s.FullWalk(context.Background(), nil, nil)
	if err != nil || res.Verdict.Verdict != ledger.VerdictPassWithSeam || res.Verdict.PayloadsChecked != 200+clients*each {
		t.Fatalf("full walk: %+v %v", res.Verdict, err)
	}
	if *cached.Head != *res.Verdict.Head || *cached.Checkpoint != *res.Verdict.Checkpoint || cached.Verdict != res.Verdict.Verdict {
		t.Fatalf("cached verdict %+v, full walk %+v", cached, res.Verdict)
	}
	if p, err := s.InclusionProof(s.Count()-1, s.Count()); err != nil || len(p) == 0 {
		t.Fatalf("inclusion proof of the last row: %v", err)
	}
	log.mu.Lock()
	commits := log.commits
	log.mu.Unlock()
	n := int64(0)
	for _, c := range commits {
		n += c[1] - c[0] + 1
	}
	if n != clients*each || len(commits) >= clients*each {
		t.Fatalf("%d commits held %d appends", len(commits), n)
	}
	t.Logf("%d appends in %d synced commits", n, len(commits))
}

// TestQueuedAppends queues 8 appends behind a held commit token: with
// group commit they share one synced transaction, in queue order; with
// MaxBatch 1 each is a commit of its own.
func TestQueuedAppends(t *testing.T) {
	const n = 8
	for _, tc := range []struct {
		maxBatch int
		commits  [][2]int64
	}{
		{0, [][2]int64{{200, 200 + n - 1}}},
		{1, [][2]int64{{200, 200}, {201, 201}, {202, 202}, {203, 203}, {204, 204}, {205, 205}, {206, 206}, {207, 207}}},
	} {
		t.Run(fmt.Sprintf("MaxBatch=%d", tc.maxBatch), func(t *testing.T) {
			log := &commitLog{}
			opts := testOptions()
			opts.Logger, opts.MaxBatch = slog.New(log), tc.maxBatch
			s, _, _ := newStoreWith(t, opts)
			var wg sync.WaitGroup
			s.leader <- struct{}{}
			for i := range n {
				wg.Go(func() {
					if _, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "audit", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}, testSigners()); err != nil {
						t.Error(err)
					}
				})
			}
			waitQueued(t, s, n)
			<-s.leader
			wg.Wait()
			if s.Count() != 200+n || !slices.Equal(log.commits, tc.commits) {
				t.Fatalf("%d rows, commits %v", s.Count(), log.commits)
			}
		})
	}
}

// TestGroupCommitRejectsAlone: an entry refused in the middle of a batch
// fails alone; the entries before it are committed and those after it are
// sealed again on the new head, and the chain verifies.
func TestGroupCommitRejectsAlone(t *testing.T) {
	s, _, _ := newStore(t)
	if _, err := s.FullWalk(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	good := testSigners()
	stranger := ledger.Signers{Writer: seededKey("stranger"), Witnesses: good.Witnesses} // a writer nobody pinned
	type result struct {
		bad bool
		b   ledger.Block
		err error
	}
	const n = 9
	results := make(chan result, n)
	s.leader <- struct{}{}
	for i := range n {
		go func() {
			signers, bad := good, i == 4
			if bad {
				signers = stranger
			}
			b, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "audit", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}, signers)
			results <- result{bad, b, err}
		}()
	}
	waitQueued(t, s, n)
	<-s.leader
	for range n {
		r := <-results
		switch {
		case r.bad && !errors.Is(r.err, ErrRejected):
			t.Errorf("the stranger's entry: %v (block %d)", r.err, r.b.Index())
		case !r.bad && r.err != nil:
			t.Errorf("a good entry: %v", r.err)
		}
	}
	if s.Count() != 200+n-1 {
		t.Fatalf("%d rows, want %d", s.Count(), 200+n-1)
	}
	res, err := s.FullWalk(context.Background(), nil, nil)
	if err != nil || !res.Verdict.Pass() || res.Verdict.Head.Index != 200+n-2 {
		t.Fatalf("full walk: %+v %v", res.Verdict, err)
	}
}

// TestAppendCancelledWhileQueued: an entry whose context ends while it
// waits for a commit appends nothing.
func TestAppendCancelledWhileQueued(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	s.leader <- struct{}{}
	go func() {
		_, err := s.AppendEntry(ctx, ledger.Entry{Kind: "audit", Payload: []byte(`{}`)}, testSigners())
		errc <- err
	}()
	waitQueued(t, s, 1)
	cancel()
	<-s.leader
	if err := <-errc; !errors.Is(err, context.Canceled) || s.Count() != 200 {
		t.Fatalf("%v, %d rows", err, s.Count())
	}
}

// TestAppendAfterClose fails with ErrClosed and writes nothing.
func TestAppendAfterClose(t *testing.T) {
	s, dir, _ := newStore(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "audit", Payload: []byte(`{}`)}, testSigners()); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	again, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Count() != 200 {
		t.Fatalf("%d rows", again.Count())
	}
}
