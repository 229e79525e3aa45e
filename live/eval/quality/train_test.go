package quality

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/proofsite/proofsite/live/eval"
	"github.com/proofsite/proofsite/live/eval/lexical"
)

// TestLexicalWeightsUpToDate trains the lexical model as cmd/evaltrain
// does (cross-validation on the dev split for the threshold, then the
// exemplars and the dev split) and checks that the committed weights are
// what it makes: the same features, threshold and note, and every weight
// within one unit of the file's last decimal (float arithmetic may differ
// in the last bit between machines). Under the race detector, which makes
// training about ten times slower, only the last step runs, with the
// committed threshold.
func TestLexicalWeightsUpToDate(t *testing.T) {
	f, err := os.Open(filepath.Join(corpusDir, Dev+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := ReadJSONL(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	exemplars, err := eval.LoadExemplars(os.DirFS("../../../content"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("../../../content", eval.LexicalFile))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := lexical.Parse(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultTrainConfig
	if cfg.Options.Lexicon, err = LoadLexicon(os.DirFS("../../../content")); err != nil {
		t.Fatal(err)
	}
	var trained *lexical.Model
	if raceEnabled {
		trained, err = FinalLexical(dev, exemplars, cfg, committed.Threshold, committed.Note)
	} else {
		trained, _, err = TrainLexical(dev, exemplars, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := lexical.Diff(trained, committed, 1.5e-4); diff != "" {
		t.Errorf("content/%s is not what training makes (run go run ./cmd/evaltrain): %s", eval.LexicalFile, diff)
	}
}
