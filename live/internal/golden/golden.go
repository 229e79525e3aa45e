// Package golden compares test output with files under a package's
// testdata/ folder, and rewrites them when the calling test asks (each test
// package keeps its own -update flag: only programs parse flags).
// It is imported by tests only.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with testdata/name, rewriting the file first when
// update is set, and fails t with both texts when they differ.
func Check(t testing.TB, update bool, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%s\nwant (%s)\n%s", got, path, want)
	}
}
