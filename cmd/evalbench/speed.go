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

// speed measures latency one text at a time, then throughput with one
// worker per core.
func speed(ctx context.Context, ev *eval.Evaluator, corpus []quality.Sample, d time.Duration, w io.Writer) error {
	texts := texts2K(corpus)
	if len(texts) == 0 {
		return fmt.Errorf("the corpus makes no %d-byte text", textBytes)
	}
	for _, t := range texts[:min(len(texts), 50)] { // warm up
		if _, err := ev.Evaluate(ctx, t); err != nil {
			return err
		}
	}
	var lat []time.Duration
	for start, i := time.Now(), 0; time.Since(start) < d; i++ {
		t0 := time.Now()
		if _, err := ev.Evaluate(ctx, texts[i%len(texts)]); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
	}
	workers := runtime.GOMAXPROCS(0)
	var done atomic.Int64
	var wg sync.WaitGroup
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
	rate := float64(done.Load()) / time.Since(start).Seconds()
	fmt.Fprintf(w, "### Speed (rough: the machine may be shared)\n\n")
	fmt.Fprintf(w, "Evaluate of %d distinct %d-byte texts from the corpus, offline stages.\n\n", len(texts), textBytes)
	fmt.Fprintf(w, "| measure | value | target |\n|---|--:|---|\n")
	fmt.Fprintf(w, "| one at a time: p50 | %v | |\n", benchstat.Percentile(lat, 50).Round(time.Microsecond))
	fmt.Fprintf(w, "| one at a time: p99 | %v | <= 2ms |\n", benchstat.Percentile(lat, 99).Round(time.Microsecond))
	fmt.Fprintf(w, "| %d workers (GOMAXPROCS): texts/s | %.0f | >= 5,000 |\n\n", workers, rate)
	return nil
}
