package ai

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// BM25 parameters: the usual values for short passages.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// passage is one quotable block of a document: a paragraph or a list
// item. quote is always document.Text[start:end].
type passage struct {
	doc        int // index into index.docs
	start, end int
	length     int // terms, title included
}

// posting is one passage that holds a term, and how often.
type posting struct {
	passage int
	tf      int
}

// index is a BM25 index over the passages of a fixed set of documents. It
// is immutable once built and safe for concurrent use.
type index struct {
	docs     []Document
	passages []passage
	postings map[string][]posting // term -> passages, in passage order
	avgLen   float64
}

func newIndex(docs []Document) *index {
	ix := &index{docs: docs, postings: map[string][]posting{}}
	total := 0
	for d, doc := range docs {
		title := terms(doc.Title)
		for _, span := range splitPassages(doc.Text) {
			tf := map[string]int{}
			words := terms(doc.Text[span[0]:span[1]])
			for _, t := range words {
				tf[t]++
			}
			for _, t := range title {
				tf[t]++
			}
			p := len(ix.passages)
			ix.passages = append(ix.passages, passage{doc: d, start: span[0], end: span[1], length: len(words) + len(title)})
			total += len(words) + len(title)
			for t, n := range tf {
				ix.postings[t] = append(ix.postings[t], posting{passage: p, tf: n})
			}
		}
	}
	if len(ix.passages) > 0 {
		ix.avgLen = float64(total) / float64(len(ix.passages))
	}
	return ix
}

func (ix *index) quote(p int) string {
	ps := ix.passages[p]
	return ix.docs[ps.doc].Text[ps.start:ps.end]
}

// hit is a scored passage.
type hit struct {
	passage int
	score   float64
	matched int // distinct query terms the passage holds
}

// search scores every passage that holds at least one of the query terms
// and returns them best first (ties in document order). The query terms
// must be distinct.
func (ix *index) search(query []string) []hit {
	n := float64(len(ix.passages))
	found := map[int]hit{}
	for _, t := range query {
		list := ix.postings[t]
		if len(list) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(list))+0.5)/(float64(len(list))+0.5))
		for _, post := range list {
			norm := 1 - bm25B + bm25B*float64(ix.passages[post.passage].length)/ix.avgLen
			tf := float64(post.tf)
			h := found[post.passage]
			h.passage = post.passage
			h.score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
			h.matched++
			found[post.passage] = h
		}
	}
	hits := make([]hit, 0, len(found))
	for _, h := range found {
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.passage - b.passage
	})
	return hits
}

// terms splits text into lower-case words, drops English stop words and
// reduces the rest to their Snowball (Porter2) stems, so that "keys" and
// "key", "signed" and "signing" meet.
func terms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if english.IsStopWord(w) || conversational[w] || (len(w) < 2 && !isDigits(w)) {
			continue
		}
		out = append(out, english.Stem(w, false))
	}
	return out
}

// conversational words carry no subject: "please tell me about the
// Bridge" is a question about the Bridge.
var conversational = map[string]bool{
	"please": true, "tell": true, "explain": true, "describe": true, "know": true, "want": true,
	"like": true, "say": true, "could": true, "would": true, "ask": true, "question": true,
	"hi": true, "hello": true, "hey": true, "thanks": true, "thank": true, "help": true,
	"can": true, "may": true, "might": true, "must": true, "shall": true, "also": true,
	"anything": true, "something": true, "thing": true, "things": true, "give": true,
}

// distinct returns the terms without repeats, in first-seen order.
func distinct(ts []string) []string {
	seen := make(map[string]bool, len(ts))
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isDigits(s string) bool {
	return s != "" && strings.TrimFunc(s, unicode.IsDigit) == ""
}

// listItem matches the marker of a markdown list item.
var listItem = regexp.MustCompile(`^\s{0,3}(?:\d{1,3}[.)]|[-*+])\s+`)

// splitPassages returns the [start, end) offsets of the quotable blocks of
// a markdown body: paragraphs and list items, without their list markers
// and surrounding white space. Headings, fenced code, tables, HTML blocks
// and link definitions are not quoted.
func splitPassages(text string) [][2]int {
	var spans [][2]int
	start, end := -1, -1
	flush := func() {
		if start >= 0 && end > start {
			spans = append(spans, [2]int{start, end})
		}
		start, end = -1, -1
	}
	fenced := false
	for off := 0; off < len(text); {
		lineEnd := strings.IndexByte(text[off:], '\n')
		if lineEnd < 0 {
			lineEnd = len(text)
		} else {
			lineEnd += off
		}
		line := text[off:lineEnd]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			flush()
			fenced = !fenced
		case fenced:
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "|") ||
			strings.HasPrefix(trimmed, "<") || (strings.HasPrefix(trimmed, "[") && strings.Contains(trimmed, "]:")):
			flush()
		default:
			if m := listItem.FindStringIndex(line); m != nil {
				flush()
				start = off + m[1]
			} else if start < 0 {
				start = off + strings.Index(line, trimmed)
			}
			end = off + len(strings.TrimRightFunc(line, unicode.IsSpace))
		}
		off = lineEnd + 1
	}
	flush()
	return spans
}
