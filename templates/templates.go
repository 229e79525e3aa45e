// Package templates holds the site's templ components and the view values
// they render. It knows nothing of content files: site/render turns loaded
// content into these views.
//
// Edit the *.templ files and run "make generate" (go tool templ generate);
// the generated *_templ.go files are committed.
package templates

import _ "embed"

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
}

// Link is a labelled site link.
type Link struct {
	Href  string
	Label string
	Note  string
}

// PageView is a page rendered from markdown: a general page, a downloadable
// document or a constitution article.
type PageView struct {
	Title    string
	Summary  string
	Date     string // YYYY-MM-DD, "" for none
	Tags     []string
	BodyHTML string    // trusted HTML rendered by goldmark from the content
	Download *Download // downloadable documents only
	Kicker   string    // small heading above the title, e.g. "Article 7 · Part II"
	Prev     *Link
	Next     *Link
	Up       *Link
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
	Board       []BoardRow
	RealToday   []BoardRow
	Roadmap     []BoardRow
	Kits        []Link
}

// BoardRow is one row of the capability maturity board.
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
	Counts     []CountRow
	Parts      []PartView
}

// CountRow discloses the article count of one surface.
type CountRow struct {
	Surface  string
	Articles int
	Checked  bool // compared with the loaded text at build time
	Note     string
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

// ListView is a list of pages, newest first.
type ListView struct {
	Title   string
	Summary string
	Items   []ListItem
}

// ListItem is one entry of a ListView.
type ListItem struct {
	Href    string
	Title   string
	Summary string
	Date    string
	Tags    []string
}
