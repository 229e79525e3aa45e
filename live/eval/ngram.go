package eval

import (
	"math"
	"slices"
	"sync"
)

// The offline AI scan: character n-gram similarity between the text and
// the exemplars of each attack category (content/eval/exemplars/), with a
// benign contrast set. It is deterministic: the same data and text give
// the same scores on every machine.
//
// Texts are reduced to lower-case letters and digits with single spaces,
// cut into character 4-grams (hashed into ngramBuckets buckets), and
// weighted by inverse document frequency over the exemplars. The text is
// cut into chunks of about a sentence or two, each compared with every
// exemplar by cosine similarity through an inverted index.

const (
	ngramN        = 4
	ngramBuckets  = 1 << 17
	chunkMin      = 60  // a chunk grows sentence by sentence to at least this many bytes
	chunkMax      = 300 // and a long sentence is cut into windows of this size
	chunkStep     = 150 // advancing this much
	maxChunks     = 96  // bound on the chunks of one text
	maxIDFPruning = 0.3 // n-grams in more than this share of exemplars are not indexed
)

// EngineNgram names the offline AI-scan engine in reports.
const EngineNgram = "ngram-exemplar/v1"

// posting is one exemplar holding one n-gram bucket.
type posting struct {
	exemplar int32
	weight   float32 // idf weight over the exemplar's norm
}

// ngramIndex is the exemplar set as an inverted index in compressed rows.
type ngramIndex struct {
	exemplars []Exemplar
	category  []int8   // per exemplar: index in Categories, -1 for the benign set
	start     []uint32 // bucket b's postings are postings[start[b]:start[b+1]]
	postings  []posting
	idf       []float32 // per bucket; 0 for buckets no exemplar has
	maxIDF    float32
}

// newNgramIndex indexes the exemplars.
func newNgramIndex(exemplars []Exemplar) *ngramIndex {
	ix := &ngramIndex{exemplars: exemplars, start: make([]uint32, ngramBuckets+1), idf: make([]float32, ngramBuckets)}
	grams := make([][]uint32, len(exemplars))
	df := make([]int32, ngramBuckets)
	var buf []byte
	ix.category = make([]int8, len(exemplars))
	for i, e := range exemplars {
		ix.category[i] = int8(e.Category.index())
		buf = frame(buf[:0], e.Text)
		grams[i] = gramSet(nil, buf)
		for _, g := range grams[i] {
			df[g]++
		}
	}
	n := float64(len(exemplars))
	ix.maxIDF = float32(math.Log(1 + n))
	for b, d := range df {
		if d > 0 {
			ix.idf[b] = float32(math.Log(1 + n/float64(d)))
		}
	}
	counts := make([]uint32, ngramBuckets)
	pruned := func(g uint32) bool { return float64(df[g]) > maxIDFPruning*n && n >= 20 }
	for _, gs := range grams {
		for _, g := range gs {
			if !pruned(g) {
				counts[g]++
			}
		}
	}
	for b := range ngramBuckets {
		ix.start[b+1] = ix.start[b] + counts[b]
	}
	ix.postings = make([]posting, ix.start[ngramBuckets])
	fill := slices.Clone(ix.start[:ngramBuckets])
	for i, gs := range grams {
		norm := 0.0
		for _, g := range gs {
			norm += float64(ix.idf[g]) * float64(ix.idf[g])
		}
		norm = math.Sqrt(norm)
		for _, g := range gs {
			if pruned(g) {
				continue
			}
			ix.postings[fill[g]] = posting{exemplar: int32(i), weight: float32(float64(ix.idf[g]) / norm)}
			fill[g]++
		}
	}
	return ix
}

// squash appends to buf the lower-case letters and digits of s (ASCII
// letters lowered, other letters kept), with one space for every run of
// anything else.
func squash(buf []byte, s string) []byte {
	space := len(buf) > 0 && buf[len(buf)-1] == ' '
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c >= 0x80:
		default:
			if !space {
				buf = append(buf, ' ')
				space = true
			}
			continue
		}
		buf = append(buf, c)
		space = false
	}
	return buf
}

// frame appends s squashed between two spaces, so the first and last
// words make n-grams of their own.
func frame(buf []byte, s string) []byte {
	buf = squash(append(buf, ' '), s)
	if buf[len(buf)-1] != ' ' {
		buf = append(buf, ' ')
	}
	return buf
}

// gramSet appends the distinct feature buckets of s (framed) to out, sorted.
func gramSet(out []uint32, s []byte) []uint32 {
	features(s, func(g uint32) { out = append(out, g) })
	slices.Sort(out)
	return slices.Compact(out)
}

// features calls emit with the bucket of every character 4-gram of s
// (framed).
func features(s []byte, emit func(uint32)) {
	for i := 0; i+ngramN <= len(s); i++ {
		h := uint32(2166136261)
		for _, c := range s[i : i+ngramN] {
			h = (h ^ uint32(c)) * 16777619
		}
		emit(h & (ngramBuckets - 1))
	}
}

