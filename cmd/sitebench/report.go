package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/proofsite/proofsite/cmd/internal/benchstat"
)

// Targets of issue 3.
const (
	targetWallRatio   = 0.5                   // full build wall time, proofsite / hugo
	targetRSSRatio    = 1.0                   // full build peak RSS, proofsite / hugo
	targetIncremental = 20 * time.Millisecond // proofsite single-page incremental median
)

// report collects the measurements and prints them as markdown.
type report struct {
	cfg       config
	facts     facts
	full      []fullResult
	live      []liveResult
	livePages int
}

// write prints the report. The first error of the writer is returned.
func (r *report) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }

	p("# proofsite vs Hugo: build speed")
	p("")
	r.writeMachine(p)
	if len(r.full) > 0 {
		r.writeFull(p)
	}
	if len(r.live) > 0 {
		r.writeLive(p)
	}
	r.writeTargets(p)
	p("## How it was measured")
	p("")
	for _, n := range fairnessNotes {
		p("- %s", n)
	}
	p("")
	return bw.Flush()
}

type printer func(format string, args ...any)

func (r *report) writeMachine(p printer) {
	f := r.facts
	p("## Machine")
	p("")
	p("| | |")
	p("|---|---|")
	p("| Date (UTC) | %s |", f.Date)
	p("| CPU | %s |", f.CPU)
	p("| Cores | %d |", f.Cores)
	p("| Memory | %s |", f.Memory)
	p("| OS | %s |", f.Kernel)
	p("| Go | %s |", f.Go)
	p("| Hugo | %s |", orUnknown(f.Hugo))
	p("| proofsite | commit %s |", f.Proofsite)
	p("| Load average at start / end | %s / %s |", f.Load, f.LoadAfter)
	p("| Work folder | %s; creating a 4 KiB file takes %s |", f.Work, micros(f.CreateCost))
	p("")
}

func (r *report) writeFull(p printer) {
	p("## Full build")
	p("")
	p("Generated pages added to the project's content; median of %d runs per tool, interleaved, after one warm-up each.", r.cfg.runs)
	p("proofsite also reads, verifies and publishes its chain (the content's history, sealed by \"proofsite ledger init\") as the explorer, one page per block; Hugo's site has no such pages.")
	p("")
	p("| Pages | Tool | Wall (median) | Wall (min–max) | CPU user+sys (median) | Peak RSS (median) | Output files |")
	p("|---:|---|---:|---:|---:|---:|---:|")
	for _, fr := range r.full {
		for _, tool := range fr.Tools {
			wall, cpu, rss := fr.series(tool)
			sw := summarize(wall)
			p("| %s | %s | %s | %s–%s | %s | %s | %s |", thousands(fr.Pages), tool, ms(sw.Median), ms(sw.Min), ms(sw.Max),
				ms(benchstat.Median(cpu)), mib(benchstat.Median(rss)), thousands(fr.Files[tool]))
		}
		if wr, cr, rr, ok := fr.ratios(); ok {
			p("| %s | **proofsite / hugo** | **%s** | | %s | **%s** | |", thousands(fr.Pages), times(wr), times(cr), times(rr))
		}
	}
	p("")
}

func (r *report) writeLive(p printer) {
	p("## Incremental rebuild")
	p("")
	p("One page's body rewritten in place in a %s-page site; time until its HTML is complete on disk with the edit. %d warm-up edits, then the measured ones, %s apart.",
		thousands(r.livePages), warmupEdits, r.cfg.spacing)
	p("")
	p("| Tool | Mode | Edits | Median | Min | p90 | Max | Start to first output | Peak RSS |")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, lr := range r.live {
		switch {
		case lr.Skipped != "":
			p("| %s | %s | – | not measured: %s | | | | | |", lr.Tool, lr.Mode, lr.Skipped)
			continue
		case len(lr.Latencies) == 0 && lr.Err != nil:
			p("| %s | %s | – | failed: %s | | | | | |", lr.Tool, lr.Mode, oneLine(lr.Err))
			continue
		}
		s := summarize(lr.Latencies)
		p("| %s | %s | %d | %s | %s | %s | %s | %s | %s |", lr.Tool, lr.Mode, s.N, ms(s.Median), ms(s.Min), ms(s.P90), ms(s.Max), ms(lr.Startup), mib(lr.MaxRSS))
		if lr.Err != nil {
			p("| %s | | | then failed: %s | | | | | |", lr.Tool, oneLine(lr.Err))
		}
	}
	p("")
}

