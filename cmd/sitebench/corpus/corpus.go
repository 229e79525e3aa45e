// Package corpus generates the synthetic pages the build benchmark adds to a
// site: markdown documents of about 1.5 KB with front matter (title, summary,
// date, tags), "##" and "###" headings, bullet, numbered and task lists,
// links (some to other generated pages), fenced code blocks in go, sh or
// json, GFM tables, strikethrough and, on some pages, a footnote.
//
//	pages := corpus.Generate(1, 5000)        // the same bytes on every run
//	err := corpus.Write(dir, pages)          // dir/p0001.md, dir/p0002.md, ...
//
// Generation is deterministic: it uses its own small PRNG (splitmix64), not
// math/rand, so the corpus cannot change under a new Go release. The same
// pages are written into the proofsite content (pages/gen/) and into the Hugo
// site (content/gen/), so both generators parse identical bytes.
package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LinkPrefix is the URL folder of the generated pages. Links between
// generated pages point at LinkPrefix + name + ".html", the path proofsite
// publishes pages/gen/NAME.md at; the benchmark's Hugo site is configured to
// publish at the same paths, so the links resolve on both sites.
const LinkPrefix = "/pages/gen/"

// TargetSize is the size a generated file aims at, front matter included.
const TargetSize = 1500

// Page is one generated document.
type Page struct {
	Name    string // file stem, e.g. "p0042"
	Title   string
	Summary string
	Date    string // YYYY-MM-DD
	Tags    []string
	Body    []byte // markdown after the front matter; never starts with a level-1 heading
}

// File returns the page as a markdown file: YAML front matter, then the body.
func (p Page) File() []byte {
	var b bytes.Buffer
	b.Grow(len(p.Body) + 256)
	p.writeFrontMatter(&b)
	b.Write(p.Body)
	return b.Bytes()
}

func (p Page) writeFrontMatter(b *bytes.Buffer) {
	fmt.Fprintf(b, "---\ntitle: %q\nsummary: %q\ndate: %s\ntags: [%s]\n---\n",
		p.Title, p.Summary, p.Date, strings.Join(p.Tags, ", "))
}

// WithMarker returns a copy of p whose body starts with a paragraph holding
// marker, the edit the incremental benchmark makes. The front matter is
// unchanged, so only the page itself has to be rebuilt. marker must be plain
// letters, digits and "-" so it reaches the HTML verbatim.
func (p Page) WithMarker(marker string) Page {
	body := make([]byte, 0, len(p.Body)+len(marker)+32)
	body = append(body, "Revision "...)
	body = append(body, marker...)
	body = append(body, ".\n\n"...)
	p.Body = append(body, p.Body...)
	return p
}

// Name returns the file stem of page i (1-based) of a corpus of n pages:
// "p" and the number, zero-padded to at least four digits so names sort.
func Name(i, n int) string {
	width := max(4, len(fmt.Sprint(n)))
	return fmt.Sprintf("p%0*d", width, i)
}

// Generate returns n pages generated from seed. The same seed and n always
// give the same pages, byte for byte.
func Generate(seed uint64, n int) []Page {
	pages := make([]Page, n)
	for i := range pages {
		pages[i] = generatePage(seed, i+1, n)
	}
	return pages
}

// Write writes every page to dir/NAME.md, creating dir.
func Write(dir string, pages []Page) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	for _, p := range pages {
		if err := os.WriteFile(filepath.Join(dir, p.Name+".md"), p.File(), 0o644); err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
	}
	return nil
}
