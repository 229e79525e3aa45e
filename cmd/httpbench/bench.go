package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// bench is one whole run: tools, work folder, site, servers, warm-up,
// rounds, report. It reports whether every target passed.
func bench(ctx context.Context, cfg config, stdout, stderr io.Writer) (bool, error) {
	wrk, err := exec.LookPath(cfg.wrk)
	if err != nil {
		return false, fmt.Errorf("wrk not found (%s); install it: apt-get install -y wrk", cfg.wrk)
	}
	nginx, err := findNginx(cfg.nginx)
	if err != nil {
		return false, err
	}
	w, err := newWorkDirs(cfg.work)
	if err != nil {
		return false, fmt.Errorf("work folder: %w", err)
	}
	fmt.Fprintf(stderr, "httpbench: preparing a ledger and a built site in %s\n", w.root)
	if err := prepare(ctx, cfg, w); err != nil {
		return false, err
	}
	loadBefore := loadAvg()
	srv, stop, err := startServers(ctx, cfg, w, nginx, stderr)
	defer stop()
	if err != nil {
		return false, err
	}
	targets, err := selectTargets(newTargets(srv), cfg.only)
	if err != nil {
		return false, err
	}
	for _, t := range targets {
		if t.post != nil {
			t.script = filepath.Join(w.root, t.name+".lua")
			if err := os.WriteFile(t.script, []byte(t.post.luaScript()), 0o644); err != nil {
				return false, err
			}
		}
	}
	if err := preflight(ctx, targets); err != nil {
		return false, err
	}
	if err := measure(ctx, cfg, wrk, w, targets, stderr); err != nil {
		return false, err
	}
	f := machineFacts(cfg, wrk, nginx)
	f.loadBefore, f.loadAfter = loadBefore, loadAvg()
	var sums []summary
	pass := true
	for _, t := range targets {
		s := summarize(t)
		pass = pass && s.pass
		sums = append(sums, s)
	}
	var report bytes.Buffer
	writeReport(&report, cfg, sums, targets, f)
	stdout.Write(report.Bytes())
	out := filepath.Join(w.root, "results.md")
	if err := os.WriteFile(out, report.Bytes(), 0o644); err != nil {
		return false, err
	}
	fmt.Fprintf(stderr, "httpbench: table written to %s\n", out)
	return pass, nil
}

// startServers starts proofsite, the bare fiber handler and nginx, each on
// a loopback port of its own, and waits until each answers. stop stops
// whatever was started, also when err is not nil.
func startServers(ctx context.Context, cfg config, w workDirs, nginx string, stderr io.Writer) (s servers, stop func(), err error) {
	var procs []*proc
	stop = func() {
		for i := len(procs) - 1; i >= 0; i-- {
			if err := procs[i].stop(10 * time.Second); err != nil {
				fmt.Fprintf(stderr, "httpbench: %v\n", err)
			}
		}
	}
	ports, err := freePorts(4)
	if err != nil {
		return s, stop, err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	s = servers{proofsite: server{url: "http://" + addr(0)}, bare: server{url: "http://" + addr(1)}, nginx: server{url: "http://" + addr(2)},
		chat: server{url: "http://" + addr(3)}}

	// Both Go servers get the same GOMAXPROCS, whatever the environment says.
	goEnv := append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(cfg.gomaxprocs))
	self, err := os.Executable()
	if err != nil {
		return s, stop, err
	}
	conf := filepath.Join(w.nginx, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(w.nginx, w.public, ports[2], os.Geteuid() == 0)), 0o644); err != nil {
		return s, stop, err
	}
	for _, sv := range []struct {
		name  string
		srv   *server
		env   []string
		argv  []string
		ready string
		wait  time.Duration
	}{
		{"proofsite", &s.proofsite, goEnv, []string{cfg.bin, "serve", "--data", w.data, "--public", w.public, "--content", cfg.content, "--addr", addr(0), "--post-limit", postLimit},
			s.proofsite.url + "/api/health", time.Minute},
		{"bare-fiber", &s.bare, goEnv, []string{self, bareFiberCmd, "--addr", addr(1)}, s.bare.url + barePath, 10 * time.Second},
		{"chat-edge", &s.chat, goEnv, []string{self, chatEdgeCmd, "--addr", addr(3), "--data", w.chat, "--public", w.public, "--content", cfg.content},
			s.chat.url + "/api/health", time.Minute},
		{"nginx", &s.nginx, os.Environ(), nginxArgv(nginx, w.nginx, conf), s.nginx.url + pagePath, 10 * time.Second},
	} {
		p, err := startProc(sv.name, filepath.Join(w.logs, sv.name+".log"), sv.env, sv.argv...)
		if err != nil {
			return s, stop, err
		}
		procs = append(procs, p)
		sv.srv.pgid = p.pgid()
		if err := p.waitReady(ctx, sv.ready, sv.wait); err != nil {
			return s, stop, err
		}
	}
	fmt.Fprintf(stderr, "httpbench: proofsite on %s, bare fiber on %s, nginx on %s (GOMAXPROCS=%d for both Go servers)\n",
		s.proofsite.url, s.bare.url, s.nginx.url, cfg.gomaxprocs)
	return s, stop, nil
}

