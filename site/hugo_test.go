package site_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
)

// hugoFixture is a folder of pages written for Hugo: TOML, YAML and JSON
// front matter, RFC 3339 dates, aliases, drafts, scheduled and expired
// pages, taxonomies, section pages, a page bundle and a changelog. The tests
// add it to the site fixture.
const hugoFixture = "testdata/hugo"

// testNow is the moment the tests build at: the fixture's scheduled page is
// still to come and its expired page has expired.
var testNow = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// hugoSite returns a content folder: the site fixture with the Hugo pages.
func hugoSite(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(hugoFixture)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func buildWith(t *testing.T, contentDir, out string, vis content.Visibility) site.Result {
	t.Helper()
	b, err := site.New(site.Options{ContentDir: contentDir, OutDir: out, Render: testRenderOptions(), Visibility: vis})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Build(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHugoContent builds the Hugo pages and compares representative outputs
// with the golden files under testdata/golden/hugo.
func TestHugoContent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	buildWith(t, hugoSite(t), out, content.Visibility{Now: testNow})
	files := tree(t, out)
	golden(t, out, filepath.Join("testdata", "golden", "hugo"), []string{
		"pages/index.html", "pages/index.md", "pages/index.xml",
		"pages/posts/index.html", "pages/posts/release-notes-2026-01.html", "pages/posts/release-notes-2026-01.md",
		"pages/posts/bundle-post/index.html", "pages/posts/json-post.html", "pages/posts/my_notes.html",
		"pages/docs/start.html", "about/index.html", "pages/changelog.html", "pages/changelog.xml",
		"posts/old-release-notes/index.html", "posts/old-release-notes/index.md", "2026/01/release.html",
		"tags/index.html", "tags/index.md", "tags/go/index.html", "categories/news/index.html",
		"sitemap.xml", "_redirects",
	})

	for _, unpublished := range []string{"pages/posts/draft-idea.html", "pages/posts/future-post.html", "pages/posts/expired-offer.html", "tags/ideas/index.html", "tags/schedule/index.html", "categories/events/index.html"} {
		if _, ok := files[unpublished]; ok {
			t.Errorf("%s is published", unpublished)
		}
	}
	for _, want := range []string{"pages/posts/january/index.html", "tags/release-notes/index.html", "tags/bundles/index.html", "categories/guides/index.html"} {
		if _, ok := files[want]; !ok {
			t.Errorf("%s is missing", want)
		}
	}

	t.Run("drafts, scheduled and expired pages when asked", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "public")
		buildWith(t, hugoSite(t), out, content.Visibility{Now: testNow, Drafts: true, Future: true, Expired: true})
		files := tree(t, out)
		for _, want := range []string{"pages/posts/draft-idea.html", "pages/posts/future-post.html", "pages/posts/expired-offer.html", "tags/ideas/index.html"} {
			if _, ok := files[want]; !ok {
				t.Errorf("%s is missing", want)
			}
		}
	})
}

// golden compares the named outputs under out with the files under dir;
// -update rewrites them.
func golden(t *testing.T, out, dir string, names []string) {
	t.Helper()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./site -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s; run go test ./site -update and review the diff\n--- got ---\n%s", name, file, got)
			}
		})
	}
}

// atomDoc is what the feed test reads of an Atom 1.0 document (RFC 4287).
type atomDoc struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string   `xml:"id"`
	Title   string   `xml:"title"`
	Updated string   `xml:"updated"`
	Author  []struct {
		Name string `xml:"name"`
	} `xml:"author"`
	Links   []atomLink `xml:"link"`
	Entries []struct {
		ID      string     `xml:"id"`
		Title   string     `xml:"title"`
		Updated string     `xml:"updated"`
		Links   []atomLink `xml:"link"`
		Summary *struct{}  `xml:"summary"`
		Content *struct {
			Type string `xml:"type,attr"`
			Body string `xml:",chardata"`
		} `xml:"content"`
	} `xml:"entry"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
}

// TestFeeds parses both feeds as Atom 1.0 and checks the elements RFC 4287
// requires, that ids are unique and the same on every build, and that dates
// come from the content, never the clock.
func TestFeeds(t *testing.T) {
	dir := t.TempDir()
	src := hugoSite(t)
	buildWith(t, src, filepath.Join(dir, "a"), content.Visibility{Now: testNow})
	// A build a day later: nothing in the feeds may change.
	buildWith(t, src, filepath.Join(dir, "b"), content.Visibility{Now: testNow.Add(24 * time.Hour)})

	for _, tc := range []struct {
		feed        string
		entries     []string // titles, in order
		updated     string   // the feed's updated: its newest entry's
		contentType string   // entries carry a summary ("") or content of this type
	}{
		{"pages/index.xml", []string{"Second page", "Hello, fixture", "Changelog", "Front matter in JSON", "Inside a page bundle", "Release notes for January", "Notes with an upper-case file name", "Getting started"}, "2026-06-01T00:00:00Z", ""},
		{"pages/changelog.xml", []string{"Feeds and tags", "JSON front matter", "First release"}, "2026-03-05T00:00:00Z", "html"},
	} {
		t.Run(tc.feed, func(t *testing.T) {
			a, err := os.ReadFile(filepath.Join(dir, "a", tc.feed))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "b", tc.feed))
			if !bytes.Equal(a, b) {
				t.Errorf("the feed changed between two builds of the same content on different days")
			}
			var f atomDoc
			if err := xml.Unmarshal(a, &f); err != nil {
				t.Fatalf("not Atom: %v", err)
			}
			if f.ID == "" || f.Title == "" || f.Updated != tc.updated || len(f.Author) != 1 || f.Author[0].Name == "" {
				t.Errorf("feed id %q title %q updated %q author %+v", f.ID, f.Title, f.Updated, f.Author)
			}
			if !hasLink(f.Links, "self", "https://proof.fixture.example/"+tc.feed) {
				t.Errorf("no self link: %+v", f.Links)
			}
			var titles, ids []string
			for _, e := range f.Entries {
				titles, ids = append(titles, e.Title), append(ids, e.ID)
				if _, err := time.Parse(time.RFC3339, e.Updated); err != nil || !strings.HasPrefix(e.ID, "https://proof.fixture.example/") {
					t.Errorf("entry %q: id %q updated %q", e.Title, e.ID, e.Updated)
				}
				if !hasLink(e.Links, "alternate", e.ID) {
					t.Errorf("entry %q has no alternate link to %s", e.Title, e.ID)
				}
				switch {
				case tc.contentType == "" && e.Summary == nil:
					t.Errorf("entry %q has no summary", e.Title)
				case tc.contentType != "" && (e.Content == nil || e.Content.Type != tc.contentType || e.Content.Body == ""):
					t.Errorf("entry %q has no %s content", e.Title, tc.contentType)
				}
			}
			if !slices.Equal(titles, tc.entries) {
				t.Errorf("entries %q\nwant    %q", titles, tc.entries)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
				t.Errorf("ids are not unique: %q", ids)
			}
		})
	}
}

func hasLink(links []atomLink, rel, href string) bool {
	return slices.ContainsFunc(links, func(l atomLink) bool { return l.Rel == rel && l.Href == href })
}
