package site_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
)

// editableSite is a copy of the fixture that a test edits like an editor.
type editableSite struct {
	t   *testing.T
	dir string
	// before holds what the files of the current edit held before it (nil:
	// the file did not exist), so a broken save can be undone.
	before map[string]*string
}

// newEditableSite copies the site fixture and, over it, the given folders.
func newEditableSite(t *testing.T, overlays ...string) *editableSite {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	for _, src := range append([]string{fixtureDir}, overlays...) {
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	return &editableSite{t: t, dir: dir, before: map[string]*string{}}
}

// remember records the content of rel before the current edit changes it.
func (s *editableSite) remember(rel string) {
	if _, ok := s.before[rel]; ok {
		return
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel))); err == nil {
		text := string(b)
		s.before[rel] = &text
	} else {
		s.before[rel] = nil
	}
}

// undo restores the files of the last edit and returns their paths.
func (s *editableSite) undo() []string {
	s.t.Helper()
	var paths []string
	for rel, text := range s.before {
		if text == nil {
			s.remove(rel)
		} else {
			s.write(rel, *text)
		}
		paths = append(paths, rel)
	}
	clear(s.before)
	slices.Sort(paths)
	return paths
}

// testOptions are the options of every test build: the test artifacts, and
// the fixed moment that decides which scheduled pages are published.
func testOptions(contentDir, out string, incremental bool) site.Options {
	return site.Options{ContentDir: contentDir, OutDir: out, Incremental: incremental, Render: testRenderOptions(), Visibility: content.Visibility{Now: testNow}}
}

