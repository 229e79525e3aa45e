package eval

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// contentDir is the project's content directory, relative to this package.
const contentDir = "../../content"

var (
	loadOnce sync.Once
	loaded   Data
	articles map[int]string
	loadErr  error
)

// testData loads the project's data and the constitution's article titles once.
func testData(t testing.TB) (Data, map[int]string) {
	t.Helper()
	loadOnce.Do(func() {
		loaded, loadErr = LoadFS(os.DirFS(contentDir))
		if loadErr == nil {
			articles, loadErr = articleTitles(filepath.Join(contentDir, "constitution", "articles"))
		}
	})
	if loadErr != nil {
		t.Fatalf("load: %v", loadErr)
	}
	return loaded, articles
}

// articleTitles reads the "article" and "title" front matter of every
// constitution article (the site's loader owns this for real; the test
// only needs the numbers and titles).
func articleTitles(dir string) (map[int]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no articles in %s", dir)
	}
	out := map[int]string{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		var title string
		n := 0
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "title: "); ok {
				title = strings.Trim(v, `"`)
			}
			if v, ok := strings.CutPrefix(line, "article: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		fh.Close()
		if n == 0 || title == "" {
			return nil, fmt.Errorf("%s: no article number or title", f)
		}
		out[n] = title
	}
	return out, nil
}

// fixedNow is the clock of every test evaluator.
var fixedNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// newTestEvaluator builds an evaluator on the project's data.
func newTestEvaluator(t testing.TB, mod func(*Options)) *Evaluator {
	t.Helper()
	data, arts := testData(t)
	opts := Options{Data: data, Articles: arts, Now: func() time.Time { return fixedNow }}
	if mod != nil {
		mod(&opts)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func flagIDs(r Report) []string {
	ids := make([]string, len(r.Flags))
	for i, f := range r.Flags {
		ids[i] = f.ID
	}
	return ids
}

// TestPatternCount: the precheck holds exactly 52 patterns (spec 8).
func TestPatternCount(t *testing.T) {
	data, _ := testData(t)
	if len(data.Patterns) != 52 || PatternCount != 52 {
		t.Fatalf("%d patterns, PatternCount %d; the spec says 52", len(data.Patterns), PatternCount)
	}
	e := newTestEvaluator(t, nil)
	if got := e.Patterns().Count; got != 52 {
		t.Errorf("Patterns().Count = %d", got)
	}
}

// TestPatternExamples runs every pattern's examples: each positive raises
// the pattern, each negative does not.
func TestPatternExamples(t *testing.T) {
	e := newTestEvaluator(t, nil)
	ctx := context.Background()
	for i := range e.pre.patterns {
		c := &e.pre.patterns[i]
		side := ScopeInput
		if c.Scope == ScopeOutput {
			side = ScopeOutput
		}
		t.Run(c.ID, func(t *testing.T) {
			for _, ex := range c.Examples.Positive {
				r, err := e.run(ctx, "text", ex, side)
				if err != nil {
					t.Fatalf("positive %q: %v", ex, err)
				}
				if !slices.Contains(flagIDs(r), c.ID) {
					t.Errorf("positive %q: not raised (flags %v)", ex, flagIDs(r))
				}
			}
			for _, ex := range c.Examples.Negative {
				r, err := e.run(ctx, "text", ex, side)
				if err != nil {
					t.Fatalf("negative %q: %v", ex, err)
				}
				if slices.Contains(flagIDs(r), c.ID) {
					t.Errorf("negative %q: raised", ex)
				}
			}
		})
	}
}
