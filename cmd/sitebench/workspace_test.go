package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// projectContent is the project's own content folder, which the benchmark
// extends with the corpus.
const projectContent = "../../content"

// TestCorpusBuildsWithProofsite generates a 50-page workspace and builds its
// proofsite side in-process, as "proofsite build" would.
func TestCorpusBuildsWithProofsite(t *testing.T) {
	ws, err := newWorkspace(t.TempDir(), projectContent, 1, 50)
	if err != nil {
		t.Fatal(err)
	}
	res, err := buildInProcess(context.Background(), ws)
	if err != nil {
		t.Fatalf("proofsite does not build the corpus: %v", err)
	}
	if res.Pages < 50 {
		t.Errorf("built %d pages, want at least the 50 generated", res.Pages)
	}
	p := ws.pages[41]
	rel, err := findPageOutput(ws.psOut, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if rel != "pages/gen/"+p.Name+".html" {
		t.Errorf("output path %s", rel)
	}
	html, err := os.ReadFile(filepath.Join(ws.psOut, rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{p.Title, `class="chroma"`, "<table>", "</html>"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("%s has no %q", rel, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws.psOut, "pages", "gen", p.Name+".md")); err != nil {
		t.Errorf("no markdown twin: %v", err)
	}
	// The Hugo side holds the same bytes.
	a, _ := os.ReadFile(ws.proofsitePage(p.Name))
	b, _ := os.ReadFile(ws.hugoPage(p.Name))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the proofsite and Hugo copies of a page differ")
	}
}

// TestHugoSiteBuilds builds a small Hugo site: the configuration is
// accepted and pages land at proofsite's paths.
func TestHugoSiteBuilds(t *testing.T) {
	hugo, err := exec.LookPath("hugo")
	if err != nil {
		t.Fatal("hugo not found: install it (apt-get install -y hugo); make test's tools target does")
	}
	dir := t.TempDir()
	ws, err := newWorkspace(dir, projectContent, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hugo, "--quiet", "-s", ws.hugoSite, "-d", ws.hugoOut, "--cacheDir", filepath.Join(dir, "cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hugo: %v\n%s", err, out)
	}
	p := ws.pages[3]
	rel, err := findPageOutput(ws.hugoOut, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if rel != "pages/gen/"+p.Name+".html" {
		t.Errorf("Hugo put the page at %s", rel)
	}
	html, _ := os.ReadFile(filepath.Join(ws.hugoOut, rel))
	for _, want := range []string{p.Title, `class="chroma"`, "<table>", `id="`, "</html>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("%s has no %q", rel, want)
		}
	}
	// The same kinds of output as proofsite: a tags index, tag pages and one
	// feed, the home page's; no feed per section or tag.
	for _, f := range []string{"index.html", "gen.html", "sitemap.xml", "404.html", "assets/style.css", "index.xml", "tags.html"} {
		if _, err := os.Stat(filepath.Join(ws.hugoOut, f)); err != nil {
			t.Errorf("Hugo output lacks %s", f)
		}
	}
	for _, f := range []string{"gen.xml", "tags.xml"} {
		if _, err := os.Stat(filepath.Join(ws.hugoOut, f)); err == nil {
			t.Errorf("Hugo output has %s; only the home page has a feed", f)
		}
	}
}

func TestWorkspaceRefusesExistingGenFolder(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "pages", "gen"), 0o755)
	if _, err := newWorkspace(t.TempDir(), src, 1, 5); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("got %v, want a refusal", err)
	}
}
