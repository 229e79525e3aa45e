// Package templates holds the site's templ components and the view values
// they render. It knows nothing of content files: site/render turns loaded
// content into these views.
//
// Edit the *.templ files and run "make generate" (go tool templ generate);
// the generated *_templ.go files are committed.
package templates

import (
	"context"
	_ "embed"
	"html"
	"io"
	"strings"

	"github.com/a-h/templ"
)

// Stylesheet is the site's one stylesheet; the renderer appends the code
// highlighting rules and publishes it under a content-hashed name.
//
//go:embed assets/style.css
var Stylesheet []byte

// Meta is what every page's layout needs.
type Meta struct {
	SiteTitle    string
	Title        string
	Description  string
	Canonical    string // absolute URL of the page
	Twin         string // site path of the markdown twin, "" for none
	Stylesheet   string // site path of the stylesheet
	Language     string
	Section      string // nav section this page belongs to: home, gate, constitution, pages, verify
	License      string
	Organisation string
	ReloadURL    string // server-sent-events URL of the watch server; "" in normal builds
	ReloadPath   string // output path this page is published at, for the reload script
	NoIndex      bool

	// Social previews (Open Graph, Twitter cards).
	Kind      string // Open Graph type: "website", or "article" for a dated page
	Image     string // absolute URL of the preview image
	Published string // RFC 3339, dated pages only
	Modified  string // RFC 3339, dated pages only
	// Feeds are the Atom feeds the page offers to feed readers.
	Feeds []Link
}

// Icon paths, published by the build and named in every page's head.
const (
	IconSVG        = "/favicon.svg"
	IconPNG        = "/favicon-32.png"
	AppleTouchIcon = "/apple-touch-icon.png"
)

// Link is a labelled site link.
type Link struct {
	Href  string
	Label string
	Note  string
}

// PageView is a page rendered from markdown: a general page, a downloadable
// document or a constitution article.
type PageView struct {
	Title      string
	Summary    string
	Date       Date
	Tags       []Link // each links its tag's page
	Categories []Link
	TOC        []TOCEntry // the page's table of contents; empty on short pages
	BodyHTML   string     // trusted HTML rendered by goldmark from the content
	List       []ListItem // section pages: every page under the folder, newest first
	Feed       *Link      // a changelog's feed
	Download   *Download  // downloadable documents only
	Kicker     string     // small heading above the title, e.g. "Article 7 · Part II"
	Prev       *Link
	Next       *Link
	Up         *Link
}

// Date is a date as a reader sees it and as a machine reads it.
type Date struct {
	Text     string // e.g. "2026-05-01"; "" for none
	DateTime string // the datetime attribute: "2026-05-01" or RFC 3339
}

// TOCEntry is one heading in a table of contents, with the headings under it.
type TOCEntry struct {
	ID       string
	Text     string
	Children []TOCEntry
}

// Download describes the file a document page offers.
type Download struct {
	Href       string
	SHA256     string
	SHA256Href string
	License    string
}

// HomeView is the front page.
type HomeView struct {
	Title       string
	Summary     string
	Description string
	Authority   string
	ProofLinks  []Link
	Documents   []Link
	Pages       []Link
	// BrowserVerifier is the site path of the script that computes the
	// ledger's verdict in the browser; "" leaves that section out.
	BrowserVerifier string
	BaseURL         string // the site's base URL, for the command shown without scripts
}

// Table is the content of a DataTable.
type Table struct {
	Label   string // names the table (its caption, read by assistive technology)
	Columns []string
	Rows    [][]Cell
	// Long marks a table of many rows: the browser lays it out only once
	// it scrolls into view (content-visibility), so a page that opens
	// with it below the fold is not held up by it.
	Long bool
}

// Cell is one cell of a Table.
type Cell struct {
	Text       string
	Href       string // the cell links here when set
	Identifier bool   // a key, value or hash, shown as code that never breaks
}

// GateView is the gate product page.
type GateView struct {
	Title       string
	Summary     string
	Authority   string
	PublishRule string
	Disclaimer  string
	Action      string
	Requires    string
	Board       Table
	RealToday   []BoardRow
	Roadmap     []BoardRow
	Kits        []Link
}

// BoardRow is one capability of the maturity board, in the lists of what is
// real today and what is roadmap.
type BoardRow struct {
	Key     string
	Value   string
	Note    string
	Roadmap bool
}

