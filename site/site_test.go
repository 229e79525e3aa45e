package site_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const fixtureDir = "testdata/site"

// testArtifacts stand in for what cmd passes: a generated document and a
// downloadable file.
var testArtifacts = []render.Artifact{
	{Path: "openapi.json", Data: []byte(`{"openapi":"3.1.0"}` + "\n"), Title: "OpenAPI description", Description: "the proof surface"},
	{Path: "downloads/tool.go", Data: []byte("package main\n"), Title: "Verifier", Description: "read it, then run it", Downloadable: true},
}

// fixtureLedger is the chain the fixture's explorer shows.
var fixtureLedger = sync.OnceValues(func() (*render.Ledger, error) { return sealTestLedger(true) })

func testRenderOptions() render.Options {
	l, err := fixtureLedger()
	if err != nil {
		panic(err) // a fixed chain that does not seal is a bug of the test
	}
	return render.Options{
		Ledger:    l,
		Artifacts: testArtifacts,
		Endpoints: []render.Endpoint{{Method: "GET", Path: "/api/ledger/verify", Summary: "Ledger verdict"}, {Method: "GET", Path: "/api/v1/towns", Summary: "Towns", OnAPI: true},
			{Method: "GET", Path: "/api/v1/towns/{id}", Summary: "One town", OnAPI: true},
			{Method: "POST", Path: "/api/ember", Summary: "The public airlock"}, {Method: "POST", Path: "/api/agent/receipt", Summary: "Verify a receipt"}},
		Keys: []render.Key{{Node: "S5_LOCUS", KeyID: "ed25519:0f1e2d3c4b5a69788796a5b4c3d2e1f0", PublicKey: strings.Repeat("ab", 32), Role: "node"}},
		// The fixture's live edge answers its towns, the airlock's Ember and
		// the receipt check, and no other node's public route.
		Answers: func(path string) bool {
			return strings.HasPrefix(path, "/api/v1/towns/") || path == "/api/ledger/verify" || path == "/api/ember" || path == "/api/agent/receipt"
		},
	}
}

func build(t *testing.T, contentDir, out string) site.Result {
	t.Helper()
	return buildWith(t, contentDir, out, content.Visibility{Now: testNow})
}

// tree returns the SHA-256 of every file under dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGolden compares representative pages with the files under
// testdata/golden. Run "go test ./site -update" after an intended change and
// review the diff.
func TestGolden(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	build(t, fixtureDir, out)
	golden(t, out, filepath.Join("testdata", "golden"), []string{
		"index.html", "index.md", "gate.html", "gate.md", "pages/hello.html", "pages/hello.md",
		"pages/index.html", "docs/GUIDE.html", "docs/GUIDE.md", "docs/GUIDE.md.sha256",
		"constitution/index.html", "constitution/index.md", "constitution/article-02.html", "constitution/article-02.md",
		"constitution.txt", "constitution-status.json", "stewardship-horizon.json", "llms.txt", ".well-known/ai.json",
		"robots.txt", "sitemap.xml", "index.txt", "404.html", "404.md", "_headers", "_redirects", "favicon.svg",
		"explorer/index.html", "explorer/index.md", "explorer/block/4.html", "explorer/block/4.md",
	})
}

