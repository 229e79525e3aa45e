package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/proofsite/proofsite/cmd/internal/benchstat"
	"github.com/proofsite/proofsite/live/eval"
	"github.com/proofsite/proofsite/live/eval/quality"
)

// textBytes is the size of the texts the speed measurement evaluates.
const textBytes = 2048

// texts2K assembles 2 KB texts from the corpus: consecutive samples joined
// until the size is reached, then cut at a character boundary.
func texts2K(samples []quality.Sample) []string {
	var out []string
	var b strings.Builder
	for _, s := range samples {
		b.WriteString(s.Text)
		b.WriteString("\n\n")
		if b.Len() >= textBytes {
			t := b.String()[:textBytes]
			for !utf8.ValidString(t) { // cut inside a character
				t = t[:len(t)-1]
			}
			out = append(out, t)
			b.Reset()
		}
	}
	return out
}

// speed measures two mixes of 2 KB texts: benign ones (ordinary traffic)
// and the dev split as it comes (two thirds attacks, many obfuscated: a
// worst case, where most patterns' prefilters pass).
func speed(ctx context.Context, ev *eval.Evaluator, corpus []quality.Sample, d time.Duration, w io.Writer) error {
	var benign []quality.Sample
	for _, s := range corpus {
		if s.Label == quality.Benign {
			benign = append(benign, s)
		}
	}
	fmt.Fprintf(w, "### Speed (rough: the machine may be shared)\n\n")
	fmt.Fprintf(w, "Evaluate of %d-byte texts assembled from the dev split, offline stages.\n\n", textBytes)
	fmt.Fprintf(w, "| texts | one at a time: p50 | p99 | %d workers: texts/s | CPU per text | texts/s on %d idle cores (from CPU per text) |\n|---|--:|--:|--:|--:|--:|\n", runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0))
	for _, mix := range []struct {
		name    string
		samples []quality.Sample
	}{{"benign", benign}, {"dev split as it comes (2/3 attacks)", corpus}} {
		texts := texts2K(mix.samples)
		if len(texts) == 0 {
			return fmt.Errorf("the corpus makes no %d-byte text", textBytes)
		}
		p50, p99, rate, cpu, err := measureSpeed(ctx, ev, texts, d)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s (%d distinct) | %v | %v | %.0f | %v | %.0f |\n", mix.name, len(texts), p50.Round(time.Microsecond),
			p99.Round(time.Microsecond), rate, cpu.Round(time.Microsecond), float64(runtime.GOMAXPROCS(0))/cpu.Seconds())
	}
	fmt.Fprintf(w, "\nTargets: p99 <= 2 ms, >= 5,000 texts/s on this 2-core machine. Wall-clock figures suffer when other\n"+
		"processes share the cores; CPU per text (process CPU time over the throughput run, garbage collection\n"+
		"included) does much less, and the last column is what it implies for idle cores.\n\n")
	return nil
}

// measureSpeed evaluates texts one at a time for d (latency), then with
// one worker per core for d (throughput).
func measureSpeed(ctx context.Context, ev *eval.Evaluator, texts []string, d time.Duration) (p50, p99 time.Duration, rate float64, cpu time.Duration, err error) {
	for _, t := range texts[:min(len(texts), 50)] { // warm up
		if _, err := ev.Evaluate(ctx, t); err != nil {
			return 0, 0, 0, 0, err
		}
	}
	var lat []time.Duration
	for start, i := time.Now(), 0; time.Since(start) < d; i++ {
		t0 := time.Now()
		if _, err := ev.Evaluate(ctx, texts[i%len(texts)]); err != nil {
			return 0, 0, 0, 0, err
		}
		lat = append(lat, time.Since(t0))
	}
	workers := runtime.GOMAXPROCS(0)
	var done atomic.Int64
	var wg sync.WaitGroup
	cpu0 := processCPU()
	start := time.Now()
	for k := range workers {
		wg.Go(func() {
			for i := k; time.Since(start) < d; i += workers {
				if _, err := ev.Evaluate(ctx, texts[i%len(texts)]); err != nil {
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	rate = float64(done.Load()) / time.Since(start).Seconds()
	cpu = (processCPU() - cpu0) / time.Duration(max(done.Load(), 1))
	return benchstat.Percentile(lat, 50), benchstat.Percentile(lat, 99), rate, cpu, nil
}
