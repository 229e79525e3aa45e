package ai

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// OfflineModel is the model name the offline responder reports: retrieval
// over the published text, no language model.
const OfflineModel = "grounded-retrieval-v1"

// NoAnswer is the offline responder's whole reply when nothing in the
// published text matches the question.
const NoAnswer = "I found nothing in the published constitution or this site's pages that answers this. " +
	"I am the offline responder: I only quote published text and never guess, so I have no answer to give. " +
	"Questions about the ledger, its keys, the Bridge, the gate or the nodes are ones the published text covers."

// answerIntro opens every offline reply that quotes.
const answerIntro = "From the published text (offline responder: these passages are quoted verbatim, nothing is added):"

// Document is one published text the offline responder quotes: a
// constitution article or a page of the site. cmd loads them; this package
// never reads content/.
type Document struct {
	Ref   string // how a reply names it: "Article 7", "Page"
	Title string // its title
	URL   string // where it is published, e.g. /constitution/article-07.html
	Text  string // the body as published (markdown without front matter)
}

// Citation is one verbatim quotation in a reply: Quote is a substring of
// the Text of the document it names.
type Citation struct {
	Ref   string `json:"ref" doc:"The cited text, e.g. Article 7"`
	Title string `json:"title" doc:"Its title"`
	URL   string `json:"url" doc:"Where it is published"`
	Quote string `json:"quote" doc:"Verbatim passage of the cited text"`
}

// Offline is the deterministic responder: it ranks the passages of the
// published documents against the question (BM25 over stemmed words) and
// answers with the best ones, quoted verbatim and cited. When nothing
// matches well enough it says so. It never writes a sentence of its own
// about the subject. Safe for concurrent use.
type Offline struct {
	ix       *index
	maxQuote int
	minScore float64
}

var _ Provider = (*Offline)(nil)

// Retrieval tuning: how many passages an answer quotes, the share of the
// best score a further passage needs, and the least score that counts as
// relevant at all (a match of one rare word, or several common ones).
const (
	maxQuotes    = 3
	relativeCut  = 0.6
	minRelevance = 2.5
)

// NewOffline indexes docs. Every document needs a Ref, a Title and some
// quotable text.
func NewOffline(docs []Document) (*Offline, error) {
	for i, d := range docs {
		if d.Ref == "" || d.Title == "" || strings.TrimSpace(d.Text) == "" {
			return nil, fmt.Errorf("%w: offline document %d (%q) needs a ref, a title and text", ErrInvalidConfig, i, d.Title)
		}
	}
	return &Offline{ix: newIndex(append([]Document(nil), docs...)), maxQuote: maxQuotes, minScore: minRelevance}, nil
}

// articleRef finds "article 12" in a question.
var articleRef = regexp.MustCompile(`(?i)\barticle\s+(\d{1,3})\b`)

// Answer returns the reply to question and the passages it quotes; with no
// citations the reply is NoAnswer.
func (o *Offline) Answer(question string) (string, []Citation) {
	picked := o.pick(question)
	if len(picked) == 0 {
		return NoAnswer, nil
	}
	var b strings.Builder
	b.WriteString(answerIntro)
	cites := make([]Citation, 0, len(picked))
	for _, p := range picked {
		doc := o.ix.docs[o.ix.passages[p].doc]
		c := Citation{Ref: doc.Ref, Title: doc.Title, URL: doc.URL, Quote: o.ix.quote(p)}
		cites = append(cites, c)
		fmt.Fprintf(&b, "\n\n%s, %q", c.Ref, c.Title)
		if c.URL != "" {
			fmt.Fprintf(&b, " (%s)", c.URL)
		}
		fmt.Fprintf(&b, ":\n\u201c%s\u201d", c.Quote)
	}
	return b.String(), cites
}

// pick chooses the passages to quote, best first.
func (o *Offline) pick(question string) []int {
	query := distinct(terms(question))
	hits := o.ix.search(query)
	// A question naming "article N" is answered from that article.
	if refs := articleRef.FindAllStringSubmatch(question, -1); len(refs) > 0 {
		named := map[int]bool{}
		for _, m := range refs {
			for d, doc := range o.ix.docs {
				if strings.EqualFold(doc.Ref, "Article "+strings.TrimLeft(m[1], "0")) {
					named[d] = true
				}
			}
		}
		if len(named) > 0 {
			return o.fromDocs(named, hits)
		}
	}
	// A passage counts only when it scores well and holds the question's
	// one word, or at least two of its words.
	need := min(len(query), 2)
	var out []int
	seen := map[string]bool{}
	best := 0.0
	for _, h := range hits {
		if h.matched < need || h.score < o.minScore || h.score < relativeCut*best {
			continue
		}
		best = max(best, h.score)
		if len(out) == o.maxQuote {
			break
		}
		if q := o.ix.quote(h.passage); !seen[q] {
			seen[q] = true
			out = append(out, h.passage)
		}
	}
	return out
}

