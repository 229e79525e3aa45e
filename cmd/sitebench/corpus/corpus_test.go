package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/proofsite/proofsite/site/content"
)

// corpusDigest is the SHA-256 over every file of Generate(1, 20). It pins
// the generator: a change to it changes the benchmark's input, so update the
// value only on purpose (and say so in the commit).
const corpusDigest = "4609c98c72462dc08a788d1f40268175f603af5c52b5da0549748ed3092b43d7"

func digest(pages []Page) string {
	h := sha256.New()
	for _, p := range pages {
		h.Write([]byte(p.Name))
		h.Write(p.File())
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestDeterministic(t *testing.T) {
	a, b := Generate(1, 200), Generate(1, 200)
	for i := range a {
		if !bytes.Equal(a[i].File(), b[i].File()) {
			t.Fatalf("page %s differs between two runs with the same seed", a[i].Name)
		}
	}
	if digest(Generate(1, 200)) == digest(Generate(2, 200)) {
		t.Error("seeds 1 and 2 gave the same corpus")
	}
}

func TestPinned(t *testing.T) {
	if got := digest(Generate(1, 20)); got != corpusDigest {
		t.Errorf("Generate(1, 20) changed: digest %s, pinned %s", got, corpusDigest)
	}
}

func TestSizes(t *testing.T) {
	pages := Generate(7, 1000)
	total := 0
	for _, p := range pages {
		n := len(p.File())
		total += n
		if n < 1300 || n > 1900 {
			t.Errorf("%s: %d bytes, want about %d", p.Name, n, TargetSize)
		}
	}
	if mean := total / len(pages); mean < 1400 || mean > 1600 {
		t.Errorf("mean size %d bytes, want about %d", mean, TargetSize)
	}
}

// TestFeatures checks that the corpus as a whole uses every construct the
// benchmark is meant to exercise, and that every page has each of the
// constructs that are on every page.
func TestFeatures(t *testing.T) {
	pages := Generate(1, 100)
	everyPage := map[string]*regexp.Regexp{
		"h2":            regexp.MustCompile(`(?m)^## \S`),
		"h3":            regexp.MustCompile(`(?m)^### \S`),
		"bullet list":   regexp.MustCompile(`(?m)^- \S`),
		"numbered list": regexp.MustCompile(`(?m)^1\. \S`),
		"code block":    regexp.MustCompile("(?m)^```(go|sh|json)$"),
		"table":         regexp.MustCompile(`(?m)^\|---\|---:\|---\|$`),
		"page link":     regexp.MustCompile(`\]\(/pages/gen/p\d{4}\.html\)`),
		"external link": regexp.MustCompile(`\]\(https://example\.org/`),
		"strikethrough": regexp.MustCompile(`~~[^~]+~~`),
	}
	somePages := map[string]*regexp.Regexp{
		"go code":   regexp.MustCompile("(?m)^```go$"),
		"sh code":   regexp.MustCompile("(?m)^```sh$"),
		"json code": regexp.MustCompile("(?m)^```json$"),
		"task list": regexp.MustCompile(`(?m)^- \[[ x]\] `),
		"footnote":  regexp.MustCompile(`(?m)^\[\^1\]: `),
	}
	seen := map[string]int{}
	for _, p := range pages {
		for name, re := range everyPage {
			if !re.Match(p.Body) {
				t.Errorf("%s has no %s", p.Name, name)
			}
		}
		for name, re := range somePages {
			if re.Match(p.Body) {
				seen[name]++
			}
		}
	}
	for name := range somePages {
		if seen[name] == 0 {
			t.Errorf("no page has a %s", name)
		}
	}
}

// TestLoads checks that proofsite's loader accepts every page: front matter
// complete and valid, no leading level-1 heading, and that links between
// generated pages point at pages of the corpus.
func TestLoads(t *testing.T) {
	pages := Generate(3, 100)
	fsys := fixture(t)
	before := len(fsys)
	names := map[string]bool{}
	for _, p := range pages {
		fsys["pages/gen/"+p.Name+".md"] = &fstest.MapFile{Data: p.File()}
		names[p.Name] = true
	}
	s, err := content.Load(fsys)
	if err != nil {
		t.Fatalf("the corpus does not load: %v", err)
	}
	var gen []*content.Page
	for _, lp := range s.Pages {
		if strings.HasPrefix(lp.Source, "pages/gen/") {
			gen = append(gen, lp)
		}
	}
	if got := len(gen); got != len(pages) || len(fsys) != before+len(pages) {
		t.Errorf("loaded %d generated pages, want %d", got, len(pages))
	}
	for _, lp := range gen {
		if !strings.HasPrefix(lp.Path, strings.TrimPrefix(LinkPrefix, "/")) || len(lp.Tags) == 0 || lp.Date.IsZero() {
			t.Errorf("%s: path %s, tags %v, date %v", lp.Source, lp.Path, lp.Tags, lp.Date)
		}
	}
	link := regexp.MustCompile(`\(/pages/gen/(p\d+)\.html\)`)
	for _, p := range pages {
		for _, m := range link.FindAllSubmatch(p.Body, -1) {
			if !names[string(m[1])] {
				t.Errorf("%s links to %s, which is not in the corpus", p.Name, m[1])
			}
		}
	}
}

// fixture returns proofsite's test site as an in-memory file system.
func fixture(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	root := os.DirFS("../../../site/testdata/site")
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWithMarker(t *testing.T) {
	p := Generate(1, 10)[4]
	q := p.WithMarker("edit-42")
	if !bytes.Contains(q.Body, []byte("edit-42")) || !bytes.HasSuffix(q.Body, p.Body) {
		t.Errorf("marked body does not add the marker before the old body:\n%s", q.Body)
	}
	if got, want := q.File()[:bytes.Index(q.File(), []byte("\n---\n"))], p.File()[:bytes.Index(p.File(), []byte("\n---\n"))]; !bytes.Equal(got, want) {
		t.Errorf("front matter changed:\n%s\nwant\n%s", got, want)
	}
	if bytes.Contains(Generate(1, 10)[4].Body, []byte("edit-42")) {
		t.Error("WithMarker changed the original page")
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		i, n int
		want string
	}{
		{1, 10, "p0001"},
		{42, 5000, "p0042"},
		{5000, 5000, "p5000"},
		{7, 20000, "p00007"},
	}
	for _, tc := range tests {
		if got := Name(tc.i, tc.n); got != tc.want {
			t.Errorf("Name(%d, %d) = %q, want %q", tc.i, tc.n, got, tc.want)
		}
	}
}
