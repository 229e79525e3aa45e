package main

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/cmd/internal/benchstat"
)

// facts describe the machine and the software of a run.
type facts struct {
	cpu        string
	cores      int
	kernel     string
	goVersion  string // the proofsite binary's toolchain
	commit     string // the proofsite binary's VCS revision
	wrk, nginx string
	loadBefore string // load averages before the servers started
	loadAfter  string // and after the last round
	when       time.Time
}

// machineFacts gathers facts; what cannot be read is "unknown".
func machineFacts(cfg config, wrk, nginx string) facts {
	f := facts{cpu: "unknown", cores: runtime.NumCPU(), kernel: "unknown", goVersion: "unknown", commit: "unknown", when: time.Now().UTC()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				f.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		f.kernel = strings.TrimSpace(string(b))
	}
	if info, err := buildinfo.ReadFile(cfg.bin); err == nil {
		f.goVersion = info.GoVersion
		rev, dirty := "", false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			f.commit = rev[:min(12, len(rev))]
			if dirty {
				f.commit += " (with uncommitted changes)"
			}
		}
	}
	if f.commit == "unknown" { // built with -buildvcs=false: ask git
		if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
			f.commit = strings.TrimSpace(string(out))
			if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
				f.commit += " (with uncommitted changes)"
			}
		}
	}
	// wrk -v prints its version, then its usage, and exits 1.
	out, _ := exec.Command(wrk, "-v").CombinedOutput()
	f.wrk = firstLine(string(out), "")
	if i := strings.Index(f.wrk, " Copyright"); i > 0 {
		f.wrk = f.wrk[:i]
	}
	out, _ = exec.Command(nginx, "-v").CombinedOutput()
	f.nginx = firstLine(string(out), "nginx version: ")
	return f
}

// firstLine returns s's first line without prefix, or "unknown".
func firstLine(s, prefix string) string {
	line, _, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), prefix))
	if line == "" {
		return "unknown"
	}
	return line
}

// writeReport writes the markdown report: the table of medians, every
// round's numbers, and the facts of the run.
func writeReport(w io.Writer, cfg config, sums []summary, targets []*target, f facts) {
	fmt.Fprintf(w, "### HTTP benchmark: wrk on loopback\n\n")
	fmt.Fprintf(w, "`wrk -t%d -c%d -d%s --latency`, %d interleaved rounds after a %s warm-up per target; medians across rounds.\n\n",
		cfg.threads, cfg.connections, cfg.duration, cfg.rounds, cfg.warmup)
	fmt.Fprintln(w, "| target | served by | req/s | p99 | server CPU/req | vs baseline | bar | result |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|---|---|")
	for _, s := range sums {
		// A target with neither a baseline nor a bar of its own is a baseline.
		vs, bar, result := "baseline", "", "PASS"
		if b := s.t.baseline; b != nil {
			vs = fmt.Sprintf("%.2fx %s", s.ratio, b.short)
			bar = fmt.Sprintf("≥ %.2fx", s.t.minRatio)
		} else if s.t.maxP99 > 0 {
			vs = ""
		}
		if s.t.maxP99 > 0 {
			bar = strings.TrimPrefix(bar+", p99 < "+fmtBar(s.t.maxP99), ", ")
		}
		if !s.pass {
			result = "FAIL: " + s.note
		} else if vs == "baseline" {
			result = "(2xx only)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", s.t.label, s.t.server, thousands(s.rps), fmtMillis(s.p99), fmtMicros(s.cpu), vs, bar, result)
	}
	for _, s := range sums {
		if b := s.t.baseline; b != nil && s.t.maxP99 > 0 && medianP99(b.results) >= s.t.maxP99 {
			fmt.Fprintf(w, "\nThe %s baseline's own p99 (%s) is over the %s bar in this run: the latency bar measured the machine, not %s.\n",
				b.short, fmtMillis(medianP99(b.results)), fmtBar(s.t.maxP99), s.t.server)
			break
		}
	}

	fmt.Fprintf(w, "\nEvery round (req/s, p99, share of the machine's CPU other processes used meanwhile):\n\n| target |")
	for r := range cfg.rounds {
		fmt.Fprintf(w, " round %d |", r+1)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("--:|", cfg.rounds))
	for _, t := range targets {
		fmt.Fprintf(w, "| %s (%s) |", t.label, t.server)
		for _, r := range t.results {
			fmt.Fprintf(w, " %s, %s, %s |", thousands(r.RequestsPerSec), fmtMillis(r.P99), fmtShare(r.OthersCPU))
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\n- server CPU/req: the CPU time of the answering server's process group (user and system, garbage collection included; nginx's workers too) over the run, per request, from /proc in 10 ms ticks\n")
	fmt.Fprintf(w, "- `POST %s`: proofsite serve with --post-limit %s (the route's 30 a minute lifted for wrk's one client; the limiter still runs), the offline evaluator; each wrk thread sends in turn the first %s bytes of the %d ordinary texts of cmd/httpbench/evaltexts (a status e-mail, a home-wifi question, a meal plan request, a Python code review)\n",
		evaluatePath, postLimit, thousands(evaluateTextBytes), len(evaluateRequest().bodies))
	fmt.Fprintf(w, "- machine: %s, %d cores, Linux %s; wrk, the servers and the harness share these cores on loopback, nothing pinned\n", f.cpu, f.cores, f.kernel)
	fmt.Fprintf(w, "- load average (1, 5, 15 min): %s before the servers started, %s after the last round\n", f.loadBefore, f.loadAfter)
	var others []float64
	for _, t := range targets {
		for _, r := range t.results {
			if r.OthersCPU >= 0 {
				others = append(others, r.OthersCPU)
			}
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "- other processes used %s of the machine's CPU during a median run (%s at most)\n", fmtShare(benchstat.Median(others)), fmtShare(slices.Max(others)))
	}
	fmt.Fprintf(w, "- proofsite %s built with %s; bare fiber and proofsite both at GOMAXPROCS=%d, prefork off\n", f.commit, f.goVersion, cfg.gomaxprocs)
	fmt.Fprintf(w, "- %s; %s, worker_processes auto, access_log off, sendfile on\n", f.wrk, f.nginx)
	fmt.Fprintf(w, "- run at %s\n", f.when.Format(time.RFC3339))
}

// fmtShare prints a share as a percentage, or "n/a" when negative.
func fmtShare(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", v*100)
}

// fmtBar prints a latency bar in milliseconds: "10 ms".
func fmtBar(d time.Duration) string {
	return fmt.Sprintf("%g ms", float64(d)/float64(time.Millisecond))
}

// fmtMicros prints a CPU time per request in microseconds: "412 µs".
func fmtMicros(d time.Duration) string {
	return thousands(float64(d)/float64(time.Microsecond)) + " µs"
}

// fmtMillis prints a latency in milliseconds: "8.21 ms".
func fmtMillis(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// thousands prints a rate rounded to a whole number with thousands
// separators: "33,665".
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