// similarity is one category's best match in a text.
type similarity struct {
	score    float64  // cosine similarity of the best chunk
	margin   float64  // score minus the best benign exemplar's in that chunk
	exemplar int      // index of the best exemplar
	view     ViewKind // "" until a chunk matched
}

// ngramScratch is one scan's reusable memory.
type ngramScratch struct {
	buf    []byte
	grams  []uint32
	seen   []uint32 // per bucket: the generation that last saw it
	gen    uint32
	dots   []float32 // per sentence and exemplar: the dot product
	norms  []float64 // per sentence: the squared norm of its grams
	chunks [][2]int
}

var ngramScratchPool = sync.Pool{New: func() any { return &ngramScratch{seen: make([]uint32, ngramBuckets)} }}

// distinctGrams appends the distinct n-gram buckets of s to out, using
// the generation stamps instead of sorting.
func (sc *ngramScratch) distinctGrams(out []uint32, s []byte) []uint32 {
	sc.gen++
	if sc.gen == 0 { // wrapped: forget every stamp
		clear(sc.seen)
		sc.gen = 1
	}
	features(s, func(g uint32) {
		if sc.seen[g] != sc.gen {
			sc.seen[g] = sc.gen
			out = append(out, g)
		}
	})
	return out
}

// scan compares the text's sentences, and each pair of neighbouring
// sentences, with the exemplars, and keeps per category the chunk whose
// best exemplar beats the best benign exemplar by the widest margin. A
// sentence's dot products are computed once; a pair's are the sum of its
// two sentences' (n-grams the two share count twice, a small and
// deterministic approximation).
func (ix *ngramIndex) scan(text string, kind ViewKind, best *[len(Categories)]similarity, budget *int) {
	sc := ngramScratchPool.Get().(*ngramScratch)
	defer ngramScratchPool.Put(sc)
	sc.chunks = chunkSentences(text, sc.chunks[:0])
	n := min(len(sc.chunks), *budget)
	*budget -= n
	ne := len(ix.exemplars)
	sc.dots = resize(sc.dots, n*ne)
	clear(sc.dots)
	sc.norms = resize(sc.norms, n)
	for k := range n {
		ch := sc.chunks[k]
		sc.buf = frame(sc.buf[:0], text[ch[0]:ch[1]])
		sc.grams = sc.distinctGrams(sc.grams[:0], sc.buf)
		dots := sc.dots[k*ne : (k+1)*ne]
		norm := 0.0
		for _, g := range sc.grams {
			w := ix.idf[g]
			if w == 0 {
				w = ix.maxIDF
			}
			norm += float64(w) * float64(w)
			for _, p := range ix.postings[ix.start[g]:ix.start[g+1]] {
				dots[p.exemplar] += w * p.weight
			}
		}
		sc.norms[k] = norm
	}
	for k := range n {
		ix.judgeChunk(sc.dots[k*ne:(k+1)*ne], nil, sc.norms[k], kind, best)
		if k+1 < n {
			ix.judgeChunk(sc.dots[k*ne:(k+1)*ne], sc.dots[(k+1)*ne:(k+2)*ne], sc.norms[k]+sc.norms[k+1], kind, best)
		}
	}
}

// judgeChunk turns one chunk's dot products (a, plus b for a pair) into
// cosine similarities and updates the best match per category.
func (ix *ngramIndex) judgeChunk(a, b []float32, norm float64, kind ViewKind, best *[len(Categories)]similarity) {
	if norm == 0 {
		return
	}
	q := math.Sqrt(norm)
	benign := 0.0
	var top [len(Categories)]int32 // per category: best exemplar + 1
	var topScore [len(Categories)]float32
	for i, s := range a {
		if b != nil {
			s += b[i]
		}
		if s == 0 {
			continue
		}
		c := ix.category[i]
		if c < 0 {
			benign = max(benign, float64(s)/q)
			continue
		}
		if top[c] == 0 || s > topScore[c] {
			top[c], topScore[c] = int32(i)+1, s
		}
	}
	for c, i := range top {
		if i == 0 {
			continue
		}
		score := float64(topScore[c]) / q
		if prev := best[c]; prev.view == "" || score-benign > prev.margin {
			best[c] = similarity{score: score, margin: score - benign, exemplar: int(i - 1), view: kind}
		}
	}
}

// chunkSentences cuts text into sentences (at . ! ? ; and line breaks),
// merged forward until each has at least chunkMin bytes; a sentence longer
// than chunkMax is cut into overlapping windows. At most maxChunks.
func chunkSentences(text string, out [][2]int) [][2]int {
	lo := 0
	for i := 0; i <= len(text) && len(out) < maxChunks; i++ {
		end := i == len(text)
		if !end {
			switch text[i] {
			case '.', '!', '?', ';', '\n':
			default:
				continue
			}
		}
		if i+1-lo < chunkMin && !end {
			continue
		}
		hi := min(i+1, len(text))
		for hi-lo > chunkMax && len(out) < maxChunks {
			out = append(out, [2]int{lo, lo + chunkMax})
			lo += chunkStep
		}
		if hi > lo {
			out = append(out, [2]int{lo, hi})
		}
		lo = hi
	}
	return out
}
