package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/templates"
)

// Paths of the site-wide files.
const (
	constitutionTextPath   = "constitution.txt"
	constitutionStatusPath = "constitution-status.json"
	stewardshipPath        = "stewardship-horizon.json"
	llmsPath               = "llms.txt"
	aiPath                 = ".well-known/ai.json"
	robotsPath             = "robots.txt"
	sitemapPath            = "sitemap.xml"
	indexTxtPath           = "index.txt"
	headersPath            = "_headers"
	redirectsPath          = "_redirects"
)

// pathParam is a {param} segment of a route template.
var pathParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// mdWriter writes markdown twins and llms.txt.
type mdWriter struct{ strings.Builder }

func (w *mdWriter) line(s string) *mdWriter { w.WriteString(s); w.WriteByte('\n'); return w }
func (w *mdWriter) h1(s string) *mdWriter   { return w.line("# " + s).line("") }
func (w *mdWriter) h2(s string) *mdWriter   { return w.line("## " + s).line("") }
func (w *mdWriter) h3(s string) *mdWriter   { return w.line("### " + s).line("") }

func (w *mdWriter) para(s string) *mdWriter {
	if s = strings.TrimSpace(s); s == "" {
		return w
	}
	return w.line(s).line("")
}

func (w *mdWriter) item(href, label, note string) *mdWriter {
	if note = strings.TrimSpace(note); note != "" {
		return w.line(fmt.Sprintf("- [%s](%s): %s", label, href, note))
	}
	return w.line(fmt.Sprintf("- [%s](%s)", label, href))
}

// table writes a markdown table: identifiers as code, linked cells as links.
func (w *mdWriter) table(t templates.Table) *mdWriter {
	w.line("| " + strings.Join(t.Columns, " | ") + " |")
	w.line(strings.Repeat("|---", len(t.Columns)) + "|")
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = strings.ReplaceAll(c.Text, "|", `\|`)
			if c.Identifier {
				cells[i] = "`" + cells[i] + "`"
			}
			if c.Href != "" {
				cells[i] = "[" + cells[i] + "](" + c.Href + ")"
			}
		}
		w.line("| " + strings.Join(cells, " | ") + " |")
	}
	return w.line("")
}

func (w *mdWriter) links(links []templates.Link) *mdWriter {
	for _, l := range links {
		w.item(l.Href, l.Label, l.Note)
	}
	return w.line("")
}

// constitutionText is the published constitution as one plain-text file.
func (b *build) constitutionText() []byte {
	b.textOnce.Do(func() {
		c := b.cfg.Constitution
		var w bytes.Buffer
		fmt.Fprintf(&w, "%s\nVersion %s (%s", c.Title, c.Version, c.Status)
		if !c.Adopted.IsZero() {
			fmt.Fprintf(&w, " %s", c.Adopted)
		}
		fmt.Fprintf(&w, "). License: %s.\n%d articles.\n", c.License, len(b.s.Articles))
		part := ""
		for _, a := range b.s.Articles {
			if a.Part != part {
				part = a.Part
				fmt.Fprintf(&w, "\n\n%s\n%s\n", part, strings.Repeat("=", len([]rune(part))))
			}
			fmt.Fprintf(&w, "\nArticle %d. %s\n\n%s\n", a.Article, a.Title, bytes.TrimSpace(a.Body))
		}
		b.text = w.Bytes()
	})
	return b.text
}

func (b *build) constitutionTextJob() job {
	paths := []string{constitutionTextPath, constitutionTextPath + ".sha256"}
	return job{key: "constitution-text", paths: paths, fp: b.articles, run: func() ([][]byte, error) {
		text := b.constitutionText()
		_, sum := shaFile(constitutionTextPath, text)
		return [][]byte{text, sum}, nil
	}}
}

// answeringRoutes are the routes on which AI nodes answer with a signed
// receipt.
var answeringRoutes = []string{"/api/chat", "/api/pulse", "/api/ember", "/api/lumen", "/api/v1/query"}

