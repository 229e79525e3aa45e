package live

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/memory/dual"
)

// BenchmarkMemoryStore measures POST /api/memory/store requests/s over
// HTTP on 127.0.0.1 with dual-write: each request passes the pipeline and
// the bearer token check, appends the memory's witness block to a real
// chain (synced, with group commit), writes the memory and its outbox
// entry to Badger (synced) and the memory to SQLite (synchronous=FULL),
// and is answered 201 only then. 1 and 32 concurrent clients; the rate
// limit is lifted for the run.
//
//	go test -run '^$' -bench MemoryStore ./live
func BenchmarkMemoryStore(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			dir := b.TempDir()
			l := newTestLedger(b, filepath.Join(dir, "data"))
			m := openTestMemory(b, l, filepath.Join(dir, "memory"), dual.Options{})
			srv := newTestServer(b, Options{Chain: l, Memory: m, MemoryTokens: testTokens(b),
				Limits: map[string]Limit{"/api/memory/store": {Max: 1 << 30, Window: time.Hour}}})
			base := serveLoopback(b, srv)
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						req, _ := http.NewRequest(http.MethodPost, base+"/api/memory/store", strings.NewReader(fmt.Sprintf(`{"node_id":"case","content":"memory %d"}`, i)))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", "Bearer "+testToken)
						resp, err := hc.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusCreated {
							b.Errorf("%d: %s", resp.StatusCode, body)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
