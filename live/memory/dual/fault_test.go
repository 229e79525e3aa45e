package dual

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/memory"

	"github.com/dgraph-io/badger/v4"
)

// requireSecondaryWriteError fails t unless err is a WriteError of the
// SQL write.
func requireSecondaryWriteError(t *testing.T, err error) *memory.WriteError {
	t.Helper()
	var we *memory.WriteError
	if !errors.As(err, &we) || we.Write != memory.WriteSecondary || !errors.Is(err, memory.ErrWriteFailed) {
		t.Fatalf("err = %v, want a secondary memory.WriteError", err)
	}
	return we
}

// TestSecondaryFailureInjected fails every SQL write of a Put: the Put
// reports the failed write, the memory waits in the primary's outbox, a
// retry of the same Put (no new block) and the replicator both converge.
func TestSecondaryFailureInjected(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	down := errors.New("injected: connection refused")
	s.secondary.fault = func(op string) error {
		if op == "put" || op == "begin" {
			return down
		}
		return nil
	}

	var failed []memory.Stored
	for i := range 2 {
		st, err := s.Put(ctx, draft("case", i))
		we := requireSecondaryWriteError(t, err)
		if we.Backend != BackendSQLite || !errors.Is(err, down) || st.Memory.ID == "" || we.ID != st.Memory.ID {
			t.Fatalf("Put: %+v %v", st, err)
		}
		failed = append(failed, st)
	}
	if _, err := s.Get(failed[0].Memory.ID); err != nil {
		t.Fatalf("the memory is not in the primary: %v", err)
	}
	st := s.Status(ctx)
	if st.State != memory.StateCatchingUp || st.OutboxBacklog != 2 || st.OldestPendingAt == nil || *st.Secondary.Memories != 0 {
		t.Fatalf("status with the SQL store failing: %+v", st)
	}
	if _, err := s.Replicate(ctx); !errors.Is(err, down) {
		t.Fatalf("Replicate with the SQL store failing: %v", err)
	}

	s.secondary.fault = nil
	head := e.chain.Count()
	again, err := s.Put(ctx, draft("case", 0))
	if err != nil || again.Created || again.Memory.Witness != failed[0].Memory.Witness {
		t.Fatalf("retry: %+v %v", again, err)
	}
	if e.chain.Count() != head {
		t.Fatal("the retry appended a block")
	}
	if n, err := s.Replicate(ctx); err != nil || n != 1 {
		t.Fatalf("Replicate = %d, %v; want the one entry left", n, err)
	}
	requireConverged(t, s)
}

// TestSQLiteLockedOutage is a real outage of the SQL store: another
// process-like connection holds SQLite's write lock longer than the busy
// timeout.
func TestSQLiteLockedOutage(t *testing.T) {
	e := newEnv(t, Options{SecondaryTimeout: 300 * time.Millisecond})
	s := e.open(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, draft("tars", 1)); err != nil {
		t.Fatal(err)
	}

	dsn, err := sqliteDSN(filepath.Join(e.dir, "memory", "secondary.sqlite"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.BeginTx(ctx, nil) // _txlock=immediate: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec("DELETE FROM memories WHERE 0"); err != nil {
		t.Fatal(err)
	}

	_, err = s.Put(ctx, draft("tars", 2))
	requireSecondaryWriteError(t, err)
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "SQLITE_BUSY") {
		t.Fatalf("not a lock error: %v", err)
	}
	if st := s.Status(ctx); st.OutboxBacklog != 1 {
		t.Fatalf("status: %+v", st)
	}

	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Replicate(ctx); err != nil || n != 1 {
		t.Fatalf("Replicate = %d, %v", n, err)
	}
	requireConverged(t, s)
}

// TestSecondaryClosed closes the SQL database under the store: Puts fail
// and Status shows it; after a restart the reconciler converges.
func TestSecondaryClosed(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, draft("plex", 1)); err != nil {
		t.Fatal(err)
	}
	s.secondary.db.Close()
	_, err := s.Put(ctx, draft("plex", 2))
	requireSecondaryWriteError(t, err)
	st := s.Status(ctx)
	if st.State != memory.StateDegraded || st.Secondary.Healthy || st.Secondary.Memories != nil || st.Secondary.Error == "" || st.OutboxBacklog != 1 {
		t.Fatalf("status: %+v", st)
	}
	s.Close()

	s = e.open(t)
	rep, err := s.Reconcile(ctx)
	if err != nil || rep.Replicated != 1 || rep.Memories != 2 || len(rep.Divergences) != 0 {
		t.Fatalf("Reconcile = %+v, %v", rep, err)
	}
	requireConverged(t, s)
}

