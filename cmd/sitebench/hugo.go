package main

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/proofsite/proofsite/cmd/sitebench/corpus"
	"github.com/proofsite/proofsite/templates"
)

// The Hugo site of the comparison, without its pages: hugosite/config.toml
// and small layouts (baseof, single, list, index, 404) that print what
// proofsite's page frame prints for a generated page.
//
// Fairness choices, also printed under every report (fairnessNotes):
//
//   - Same pages: the generated files are byte for byte the same in both
//     sites. proofsite's site also holds the project's own content (about 60
//     documents: pages, constitution articles, downloadable documents); Hugo's
//     holds only the generated pages.
//   - Same markdown work: goldmark with GFM (tables, strikethrough, linkify,
//     task lists), footnotes and automatic heading ids on both; typographer
//     and definition lists, on by default in Hugo, are off as in proofsite;
//     code is highlighted by chroma with CSS classes on both
//     (markup.highlight.noClasses = false).
//   - Same frame: one layout per kind of page, of the size of proofsite's
//     (head with canonical and alternate links, five-item nav, footer); the
//     section list shows every page with date and summary, as proofsite's
//     pages index does; the home page lists the ten newest.
//   - Same paths: uglyURLs and a permalink put page gen/p0042.md at
//     pages/gen/p0042.html, proofsite's path, so links resolve on both and
//     both write one folder of pages rather than Hugo one folder per page.
//   - What each produces: Hugo writes an HTML file per page, the home page
//     with an RSS feed of the 50 newest pages, one section list (gen.html),
//     the tags index and a page per tag, sitemap.xml and 404.html; no other
//     feeds ([outputs]). proofsite writes an HTML file and a markdown twin
//     per page and its aggregates: home and pages index (each with a twin),
//     the tags index and a page per tag (with twins), an Atom feed of the 50
//     newest pages, llms.txt, sitemap.xml, index.txt, the constitution pages
//     and text, JSON status files, robots.txt, 404.html, the stylesheet and
//     the icons. proofsite therefore writes about twice as many files.
//   - No caches carried over: every Hugo run gets a fresh --cacheDir, and
//     both tools build into an empty output folder every run (the earlier
//     output is moved aside, see clearOutput).
//
//go:embed all:hugosite
var hugoSiteFS embed.FS

// fairnessNotes are the fairness choices in the words the report prints.
var fairnessNotes = []string{
	"Same generated pages, byte for byte, in both sites; proofsite's site also holds the project's own content (~60 documents), Hugo's only the generated pages.",
	"Same markdown work: goldmark with GFM (tables, strikethrough, linkify, task lists), footnotes and auto heading ids on both; Hugo's typographer and definition lists switched off as in proofsite; chroma highlighting with CSS classes on both (`markup.highlight.noClasses = false`).",
	"Same frame: Hugo layouts (baseof/single/list/index/404) print what proofsite's frame prints for a page: head with canonical and alternate links, five-item nav, footer; the section list shows every page with date and summary like proofsite's pages index; the home page lists the ten newest.",
	"Same paths: Hugo's `uglyURLs` and a permalink publish `gen/p0042.md` at `pages/gen/p0042.html`, proofsite's path.",
	"Outputs: Hugo writes one HTML file per page, home with an RSS feed of the 50 newest pages, one section list, the tags index and a page per tag, sitemap.xml and 404.html (`[outputs]`, `services.rss.limit = 50`). proofsite writes HTML plus a markdown twin per page and its aggregates (home, pages index, tags index and a page per tag, all with twins; an Atom feed of the 50 newest pages, llms.txt, sitemap.xml, index.txt, constitution pages and text, JSON status files, robots.txt, 404, stylesheet, icons): about twice the files. Full-build wall times include creating them, so where creating a file is slow (see the work folder row) that weighs twice on proofsite; `-work /dev/shm/...` measures the same builds on tmpfs.",
	"Full builds: every run writes into an empty output folder (the last run's output is moved aside and deleted only at the end: on ext4, files created within 30 s of a mass deletion cost the creator an inode scan each) on flushed file systems (sync), a fresh Hugo `--cacheDir` per run, runs interleaved (proofsite, hugo, proofsite, ...) after one warm-up each; medians reported. Peak RSS is the process's Maxrss from getrusage.",
	"Incremental: one page's body is rewritten in place (truncate and write, as an editor saving); latency runs from just before the write until the page's HTML is complete on disk (ends with `</html>`) and holds the edit's marker, seen through fsnotify on its folder with a 1 ms stat poll as a fallback. Edits are spaced so no debounce window merges two.",
	"Hugo's server runs with `--renderToDisk` and live reload on, so that fast render mode is on (Hugo 0.111 switches it off with `--disableLiveReload`), and the home page is requested once, as a browser open on the site would; `-hugo-nofast` adds a run with `--disableLiveReload`. Hugo's watcher batches file events on a 500 ms tick, which is part of its latency.",
}

// writeHugoSite writes the Hugo site into dir: configuration, layouts, the
// project stylesheet (as a static file) and the pages under content/gen/.
func writeHugoSite(dir string, pages []corpus.Page) error {
	site, err := fs.Sub(hugoSiteFS, "hugosite")
	if err != nil {
		return err
	}
	if err := os.CopyFS(dir, site); err != nil {
		return err
	}
	static := filepath.Join(dir, "static", "assets")
	if err := os.MkdirAll(static, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(static, "style.css"), templates.Stylesheet, 0o644); err != nil {
		return err
	}
	return corpus.Write(filepath.Join(dir, "content", "gen"), pages)
}

// errNoOutput is returned when a generated page's output file is not where
// either generator is known to put it.
var errNoOutput = errors.New("output of a generated page not found")

// findPageOutput returns the output path, relative to out, of generated page
// name: proofsite and the Hugo site above use pages/gen/NAME.html; Hugo with
// other permalink settings would use one of the others.
func findPageOutput(out, name string) (string, error) {
	candidates := []string{
		"pages/gen/" + name + ".html",
		"gen/" + name + "/index.html",
		"gen/" + name + ".html",
		"pages/gen/" + name + "/index.html",
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(c))); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: %s in %s (looked for %v)", errNoOutput, name, out, candidates)
}