func TestReproducible(t *testing.T) {
	dir := t.TempDir()
	build(t, fixtureDir, filepath.Join(dir, "a"))
	build(t, fixtureDir, filepath.Join(dir, "b"))
	a, b := tree(t, filepath.Join(dir, "a")), tree(t, filepath.Join(dir, "b"))
	if len(a) == 0 {
		t.Fatal("empty build")
	}
	for name, sum := range a {
		if b[name] != sum {
			t.Errorf("%s differs between two builds of the same content", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("file counts differ: %d and %d", len(a), len(b))
	}
}

// TestFailedBuildLeavesOutput breaks the content after a good build and
// checks that the failed build changes nothing and leaves no staging folder.
func TestFailedBuildLeavesOutput(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "content")
	if err := os.CopyFS(src, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")
	build(t, src, out)
	before := tree(t, out)

	page := filepath.Join(src, "pages", "hello.md")
	if err := os.WriteFile(page, []byte("---\ntitle: [broken\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := site.New(site.Options{ContentDir: src, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Build(context.Background(), nil)
	var list content.Errors
	if !errors.As(err, &list) || len(list) != 1 || list[0].File != "pages/hello.md" || list[0].Line != 2 {
		t.Fatalf("got %v, want one content error at pages/hello.md:2", err)
	}
	after := tree(t, out)
	if len(before) != len(after) {
		t.Errorf("file count changed: %d -> %d", len(before), len(after))
	}
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("%s changed although the build failed", name)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "staging") {
			t.Errorf("staging folder %s left behind", e.Name())
		}
	}
}

// TestOutputs checks the structure of the site-wide files and the
// invariants every build keeps.
func TestOutputs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	res := build(t, fixtureDir, out)
	files := tree(t, out)
	if res.Files != len(files) {
		t.Errorf("result counts %d files, %d on disk", res.Files, len(files))
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Run("every HTML page has a markdown twin", func(t *testing.T) {
		for name := range files {
			if twin, ok := strings.CutSuffix(name, ".html"); ok {
				if _, ok := files[twin+".md"]; !ok {
					t.Errorf("%s has no twin %s.md", name, twin)
				}
			}
		}
	})
	t.Run("every checksum matches its file", func(t *testing.T) {
		n := 0
		for name := range files {
			target, ok := strings.CutSuffix(name, ".sha256")
			if !ok {
				continue
			}
			n++
			fields := strings.Fields(string(read(name)))
			if len(fields) != 2 || fields[1] != filepath.Base(target) || files[target] != fields[0] {
				t.Errorf("%s = %q does not match %s (%s)", name, fields, target, files[target])
			}
		}
		for _, want := range []string{"constitution.txt", "docs/GUIDE.md", "products/gate/README.md", "constitution/runtime-v1.8.json", "downloads/tool.go"} {
			if _, ok := files[want+".sha256"]; !ok {
				t.Errorf("downloadable %s has no checksum", want)
			}
		}
		if n == 0 {
			t.Error("no checksums")
		}
	})
	t.Run("llms.txt follows llmstxt.org", func(t *testing.T) {
		lines := strings.Split(string(read("llms.txt")), "\n")
		if !strings.HasPrefix(lines[0], "# ") || lines[1] != "" || !strings.HasPrefix(lines[2], "> ") {
			t.Fatalf("llms.txt must open with an H1 and a blockquote, got %q", lines[:3])
		}
		link := regexp.MustCompile(`^- \[[^\]]+\]\(https?://[^)]+\)(: .+)?$`)
		var sections []string
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "## "):
				sections = append(sections, l[3:])
			case strings.HasPrefix(l, "- ") && !link.MatchString(l):
				t.Errorf("list item is not a link: %q", l)
			case strings.HasPrefix(l, "# ") && l != lines[0]:
				t.Errorf("second H1: %q", l)
			}
		}
		for _, want := range []string{"Proof surface", "API endpoint map", "Gate", "Constitution", "Optional"} {
			if !slices.Contains(sections, want) {
				t.Errorf("llms.txt has no section %q (has %q)", want, sections)
			}
		}
	})
	t.Run("JSON documents", func(t *testing.T) {
		var status struct {
			Version      string `json:"version"`
			Status       string `json:"status"`
			CountsDiffer bool   `json:"article_counts_differ"`
			Text         struct {
				SHA256   string
				Articles int
			}
			ArticleCounts []struct{ Articles int } `json:"article_counts"`
		}
		decodeStrictly(t, read("constitution-status.json"), &status)
		if status.Version != "2.0" || status.Status == "" || status.Text.SHA256 != files["constitution.txt"] || status.Text.Articles != 3 || !status.CountsDiffer || len(status.ArticleCounts) != 3 {
			t.Errorf("constitution-status.json: %+v", status)
		}
		var horizon struct {
			Layers []struct{ Key, Readiness string }
		}
		decodeStrictly(t, read("stewardship-horizon.json"), &horizon)
		if len(horizon.Layers) != 1 || horizon.Layers[0].Readiness != "live" {
			t.Errorf("stewardship-horizon.json: %+v", horizon)
		}
		var ai struct {
			Proof struct {
				IntegrityField  string                `json:"integrity_field"`
				DocumentedSeams []struct{ Block int } `json:"documented_seams"`
			}
			Capabilities map[string]string `json:"capability_board"`
			Downloads    []struct{ URL, SHA256 string }
		}
		decodeStrictly(t, read(".well-known/ai.json"), &ai)
		if ai.Proof.IntegrityField != "canonical_spine_valid" || len(ai.Proof.DocumentedSeams) != 1 || ai.Proof.DocumentedSeams[0].Block != 153 {
			t.Errorf("ai.json proof: %+v", ai.Proof)
		}
		if ai.Capabilities["bridge_auth"] != "live_and_proven" || len(ai.Capabilities) != 6 {
			t.Errorf("ai.json board: %v", ai.Capabilities)
		}
		for _, d := range ai.Downloads {
			name := strings.TrimPrefix(d.URL, "https://proof.fixture.example/")
			if files[name] != d.SHA256 {
				t.Errorf("ai.json lists %s with sha256 %s, the file has %s", name, d.SHA256, files[name])
			}
		}
	})
	t.Run("sitemap and index.txt list the site", func(t *testing.T) {
		var set struct {
			URLs []struct {
				Loc string `xml:"loc"`
			} `xml:"url"`
		}
		if err := xml.Unmarshal(read("sitemap.xml"), &set); err != nil {
			t.Fatal(err)
		}
		html := 0
		for name := range files {
			if strings.HasSuffix(name, ".html") && name != "404.html" {
				html++
			}
		}
		if len(set.URLs) != html {
			t.Errorf("sitemap lists %d URLs for %d pages", len(set.URLs), html)
		}
		sc := bufio.NewScanner(bytes.NewReader(read("index.txt")))
		n := 0
		for sc.Scan() {
			n++
			if !strings.HasPrefix(sc.Text(), "https://proof.fixture.example/") {
				t.Errorf("index.txt: %q", sc.Text())
			}
		}
		if want := len(files) - 2; n != want { // all but _headers and _redirects
			t.Errorf("index.txt lists %d URLs, want %d", n, want)
		}
	})
	t.Run("host files route live paths and type markdown", func(t *testing.T) {
		// Only what the API origin answers is sent there.
		redirects := read("_redirects")
		if !bytes.Contains(redirects, []byte("\n/api/v1/towns/:id  https://api.fixture.example/api/v1/towns/:id  200\n")) ||
			bytes.Contains(redirects, []byte("/api/ledger/verify  ")) || bytes.Contains(redirects, []byte("/api/*")) {
			t.Errorf("_redirects:\n%s", redirects)
		}
		if !bytes.Contains(read("_headers"), []byte("/*.md\n  Content-Type: text/markdown; charset=utf-8")) {
			t.Error("_headers does not type .md files as markdown")
		}
	})
}