// townChatRoute is the route on which a town's node answers visitors.
const townChatRoute = "/api/v1/towns/{id}/chat"

func (b *build) llmsJob() job {
	fp := newDigest().str("llms").sums(b.config, b.summaries, b.r.optsDigest).sum()
	return job{key: "llms", paths: []string{llmsPath}, fp: fp, run: func() ([][]byte, error) {
		cfg := b.cfg
		var w mdWriter
		w.h1(cfg.Organisation.Name)
		w.line("> " + strings.Join(strings.Fields(cfg.Summary), " ")).line("")
		w.para(cfg.Description)
		w.para("Integrity field: `canonical_spine_valid` in /api/ledger/verify is authoritative. The legacy `valid` field is deprecated and scoped to the strict table. Every live JSON response carries a request-time `generated_at` and `Cache-Control: no-store`; a stale `generated_at` is drift.")
		w.para(cfg.Organisation.HumanAuthority)

		w.h2("Proof surface")
		for _, l := range b.proofLinks() {
			w.item(b.abs(l.Href), l.Label, l.Note)
		}
		for _, d := range b.docPages() {
			if strings.HasPrefix(d.Path, "docs/") {
				w.item(b.abs("/"+d.TwinPath()), d.Title, d.Summary)
			}
		}
		w.line("")

		if len(b.r.opts.Endpoints) > 0 {
			w.h2("API endpoint map")
			var answering []string
			receipts, townChat := false, false
			for _, e := range b.r.opts.Endpoints {
				w.item(b.origin(e)+e.Path, e.Method+" "+e.Path, e.Summary)
				receipts = receipts || e.Path == "/api/agent/receipt"
				townChat = townChat || e.Path == townChatRoute
				if slices.Contains(answeringRoutes, e.Path) && !slices.Contains(answering, e.Path) {
					answering = append(answering, e.Path)
				}
			}
			w.line("")
			if receipts && len(answering) > 0 {
				w.para("The AI routes (" + strings.Join(answering, ", ") + ") give a node nothing but the message: no memory, no private context, and session context is never authority; a member they do not document is refused. Every answer names the node, the provider and the model that answered and carries a receipt signed with that node's key (role `node`, listed in the trust document /keys.json, in ai.json and in /api/nodes). Check one with POST /api/agent/receipt (a receipt that does not verify is a 422 problem naming what failed, never verified true), or offline with the downloadable verifier: go run verify-ledger.go receipt --keys keys.json RECEIPT.json.")
			}
			if townChat {
				w.para("The town routes (POST /api/v1/towns/{id}/chat and POST /api/v1/towns/{id}/inter-node) answer as the town's node, through its provider or offline, and give it that town's memory (its node's memories, public at GET /api/memory/retrieve/{node_id}) and nothing else. An inter-node answer carries request_id, payload_hash, response_hash and the witness (block_hash, prev_hash) of the chain block that recorded the exchange, once it is durable.")
			}
		}

		w.h2("Gate")
		w.item(b.abs("/gate.html"), "The gate", "authorization checkpoint, capability board, real today versus roadmap")
		for _, d := range b.docPages() {
			if strings.HasPrefix(d.Path, "products/") {
				w.item(b.abs("/"+d.TwinPath()), d.Title, d.Summary)
			}
		}
		w.line("")

		c := cfg.Constitution
		w.h2("Constitution")
		w.item(b.abs("/"+constitutionTextPath), fmt.Sprintf("%s, version %s", c.Title, c.Version), fmt.Sprintf("full text, %d articles, CC0", len(b.s.Articles)))
		w.item(b.abs("/"+constitutionStatusPath), "Constitution status", "version, text SHA-256 and the article count of every surface")
		w.item(b.abs("/constitution/"), "Constitution, one page per article", "")
		w.line("")

		var other []templates.Link
		for _, d := range b.docPages() {
			if !strings.HasPrefix(d.Path, "docs/") && !strings.HasPrefix(d.Path, "products/") {
				other = append(other, templates.Link{Href: "/" + d.TwinPath(), Label: d.Title, Note: d.Summary})
			}
		}
		for _, p := range b.datedPages() {
			other = append(other, templates.Link{Href: "/" + p.TwinPath(), Label: p.Title, Note: p.Summary})
		}
		if len(other) > 0 {
			w.h2("Pages")
			for _, l := range other {
				w.item(b.abs(l.Href), l.Label, l.Note)
			}
			w.line("")
		}

		w.h2("Optional")
		w.item(b.abs("/"+aiPath), "ai.json", "machine-readable discovery manifest")
		w.item(b.abs("/"+sitemapPath), "Sitemap", "")
		if len(b.feedPages()) > 0 {
			w.item(b.abs("/"+pagesFeedPath), "Pages feed", "Atom feed of new and changed pages")
		}
		for _, p := range b.s.Pages {
			if p.Type == content.ChangelogType {
				w.item(b.abs("/"+changelogFeedPath(p)), p.Title+" feed", "Atom feed, one entry per dated change")
			}
		}
		w.item(b.abs("/"+indexTxtPath), "Every published file", "plain list of URLs")
		return [][]byte{[]byte(w.String())}, nil
	}}
}

