package dual

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkPut measures durable dual-write stores per second in process:
// each Put appends a signed, synced chain block (ledger/store, whose group
// commit shares one sync among concurrent appends), commits the memory
// and its outbox entry to Badger (synced), writes the SQL store (SQLite
// with synchronous=FULL, or PostgreSQL with fsync on over a unix socket)
// and drops the outbox entry. clients=1 is one Put at a time;
// clients=32 runs 32 concurrent callers.
//
//	go test -run '^$' -bench Put -benchtime 5s ./live/memory
func BenchmarkPut(b *testing.B) {
	for _, backend := range []string{BackendSQLite, BackendPostgres} {
		for _, clients := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/clients=%d", backend, clients), func(b *testing.B) {
				var opts Options
				if backend == BackendPostgres {
					opts = postgresOptions(b)
				}
				s := newEnv(b, opts).open(b)
				ctx := context.Background()
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for range clients {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if _, err := s.Put(ctx, draft("case", int(i))); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
			})
		}
	}
}
