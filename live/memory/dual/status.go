package dual

import (
	"context"
	"errors"
	"time"

	"github.com/proofsite/proofsite/live/memory"
)

// Status reports the health of both stores, their counts, the outbox
// backlog and the last reconciliation. It reads the primary's count from
// memory and asks the SQL store for its count (bounded by
// SecondaryTimeout).
func (s *Store) Status(ctx context.Context) memory.Status {
	st := memory.Status{
		Primary:      memory.StoreHealth{Backend: "badger"},
		Secondary:    memory.StoreHealth{Backend: s.secondary.d.backend},
		DivergentIDs: []string{},
	}
	if s.closed.Load() {
		st.State, st.Primary.Error, st.Secondary.Error = memory.StateDegraded, "closed", "closed"
		return st
	}
	if err := s.primary.healthy(); err != nil {
		s.log.Warn("primary store unhealthy", "err", err)
		st.Primary.Error = "the primary store does not answer"
	} else if n, oldest, err := s.primary.backlog(); err != nil {
		s.log.Warn("outbox unreadable", "err", err)
		st.Primary.Error = "the outbox does not read"
	} else {
		count := s.primary.count.Load()
		st.Primary.Healthy, st.Primary.Memories, st.OutboxBacklog = true, &count, n
		if n > 0 {
			st.OldestPendingAt = &oldest
		}
	}

	ctx, cancel := context.WithTimeout(ctx, s.opts.SecondaryTimeout)
	defer cancel()
	if n, err := s.secondary.count(ctx); err != nil {
		s.log.Warn("secondary store unhealthy", "backend", s.secondary.d.backend, "err", err)
		st.Secondary.Error = "the " + s.secondary.d.backend + " store does not answer"
		if errors.Is(err, context.DeadlineExceeded) {
			st.Secondary.Error += " in time"
		}
	} else {
		st.Secondary.Healthy, st.Secondary.Memories = true, &n
	}

	if r := s.report.Load(); r != nil {
		st.LastReconciliation, st.DivergentIDs = r, r.DivergentIDs()
	}
	switch {
	case !st.Primary.Healthy || !st.Secondary.Healthy:
		st.State = memory.StateDegraded
	case len(st.DivergentIDs) > 0:
		st.State = memory.StateDiverged
	case st.OutboxBacklog > 0:
		st.State = memory.StateCatchingUp
	default:
		st.State = memory.StateInSync
	}
	return st
}

// Run keeps the stores converging until ctx ends: it reconciles at once
// and every ReconcileEvery, and drains the outbox every ReplicateEvery
// while it is not empty. Failures are logged and retried on the next tick.
// It returns ctx's error.
func (s *Store) Run(ctx context.Context) error {
	reconcile := func() {
		if _, err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("reconciliation failed", "err", err)
		}
	}
	reconcile()
	replicateT := time.NewTicker(s.opts.ReplicateEvery)
	defer replicateT.Stop()
	reconcileT := time.NewTicker(s.opts.ReconcileEvery)
	defer reconcileT.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-reconcileT.C:
			reconcile()
		case <-replicateT.C:
			if n, _, err := s.primary.backlog(); err != nil || n == 0 {
				continue
			}
			if n, err := s.Replicate(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("replication failed", "delivered", n, "err", err)
			} else if n > 0 {
				s.log.Info("replicated", "delivered", n)
			}
		}
	}
}
