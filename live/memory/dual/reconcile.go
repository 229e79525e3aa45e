package dual

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/proofsite/proofsite/live/memory"
)

// batchSize bounds the memories one SQL transaction of the replicator or
// the reconciler writes.
const batchSize = 256

// Replicate delivers every outbox entry to the SQL store, in transactions
// of up to batchSize memories, and drops an entry only after the
// transaction that wrote its memory committed (at-least-once: a crash in
// between delivers it again, which is a no-op). It returns how many
// entries it delivered. An entry whose id the SQL store holds with another
// record stays in the outbox and is reported as ErrConflict; the
// reconciler repairs it.
func (s *Store) Replicate(ctx context.Context) (int, error) {
	s.replicate.Lock()
	defer s.replicate.Unlock()
	if s.closed.Load() {
		return 0, memory.ErrClosed
	}
	return s.replicateLocked(ctx)
}

func (s *Store) replicateLocked(ctx context.Context) (int, error) {
	delivered := 0
	var conflicts []string
	for after := ""; ; {
		ids, err := s.primary.outbox(after, batchSize)
		if err != nil || len(ids) == 0 {
			if err == nil && len(conflicts) > 0 {
				err = fmt.Errorf("%w: %d outbox entries: %v", memory.ErrConflict, len(conflicts), conflicts)
			}
			return delivered, err
		}
		after = ids[len(ids)-1]
		ms := make([]memory.Memory, 0, len(ids))
		for _, id := range ids {
			m, err := s.primary.get(id)
			if err != nil {
				return delivered, fmt.Errorf("memory: outbox entry %s: %w", id, err)
			}
			ms = append(ms, m)
		}
		c, err := s.secondary.putBatch(ctx, ms)
		if err != nil {
			return delivered, err
		}
		conflicts = append(conflicts, c...)
		done := slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(c, id) })
		if err := s.primary.ack(done...); err != nil {
			return delivered, err
		}
		delivered += len(done)
	}
}

// Reconcile drains the outbox, then compares every memory across the
// primary, the SQL store and the chain block that witnesses it, repairs
// the SQL store from the primary where the primary's record is sound and
// its witness checks out, and reports what it found (see the Problem
// constants). It never repairs from the SQL store alone and never writes
// the chain. The report is kept (Status shows it) and returned; an error
// means the comparison could not finish, and the previous report stays.
func (s *Store) Reconcile(ctx context.Context) (memory.Report, error) {
	s.replicate.Lock()
	defer s.replicate.Unlock()
	if s.closed.Load() {
		return memory.Report{}, memory.ErrClosed
	}
	start := s.opts.Now()
	rep := memory.Report{At: start.UTC(), Divergences: []memory.Divergence{}}
	var err error
	if rep.Replicated, err = s.replicateLocked(ctx); err != nil && !errors.Is(err, memory.ErrConflict) {
		return memory.Report{}, err
	}
	if err := s.compare(ctx, &rep); err != nil {
		return memory.Report{}, err
	}
	rep.TookMS = s.opts.Now().Sub(start).Milliseconds()
	s.report.Store(&rep)
	if err := s.primary.saveReport(rep); err != nil {
		s.log.Warn("reconciliation report not saved", "err", err)
	}
	s.log.Info("reconciled", "memories", rep.Memories, "replicated", rep.Replicated, "repaired", rep.Repaired, "unrepaired", rep.Unrepaired, "took_ms", rep.TookMS)
	return rep, nil
}

// rowCursor walks the SQL rows one at a time.
type rowCursor struct {
	next func() (row, error, bool)
	row  row
	ok   bool // row holds a row
}

func (c *rowCursor) advance() error {
	var err error
	c.row, err, c.ok = c.next()
	return err
}

// compare merges the SQL rows and the primary's memories, both in id
// order. The SQL snapshot is taken first: every row in it was written
// after its memory was committed to the primary, so the primary's later
// snapshot holds it too, and a row missing there is a real divergence.
// A memory missing from the SQL snapshot is looked up again before it
// counts, since a Put may have written it in between.
func (s *Store) compare(ctx context.Context, rep *memory.Report) error {
	next, stop := iter.Pull2(s.secondary.rows(ctx))
	defer stop()
	sec := &rowCursor{next: next}
	if err := sec.advance(); err != nil {
		return err
	}
	// secondaryOnly reports the rows before id ("" for all) that the
	// primary lacks.
	secondaryOnly := func(id string) error {
		for sec.ok && (id == "" || sec.row.id < id) {
			if sec.row.origin == s.secondary.origin {
				rep.Add(memory.Divergence{ID: sec.row.id, Problem: memory.ProblemMissingInPrimary})
			}
			if err := sec.advance(); err != nil {
				return err
			}
		}
		return nil
	}
	var repair []memory.Memory
	flush := func() error {
		if len(repair) == 0 {
			return nil
		}
		if err := s.secondary.repair(ctx, repair); err != nil {
			return err
		}
		ids := make([]string, len(repair))
		for i, m := range repair {
			ids[i] = m.ID
		}
		repair = repair[:0]
		return s.primary.ack(ids...)
	}

	err := s.primary.scan(ctx, func(id string, m memory.Memory, decodeErr error) error {
		rep.Memories++
		if err := secondaryOnly(id); err != nil {
			return err
		}
		var have *row
		if sec.ok && sec.row.id == id {
			r := sec.row
			have = &r
			if err := sec.advance(); err != nil {
				return err
			}
		}
		if decodeErr == nil {
			decodeErr = m.Check()
		}
		if decodeErr != nil {
			rep.Add(memory.Divergence{ID: id, Problem: memory.ProblemPrimaryCorrupt, Detail: decodeErr.Error()})
			return nil
		}
		witnessErr := s.checkWitness(m)
		if witnessErr != nil {
			rep.Add(memory.Divergence{ID: id, Problem: memory.ProblemWitness, Detail: witnessErr.Error()})
		}
		h, err := m.Hash()
		if err != nil {
			return err
		}
		d := memory.Divergence{ID: id, Problem: memory.ProblemHashMismatch}
		switch {
		case have != nil && have.hash == h:
			return nil
		case have != nil && have.origin != s.secondary.origin:
			d.Detail = "the SQL row was written by replica " + have.origin
			rep.Add(d)
			return nil
		case have == nil:
			now, err := s.secondary.hash(ctx, id)
			switch {
			case err != nil:
				return err
			case now == h:
				return nil // written by a Put since the snapshot
			case !now.IsZero():
				d.Detail = "the SQL row appeared during the reconciliation; the next one decides"
				rep.Add(d)
				return nil
			}
			d.Problem = memory.ProblemMissingInSecondary
		}
		if witnessErr != nil {
			d.Detail = "not repaired: the primary's record has no valid witness"
			rep.Add(d)
			return nil
		}
		d.Repaired = true
		rep.Add(d)
		if repair = append(repair, m); len(repair) == batchSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = secondaryOnly("")
	}
	if err == nil {
		err = flush()
	}
	return err
}

// checkWitness reads the block m names and checks that it witnesses m.
func (s *Store) checkWitness(m memory.Memory) error {
	b, err := s.opts.Chain.BlockByIndex(m.Witness.BlockIndex)
	if err != nil {
		return fmt.Errorf("%w: memory %s: block %d: %w", memory.ErrWitness, m.ID, m.Witness.BlockIndex, err)
	}
	return m.CheckWitness(b)
}
