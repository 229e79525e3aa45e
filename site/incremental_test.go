package site_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
)

// editableSite is a copy of the fixture that a test edits like an editor.
type editableSite struct {
	t   *testing.T
	dir string
}

func newEditableSite(t *testing.T) *editableSite {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	return &editableSite{t: t, dir: dir}
}

func (s *editableSite) write(rel, data string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return rel
}

func (s *editableSite) read(rel string) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *editableSite) remove(rel string) string {
	s.t.Helper()
	if err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(rel))); err != nil {
		s.t.Fatal(err)
	}
	return rel
}

func (s *editableSite) pages() []string {
	s.t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(s.dir, "pages"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(s.dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func pageSource(title, summary, date, slug, body string) string {
	fm := fmt.Sprintf("---\ntitle: %s\nsummary: %s\ndate: %s\n", title, summary, date)
	if slug != "" {
		fm += "slug: " + slug + "\n"
	}
	return fm + "---\n" + body
}

// TestIncrementalEqualsFullBuild applies random editor actions, rebuilds
// incrementally after each with the paths that changed, and compares the
// output with a fresh full build of the same content, byte for byte.
func TestIncrementalEqualsFullBuild(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			s := newEditableSite(t)
			out := filepath.Join(t.TempDir(), "public")
			inc, err := site.New(site.Options{ContentDir: s.dir, OutDir: out, Incremental: true, Render: testRenderOptions()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := inc.Build(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			n := 0
			for step := range 25 {
				action, changed := randomEdit(s, rng, &n)
				_, err := inc.Build(context.Background(), changed)
				if errors.Is(err, content.ErrInvalid) {
					continue // a broken save; a later step repairs or replaces it
				}
				if err != nil {
					t.Fatalf("step %d (%s): %v", step, action, err)
				}
				want := filepath.Join(t.TempDir(), fmt.Sprint("full", step))
				full, err := site.New(site.Options{ContentDir: s.dir, OutDir: want, Render: testRenderOptions()})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := full.Build(context.Background(), nil); err != nil {
					t.Fatalf("step %d (%s): the full build fails where the incremental one passed: %v", step, action, err)
				}
				if diff := compareTrees(tree(t, out), tree(t, want)); diff != "" {
					t.Fatalf("step %d (%s): incremental output differs from a full build:\n%s", step, action, diff)
				}
			}
		})
	}
}

// randomEdit performs one editor action and returns its name and the
// content paths it touched.
func randomEdit(s *editableSite, rng *rand.Rand, n *int) (string, []string) {
	*n++
	pages := s.pages()
	pick := func() string { return pages[rng.IntN(len(pages))] }
	switch rng.IntN(10) {
	case 0:
		p := pick()
		return "edit body of " + p, []string{s.write(p, s.read(p)+fmt.Sprintf("\nMore text %d.\n", *n))}
	case 1:
		p := pick()
		src := s.read(p)
		i := strings.Index(src, "title: ")
		j := strings.Index(src[i:], "\n")
		return "retitle " + p, []string{s.write(p, src[:i]+fmt.Sprintf("title: Retitled %d", *n)+src[i+j:])}
	case 2:
		p := fmt.Sprintf("pages/new-%d.md", *n)
		return "add " + p, []string{s.write(p, pageSource(fmt.Sprintf("New %d", *n), "Added.", fmt.Sprintf("2026-07-%02d", 1+*n%28), "", "## Body\n"))}
	case 3:
		if len(pages) < 3 {
			return "skip delete", nil
		}
		p := pick()
		return "delete " + p, []string{s.remove(p)}
	case 4:
		dir := fmt.Sprintf("pages/deep/sub-%d", *n)
		s.write(dir+"/x.md", pageSource(fmt.Sprintf("Deep %d", *n), "In a new folder.", "2026-09-01", "", "## Deep\n"))
		return "add folder " + dir, []string{dir} // the watcher reports a new folder, not its files
	case 5:
		p := "constitution/articles/02-article.md"
		return "edit article", []string{s.write(p, s.read(p)+fmt.Sprintf("3. Clause %d.\n", *n))}
	case 6:
		src := s.read("site.yaml")
		old := "note: Not yet."
		if !strings.Contains(src, old) {
			old = "note: Still not."
		}
		next := map[string]string{"note: Not yet.": "note: Still not.", "note: Still not.": "note: Not yet."}[old]
		return "edit site.yaml board", []string{s.write("site.yaml", strings.Replace(src, old, next, 1))}
	case 7:
		p := pick()
		return "break " + p, []string{s.write(p, "---\ntitle: [unclosed\n---\n")}
	case 8:
		p := fmt.Sprintf("static/file-%d.txt", *n%3)
		return "write " + p, []string{s.write(p, fmt.Sprintf("static %d\n", *n))}
	default:
		p := pick()
		return "reslug " + p, []string{s.write(p, pageSource("Slugged", "S.", "2026-08-01", fmt.Sprintf("slug-%d", *n), "## B\n"))}
	}
}

func compareTrees(got, want map[string]string) string {
	var diff []string
	for name, sum := range want {
		if g, ok := got[name]; !ok {
			diff = append(diff, "missing "+name)
		} else if g != sum {
			diff = append(diff, "differs "+name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			diff = append(diff, "extra "+name)
		}
	}
	slices.Sort(diff)
	return strings.Join(diff, "\n")
}

// TestIncrementalTouchesOnlyWhatChanged checks the dependency graph: what an
// edit re-renders and rewrites.
func TestIncrementalTouchesOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		desc  string
		edit  func(s *editableSite) []string
		want  []string // exactly these outputs are written
		among []string // at least these are written
	}{
		{
			desc: "a page body rewrites that page and its twin only",
			edit: func(s *editableSite) []string {
				return []string{s.write("pages/hello.md", s.read("pages/hello.md")+"\nOne more line.\n")}
			},
			want: []string{"pages/hello.html", "pages/hello.md"},
		},
		{
			desc: "a document body also rewrites its checksum and the manifest that lists it",
			edit: func(s *editableSite) []string {
				return []string{s.write("docs/GUIDE.md", s.read("docs/GUIDE.md")+"\nMore.\n")}
			},
			want: []string{".well-known/ai.json", "docs/GUIDE.html", "docs/GUIDE.md", "docs/GUIDE.md.sha256"},
		},
		{
			desc: "a page title rewrites the lists that show it",
			edit: func(s *editableSite) []string {
				return []string{s.write("pages/hello.md", strings.Replace(s.read("pages/hello.md"), "title: Hello, fixture", "title: Hello again", 1))}
			},
			want: []string{"index.html", "index.md", "llms.txt", "pages/hello.html", "pages/hello.md", "pages/index.html", "pages/index.md"},
		},
		{
			desc: "an article body rewrites the text, its checksums and the status",
			edit: func(s *editableSite) []string {
				p := "constitution/articles/01-article.md"
				return []string{s.write(p, s.read(p)+"3. A third clause.\n")}
			},
			want: []string{".well-known/ai.json", "constitution-status.json", "constitution.txt", "constitution.txt.sha256",
				"constitution/article-01.html", "constitution/article-01.md", "constitution/index.html", "constitution/index.md"},
		},
		{
			desc: "the capability board rewrites the gate page and the manifest, not the pages",
			edit: func(s *editableSite) []string {
				return []string{s.write("site.yaml", strings.Replace(s.read("site.yaml"), "note: Signed.", "note: Signed by the Bridge.", 1))}
			},
			want: []string{"gate.html", "gate.md"},
		},
		{
			desc: "the site title rewrites every page",
			edit: func(s *editableSite) []string {
				return []string{s.write("site.yaml", strings.Replace(s.read("site.yaml"), "title: Fixture Commons — public proof", "title: Renamed", 1))}
			},
			among: []string{"pages/hello.html", "constitution/article-03.html", "docs/GUIDE.html", "404.html", ".well-known/ai.json"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			s := newEditableSite(t)
			b, err := site.New(site.Options{ContentDir: s.dir, OutDir: filepath.Join(t.TempDir(), "public"), Incremental: true, Render: testRenderOptions()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Build(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			res, err := b.Build(context.Background(), tc.edit(s))
			if err != nil {
				t.Fatal(err)
			}
			if res.Full {
				t.Error("an edit caused a full build")
			}
			if tc.want != nil && !slices.Equal(res.Written, tc.want) {
				t.Errorf("wrote %q\nwant      %q", res.Written, tc.want)
			}
			for _, w := range tc.among {
				if !slices.Contains(res.Written, w) {
					t.Errorf("did not rewrite %s (wrote %q)", w, res.Written)
				}
			}
		})
	}
}
