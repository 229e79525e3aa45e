package lexical

// Feature kinds, the first byte of every feature's hash input and the
// first field of its line in a weights file.
const (
	kindWord   = 'w' // a word, or two consecutive words
	kindPrefix = 'p' // the first prefixLen bytes of a longer word: a crude stem
)

// prefixLen is the length of the prefix features ("igno", "inst").
const prefixLen = 4

// squashed maps a byte to its squashed form: ASCII letters lowered, ASCII
// digits and every non-ASCII byte kept, 0 for any other byte.
var squashed = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c >= 0x80:
			t[c] = byte(c)
		}
	}
	return t
}()

// squash appends to buf the squashed form of s: ASCII letters lowered,
// ASCII letters and digits and every non-ASCII byte kept, and one space
// for every run of anything else. The result starts and ends with a space.
func squash(buf []byte, s string) []byte {
	buf = append(buf, ' ')
	space := true
	for i := 0; i < len(s); i++ {
		c := squashed[s[i]]
		if c == 0 {
			if !space {
				buf = append(buf, ' ')
				space = true
			}
			continue
		}
		buf = append(buf, c)
		space = false
	}
	if !space {
		buf = append(buf, ' ')
	}
	return buf
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashOf returns the hash of a feature: its kind byte, then its bytes.
func hashOf(kind byte, b []byte) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(kind)) * fnvPrime
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// wordSeed is the hash of a word feature before its first byte.
var wordSeed = hashOf(kindWord, nil)

// sink receives the features of a segment. For a word feature it returns
// the lexicon classes of the word (or two), 0 when it has none.
type sink interface {
	add(h uint64, kind byte, b []byte) uint32
}

// token is one word, pair or prefix feature: its hash, its kind and its
// text, sq[from:to] of the reader that read it.
type token struct {
	hash     uint64
	from, to int32
	kind     byte
}

// reader reads a text's segments and their features in one pass. It is
// reused from text to text.
type reader struct {
	sq   []byte   // the words of the text, lowered, each followed by a space
	segs [][2]int // every segment's [start, end) in the text
	toks []token  // the features of every segment, segment after segment
	ends []int    // segment i's features are toks[ends[i-1]:ends[i]]
}

// read cuts text into segments at . ! ? ; and line breaks (the delimiter
// ends its segment), at most max of them, the last taking the rest, and
// reads every segment's features, in order: for each word (a run of ASCII
// letters and digits and non-ASCII bytes, ASCII letters lowered) the word,
// its first prefixLen bytes when it is longer, and, after the segment's
// first word, the previous word and it with one space between.
func (r *reader) read(text string, max int) {
	sq, toks := r.sq[:0], r.toks[:0]
	r.segs, r.ends = r.segs[:0], r.ends[:0]
	start := 0 // of the segment in text
	prev := -1 // start in sq of the segment's previous word
	var prevHash uint64
	for i := 0; i < len(text); i++ {
		if squashed[text[i]] != 0 {
			// a word: its hash and its pair's, one byte at a time
			from := len(sq)
			h, ph := wordSeed, (prevHash^' ')*fnvPrime
			for ; i < len(text); i++ {
				x := squashed[text[i]]
				if x == 0 {
					break
				}
				sq = append(sq, x)
				h = (h ^ uint64(x)) * fnvPrime
				ph = (ph ^ uint64(x)) * fnvPrime
			}
			toks = appendWord(toks, sq, from, prev, h, ph)
			sq = append(sq, ' ')
			prev, prevHash = from, h
			if i == len(text) {
				break
			}
		}
		switch text[i] {
		case '.', '!', '?', ';', '\n':
			if len(r.segs) < max-1 {
				r.segs = append(r.segs, [2]int{start, i + 1})
				r.ends = append(r.ends, len(toks))
				start, prev = i+1, -1
			}
		}
	}
	if start < len(text) {
		r.segs = append(r.segs, [2]int{start, len(text)})
		r.ends = append(r.ends, len(toks))
	}
	r.sq, r.toks = sq, toks
}

// appendWord appends the features of the word sq[from:], whose hash is h:
// the word, its prefix when it is longer than prefixLen, and the pair of
// the previous word starting at prev (-1 for none) and it, whose hash is
// ph.
func appendWord(toks []token, sq []byte, from, prev int, h, ph uint64) []token {
	to := len(sq)
	toks = append(toks, token{hash: h, from: int32(from), to: int32(to), kind: kindWord})
	if to-from > prefixLen {
		p := sq[from : from+prefixLen]
		toks = append(toks, token{hash: hashOf(kindPrefix, p), from: int32(from), to: int32(from + prefixLen), kind: kindPrefix})
	}
	if prev >= 0 {
		toks = append(toks, token{hash: ph, from: int32(prev), to: int32(to), kind: kindWord})
	}
	return toks
}

// segment returns the features of segment i.
func (r *reader) segment(i int) []token {
	from := 0
	if i > 0 {
		from = r.ends[i-1]
	}
	return r.toks[from:r.ends[i]]
}

// tokens collects the class and pair features emit hands it.
type tokens []token

func (ts *tokens) add(h uint64, kind byte, _ []byte) uint32 {
	*ts = append(*ts, token{hash: h, kind: kind})
	return 0
}

// walk hands s the features of segment i of r and, with a lexicon, the
// classes its words matched and their pairs, and returns how many there
// were.
func walk[S sink](r *reader, i int, s S, lx *Lexicon) int {
	toks := r.segment(i)
	var bits uint32
	for _, t := range toks {
		if b := s.add(t.hash, t.kind, r.sq[t.from:t.to]); t.kind == kindWord {
			bits |= b
		}
	}
	n := len(toks)
	if bits != 0 && lx != nil {
		n += emit(lx, bits, s)
	}
	return n
}
