package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer a running command and a test share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

// subscribe reads the reload stream of a watch server.
func subscribe(t *testing.T, base string) <-chan sseEvent {
	t.Helper()
	resp, err := http.Get(base + "/__proofsite/events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: content type %q", ct)
	}
	events := make(chan sseEvent, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &ev.data)
			case line == "" && ev.name != "":
				events <- ev
				ev = sseEvent{}
			}
		}
	}()
	return events
}

// await returns the next event named name, skipping others.
func await(t *testing.T, events <-chan sseEvent, name string) sseEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event", name)
		}
	}
}

// awaitBuild returns the next build event that wrote path, skipping the
// builds of a save's intermediate states (on a busy machine a new folder
// can arrive in one batch and the file inside it in the next).
func awaitBuild(t *testing.T, events <-chan sseEvent, path string) sseEvent {
	t.Helper()
	for {
		if ev := await(t, events, "build"); slices.Contains(paths(ev), path) {
			return ev
		}
	}
}

func paths(ev sseEvent) []string {
	var out []string
	list, _ := ev.data["paths"].([]any)
	for _, p := range list {
		out = append(out, p.(string))
	}
	return out
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWatchEditSession drives proofsite watch through a real edit session:
// real files, real fsnotify, real HTTP.
func TestWatchEditSession(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "content")
	if err := os.CopyFS(src, os.DirFS("../../site/testdata/site")); err != nil {
		t.Fatal(err)
	}
	// write saves a file as editors do, aside and renamed into place: one
	// event per save, so each await below meets the build of that save and
	// never one of a file caught between truncate and write.
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(src, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".tmp")
		if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "public")
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--content", src, "--out", out, "--addr", "127.0.0.1:0", "--templates", filepath.Join(dir, "none")},
			strings.NewReader(""), &stdout, &stderr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("watch exited %d: %s", code, stderr.String())
		}
	}()
	serving := regexp.MustCompile(`serving (http://\S+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("watch did not start: %s %s", stdout.String(), stderr.String())
		}
	}
	events := subscribe(t, base)
	await(t, events, "hello")

	if code, body := get(t, base+"/pages/hello.html"); code != 200 || !strings.Contains(body, `src="/__proofsite/client.js"`) {
		t.Fatalf("page in watch mode: %d, reload script missing", code)
	}

	t.Run("create", func(t *testing.T) {
		write("pages/fresh.md", "---\ntitle: Fresh\nsummary: New.\ndate: 2026-10-01\n---\nFresh body.\n")
		ev := awaitBuild(t, events, "pages/fresh.html")
		if !slices.Contains(paths(ev), "pages/fresh.html") {
			t.Errorf("build event %v", paths(ev))
		}
		if code, body := get(t, base+"/pages/fresh.html"); code != 200 || !strings.Contains(body, "Fresh body.") {
			t.Errorf("new page: %d", code)
		}
	})
	t.Run("edit", func(t *testing.T) {
		write("pages/fresh.md", "---\ntitle: Fresh\nsummary: New.\ndate: 2026-10-01\n---\nEdited body.\n")
		if got := paths(awaitBuild(t, events, "pages/fresh.html")); !slices.Equal(got, []string{"pages/fresh.html", "pages/fresh.md"}) {
			t.Errorf("a body edit wrote %v", got)
		}
		if _, body := get(t, base+"/pages/fresh.html"); !strings.Contains(body, "Edited body.") {
			t.Error("edit not served")
		}
	})
	t.Run("rename over", func(t *testing.T) {
		write("pages/fresh.md.tmp", "---\ntitle: Fresh\nsummary: New.\ndate: 2026-10-01\n---\nRenamed-over body.\n")
		if err := os.Rename(filepath.Join(src, "pages/fresh.md.tmp"), filepath.Join(src, "pages/fresh.md")); err != nil {
			t.Fatal(err)
		}
		awaitBuild(t, events, "pages/fresh.html")
		if _, body := get(t, base+"/pages/fresh.html"); !strings.Contains(body, "Renamed-over body.") {
			t.Error("rename-over not served")
		}
	})
	t.Run("error, then fix", func(t *testing.T) {
		write("pages/fresh.md", "---\ntitle: Fresh\nsummary: New.\ndate: 2026-10-01\n") // saved half-written
		ev := await(t, events, "problem")
		if msg, _ := ev.data["message"].(string); !strings.Contains(msg, "pages/fresh.md:1: front matter is not closed") {
			t.Errorf("problem event: %q", msg)
		}
		if !strings.Contains(stderr.String(), "pages/fresh.md:1: front matter is not closed") {
			t.Errorf("terminal does not show the error: %s", stderr.String())
		}
		if code, body := get(t, base+"/pages/fresh.html"); code != 200 || !strings.Contains(body, "Renamed-over body.") {
			t.Error("the last good page is no longer served")
		}
		// A tab opened during the failure learns of it at once.
		late := subscribe(t, base)
		await(t, late, "problem")

		write("pages/fresh.md", "---\ntitle: Fresh\nsummary: New.\ndate: 2026-10-01\n---\nFixed body.\n")
		awaitBuild(t, events, "pages/fresh.html")
		if _, body := get(t, base+"/pages/fresh.html"); !strings.Contains(body, "Fixed body.") {
			t.Error("fix not served")
		}
	})
	t.Run("new folder", func(t *testing.T) {
		write("pages/guides/first.md", "---\ntitle: First guide\nsummary: G.\ndate: 2026-10-02\n---\nGuide.\n")
		awaitBuild(t, events, "pages/guides/first.html")
		if code, _ := get(t, base+"/pages/guides/first.html"); code != 200 {
			t.Errorf("page in a new folder: %d", code)
		}
	})
	t.Run("site.yaml reaches every output", func(t *testing.T) {
		src, err := os.ReadFile(filepath.Join(src, "site.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		const old, renamed = "title: Fixture Commons — public proof", "title: Renamed Commons — public proof"
		if !strings.Contains(string(src), old) {
			t.Fatal("the fixture's title changed; update the test")
		}
		write("site.yaml", strings.Replace(string(src), old, renamed, 1))
		awaitBuild(t, events, "openapi.json")
		for _, path := range []string{"/openapi.json", "/index.html", "/.well-known/ai.json"} {
			if _, body := get(t, base+path); !strings.Contains(body, "Renamed Commons") {
				t.Errorf("%s does not show the new title", path)
			}
		}
		write("site.yaml", "site: [\n") // a broken site.yaml is shown, and the last build kept
		if ev := await(t, events, "problem"); !strings.Contains(fmt.Sprint(ev.data["message"]), "site.yaml:") {
			t.Errorf("problem event: %v", ev.data)
		}
		if _, body := get(t, base+"/openapi.json"); !strings.Contains(body, "Renamed Commons") {
			t.Error("a broken site.yaml replaced the last good build")
		}
		write("site.yaml", string(src))
		awaitBuild(t, events, "openapi.json")
		if _, body := get(t, base+"/openapi.json"); !strings.Contains(body, "Fixture Commons") {
			t.Error("the restored title is not served")
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := os.Remove(filepath.Join(src, "pages/fresh.md")); err != nil {
			t.Fatal(err)
		}
		awaitBuild(t, events, "pages/index.html")
		if code, _ := get(t, base+"/pages/fresh.html"); code != 404 {
			t.Errorf("deleted page answers %d", code)
		}
		if _, err := os.Stat(filepath.Join(out, "pages/fresh.html")); !os.IsNotExist(err) {
			t.Error("deleted page still on disk")
		}
	})
}