// fromDocs picks passages of the named documents: the ones that match the
// question best, or their opening passages when none match.
func (o *Offline) fromDocs(named map[int]bool, hits []hit) []int {
	var out []int
	for _, h := range hits {
		if len(out) == o.maxQuote {
			return out
		}
		if named[o.ix.passages[h.passage].doc] {
			out = append(out, h.passage)
		}
	}
	if len(out) > 0 {
		return out
	}
	for p, ps := range o.ix.passages {
		if len(out) == o.maxQuote {
			break
		}
		if named[ps.doc] {
			out = append(out, p)
		}
	}
	return out
}

// Complete answers req.Message; req.System and req.MaxTokens do not
// apply. With a Briefing's memory it also quotes the memory entries that
// match the message (AnswerWithMemory). It never fails.
func (o *Offline) Complete(ctx context.Context, req Request) (Completion, error) {
	if err := ctx.Err(); err != nil {
		return Completion{}, err
	}
	text, cites := o.AnswerWithMemory(req.Message, req.Briefing.Memory)
	return Completion{Text: text, Provider: KindOffline, Model: OfflineModel, Citations: cites}, nil
}

// Instant marks the responder as answering in process, without waiting on
// anything: a Node gives its Complete no timeout.
func (o *Offline) Instant() {}

// memoryRef names a town's memory in citations.
const memoryRef = "Town memory"

// maxMemoryQuote bounds the quotation of one memory entry, in bytes: a
// longer entry is quoted from its start, cut at a character boundary.
const maxMemoryQuote = 600

// AnswerWithMemory is Answer for a town's node given its town's memory
// (newest first): after the published passages it quotes, verbatim, the
// memory entries that hold the question's one word or at least two of
// its words (at most three, most words first, then newest), cited as Town
// memory. When none matches it says that it was given the memory and that
// none of it answers; it never writes a sentence of its own about the
// subject.
func (o *Offline) AnswerWithMemory(question string, memory []string) (string, []Citation) {
	text, cites := o.Answer(question)
	if len(memory) == 0 {
		return text, cites
	}
	picked := pickMemory(question, memory)
	if len(picked) == 0 {
		return text + fmt.Sprintf("\n\nThis town's memory (%d entries) was given with the message; none of it matches the question.", len(memory)), cites
	}
	var b strings.Builder
	if len(cites) > 0 {
		b.WriteString(text)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "From this town's memory (%d entries given with the message; quoted verbatim, nothing is added):", len(memory))
	for _, i := range picked {
		q := memory[i]
		if len(q) > maxMemoryQuote {
			q = strings.ToValidUTF8(q[:maxMemoryQuote], "")
		}
		c := Citation{Ref: memoryRef, Title: fmt.Sprintf("Memory %d of %d, newest first", i+1, len(memory)), Quote: q}
		cites = append(cites, c)
		fmt.Fprintf(&b, "\n\n%s, %s:\n\u201c%s\u201d", c.Ref, c.Title, c.Quote)
	}
	return b.String(), cites
}

// pickMemory returns the indexes of the memory entries to quote.
func pickMemory(question string, memory []string) []int {
	query := distinct(terms(question))
	need := min(len(query), 2)
	if need == 0 {
		return nil
	}
	type scored struct{ i, matched int }
	var found []scored
	for i, m := range memory {
		have := map[string]bool{}
		for _, t := range terms(m) {
			have[t] = true
		}
		n := 0
		for _, t := range query {
			if have[t] {
				n++
			}
		}
		if n >= need {
			found = append(found, scored{i, n})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return b.matched - a.matched })
	out := []int{}
	for _, f := range found[:min(len(found), maxQuotes)] {
		out = append(out, f.i)
	}
	return out
}

// Stream sends the reply paragraph by paragraph.
func (o *Offline) Stream(ctx context.Context, req Request, delta func(string) error) (Completion, error) {
	c, err := o.Complete(ctx, req)
	if err != nil {
		return Completion{}, err
	}
	for rest := c.Text; rest != ""; {
		i := strings.Index(rest, "\n\n")
		if i < 0 {
			i = len(rest)
		} else {
			i += 2
		}
		if err := delta(rest[:i]); err != nil {
			return Completion{}, err
		}
		rest = rest[i:]
	}
	return c, nil
}