// ConstitutionView is the constitution index and status page.
type ConstitutionView struct {
	Title      string
	Version    string
	Status     string
	Adopted    string
	License    string
	TextHref   string
	TextSHA256 string
	StatusHref string
	Runtime    Link
	Counts     Table // the article count of every surface
	Parts      []PartView
}

// PartView is one part of the constitution with its articles.
type PartView struct {
	Title    string
	Articles []ArticleLink
}

// ArticleLink links one numbered article.
type ArticleLink struct {
	Number int
	Href   string
	Title  string
}

// ListView is a list of pages, newest first, or of a taxonomy's terms.
type ListView struct {
	Title   string
	Summary string
	Items   []ListItem
	Feed    *Link // the list's feed, if it has one
}

// ListItem is one entry of a ListView.
type ListItem struct {
	Href    string
	Title   string
	Summary string
	Date    Date
}

// AliasView is the page left at an old address (an alias): it sends the
// browser on to the page's address.
type AliasView struct {
	Language string
	Title    string
	Target   string // site path the alias leads to
	Abs      string // absolute URL of the target, the alias's canonical URL
}

// footerLinks are the machine-readable documents every page's footer names.
func footerLinks(m Meta) []Link {
	links := []Link{{Href: "/llms.txt", Label: "llms.txt"}, {Href: "/.well-known/ai.json", Label: "ai.json"}, {Href: "/openapi.json", Label: "openapi.json"}}
	if m.Twin != "" {
		links = append(links, Link{Href: m.Twin, Label: "this page as markdown"})
	}
	return links
}

// listPunctuation is what follows item i of n in a sentence listing them.
func listPunctuation(i, n int) string {
	if i == n-1 {
		return "."
	}
	return ", "
}

// noteSuffix is what follows a link's label when it has a note.
func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}

// identifier writes an identifier such as orchestrator_invoked_checkpoint_today
// so that a narrow screen may break it after an underscore, between its
// words, and nowhere else.
func identifier(id string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, strings.ReplaceAll(html.EscapeString(id), "_", "_<wbr>"))
		return err
	})
}

// VerdictView is the ledger's verdict as the build computed it.
type VerdictView struct {
	Verdict    string // PASS, PASS_WITH_DOCUMENTED_STRICT_SEAM or a FAIL_… verdict
	Pass       bool
	Summary    string // one sentence: what was verified, over how many rows
	Checkpoint string // the Merkle checkpoint the rows hash to: "size 224, root …"
}

// ExplorerView is one page of the chain explorer: the verdict, the
// documented seams drawn, and a page of the strict table.
type ExplorerView struct {
	Title   string
	Summary string
	Verdict *VerdictView // nil when the build read no chain
	NoChain string       // why there are no rows, when Verdict is nil
	Facts   []Fact       // pins and counts
	Seams   []SeamDiagram
	Table   Table
	Page    string // "Rows 0 to 223 of 224"
	Prev    *Link
	Next    *Link
	Live    []Link // the live routes that answer for the chain as it is now
}

// Fact is a labelled value; Identifier values are shown as code.
type Fact struct {
	Label      string
	Value      string
	Href       string
	Identifier bool
}

// BlockView is the page of one block.
type BlockView struct {
	Title      string
	Summary    string
	Header     []Fact    // the public metadata the hash covers, and the hash
	Checks     []Fact    // what the build verified of the block on its own
	Signatures Table     // the writer's and the witnesses' signatures
	Place      []Fact    // its place on the spine and in the strict table
	Break      *SeamNote // the strict-table break at this row, if any
	Prev       *Link
	Next       *Link
	Up         Link
	Live       []Link
}

// SeamNote is a strict-table break: whether a pinned seam documents it,
// and why.
type SeamNote struct {
	Documented bool
	Text       string
}

// SeamDiagram draws the rows around a documented seam: one box per row,
// an arrow from each row to the row its prev_hash names. Coordinates are in
// the SVG's user units.
type SeamDiagram struct {
	ID     string // unique on the page, for aria references
	Title  string
	Desc   string // the diagram in words, for assistive technology
	Width  int
	Height int
	Boxes  []DiagramBox
	Arrows []DiagramArrow
}

// DiagramBox is one row of a SeamDiagram.
type DiagramBox struct {
	X, Y, W, H int
	Label      string // "152"
	Note       string // "off spine", "the seam"
	Class      string // "spine", "off" or "seam"
}

// DiagramArrow is a prev_hash link of a SeamDiagram, drawn as the SVG path D.
type DiagramArrow struct {
	D     string
	Class string // "link" or "jump" (over a row)
}