func decodeStrictly(t *testing.T, data []byte, v any) {
	t.Helper()
	if !json.Valid(data) {
		t.Fatalf("invalid JSON:\n%s", data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestProjectContent builds the repository's own content and checks every
// output the site promises.
func TestProjectContent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	res := build(t, "../content", out)
	files := tree(t, out)
	want := []string{
		"index.html", "gate.html", "products/gate/README.md", "products/gate/PRODUCT_SHEET.md",
		"docs/AUDITOR_VERIFY_SERVICE_YOURSELF.md", "llms.txt", ".well-known/ai.json",
		"constitution/index.html", "constitution.txt", "constitution.txt.sha256", "constitution-status.json",
		"stewardship-horizon.json", "robots.txt", "sitemap.xml", "index.txt", "404.html", "_headers", "_redirects",
		"constitution/runtime-v1.8.json",
	}
	for i := 1; i <= 47; i++ {
		want = append(want, "constitution/article-"+twoDigits(i)+".html")
	}
	for _, name := range want {
		if _, ok := files[name]; !ok {
			t.Errorf("missing output %s", name)
		}
	}
	var status struct {
		Text            struct{ Articles int }
		RuntimeArtifact struct {
			Articles int
			Version  string
		} `json:"runtime_artifact"`
		ArticleCounts []struct{ Articles int } `json:"article_counts"`
	}
	data, _ := os.ReadFile(filepath.Join(out, "constitution-status.json"))
	decodeStrictly(t, data, &status)
	var counts []int
	for _, c := range status.ArticleCounts {
		counts = append(counts, c.Articles)
	}
	if status.Text.Articles != 47 || status.RuntimeArtifact.Articles != 42 || status.RuntimeArtifact.Version != "1.8" || !slices.Equal(counts, []int{47, 42, 40}) {
		t.Errorf("constitution status: %+v", status)
	}
	if res.Pages < 55 {
		t.Errorf("only %d pages", res.Pages)
	}
}

func twoDigits(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// A build logs its progress while it runs and nothing after it returns:
// the progress reporter is stopped, and waited for, before Build returns
// (run under -race, the buffer below is read while a late line would
// still be written).
func TestProgressStopsWithTheBuild(t *testing.T) {
	var logs bytes.Buffer
	b, err := site.New(site.Options{ContentDir: fixtureDir, OutDir: t.TempDir(), Render: testRenderOptions(),
		ProgressEvery: time.Microsecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	after := logs.String()
	time.Sleep(10 * time.Millisecond)
	if logs.String() != after {
		t.Fatal("the progress reporter logged after the build returned")
	}
}

// Prepare gives the render options in place of Render: a failure fails
// the Build without publishing, the next Build asks again, and once it
// succeeded it is not asked again; the output is that of the same options
// given as Render.
func TestPrepare(t *testing.T) {
	want := filepath.Join(t.TempDir(), "want")
	build(t, fixtureDir, want)
	out := filepath.Join(t.TempDir(), "public")
	calls, errNoChain := 0, errors.New("no chain")
	opts := testOptions(fixtureDir, out, true)
	opts.Render = render.Options{}
	opts.Prepare = func() (render.Options, error) {
		calls++
		if calls == 1 {
			return render.Options{}, errNoChain
		}
		return testRenderOptions(), nil
	}
	b, err := site.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Build(t.Context(), nil); !errors.Is(err, errNoChain) {
		t.Fatalf("first build: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed build published %s: %v", out, err)
	}
	for _, changes := range [][]string{nil, {"pages/hello.md"}} {
		if _, err := b.Build(t.Context(), changes); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 2 {
		t.Errorf("Prepare called %d times, want 2", calls)
	}
	if diff := compareTrees(tree(t, out), tree(t, want)); diff != "" {
		t.Errorf("output differs from a build with the same Render:\n%s", diff)
	}
}