// TestPostgresOutage stops the PostgreSQL server mid-test: the Put fails
// naming the SQL write, Status is degraded; once the server is back the
// replicator converges over the same connection pool.
func TestPostgresOutage(t *testing.T) {
	srv := pg.Get(t)
	e := newEnv(t, Options{PostgresDSN: srv.NewSchema(t), SecondaryTimeout: 2 * time.Second})
	s := e.open(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, draft("forge", 1)); err != nil {
		t.Fatal(err)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			if err := srv.Restart(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(restart) // the server is shared with the other tests

	_, err := s.Put(ctx, draft("forge", 2))
	if we := requireSecondaryWriteError(t, err); we.Backend != BackendPostgres {
		t.Fatalf("backend %q", we.Backend)
	}
	st := s.Status(ctx)
	if st.State != memory.StateDegraded || st.Secondary.Healthy || st.OutboxBacklog != 1 {
		t.Fatalf("status with the server down: %+v", st)
	}
	if strings.Contains(st.Secondary.Error, "/") || strings.Contains(st.Secondary.Error, "user=") {
		t.Fatalf("status leaks connection details: %q", st.Secondary.Error)
	}

	restart()
	if n, err := s.Replicate(ctx); err != nil || n != 1 {
		t.Fatalf("Replicate after restart = %d, %v", n, err)
	}
	requireConverged(t, s)
}

// reenqueue puts outbox entries back for ids, as if a crash had come
// between the SQL commit and the outbox delete (a lost acknowledgement).
func reenqueue(t testing.TB, s *Store, ids ...string) {
	t.Helper()
	err := s.primary.db.Update(func(txn *badger.Txn) error {
		for _, id := range ids {
			if err := txn.Set(outboxKey(id), binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDuplicateDelivery delivers the same outbox entries again, one after
// the other and from two replicators at once: the SQL store is unchanged
// and the outbox drains.
func TestDuplicateDelivery(t *testing.T) {
	backends(t, func(t *testing.T, opts Options) {
		e := newEnv(t, opts)
		s := e.open(t)
		ctx := context.Background()
		var all []string
		for i := range 3 {
			st, err := s.Put(ctx, draft("case", i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, st.Memory.ID)
		}
		before := secondarySnapshot(t, s)

		reenqueue(t, s, all...)
		if n, err := s.Replicate(ctx); err != nil || n != 3 {
			t.Fatalf("Replicate = %d, %v", n, err)
		}
		// The same memories straight to the SQL store, twice in one batch.
		m, _ := s.Get(all[0])
		if c, err := s.secondary.putBatch(ctx, []memory.Memory{m, m}); err != nil || len(c) != 0 {
			t.Fatalf("putBatch twice = %v, %v", c, err)
		}
		reenqueue(t, s, all...)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := s.replicateLocked(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if after := secondarySnapshot(t, s); len(after) != len(before) || !slices.Equal(sortedKeys(after), sortedKeys(before)) {
			t.Fatalf("SQL store changed: %v -> %v", before, after)
		}
		requireConverged(t, s)
	})
}

// TestConflictNeverOverwritten: a SQL row with the same id and another
// record is reported and left alone by the replicator; the reconciler
// repairs it from the primary.
func TestConflictNeverOverwritten(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	st, err := s.Put(ctx, draft("case", 1))
	if err != nil {
		t.Fatal(err)
	}
	id := st.Memory.ID
	// Another record under the same id, as a second writer would leave it.
	if _, err := s.secondary.db.Exec(`UPDATE memories SET content = '{"n":666}', record_hash = ? WHERE id = ?`, strings.Repeat("ab", 32), id); err != nil {
		t.Fatal(err)
	}
	reenqueue(t, s, id)
	if _, err := s.Replicate(ctx); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("Replicate = %v, want memory.ErrConflict", err)
	}
	var content string
	if err := s.secondary.db.QueryRow(`SELECT content FROM memories WHERE id = ?`, id).Scan(&content); err != nil || content != `{"n":666}` {
		t.Fatalf("the conflicting row was overwritten: %q %v", content, err)
	}
	if st := s.Status(ctx); st.OutboxBacklog != 1 {
		t.Fatalf("the conflicting entry left the outbox: %+v", st)
	}
	// A retry of the Put reports the conflict as a failed SQL write.
	_, err = s.Put(ctx, draft("case", 1))
	if requireSecondaryWriteError(t, err); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("retry = %v, want memory.ErrConflict", err)
	}

	rep, err := s.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Divergences) != 1 || rep.Divergences[0] != (memory.Divergence{ID: id, Problem: memory.ProblemHashMismatch, Repaired: true}) {
		t.Fatalf("report: %+v", rep)
	}
	requireConverged(t, s)
}

// TestOpenWhilePostgresDown opens the store while its database is down:
// Open succeeds, Puts keep their memories in the outbox and fail naming
// the SQL write, and once the server answers the schema is created and
// the replicator converges.
func TestOpenWhilePostgresDown(t *testing.T) {
	srv := pg.Get(t)
	dsn := srv.NewSchema(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { srv.Restart(ctx) }) // the server is shared
	e := newEnv(t, Options{PostgresDSN: dsn, SecondaryTimeout: 2 * time.Second})
	s := e.open(t)

	_, err := s.Put(ctx, draft("case", 1))
	requireSecondaryWriteError(t, err)
	if st := s.Status(ctx); st.State != memory.StateDegraded || st.OutboxBacklog != 1 {
		t.Fatalf("status: %+v", st)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Replicate(ctx); err != nil || n != 1 {
		t.Fatalf("Replicate = %d, %v", n, err)
	}
	requireConverged(t, s)
}
