//go:build unix

package store

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// Benchmarks of the chain (make bench-ledger):
//
//	BenchmarkRawCrypto          SHA-256 of a header + writer and 2 witness ed25519 verifications, all cores
//	BenchmarkFullWalk/N         a full walk of N stored blocks with their payloads (every payload
//	                            canonicalized and hashed, the Merkle root recomputed), with the raw
//	                            crypto rate measured in the same run
//	BenchmarkMerkleAppend       one row's leaf (canonical JSON + SHA-256) appended to the Merkle tree
//	BenchmarkDurableAppend      synced appends through the single writer
//	BenchmarkGroupCommit        durable appends/s from 1, 8 and 64 concurrent clients, unbatched
//	                            (one sync per append) and with group commit, in the same run
//	BenchmarkIncrementalVerify  verifying one appended block against the head and extending the verdict
//
// Fixtures of N blocks are generated once (signatures in parallel) and kept
// under bench/out (gitignored); set PROOFSITE_BENCH_CACHE to move them.

func benchCache(b *testing.B) string {
	if d := os.Getenv("PROOFSITE_BENCH_CACHE"); d != "" {
		return d
	}
	dir, err := filepath.Abs("../../bench/out")
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchBlocks seals n blocks: headers and hashes in one sequential pass (the
// chain needs each hash for the next header), then signatures on all cores.
func benchBlocks(n int, s ledger.Signers) []ledger.Block {
	headers := make([]ledger.Header, n)
	var prev ledger.Hash
	for i := range headers {
		headers[i] = ledger.Header{
			Index: int64(i), Timestamp: ledger.FormatTimestamp(epoch.Add(time.Duration(i) * time.Minute)),
			Kind: "inter_node_exchange", PayloadHash: sha256.Sum256(fmt.Appendf(nil, `{"i":%d}`, i)), PrevHash: prev,
			Writer: s.Writer.ID(),
		}
		if i == 0 {
			headers[i].Kind = "genesis"
		}
		prev = headers[i].Hash()
	}
	blocks := make([]ledger.Block, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				b, err := ledger.Seal(headers[i], s)
				if err != nil {
					panic(err)
				}
				blocks[i] = b
			}
		})
	}
	wg.Wait()
	return blocks
}

// benchStore opens (creating once) a store of n blocks in the cache.
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	s := testSigners()
	opts := Options{Keys: s.KeySet()}
	dir := filepath.Join(benchCache(b), fmt.Sprintf("ledger-fixture-v2-%d", n)) // v2: payloads and the Merkle tree
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		b.Logf("generating a fixture of %d blocks in %s", n, dir)
		start := time.Now()
		blocks := benchBlocks(n, s)
		opts.Genesis = blocks[0].Hash()
		if err := opts.fill(); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			b.Fatal(err)
		}
		privs := make([]ledger.Private, n)
		for i := range privs {
			privs[i].Payload = fmt.Appendf(nil, `{"i":%d}`, i)
		}
		// The chain is correct by construction; skip Create's verification.
		if err := writeAll(tmp, blocks, privs, opts); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			b.Fatal(err)
		}
		b.Logf("fixture ready in %v", time.Since(start).Round(time.Second))
	}
	st, err := Open(dir, Options{Keys: s.KeySet()})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// cpuTime returns the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawCryptoRate measures, on all cores, how many blocks per second the bare
