// Command evaltrain trains the evaluator's lexical model (the offline AI
// scan of live/eval) and writes its weights to content/eval/lexical.tsv.
//
// It learns from the project corpus's development split
// (live/eval/testdata/corpus/dev.jsonl) and the exemplars
// (content/eval/exemplars/) only: never from a held-out set. The lexicon
// (content/eval/lexicon.txt: classes of words whose presence, and pairs
// of them in one sentence, are features too) is copied into the weights. The decision
// threshold is chosen by cross-validation on the dev split: the lowest
// whose out-of-fold false-positive rate on its benign texts is at most
// -target-fpr. Training is deterministic, so running it again on the same
// data rewrites the same file (live/eval/quality's tests check that the
// committed file is what it makes).
//
// Usage (from the repository root):
//
//	go run ./cmd/evaltrain [-content DIR] [-corpus DIR] [-out FILE] [-check]
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