func (b *build) robotsJob() job {
	return job{key: "robots", paths: []string{robotsPath}, fp: newDigest().str("robots", b.base).sum(), run: func() ([][]byte, error) {
		return [][]byte{fmt.Appendf(nil, "User-agent: *\nAllow: /\n\nSitemap: %s/%s\n# AI-facing entry point: %s/%s\n", b.base, sitemapPath, b.base, llmsPath)}, nil
	}}
}

type sitemapURL struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

type urlSet struct {
	XMLName xml.Name     `xml:"urlset"`
	NS      string       `xml:"xmlns,attr"`
	URLs    []sitemapURL `xml:"url"`
}

func (b *build) sitemapJob(all []string, allSum [32]byte) job {
	fp := newDigest().str("sitemap", b.base).sums(b.summaries).sums(allSum)
	return job{key: "sitemap", paths: []string{sitemapPath}, fp: fp.sum(), run: func() ([][]byte, error) {
		all := slices.Sorted(slices.Values(all))
		dates := map[string]string{}
		for _, p := range b.s.Pages {
			dates[p.Path] = dateView(p.Lastmod).DateTime
		}
		aliases := b.aliases()
		set := urlSet{NS: "http://www.sitemaps.org/schemas/sitemap/0.9"}
		for _, p := range all {
			if strings.HasSuffix(p, ".html") && p != "404.html" && aliases[p] == nil {
				set.URLs = append(set.URLs, sitemapURL{Loc: b.abs(urlPath(p)), LastMod: dates[p]})
			}
		}
		out, err := xml.MarshalIndent(set, "", "  ")
		if err != nil {
			return nil, err
		}
		return [][]byte{slices.Concat([]byte(xml.Header), out, []byte("\n"))}, nil
	}}
}

// aliases maps the output path of every alias to its page.
func (b *build) aliases() map[string]*content.Page {
	out := map[string]*content.Page{}
	for _, p := range b.s.Pages {
		for _, a := range p.Aliases {
			out[a] = p
		}
	}
	return out
}

func (b *build) indexTxtJob(all []string, allSum [32]byte) job {
	fp := newDigest().str("index.txt", b.base).sums(allSum)
	return job{key: "index.txt", paths: []string{indexTxtPath}, fp: fp.sum(), run: func() ([][]byte, error) {
		all := slices.Sorted(slices.Values(all))
		var w bytes.Buffer
		for _, p := range all {
			if p == headersPath || p == redirectsPath {
				continue
			}
			w.WriteString(b.abs(urlPath(p)))
			w.WriteByte('\n')
		}
		return [][]byte{w.Bytes()}, nil
	}}
}

