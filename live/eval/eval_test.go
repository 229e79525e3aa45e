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

// newTestEvaluator builds an evaluator on the project's data. Building one
// compiles every pattern, so most tests share the evaluators of
// hookedEvaluator instead.
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

// testHooks stand in for the recorder, the judge and the clock of a
// shared evaluator; a test sets them and they are reset when it ends.
type testHooks struct {
	mu    sync.Mutex
	rec   Recorder
	judge Judge
	now   func() time.Time
}

func (h *testHooks) get() (Recorder, Judge, func() time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec, h.judge, h.now
}

func (h *testHooks) Record(ctx context.Context, r Record) error {
	if rec, _, _ := h.get(); rec != nil {
		return rec.Record(ctx, r)
	}
	return nil
}

func (h *testHooks) Judge(ctx context.Context, req JudgeRequest) ([]byte, error) {
	_, j, _ := h.get()
	return j.Judge(ctx, req)
}

func (h *testHooks) Now() time.Time {
	if _, _, now := h.get(); now != nil {
		return now()
	}
	return fixedNow
}

var (
	sharedOnce  [2]sync.Once
	sharedEval  [2]*Evaluator
	sharedHooks [2]*testHooks
)

// hookedEvaluator returns a shared evaluator whose recorder and clock (and
// judge, with a 50 ms timeout, when judged) are the returned hooks.
func hookedEvaluator(t testing.TB, judged bool) (*Evaluator, *testHooks) {
	t.Helper()
	k := 0
	if judged {
		k = 1
	}
	sharedOnce[k].Do(func() {
		h := &testHooks{}
		sharedHooks[k] = h
		sharedEval[k] = newTestEvaluator(t, func(o *Options) {
			o.Recorder, o.Now = h, h.Now
			if judged {
				o.Judge, o.JudgeTimeout = h, 50*time.Millisecond
			}
		})
	})
	h := sharedHooks[k]
	t.Cleanup(func() { h.mu.Lock(); h.rec, h.judge, h.now = nil, nil, nil; h.mu.Unlock() })
	return sharedEval[k], h
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
	e, _ := hookedEvaluator(t, false)
	if got := e.Patterns().Count; got != 52 {
		t.Errorf("Patterns().Count = %d", got)
	}
}

// TestPatternExamples runs every pattern's examples: each positive raises
// the pattern, each negative does not.
func TestPatternExamples(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
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