// preflight checks that every target answers 200 itself (not through a
// redirect, which wrk would count as a success), every body of a POST
// target, and that both servers of the static page send the very bytes
// that were written.
func preflight(ctx context.Context, targets []*target) error {
	client := &http.Client{
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	want := staticPage()
	check := func(t *target, body io.Reader) error {
		method := http.MethodGet
		if t.post != nil {
			method = http.MethodPost
		}
		req, err := http.NewRequestWithContext(ctx, method, t.url, body)
		if err != nil {
			return err
		}
		if t.post != nil {
			for _, h := range t.post.headers {
				req.Header.Set(h[0], h[1])
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("preflight %s: %w", t.name, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			return fmt.Errorf("preflight %s: %w", t.name, err)
		case resp.StatusCode != http.StatusOK:
			return fmt.Errorf("preflight %s: %s answered %s", t.name, t.url, resp.Status)
		case t.static && !bytes.Equal(got, want):
			return fmt.Errorf("preflight %s: %s is not the %d-byte page that was written (%d bytes)", t.name, t.url, len(want), len(got))
		}
		return nil
	}
	for _, t := range targets {
		if t.post == nil {
			if err := check(t, http.NoBody); err != nil {
				return err
			}
			continue
		}
		for _, body := range t.post.bodies {
			if err := check(t, strings.NewReader(body)); err != nil {
				return err
			}
		}
	}
	return nil
}

// measure warms every target up, then loads each in turn for cfg.rounds
// rounds. Each round starts one target later than the one before, so no
// target always runs right after the same neighbour. Every wrk report is
// kept in the logs folder.
func measure(ctx context.Context, cfg config, wrk string, w workDirs, targets []*target, stderr io.Writer) error {
	load := func(t *target, d time.Duration, tag string) (wrkResult, error) {
		before, statErr := readCPUStat()
		serverBefore := groupTicks(t.pgid)
		res, out, wrkCPU, err := runWrk(ctx, wrk, wrkRun{threads: cfg.threads, connections: cfg.connections, duration: d, url: t.url, script: t.script})
		serverTicks := groupTicks(t.pgid) - serverBefore
		res.ServerCPU, res.OthersCPU = time.Duration(serverTicks)*clockTick, -1
		if after, err := readCPUStat(); err == nil && statErr == nil {
			res.OthersCPU = othersShare(before, after, serverTicks+int64(wrkCPU/clockTick))
		}
		if werr := os.WriteFile(filepath.Join(w.logs, "wrk-"+tag+"-"+t.name+".txt"), []byte(out), 0o644); werr != nil && err == nil {
			err = werr
		}
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		return res, err
	}
	if cfg.warmup > 0 {
		fmt.Fprintf(stderr, "httpbench: warming up each target for %s\n", cfg.warmup)
		for _, t := range targets {
			if _, err := load(t, cfg.warmup, "warmup"); err != nil {
				return err
			}
		}
	}
	for r := range cfg.rounds {
		for i := range targets {
			t := targets[(i+r)%len(targets)]
			res, err := load(t, cfg.duration, "round"+strconv.Itoa(r+1))
			if err != nil {
				return err
			}
			t.results = append(t.results, res)
			errs := ""
			if !res.clean() {
				errs = fmt.Sprintf("  (%d non-2xx, %d socket errors)", res.Non2xx, res.SocketErrors)
			}
			fmt.Fprintf(stderr, "httpbench: round %d/%d %-17s %9.0f req/s  p99 %-10s others %s%s\n",
				r+1, cfg.rounds, t.name, res.RequestsPerSec, fmtMillis(res.P99), fmtShare(res.OthersCPU), errs)
		}
	}
	return nil
}

// loadAvg returns the 1, 5 and 15 minute load averages, or "unknown".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