// cryptography of verification can do: SHA-256 of the canonical header and
// the ed25519 verification of the writer's and each witness's signature.
// It returns blocks per second of wall time and CPU time per block.
func rawCryptoRate(blocks []ledger.Block, d time.Duration) (float64, time.Duration) {
	type job struct {
		preimage []byte
		pubs     [][]byte
		hash     ledger.Hash
		sigs     []ledger.Signature
	}
	s := testSigners()
	pubs := [][]byte{s.Writer.Public().Bytes()}
	for _, w := range s.Witnesses {
		pubs = append(pubs, w.Public().Bytes())
	}
	jobs := make([]job, len(blocks))
	for i, b := range blocks {
		sigs := []ledger.Signature{b.Signature()}
		for _, w := range b.Witnesses() {
			sigs = append(sigs, w.Signature)
		}
		jobs[i] = job{preimage: b.Header().Preimage(), pubs: pubs, hash: b.Hash(), sigs: sigs}
	}
	var done atomic.Int64
	deadline := time.Now().Add(d)
	start, cpu := time.Now(), cpuTime()
	var wg sync.WaitGroup
	for w := range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := w; time.Now().Before(deadline); i++ {
				j := &jobs[i%len(jobs)]
				h := sha256.Sum256(j.preimage)
				for k, sig := range j.sigs {
					if !ed25519.Verify(j.pubs[k], h[:], sig[:]) {
						panic("raw verify failed")
					}
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	n := done.Load()
	return float64(n) / time.Since(start).Seconds(), (cpuTime() - cpu) / time.Duration(n)
}

func BenchmarkRawCrypto(b *testing.B) {
	blocks := benchBlocks(1000, testSigners())
	b.ResetTimer()
	rate, cpu := rawCryptoRate(blocks, time.Duration(b.N)*time.Millisecond)
	b.ReportMetric(rate, "blocks/s")
	b.ReportMetric(float64(cpu.Microseconds()), "cpu-us/block")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkFullWalk(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := benchStore(b, n)
			defer s.Close()
			var sample []ledger.Block
			for blk, err := range s.Range(context.Background(), 0, 2000) {
				if err != nil {
					b.Fatal(err)
				}
				sample = append(sample, blk)
			}
			// Two comparisons with the bare cryptography. By wall time: the
			// raw rate is measured just before and just after the walk and
			// averaged, so that load from elsewhere on the machine weighs on
			// both sides alike. By CPU time per block, which such load
			// hardly disturbs: the walk's overhead over the crypto itself.
			rawBefore, cpuBefore := rawCryptoRate(sample, 3*time.Second)
			b.ResetTimer()
			start, cpu := time.Now(), cpuTime()
			for range b.N {
				res, err := s.FullWalk(context.Background(), nil, nil)
				if err != nil || res.Verdict.Verdict != ledger.VerdictPass || res.Verdict.RowsChecked != int64(n) || res.Verdict.PayloadsChecked != int64(n) {
					b.Fatalf("walk: %+v %v", res.Verdict, err)
				}
			}
			wall, used := time.Since(start), cpuTime()-cpu
			b.StopTimer()
			rawAfter, cpuAfter := rawCryptoRate(sample, 3*time.Second)
			raw, rawCPU := (rawBefore+rawAfter)/2, (cpuBefore+cpuAfter)/2
			rate := float64(n*b.N) / wall.Seconds()
			walkCPU := used / time.Duration(n*b.N)
			b.ReportMetric(rate, "blocks/s")
			b.ReportMetric(raw, "raw-blocks/s")
			b.ReportMetric(100*rate/raw, "%-of-raw")
			b.ReportMetric(float64(walkCPU.Microseconds()), "cpu-us/block")
			b.ReportMetric(float64(rawCPU.Microseconds()), "raw-cpu-us/block")
			b.ReportMetric(100*float64(rawCPU)/float64(walkCPU), "cpu-%-of-raw")
			b.ReportMetric(used.Seconds()/wall.Seconds(), "cores-busy")
		})
	}
}

func BenchmarkMerkleAppend(b *testing.B) {
	blocks := benchBlocks(1024, testSigners())
	tree := tlog.NewTree()
	nodes := 0
	visit := func(tlog.NodeID, tlog.Hash) { nodes++ }
	b.ResetTimer()
	for i := range b.N {
		tree.Append(tlog.LeafHash(blocks[i%len(blocks)].Leaf()), visit)
	}
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/append")
}

func BenchmarkDurableAppend(b *testing.B) {
	st, _, _ := newStore(b)
	signers := testSigners()
	payload := []byte(`{"action":"EXTERNAL_SEND","decision":"deny"}`)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := st.AppendEntry(context.Background(), ledger.Entry{Kind: "gate_decision", Payload: payload}, signers); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
}

// BenchmarkGroupCommit measures durable appends/s from 1, 8 and 64
// concurrent clients, unbatched (MaxBatch 1: one synced commit per append,
// as before group commit) and with group commit (DefaultMaxBatch), in the
// same run. Every append is acknowledged only once synced; after each run a
// full walk checks that every appended block verifies and the Merkle tree
// covers it.
func BenchmarkGroupCommit(b *testing.B) {
	payload := []byte(`{"town":"case","signer":"A visitor","message":"Signed, durably."}`)
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"unbatched", 1}, {"batched", 0}} {
		for _, clients := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", mode.name, clients), func(b *testing.B) {
				opts := testOptions()
				opts.MaxBatch = mode.maxBatch
				st, _, _ := newStoreWith(b, opts)
				if _, err := st.FullWalk(context.Background(), nil, nil); err != nil {
					b.Fatal(err)
				}
				signers := testSigners()
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range clients {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if _, err := st.AppendEntry(context.Background(), ledger.Entry{Kind: "wall_signature", Payload: payload}, signers); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
				res, err := st.FullWalk(context.Background(), nil, nil)
				if err != nil || !res.Verdict.Pass() || res.Verdict.RowsChecked != 200+int64(b.N) || st.Checkpoint().Size != 200+int64(b.N) {
					b.Fatalf("after %d appends: %+v %v", b.N, res.Verdict, err)
				}
			})
		}
	}
}

func BenchmarkIncrementalVerify(b *testing.B) {
	signers := testSigners()
	blocks := benchBlocks(1001, signers)
	keys := signers.KeySet()
	res, err := ledger.Verify(ledger.Values(blocks[:1]), ledger.Options{Keys: keys})
	if err != nil {
		b.Fatal(err)
	}
	v := res.Verdict
	b.ResetTimer()
	for i := range b.N {
		k := 1 + i%1000
		if k == 1 {
			v = res.Verdict
		}
		if v, err = v.Extend(ledger.VerifyBlock(blocks[k], &blocks[k-1], keys, 0), *v.Checkpoint); err != nil {
			b.Fatal(err)
		}
	}
}
