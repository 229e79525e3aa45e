package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// collector gathers batches until it has seen every wanted path.
func awaitPaths(t *testing.T, w *Watcher, want ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var all []string
	deadline := time.After(5 * time.Second)
	for {
		missing := false
		for _, p := range want {
			if !seen[p] {
				missing = true
			}
		}
		if !missing {
			return all
		}
		select {
		case batch := <-w.Batches():
			for _, p := range batch {
				seen[p] = true
			}
			all = append(all, batch...)
		case <-deadline:
			t.Fatalf("waited for %q, saw %q", want, all)
		}
	}
}

func TestWatcherReportsEditorSaves(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pages/a.md", "a")
	w, err := New(root, Options{Ignore: func(rel string) bool {
		return strings.HasSuffix(rel, ".swp") || strings.HasSuffix(rel, "~")
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)

	tests := []struct {
		desc string
		do   func()
		want []string
	}{
		{"create", func() { write("pages/b.md", "b") }, []string{"pages/b.md"}},
		{"edit in place", func() { write("pages/a.md", "a2") }, []string{"pages/a.md"}},
		{"rename over (vim, JetBrains)", func() {
			write("pages/a.md~", "backup")   // ignored
			write("pages/.a.md.swp", "swap") // ignored
			write("pages/a.md.tmp", "a3")
			if err := os.Rename(filepath.Join(root, "pages/a.md.tmp"), filepath.Join(root, "pages/a.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"pages/a.md"}},
		{"delete", func() { os.Remove(filepath.Join(root, "pages/b.md")) }, []string{"pages/b.md"}},
		{"new folder with files written at once", func() {
			write("pages/deep/er/c.md", "c")
			write("pages/deep/er/d.md", "d")
		}, []string{"pages/deep/er/c.md", "pages/deep/er/d.md"}},
		{"file in the new folder, later", func() { write("pages/deep/er/e.md", "e") }, []string{"pages/deep/er/e.md"}},
		{"folder removed", func() { os.RemoveAll(filepath.Join(root, "pages/deep")) }, []string{"pages/deep"}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			tc.do()
			got := awaitPaths(t, w, tc.want...)
			for _, p := range got {
				if strings.HasSuffix(p, ".swp") || strings.HasSuffix(p, "~") {
					t.Errorf("ignored path reported: %s", p)
				}
			}
		})
	}
}

// TestBurstIsOneBatch checks that a burst of writes shorter than the
// debounce arrives as one batch.
func TestBurstIsOneBatch(t *testing.T) {
	root := t.TempDir()
	w, err := New(root, Options{Debounce: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	for i := range 5 {
		os.WriteFile(filepath.Join(root, "f"+string(rune('0'+i))), []byte("x"), 0o644)
	}
	select {
	case batch := <-w.Batches():
		if !slices.Equal(batch, []string{"f0", "f1", "f2", "f3", "f4"}) {
			t.Errorf("batch %q", batch)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no batch")
	}
}
