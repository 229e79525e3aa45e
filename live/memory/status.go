package memory

import "time"

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
