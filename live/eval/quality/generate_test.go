package quality

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated corpus under ../testdata/corpus")

// corpusDir is the project's corpus, relative to this package.
const corpusDir = "../testdata/corpus"

// Seed is the corpus generator's seed.
const Seed = 20261123

// TestCorpusGenerated checks that the committed corpus is exactly what the
// generator makes of the sources (go test -update rewrites it).
func TestCorpusGenerated(t *testing.T) {
	dev, heldout, err := Generate(os.DirFS(filepath.Join(corpusDir, "src")), Seed)
	if err != nil {
		t.Fatal(err)
	}
	for split, samples := range map[string][]Sample{Dev: dev, Heldout: heldout} {
		var buf bytes.Buffer
		if err := WriteJSONL(&buf, samples); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(corpusDir, split+".jsonl")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("%s differs from the generator's output; run go test ./live/eval/quality -update", path)
		}
	}
}
