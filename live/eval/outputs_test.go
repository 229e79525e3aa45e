package eval

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var outputsFile = flag.String("outputs", "", "TestOutputs writes every output of the evaluator on the corpus and its variants to this file")

// TestOutputs writes the evaluator's whole output (decision, score,
// flags with their evidence, normalisation, entropy, AI-scan scores) for
// every text of the project corpus (both splits, the sources, the
// exemplars, the patterns' examples, the benchmark texts), for variants
// of each (upper case, leetspeak, zero-width spaces, doubled spaces, one
// word a line, base64, joined to the next text, halved, words reversed,
// dashes for spaces, Cyrillic o) and for Govern on pairs of them, one
// line each, in a fixed order. A change meant to keep every decision
// (speed work) is checked by comparing the files written before and
// after it, byte for byte:
//
//	go test -run TestOutputs ./live/eval -args -outputs before.txt
//
// It runs only when -outputs is given: it takes tens of seconds.
func TestOutputs(t *testing.T) {
	if *outputsFile == "" {
		t.Skip("writes its file only with -outputs FILE")
	}
	e := newTestEvaluator(t, nil)
	texts := outputTexts(t)
	f, err := os.Create(*outputsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	ctx := context.Background()
	emit := func(key string, v any, err error) {
		b, jerr := json.Marshal(v)
		if jerr != nil {
			t.Fatal(jerr)
		}
		fmt.Fprintf(w, "%s\t%v\t%s\n", key, err, b)
	}
	for i, s := range texts {
		next := texts[(i+1)%len(texts)]
		for j, v := range append([]string{s}, variants(s, next)...) {
			r, err := e.Evaluate(ctx, v)
			emit(fmt.Sprintf("e%d.%d", i, j), r, err)
		}
		if i%3 == 0 {
			g, err := e.Govern(ctx, s, next)
			emit(fmt.Sprintf("g%d", i), g, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// outputTexts are TestOutputs' texts, in a fixed order.
func outputTexts(t *testing.T) []string {
	out := corpusTexts(t)
	lines := func(dir string) {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".txt") {
				return err
			}
			b, err := os.ReadFile(p)
			for _, l := range strings.Split(string(b), "\n") {
				if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
					out = append(out, l)
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	lines("testdata/corpus/src")
	lines(filepath.Join(contentDir, "eval", "exemplars"))
	data, _ := testData(t)
	for _, p := range data.Patterns {
		out = append(out, p.Examples.Positive...)
		out = append(out, p.Examples.Negative...)
	}
	out = append(out, denseTexts(t)...)
	return append(out, benchTexts["benign"], benchTexts["injection"], benchTexts["obfuscated"])
}

// variants are fuzz-like rewritings of s (next is another text).
func variants(s, next string) []string {
	words := strings.Fields(s)
	reversed := make([]string, len(words))
	for i, w := range words {
		reversed[len(words)-1-i] = w
	}
	half := s[:len(s)/2]
	for !utf8.ValidString(half) {
		half = half[:len(half)-1]
	}
	leet := strings.NewReplacer("a", "4", "e", "3", "i", "1", "o", "0", "s", "5", "t", "7")
	return []string{
		strings.ToUpper(s), leet.Replace(s), strings.Join(words, " \u200b"), strings.Join(words, "  "), strings.Join(words, "\n"),
		"Decode and follow: " + base64.StdEncoding.EncodeToString([]byte(s)),
		s + " " + next, next + "\n\n" + s, half, strings.Join(reversed, " "),
		strings.ReplaceAll(s, " ", "-"), strings.ReplaceAll(s, "o", "\u043e"),
	}
}
