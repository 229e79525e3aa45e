package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/proofsite/proofsite/cmd/sitebench/corpus"
)

// Limits of the incremental phase.
const (
	startTimeout  = 5 * time.Minute  // first build of the live server
	warmupEdits   = 2                // edits before the measured ones, not counted
	warmupTries   = 5                // attempts per warm-up edit (the watch may start after the first output)
	warmupTimeout = 5 * time.Second  // first warm-up attempt; each retry waits twice as long
	stopGrace     = 10 * time.Second // between SIGINT and SIGKILL
)

// liveTool is one long-running generator of the incremental phase: it
// builds, then watches its sources and rewrites outputs as they change.
type liveTool struct {
	name   string
	mode   string                      // how it runs, for the report
	out    string                      // output folder, moved aside before the start (clearOutput)
	ready  string                      // output file whose existence means the first build is done
	source func(name string) string    // source file of generated page name
	check  func(context.Context) error // returns nil when the tool can run here
	// command returns the command line and, for a server measured with a
	// browser open on it, the URL to request once the first build is done;
	// cache is a fresh, empty folder.
	command func(cache string) (cmd *exec.Cmd, openURL string, err error)
}

// liveResult is the incremental phase of one tool.
type liveResult struct {
	Tool      string
	Mode      string
	Latencies []time.Duration // measured edits, in order
	Startup   time.Duration   // from start to the first build's output
	MaxRSS    int64           // peak RSS of the server over the session, KiB
	Skipped   string          // why the tool was not measured, if it was not
	Err       error           // the session failed; Latencies holds what was measured
}

// liveTools are proofsite watch and Hugo's server. Hugo 0.111 turns its fast
// render mode off together with live reload (commands/commandeer.go:
// fastRenderMode = doLiveReload && !disableFastRender), so Hugo is measured
// as an editor uses it: live reload on, and a browser on the home page (one
// request after the first build). With cfg.hugoNoFast it is measured once
// more with --disableLiveReload.
func liveTools(cfg config, ws *workspace) []liveTool {
	hugoCheck := func(ctx context.Context) error { return exec.CommandContext(ctx, cfg.hugo, "version").Run() }
	hugoServer := func(cache string, extra ...string) (*exec.Cmd, string, error) {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		args := append([]string{"server", "--renderToDisk", "-s", ws.hugoSite, "-d", ws.hugoOut,
			"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--cacheDir", cache}, extra...)
		return exec.Command(cfg.hugo, args...), "http://127.0.0.1:" + strconv.Itoa(port) + "/", nil
	}
	tools := []liveTool{
		{
			name: "proofsite", mode: "proofsite watch", out: ws.psOut, ready: "llms.txt", source: ws.proofsitePage,
			check: func(ctx context.Context) error { return hasWatch(ctx, cfg.proofsite) },
			command: func(string) (*exec.Cmd, string, error) {
				return exec.Command(cfg.proofsite, "watch", "--content", ws.psContent, "--out", ws.psOut, "--data", ws.psData, "--addr", "127.0.0.1:0"), "", nil
			},
		},
		{
			name: "hugo", mode: "hugo server --renderToDisk (fast render, live reload, home page open)",
			out: ws.hugoOut, ready: "sitemap.xml", source: ws.hugoPage, check: hugoCheck,
			command: func(cache string) (*exec.Cmd, string, error) { return hugoServer(cache) },
		},
	}
	if cfg.hugoNoFast {
		tools = append(tools, liveTool{
			name: "hugo-nofast", mode: "hugo server --renderToDisk --disableLiveReload (no fast render)",
			out: ws.hugoOut, ready: "sitemap.xml", source: ws.hugoPage, check: hugoCheck,
			command: func(cache string) (*exec.Cmd, string, error) {
				cmd, _, err := hugoServer(cache, "--disableLiveReload")
				return cmd, "", err
			},
		})
	}
	return tools
}

// hasWatch reports whether the proofsite binary has a watch command.
func hasWatch(ctx context.Context, bin string) error {
	out, err := exec.CommandContext(ctx, bin, "help").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s help: %w", bin, err)
	}
	if !bytes.Contains(out, []byte("watch")) {
		return errors.New("this proofsite has no watch command yet")
	}
	return nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// measureLive starts the tool's live server on ws, waits for its first
