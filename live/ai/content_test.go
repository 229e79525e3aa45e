package ai_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/proofsite/proofsite/live/ai"
)

// loadArticles reads the constitution articles of the repository the way
// cmd does: front matter for the title and number, the body as the text.
func loadArticles(t testing.TB) []ai.Document {
	t.Helper()
	paths, err := filepath.Glob("../../content/constitution/articles/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no constitution articles found: %v", err)
	}
	var docs []ai.Document
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		front, body, ok := strings.Cut(strings.TrimPrefix(string(raw), "---\n"), "\n---\n")
		if !ok {
			t.Fatalf("%s: no front matter", p)
		}
		var meta struct {
			Title   string `yaml:"title"`
			Article int    `yaml:"article"`
		}
		if err := yaml.Unmarshal([]byte(front), &meta); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		num := strconv.Itoa(meta.Article)
		if meta.Article < 10 {
			num = "0" + num
		}
		docs = append(docs, ai.Document{
			Ref:   "Article " + strconv.Itoa(meta.Article),
			Title: meta.Title,
			URL:   "/constitution/article-" + num + ".html",
			Text:  body,
		})
	}
	return docs
}
