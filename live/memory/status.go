package memory

import (
	"context"
	"errors"
	"time"
)

// The states of the dual write (Status.State), from best to worst.
const (
	// StateInSync: both stores answer, the outbox is empty and the last
	// reconciliation left nothing unrepaired.
	StateInSync = "in_sync"
	// StateCatchingUp: both stores answer and the outbox holds memories
	// the replicator has not copied yet.
	StateCatchingUp = "catching_up"
	// StateDiverged: the last reconciliation left divergences it could
	// not repair (DivergentIDs).
	StateDiverged = "diverged"
	// StateDegraded: a store does not answer.
	StateDegraded = "degraded"
)

// Status is the health of the dual write, for GET /api/memory/status:
//
//	{"state":"catching_up",
//	 "primary":{"backend":"badger","healthy":true,"memories":12},
//	 "secondary":{"backend":"sqlite","healthy":true,"memories":11},
//	 "outbox_backlog":1,"oldest_pending_at":"2025-01-06T09:00:00Z",
//	 "last_reconciliation":{"at":"…","took_ms":3,"memories":11,"replicated":0,
//	   "repaired":0,"unrepaired":0,"divergences":[]},
//	 "divergent_ids":[]}
type Status struct {
	State     string      `json:"state"`
	Primary   StoreHealth `json:"primary"`
	Secondary StoreHealth `json:"secondary"`
	// OutboxBacklog counts memories durable in the primary and not yet in
	// the SQL store; OldestPendingAt is when the oldest of them was
	// written (null when there is none).
	OutboxBacklog   int64      `json:"outbox_backlog"`
	OldestPendingAt *time.Time `json:"oldest_pending_at"`
	// LastReconciliation is the last report (null before the first).
	LastReconciliation *Report `json:"last_reconciliation"`
	// DivergentIDs are the ids the last reconciliation could not repair.
	DivergentIDs []string `json:"divergent_ids"`
}

// StoreHealth is the health of one store.
type StoreHealth struct {
	Backend string `json:"backend"`
	Healthy bool   `json:"healthy"`
	// Memories is the number of memories held: in the SQL store, those
	// this replica wrote (replicas sharing PostgreSQL each count their
	// own); null when the store does not answer.
	Memories *int64 `json:"memories"`
	// Error says why the store is unhealthy, in words fit for a public
	// page (the cause goes to the log).
	Error string `json:"error,omitempty"`
}

// Status reports the health of both stores, their counts, the outbox
// backlog and the last reconciliation. It reads the primary's count from
// memory and asks the SQL store for its count (bounded by
// SecondaryTimeout).
func (s *Store) Status(ctx context.Context) Status {
	st := Status{
		Primary:      StoreHealth{Backend: "badger"},
		Secondary:    StoreHealth{Backend: s.secondary.d.backend},
		DivergentIDs: []string{},
	}
	if s.closed.Load() {
		st.State, st.Primary.Error, st.Secondary.Error = StateDegraded, "closed", "closed"
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
		st.State = StateDegraded
	case len(st.DivergentIDs) > 0:
		st.State = StateDiverged
	case st.OutboxBacklog > 0:
		st.State = StateCatchingUp
	default:
		st.State = StateInSync
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
