package corpus

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Vocabulary of the generated text: the ledger's own domain, so the pages
// look like the site they are added to.
var (
	words = strings.Fields(`ledger block chain spine witness signature bridge node gate
		key hash digest row seam table verdict quorum dissent claim audit archive export
		town wall roster airlock runtime artifact article amendment checkpoint policy
		review draft proposal record history drift freshness clock operator signer
		canonical strict public private payload header envelope provenance surface proof
		verifier evidence metadata request response route origin edge tunnel release
		version status count index summary change rule action control class default
		deny allow authority boundary limit duty scope purpose honest state report
		the a of and to in for with on by from every each one two three only never
		always before after when while because so that which its their our your
		signed verified published documented rejected recorded checked computed kept
		served rotated anchored appended retired invoked disclosed listed counted`)
	tags = []string{"ledger", "gate", "witness", "bridge", "audit", "drift", "towns",
		"constitution", "keys", "release", "verify", "privacy", "roadmap", "nodes"}
	headings = []string{"Background", "How it works", "What changed", "Evidence",
		"Verification steps", "Known limits", "Timeline", "Open questions", "Details",
		"Signers and witnesses", "The record", "Next steps", "Why it matters", "Caveats"}
	firstDate = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
)

// generatePage builds page i (1-based) of an n-page corpus.
func generatePage(seed uint64, i, n int) Page {
	r := newRNG(seed, i)
	p := Page{
		Name:    Name(i, n),
		Title:   fmt.Sprintf("%s %d", capitalize(r.phrase(3, 6)), i),
		Summary: r.sentence(8, 16),
		Date:    firstDate.AddDate(0, 0, r.intn(6*365)).Format(time.DateOnly),
	}
	for range r.between(1, 3) {
		t := pick(r, tags)
		if !slices.Contains(p.Tags, t) {
			p.Tags = append(p.Tags, t)
		}
	}
	// The body is every block below, then a last paragraph that brings the
	// file to about TargetSize.
	target := TargetSize - 60 + r.intn(120)
	var b bytes.Buffer
	b.Grow(2 * TargetSize)
	w := &writer{r: r, b: &b, i: i, n: n}
	w.intro()
	w.heading("##")
	w.paragraph(1, 2)
	w.bullets()
	w.heading("###")
	w.numbered()
	w.code()
	w.heading("##")
	w.table()
	if r.chance(3) {
		w.footnote()
	}
	w.fill(target - len(p.File()) - b.Len())
	p.Body = b.Bytes()
	return p
}

// writer appends markdown blocks to a page body.
type writer struct {
	r    *rng
	b    *bytes.Buffer
	i, n int // this page's number and the corpus size
}

func (w *writer) intro() {
	fmt.Fprintf(w.b, "%s See [%s](%s) for the %s, and `%s` for the **%s**.\n\n",
		w.r.sentence(10, 18), capitalize(w.r.phrase(2, 4)), w.link(), w.r.phrase(2, 3),
		w.r.identifier(), w.r.phrase(1, 2))
}

func (w *writer) heading(level string) {
	fmt.Fprintf(w.b, "%s %s\n\n", level, pick(w.r, headings))
}

func (w *writer) paragraph(minSentences, maxSentences int) {
	for k := range w.r.between(minSentences, maxSentences) {
		if k > 0 {
			w.b.WriteByte(' ')
		}
		w.b.WriteString(w.r.sentence(8, 16))
	}
	w.b.WriteString("\n\n")
}

func (w *writer) bullets() {
	fmt.Fprintf(w.b, "- %s\n", w.r.sentence(4, 9))
	fmt.Fprintf(w.b, "- %s with [%s](https://example.org/%s)\n", capitalize(w.r.phrase(2, 4)), w.r.phrase(1, 2), w.r.identifier())
	fmt.Fprintf(w.b, "- ~~%s~~ %s\n", w.r.phrase(1, 3), w.r.phrase(2, 4))
	if w.r.chance(2) {
		fmt.Fprintf(w.b, "- [x] %s\n- [ ] %s\n", w.r.phrase(2, 4), w.r.phrase(2, 4))
	}
	w.b.WriteByte('\n')
}

func (w *writer) numbered() {
	for k := range w.r.between(3, 4) {
		if k == 1 {
			j := w.r.between(1, w.n)
			fmt.Fprintf(w.b, "%d. Read [page %d](%s) first\n", k+1, j, pageURL(j, w.n))
			continue
		}
		fmt.Fprintf(w.b, "%d. %s\n", k+1, w.r.sentence(4, 8))
	}
	w.b.WriteByte('\n')
}

func (w *writer) code() {
	r := w.r
	switch r.intn(3) {
	case 0:
		fmt.Fprintf(w.b, "```go\nfunc %s(prev, cur []byte) bool {\n\tsum := sha256.Sum256(prev)\n\treturn bytes.Equal(sum[:], cur[:%d]) // block %d\n}\n```\n\n",
			r.identifierCamel(), 32, r.between(1, 9999))
	case 1:
		fmt.Fprintf(w.b, "```sh\nproofsite verify --block %d --key %s\ncurl -s https://api.example.org/api/ledger/verify | jq .%s\n```\n\n",
			r.between(1, 9999), r.identifier(), r.identifier())
	default:
		fmt.Fprintf(w.b, "```json\n{\n  \"block\": %d,\n  \"prev\": \"%s\",\n  \"signers\": [\"s%d\", \"s%d\"],\n  \"valid\": %t\n}\n```\n\n",
			r.between(1, 9999), r.hex(16), r.between(1, 17), r.between(1, 17), r.chance(2))
	}
}

func (w *writer) table() {
	fmt.Fprintf(w.b, "| %s | Block | Note |\n|---|---:|---|\n", capitalize(pick(w.r, words)))
	for range w.r.between(3, 4) {
		fmt.Fprintf(w.b, "| `%s` | %d | %s |\n", w.r.identifier(), w.r.between(1, 9999), w.r.phrase(2, 5))
	}
	w.b.WriteByte('\n')
}

func (w *writer) footnote() {
	fmt.Fprintf(w.b, "%s[^1]\n\n[^1]: %s\n\n", w.r.sentence(6, 12), w.r.sentence(5, 10))
}

// fill ends the body with a paragraph of about room bytes, or with nothing
// when the blocks above already filled the page.
func (w *writer) fill(room int) {
	if room < 40 {
		return
	}
	start := w.b.Len()
	for w.b.Len()-start < room-2 {
		if w.b.Len() > start {
			w.b.WriteByte(' ')
		}
		w.b.WriteString(w.r.sentence(6, 14))
	}
	w.b.WriteString("\n")
}

// link returns the URL of a generated page chosen at random.
func (w *writer) link() string { return pageURL(w.r.between(1, w.n), w.n) }

// pageURL is the URL of page j of an n-page corpus.
func pageURL(j, n int) string { return LinkPrefix + Name(j, n) + ".html" }

func (r *rng) phrase(lo, hi int) string {
	n := r.between(lo, hi)
	parts := make([]string, n)
	for k := range parts {
		parts[k] = pick(r, words)
	}
	return strings.Join(parts, " ")
}

func (r *rng) sentence(lo, hi int) string { return capitalize(r.phrase(lo, hi)) + "." }

func (r *rng) identifier() string {
	return pick(r, words) + "-" + pick(r, words) + fmt.Sprint(r.intn(100))
}

func (r *rng) identifierCamel() string {
	return pick(r, words) + capitalize(pick(r, words)) + fmt.Sprint(r.intn(100))
}

func (r *rng) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for k := range b {
		b[k] = digits[r.intn(16)]
	}
	return string(b)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
