// Package dual keeps the AI nodes' memories (live/memory's values) in two
// independent stores and has the chain witness each one.
//
//	s, err := dual.Open(ctx, dir, dual.Options{Chain: chain})
//	go s.Run(ctx)                                        // replicate and reconcile in the background
//	st, err := s.Put(ctx, memory.Draft{NodeID: "case", Content: json.RawMessage(`"…"`)})
//	ms, err := s.Retrieve(ctx, "case", 0)                // newest first
//	status := s.Status(ctx)                              // GET /api/memory/status
//
// The primary store is Badger (dir/badger, its own directory, never the
// chain's). The second store is SQL through database/sql: SQLite
// (modernc.org/sqlite, embedded, WAL, synchronous=FULL) by default, or
// PostgreSQL (pgx) when Options.PostgresDSN is set, for several replicas
// sharing one database. The package creates and migrates the schema.
//
// A Put appends the witnessing chain block, writes the memory and its
// outbox entry to the primary in one synced transaction, then writes the
// SQL store and drops the outbox entry. It reports success only once both
// stores hold the memory durably; otherwise a *memory.WriteError names the
// write that failed (the route answers 503). The replicator (Replicate, run
// by Run) drains the outbox at least once and idempotently: the same id
// with the same record is a no-op, with a different record a conflict that
// is reported, never silently overwritten. The reconciler (Reconcile)
// compares (id, record hash) across both stores and the chain block each
// memory names, repairs the SQL store from the primary, never the other
// way, and keeps its report for Status.
//
// A Store is safe for concurrent use. Puts of the same memory are
// serialised; others run in parallel. Close it after stopping Run and the
// callers.
package dual
