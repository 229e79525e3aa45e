package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestHoldsEdit(t *testing.T) {
	tests := []struct {
		desc string
		data string
		want bool
	}{
		{"complete with marker", "<html><p>Revision m-1.</p></html>\n", true},
		{"trailing whitespace", "<html>m-1</html>  \r\n\n", true},
		{"half written", "<html><p>Revision m-1.</p><foot", false},
		{"complete, old marker", "<html><p>Revision m-0.</p></html>", false},
		{"empty (truncated)", "", false},
		{"live reload script after the body", "<html><body>m-1<script src=\"/livereload.js\"></script></body>\n</html>\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if got := holdsEdit([]byte(tc.data), []byte("m-1")); got != tc.want {
				t.Errorf("holdsEdit(%q) = %v, want %v", tc.data, got, tc.want)
			}
		})
	}
}

// waitResult is what outputWatch.wait returned.
type waitResult struct {
	at  time.Time
	err error
}

func startWait(ow *outputWatch, marker string, deadline time.Time, exited <-chan struct{}) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		at, err := ow.wait(context.Background(), marker, deadline, exited)
		ch <- waitResult{at, err}
	}()
	return ch
}

func TestOutputWatchRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.html")
	os.WriteFile(path, []byte("<html>old</html>"), 0o644)
	ow := newOutputWatch(path)
	defer ow.Close()
	got := startWait(ow, "new-1", time.Now().Add(time.Minute), nil)

	tmp := filepath.Join(dir, ".p.html.tmp")
	os.WriteFile(tmp, []byte("<html>new-1</html>"), 0o644)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil {
		t.Fatal(r.err)
	}
}

// TestOutputWatchInPlace writes the file in place in two parts, the marker
// in the first: wait must not accept the half-written file.
func TestOutputWatchInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.html")
	os.WriteFile(path, []byte("<html>old</html>"), 0o644)
	ow := newOutputWatch(path)
	defer ow.Close()
	got := startWait(ow, "new-2", time.Now().Add(time.Minute), nil)

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("<html><p>new-2</p>")
	f.Sync()
	time.Sleep(20 * time.Millisecond) // give the watch a chance to see the half
	completed := time.Now()
	f.WriteString("</html>\n")
	f.Close()

	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.at.Before(completed) {
		t.Errorf("accepted the half-written file (at %v, completed at %v)", r.at, completed)
	}
}

func TestOutputWatchMissingFolder(t *testing.T) {
	// The folder appears only later (a first build): polling finds the file.
	dir := filepath.Join(t.TempDir(), "later")
	path := filepath.Join(dir, "p.html")
	ow := newOutputWatch(path)
	defer ow.Close()
	got := startWait(ow, "new-3", time.Now().Add(time.Minute), nil)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(path, []byte("<html>new-3</html>"), 0o644)
	if r := <-got; r.err != nil {
		t.Fatal(r.err)
	}
}

func TestOutputWatchGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.html")
	os.WriteFile(path, []byte("<html>old</html>"), 0o644)

	ow := newOutputWatch(path)
	defer ow.Close()
	if r := <-startWait(ow, "never", time.Now().Add(10*time.Millisecond), nil); !errors.Is(r.err, errEditTimeout) {
		t.Errorf("deadline: got %v, want %v", r.err, errEditTimeout)
	}
	exited := make(chan struct{})
	close(exited)
	if r := <-startWait(ow, "never", time.Now().Add(time.Minute), exited); !errors.Is(r.err, errExited) {
		t.Errorf("exited: got %v, want %v", r.err, errExited)
	}
}