func (s *editableSite) write(rel, data string) string {
	s.t.Helper()
	s.remember(rel)
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
	s.remember(rel)
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

// TestIncrementalEqualsFullBuild applies random editor actions to the site
// and the Hugo pages, rebuilds incrementally after each with the paths that
// changed, and compares the output with a fresh full build of the same
// content, byte for byte.
func TestIncrementalEqualsFullBuild(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			s := newEditableSite(t, hugoFixture)
			out := filepath.Join(t.TempDir(), "public")
			inc, err := site.New(testOptions(s.dir, out, true))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := inc.Build(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			n, broken := 0, 0
			for step := range 40 {
				clear(s.before)
				action, changed := randomEdit(s, rng, &n)
				_, err := inc.Build(context.Background(), changed)
				if errors.Is(err, content.ErrInvalid) {
					// A broken save (or an edit that collides with another
					// page): the editor undoes it, and the rebuild must
					// give the site back.
					broken++
					action += ", undone"
					_, err = inc.Build(context.Background(), s.undo())
				}
				if err != nil {
					t.Fatalf("step %d (%s): %v", step, action, err)
				}
				want := filepath.Join(t.TempDir(), fmt.Sprint("full", step))
				full, err := site.New(testOptions(s.dir, want, false))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := full.Build(context.Background(), nil); err != nil {
					t.Fatalf("step %d (%s): the full build fails where the incremental one passed: %v", step, action, err)
				}
				if diff := compareTrees(tree(t, out), tree(t, want)); diff != "" {
					t.Fatalf("step %d (%s): incremental output differs from a full build:\n%s%s", step, action, diff, firstDifferences(out, want, diff))
				}
			}
			if broken > 20 {
				t.Errorf("%d of 40 edits were invalid: the test exercises too little", broken)
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
	// setKey sets a front matter key of p to a value (already written in
	// p's language) or, with value "", removes it.
	setKey := func(action, key, value string) (string, []string) {
		p := pick()
		return fmt.Sprintf("%s %s (%s %s)", action, p, key, value), []string{s.write(p, withFrontKey(s.read(p), key, value))}
	}
	day := func() string {
		return fmt.Sprintf("2026-%02d-%02dT%02d:30:00+02:00", 1+rng.IntN(9), 1+rng.IntN(28), rng.IntN(24))
	}
	switch rng.IntN(17) {
	case 0:
		p := pick()
		return "edit body of " + p, []string{s.write(p, s.read(p)+fmt.Sprintf("\nMore text %d.\n", *n))}
	case 1:
		return setKey("retitle", "title", fmt.Sprintf("Retitled %d", *n))
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
	case 9:
		p := pick()
		return "reslug " + p, []string{s.write(p, pageSource("Slugged", "S.", "2026-08-01", fmt.Sprintf("slug-%d", *n), "## B\n"))}
	case 10:
		return setKey("toggle draft", "draft", []string{"true", "false", ""}[rng.IntN(3)])
	case 11:
		return setKey("redate", "date", day())
	case 12:
		aliases := []string{"", "[/old/a/]", "[/old/b/, old-name]", "[/old/a.html]"}
		return setKey("alias", "aliases", aliases[rng.IntN(len(aliases))])
	case 13:
		tags := []string{"", "[Go]", "[go, Release Notes]", "[fixture, intro, new]"}
		return setKey("retag", "tags", tags[rng.IntN(len(tags))])
	case 14:
		cats := []string{"", "[News]", "[Guides, Events]"}
		return setKey("recategorise", "categories", cats[rng.IntN(len(cats))])
	case 15:
		return setKey("schedule", []string{"publishDate", "expiryDate", "lastmod"}[rng.IntN(3)], day())
	default:
		p := fmt.Sprintf("pages/toml-%d.md", *n)
		return "add TOML " + p, []string{s.write(p, fmt.Sprintf("+++\ntitle = \"TOML %d\"\ndate = %s\ntags = [\"Go\", \"toml\"]\naliases = [\"/toml/%d/\"]\n+++\nA TOML page.\n", *n, day(), *n))}
	}
}

// withFrontKey sets key to value in the front matter of src, whatever its
// language, or removes the key when value is "". Values are written in
// YAML's flow syntax, which TOML and JSON read after light changes.
func withFrontKey(src, key, value string) string {
	var line, find string
	switch {
	case strings.HasPrefix(src, "+++"):
		v := value
		if strings.HasPrefix(v, "[") {
			v = "[" + quoteAll(strings.Trim(v, "[]")) + "]"
		} else if key == "title" {
			v = strconv.Quote(v)
		}
		line, find = key+" = "+v, `(?m)^`+key+` = .*\n`
	case strings.HasPrefix(src, "{"):
		v := value
		if strings.HasPrefix(v, "[") {
			v = "[" + quoteAll(strings.Trim(v, "[]")) + "]"
		} else if v != "true" && v != "false" {
			v = strconv.Quote(v)
		}
		line, find = `  "`+key+`": `+v+",", `(?m)^  "`+key+`": .*\n`
	default:
		line, find = key+": "+value, `(?m)^`+key+`: .*\n`
	}
	src = regexp.MustCompile(find).ReplaceAllString(src, "")
	if value == "" {
		return src
	}
	first, rest, _ := strings.Cut(src, "\n")
	return first + "\n" + line + "\n" + rest
}

// quoteAll quotes each item of a comma-separated list.
func quoteAll(list string) string {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, strconv.Quote(item))
		}
	}
	return strings.Join(out, ", ")
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

// firstDifferences shows, for each file that differs (a line "differs
// NAME" of diff), its first line that differs in the incremental output
// (got) and in the full build (want).
func firstDifferences(got, want, diff string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(diff, "\n") {
		name, ok := strings.CutPrefix(line, "differs ")
		if !ok {
			continue
		}
		g, _ := os.ReadFile(filepath.Join(got, name))
		w, _ := os.ReadFile(filepath.Join(want, name))
		gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
		for i := range max(len(gl), len(wl)) {
			at := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end of file)"
			}
			if at(gl) != at(wl) {
				fmt.Fprintf(&b, "\n%s, line %d:\n  incremental: %.400s\n  full:        %.400s", name, i+1, at(gl), at(wl))
				break
			}
		}
	}
	return b.String()
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
			want: []string{"index.html", "index.md", "llms.txt", "pages/hello.html", "pages/hello.md", "pages/index.html", "pages/index.md",
				"pages/index.xml", "tags/fixture/index.html", "tags/fixture/index.md", "tags/intro/index.html", "tags/intro/index.md"},
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
			b, err := site.New(testOptions(s.dir, filepath.Join(t.TempDir(), "public"), true))
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
