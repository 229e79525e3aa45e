package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestStaticPage(t *testing.T) {
	p := staticPage()
	if len(p) != pageSize || pageSize != 10240 {
		t.Fatalf("page is %d bytes, want exactly %d", len(p), 10240)
	}
	for _, want := range []string{"<!doctype html>\n", "<title>", "<h2 id=\"s1\">", "</main>\n</body>\n</html>\n"} {
		if !bytes.Contains(p, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !bytes.Equal(p, staticPage()) {
		t.Error("page differs between calls")
	}
}

func TestNewWorkDirs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "http")
	w, err := newWorkDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(w.logs, "old.log")
	if err := os.WriteFile(stale, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A folder an earlier run made is emptied.
	if _, err := newWorkDirs(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale file survived a new run: %v", err)
	}
	// Any other folder is left alone.
	other := t.TempDir()
	keep := filepath.Join(other, "keep.txt")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := newWorkDirs(other); err == nil {
		t.Error("newWorkDirs emptied a folder it did not make")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("file in a foreign folder: %v", err)
	}
}