// build, makes warm-up edits and then cfg.edits measured ones, and stops it.
func measureLive(ctx context.Context, cfg config, ws *workspace, t liveTool, log *slog.Logger) liveResult {
	res := liveResult{Tool: t.name, Mode: t.mode}
	if err := t.check(ctx); err != nil {
		res.Skipped = err.Error()
		log.Warn("incremental phase skipped", "tool", t.name, "reason", res.Skipped)
		return res
	}
	if err := ws.clearOutput(t.out); err != nil {
		res.Err = err
		return res
	}
	cache, err := os.MkdirTemp(ws.caches, t.name+"-live-")
	if err != nil {
		res.Err = err
		return res
	}
	defer os.RemoveAll(cache)
	settle()
	cmd, openURL, err := t.command(cache)
	if err != nil {
		res.Err = err
		return res
	}
	logFile := filepath.Join(ws.dir, t.name+"-live.log")
	start := time.Now()
	if err := startQuiet(cmd, logFile); err != nil {
		res.Err = err
		return res
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	log.Info("live server started", "tool", t.name, "cmd", commandLine(cmd), "log", logFile)

	s := &session{cfg: cfg, ws: ws, t: t, openURL: openURL, exited: exited, log: log}
	res.Latencies, res.Startup, res.Err = s.run(ctx, start)
	stopProcess(ctx, cmd, exited, stopGrace)
	res.MaxRSS = maxRSS(cmd.ProcessState)
	if res.Err != nil {
		res.Err = fmt.Errorf("%w (log: %s)", res.Err, logFile)
	}
	return res
}

// session is one live server being measured.
type session struct {
	cfg     config
	ws      *workspace
	t       liveTool
	openURL string // requested once after the first build, "" for none
	exited  <-chan struct{}
	log     *slog.Logger
	edits   int // edits made so far, for unique markers
}

func (s *session) run(ctx context.Context, start time.Time) (lat []time.Duration, startup time.Duration, err error) {
	if err := s.awaitFirstBuild(ctx); err != nil {
		return nil, 0, err
	}
	startup = time.Since(start)
	s.log.Info("first build done", "tool", s.t.name, "ms", startup.Milliseconds())
	if s.openURL != "" {
		if err := s.open(ctx); err != nil {
			return nil, startup, err
		}
	}

	n := len(s.ws.pages)
	for w := range warmupEdits {
		if err := s.warmup(ctx, s.ws.pages[(n/2+w)%n]); err != nil {
			return nil, startup, err
		}
	}
	for k := range s.cfg.edits {
		// Distinct pages spread over the corpus.
		p := s.ws.pages[(k*7919+41)%n]
		time.Sleep(s.cfg.spacing)
		d, err := s.edit(ctx, p, s.cfg.editTimeout)
		if err != nil {
			return lat, startup, fmt.Errorf("edit %d (%s): %w", k+1, p.Name, err)
		}
		s.log.Info("edit", "tool", s.t.name, "page", p.Name, "ms", float64(d)/float64(time.Millisecond))
		lat = append(lat, d)
	}
	return lat, startup, nil
}

// awaitFirstBuild waits until the ready file exists.
func (s *session) awaitFirstBuild(ctx context.Context) error {
	ready := filepath.Join(s.t.out, filepath.FromSlash(s.t.ready))
	deadline := time.Now().Add(startTimeout)
	for {
		if _, err := os.Stat(ready); err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%w before its first build was done", errExited)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %s", ready, startTimeout)
		}
	}
}

// open requests openURL as a browser would, retrying while the server is not
// listening yet.
func (s *session) open(ctx context.Context) error {
	var err error
	for range 100 {
		var req *http.Request
		if req, err = http.NewRequestWithContext(ctx, http.MethodGet, s.openURL, nil); err != nil {
			return err
		}
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", s.openURL, resp.Status)
		}
		select {
		case <-s.exited:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

// warmup makes one edit that is not measured, retrying in case the server
// was still setting up its watch when the first build's output appeared.
// Each retry waits twice as long as the one before, so a server whose every
// rebuild is slow (Hugo re-rendering 5,000 pages) is not chased by edits
// that restart its rebuild.
func (s *session) warmup(ctx context.Context, p corpus.Page) error {
	var err error
	timeout := cmp.Or(s.cfg.firstWarmup, warmupTimeout)
	for range warmupTries {
		time.Sleep(s.cfg.spacing)
		if _, err = s.edit(ctx, p, timeout); !errors.Is(err, errEditTimeout) {
			return err
		}
		timeout *= 2
	}
	return fmt.Errorf("warm-up edit of %s: %w", p.Name, err)
}

// edit rewrites page p in place with a unique marker and returns the time
// until its output is complete and holds the marker.
func (s *session) edit(ctx context.Context, p corpus.Page, timeout time.Duration) (time.Duration, error) {
	rel, err := findPageOutput(s.t.out, p.Name)
	if err != nil {
		return 0, err
	}
	s.edits++
	marker := fmt.Sprintf("sitebench-%s-%d-%s", s.t.name, s.edits, strconv.FormatInt(time.Now().UnixNano(), 36))
	data := p.WithMarker(marker).File()
	w := newOutputWatch(filepath.Join(s.t.out, filepath.FromSlash(rel)))
	defer w.Close()

	start := time.Now()
	if err := os.WriteFile(s.t.source(p.Name), data, 0o644); err != nil {
		return 0, err
	}
	done, err := w.wait(ctx, marker, start.Add(timeout), s.exited)
	if err != nil {
		return 0, err
	}
	return done.Sub(start), nil
}