// hostFilesJob writes the routing files static hosts (Netlify, Cloudflare
// Pages and compatible) read: content types and cache rules; the routes the
// API origin answers, proxied to it; the aliases, redirected to their pages;
// and every page at its address without .html ("/gate" for /gate.html), as
// the live edge serves them.
func (b *build) hostFilesJob(all []string, allSum [32]byte) job {
	fp := newDigest().str("host", b.api).sums(b.summaries, allSum, b.r.optsDigest)
	return job{key: "host-files", paths: []string{headersPath, redirectsPath}, fp: fp.sum(), run: func() ([][]byte, error) {
		headers := `# Response headers for static hosts. Generated by proofsite build.
# Pages served without .html ("/gate", see _redirects) take the host's
# default HTML caching, which is the rule below: revalidate every time.
/*
  X-Content-Type-Options: nosniff
  Referrer-Policy: strict-origin-when-cross-origin
  X-Frame-Options: DENY
  Content-Security-Policy: default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'
/*.html
  Cache-Control: public, max-age=0, must-revalidate
/*.md
  Content-Type: text/markdown; charset=utf-8
  Cache-Control: public, max-age=0, must-revalidate
/*.txt
  Content-Type: text/plain; charset=utf-8
  Cache-Control: public, max-age=0, must-revalidate
/*.sha256
  Content-Type: text/plain; charset=utf-8
  Cache-Control: public, max-age=0, must-revalidate
/*.go
  Content-Type: text/plain; charset=utf-8
  Cache-Control: public, max-age=0, must-revalidate
/*.json
  Content-Type: application/json; charset=utf-8
  Cache-Control: public, max-age=0, must-revalidate
/*.xml
  Cache-Control: public, max-age=0, must-revalidate
/` + pagesFeedPath + `
  Content-Type: application/atom+xml; charset=utf-8
/.well-known/ai.json
  Access-Control-Allow-Origin: *
/assets/*
  Cache-Control: public, max-age=31536000, immutable
`
		// Only the routes the API origin answers are sent there; the other
		// live routes are answered by "proofsite serve" at base_url, which a
		// static host alone does not run.
		var r strings.Builder
		r.WriteString("# The routes the API origin answers, proxied to it (status 200 makes the host\n" +
			"# proxy the request). The proof surface's live routes (/api/ledger/verify and\n" +
			"# the others in /openapi.json) are answered by proofsite serve at the site's\n" +
			"# own origin, not by a static host. Generated by proofsite build.\n")
		seen := map[string]bool{}
		for _, e := range b.r.opts.Endpoints {
			if !e.OnAPI || seen[e.Path] {
				continue
			}
			seen[e.Path] = true
			p := pathParam.ReplaceAllString(e.Path, ":$1")
			fmt.Fprintf(&r, "%s  %s%s  200\n", p, b.api, p)
		}
		aliases := b.aliases()
		if len(aliases) > 0 {
			r.WriteString("\n# Old addresses of pages (front matter \"aliases\").\n")
			for _, a := range slices.Sorted(maps.Keys(aliases)) {
				fmt.Fprintf(&r, "%s  %s  301\n", urlPath(a), aliases[a].URL())
			}
		}
		// Folders need no rule: hosts answer /pages with /pages/ themselves,
		// and a rule would loop on hosts that ignore the trailing slash.
		r.WriteString("\n# Every page also without .html.\n")
		for _, p := range slices.Sorted(slices.Values(all)) {
			page, ok := strings.CutSuffix(p, ".html")
			if ok && aliases[p] == nil && p != "404.html" && p != "index.html" && !strings.HasSuffix(p, "/index.html") {
				fmt.Fprintf(&r, "/%s  /%s  200\n", page, p)
			}
		}
		return [][]byte{[]byte(headers), []byte(r.String())}, nil
	}}
}