func (r *report) writeTargets(p printer) {
	p("## Targets")
	p("")
	p("| Target | Measured | Result |")
	p("|---|---|---|")
	for _, fr := range r.full {
		wr, _, rr, ok := fr.ratios()
		if !ok {
			continue
		}
		pw, _, pr := fr.medians("proofsite")
		hw, _, hr := fr.medians("hugo")
		p("| Full build, %s pages: wall ≤ %.1f× Hugo's | %s (%s vs %s) | %s |", thousands(fr.Pages), targetWallRatio,
			times(wr), ms(pw), ms(hw), verdict(wr <= targetWallRatio))
		p("| Full build, %s pages: peak RSS ≤ Hugo's | %s (%s vs %s) | %s |", thousands(fr.Pages),
			times(rr), mib(pr), mib(hr), verdict(rr <= targetRSSRatio))
	}
	if len(r.live) > 0 {
		hugo := "not measured"
		if h, ok := r.liveMedian("hugo"); ok {
			hugo = ms(h) + " in fast render mode"
		}
		if h, ok := r.liveMedian("hugo-nofast"); ok {
			hugo += ", " + ms(h) + " without"
		}
		if m, ok := r.liveMedian("proofsite"); ok {
			p("| Incremental single-page rebuild, median ≤ %s | %s (Hugo: %s) | %s |", ms(targetIncremental), ms(m), hugo, verdict(m <= targetIncremental))
		} else {
			p("| Incremental single-page rebuild, median ≤ %s | not measured (Hugo: %s) | – |", ms(targetIncremental), hugo)
		}
	}
	p("")
}

// liveMedian returns the median latency of tool's complete session.
func (r *report) liveMedian(tool string) (time.Duration, bool) {
	for _, lr := range r.live {
		if lr.Tool == tool && lr.Err == nil && len(lr.Latencies) > 0 {
			return benchstat.Median(lr.Latencies), true
		}
	}
	return 0, false
}

// series returns tool's wall times, CPU times and peak RSS.
func (fr fullResult) series(tool string) (wall, cpu []time.Duration, rss []int64) {
	for _, s := range fr.Samples[tool] {
		wall, cpu, rss = append(wall, s.Wall), append(cpu, s.CPU), append(rss, s.MaxRSS)
	}
	return wall, cpu, rss
}

func (fr fullResult) medians(tool string) (wall, cpu time.Duration, rss int64) {
	w, c, r := fr.series(tool)
	return benchstat.Median(w), benchstat.Median(c), benchstat.Median(r)
}

// ratios returns proofsite's medians over Hugo's: wall, CPU and peak RSS.
func (fr fullResult) ratios() (wall, cpu, rss float64, ok bool) {
	pw, pc, pr := fr.medians("proofsite")
	hw, hc, hr := fr.medians("hugo")
	if hw == 0 || hc == 0 || hr == 0 {
		return 0, 0, 0, false
	}
	return float64(pw) / float64(hw), float64(pc) / float64(hc), float64(pr) / float64(hr), true
}

func verdict(pass bool) string {
	if pass {
		return "**PASS**"
	}
	return "**FAIL**"
}

func micros(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + " µs" }

func times(x float64) string { return fmtFloat(x, 2) + "×" }

// mib formats a KiB count in MiB.
func mib(kib int64) string { return fmtFloat(float64(kib)/1024, 1) + " MiB" }

func fmtFloat(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// thousands formats n with thin separators: 5,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// oneLine keeps an error message inside a table cell.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
