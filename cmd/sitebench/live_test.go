package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/cmd/sitebench/corpus"
)

// Environment of the fake live server the test binary turns into.
const (
	fakeSrcEnv  = "SITEBENCH_FAKE_SRC"  // folder of generated pages to watch
	fakeOutEnv  = "SITEBENCH_FAKE_OUT"  // output folder
	fakeExitEnv = "SITEBENCH_FAKE_EXIT" // exit at once with this message
	fakeLateEnv = "SITEBENCH_FAKE_LATE" // start watching this long after the first output
)

// TestMain lets the test binary stand in for a live server, so the
// incremental phase can be tested without proofsite watch or Hugo.
func TestMain(m *testing.M) {
	if msg := os.Getenv(fakeExitEnv); msg != "" {
		os.Stderr.WriteString(msg + "\n")
		os.Exit(3)
	}
	if src := os.Getenv(fakeSrcEnv); src != "" {
		late, _ := time.ParseDuration(os.Getenv(fakeLateEnv))
		os.Exit(fakeServer(src, os.Getenv(fakeOutEnv), late))
	}
	os.Exit(m.Run())
}

// fakeServer polls src every 2 ms and renders each changed NAME.md into
// out/pages/gen/NAME.html, written in place in two parts as Hugo writes, the
// edit's text in the first. It writes out/ready after its first pass and
// runs until interrupted. Edits made within late of the first output are
// missed, as a watch that starts after the first build misses them.
func fakeServer(src, out string, late time.Duration) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	gen := filepath.Join(out, "pages", "gen")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		return 1
	}
	type stamp struct {
		mod  time.Time
		size int64
	}
	seen := map[string]stamp{}
	render := func() {
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				continue
			}
			st := stamp{info.ModTime(), info.Size()}
			if seen[e.Name()] == st {
				continue
			}
			seen[e.Name()] = st
			data, _ := os.ReadFile(filepath.Join(src, e.Name()))
			f, err := os.Create(filepath.Join(gen, strings.TrimSuffix(e.Name(), ".md")+".html"))
			if err != nil {
				continue
			}
			f.WriteString("<html><body>\n")
			f.Write(data)
			time.Sleep(time.Millisecond)
			f.WriteString("</body></html>\n")
			f.Close()
		}
	}
	render()
	os.WriteFile(filepath.Join(out, "ready"), nil, 0o644)
	if late > 0 {
		time.Sleep(late)
		clear(seen)
		for _, e := range must(os.ReadDir(src)) {
			if info, err := e.Info(); err == nil {
				seen[e.Name()] = stamp{info.ModTime(), info.Size()}
			}
		}
	}
	tick := time.NewTicker(2 * time.Millisecond)
	for {
		select {
		case <-sig:
			return 0
		case <-tick.C:
			render()
		}
	}
}

func must[T any](v T, _ error) T { return v }

// fakeWorkspace is a workspace with only generated pages, in src/.
func fakeWorkspace(t *testing.T) *workspace {
	t.Helper()
	dir := t.TempDir()
	ws := &workspace{pages: corpus.Generate(1, 20), dir: dir, caches: filepath.Join(dir, "cache")}
	if err := corpus.Write(filepath.Join(dir, "src"), ws.pages); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(ws.caches, 0o755)
	return ws
}

func fakeTool(ws *workspace, env ...string) liveTool {
	src, out := filepath.Join(ws.dir, "src"), filepath.Join(ws.dir, "out")
	return liveTool{
		name: "fake", mode: "test double", out: out, ready: "ready",
		source: func(name string) string { return filepath.Join(src, name+".md") },
		check:  func(context.Context) error { return nil },
		command: func(string) (*exec.Cmd, string, error) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), append([]string{fakeSrcEnv + "=" + src, fakeOutEnv + "=" + out}, env...)...)
			return cmd, "", nil
		},
	}
}

func testConfig() config {
	return config{edits: 3, spacing: 5 * time.Millisecond, editTimeout: 30 * time.Second, firstWarmup: 100 * time.Millisecond}
}

func TestMeasureLive(t *testing.T) {
	ws := fakeWorkspace(t)
	res := measureLive(context.Background(), testConfig(), ws, fakeTool(ws), slog.New(slog.DiscardHandler))
	if res.Err != nil || res.Skipped != "" {
		t.Fatalf("err %v, skipped %q", res.Err, res.Skipped)
	}
	if len(res.Latencies) != 3 {
		t.Errorf("%d latencies, want 3", len(res.Latencies))
	}
	for _, d := range res.Latencies {
		if d <= 0 {
			t.Errorf("latency %v", d)
		}
	}
	if res.MaxRSS <= 0 || res.Startup <= 0 {
		t.Errorf("peak RSS %d KiB, startup %v", res.MaxRSS, res.Startup)
	}
	// The edits reached the sources: the last measured page holds a marker.
	p := ws.pages[(2*7919+41)%len(ws.pages)]
	data, _ := os.ReadFile(filepath.Join(ws.dir, "src", p.Name+".md"))
	if !strings.Contains(string(data), "sitebench-fake-") {
		t.Errorf("%s was not edited", p.Name)
	}
}

// TestMeasureLiveLateWatch: the server misses the edits made right after
// its first output; the warm-up retries until one gets through.
func TestMeasureLiveLateWatch(t *testing.T) {
	ws := fakeWorkspace(t)
	res := measureLive(context.Background(), testConfig(), ws, fakeTool(ws, fakeLateEnv+"=300ms"), slog.New(slog.DiscardHandler))
	if res.Err != nil || len(res.Latencies) != 3 {
		t.Fatalf("err %v, %d latencies", res.Err, len(res.Latencies))
	}
}

func TestMeasureLiveFailures(t *testing.T) {
	ws := fakeWorkspace(t)
	log := slog.New(slog.DiscardHandler)

	skip := fakeTool(ws)
	skip.check = func(context.Context) error { return errors.New("no watch command") }
	if res := measureLive(context.Background(), testConfig(), ws, skip, log); res.Skipped != "no watch command" {
		t.Errorf("skipped %q, err %v", res.Skipped, res.Err)
	}

	crash := fakeTool(ws, fakeExitEnv+"=boom")
	res := measureLive(context.Background(), testConfig(), ws, crash, log)
	if !errors.Is(res.Err, errExited) {
		t.Errorf("crashing server: got %v, want %v", res.Err, errExited)
	}
	if logged, _ := os.ReadFile(filepath.Join(ws.dir, "fake-live.log")); !strings.Contains(string(logged), "boom") {
		t.Errorf("the server's output is not in its log: %q", logged)
	}
}
