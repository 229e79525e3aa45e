package towns

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkSign measures durable wall signatures per second: each Sign
// validates the draft, appends its signed block to a real chain (Badger,
// synced before it is acknowledged) and indexes it in the town's SQLite
// store. In the same run: one client (the single-append rate), and 64
// concurrent clients with one sync per append (MaxBatch 1) and with group
// commit. After each run a full walk checks that every signature's block
// verifies.
//
//	go test -run '^$' -bench Sign ./live/towns
func BenchmarkSign(b *testing.B) {
	for _, c := range []struct {
		name              string
		clients, maxBatch int
	}{{"single", 1, 0}, {"unbatched/clients=64", 64, 1}, {"batched/clients=64", 64, 0}} {
		b.Run(c.name, func(b *testing.B) {
			opts := ledgerOptions()
			opts.MaxBatch = c.maxBatch
			e := newEnvWith(b, opts)
			tw := e.open(b)
			before := e.ledger.Count()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range c.clients {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						d := SignatureDraft{Signer: fmt.Sprintf("visitor %d", i), Message: "Signed, durably."}
						if _, err := tw.Sign(context.Background(), "case", d); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signatures/s")
			b.StopTimer()
			res, err := e.ledger.FullWalk(context.Background(), nil, nil)
			if err != nil || !res.Verdict.Pass() || e.ledger.Count() != before+int64(b.N) {
				b.Fatalf("after %d signatures: %d rows (had %d), %+v %v", b.N, e.ledger.Count(), before, res.Verdict, err)
			}
		})
	}
}
