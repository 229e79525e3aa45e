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

// token is one word, pair or prefix feature: its hash, its kind and
// where its text is in the text read: text[from:to] squashed (for a pair,
// the run of other bytes between its words read as one space).
type token struct {
	hash     uint64
	from, to int32
	kind     byte
}

// segment is one segment of the text read: its bytes [start, end) in the
// text, and the end of its features in the reader's toks, which start
// where the previous segment's end.
type segment struct{ start, end, toks int }

// reader reads a text's segments and their features in one pass. It is
// reused from text to text.
type reader struct {
	text string    // the text read
	segs []segment // every segment, in order
	toks []token   // the features of every segment, segment after segment
	buf  []byte    // featureText's result
}

// prefixSeed is the hash of a prefix feature before its first byte.
var prefixSeed = hashOf(kindPrefix, nil)

// read cuts text into segments at . ! ? ; and line breaks (the delimiter
// ends its segment), at most max of them, the last taking the rest, and
// reads every segment's features, in order: for each word (a run of ASCII
// letters and digits and non-ASCII bytes, ASCII letters lowered) the word,
// its first prefixLen bytes when it is longer, and, after the segment's
// first word, the previous word and it with one space between.
func (r *reader) read(text string, max int) {
	r.text = text
	// A word takes at least two bytes of text, itself and the byte that
	// ends it (or the end of the text), and makes at most three features.
	toks := grow(r.toks, 3*(len(text)/2+1))
	segs := grow(r.segs, max)
	nt, ns := 0, 0 // tokens and segments so far
	for start := 0; start < len(text); {
		classes := &cutting
		if ns == max-1 {
			classes = &squashed // the last segment takes the rest
		}
		var end int
		end, nt = readSegment(text, start, classes, toks, nt)
		segs[ns] = segment{start, end, nt}
		ns++
		start = end
	}
	r.toks, r.segs = toks[:nt], segs[:ns]
}

// cutting is squashed, but with 1 for the bytes that end a segment.
var cutting = func() [256]byte {
	t := squashed
	for _, c := range []byte(".!?;\n") {
		t[c] = 1
	}
	return t
}()

// readSegment reads the features of the segment of text that starts at
// start, into toks from nt on, and returns where the next segment starts
// and the new nt. The segment ends after the first byte whose class is 1
// (see cutting), or with the text. The classes of the other bytes are
// their squashed forms (0 for those between words).
//
// It writes into toks by index, never by append, and keeps no more state
// than the registers hold: with a call to grow a slice inside the loop,
// or the state of the whole text's reading in it, the compiler kept the
// loop's state in memory, which doubled the instructions per byte.
func readSegment(text string, start int, classes *[256]byte, toks []token, nt int) (end, n int) {
	prev := -1 // start of the segment's previous word, -1 for none
	var prevHash uint64
	for i := start; i < len(text); i++ {
		x := classes[text[i]]
		if x <= 1 {
			if x == 1 {
				return i + 1, nt
			}
			continue
		}
		// a word, text[i:j]: its hash and its pair's, one byte at a time
		h, ph := wordSeed, (prevHash^' ')*fnvPrime
		j := i
		for {
			h = (h ^ uint64(x)) * fnvPrime
			ph = (ph ^ uint64(x)) * fnvPrime
			if j++; j == len(text) {
				break
			}
			if x = classes[text[j]]; x <= 1 {
				break
			}
		}
		toks[nt] = token{hash: h, from: int32(i), to: int32(j), kind: kindWord}
		nt++
		if j-i > prefixLen {
			w := text[i : i+prefixLen] // unrolled: a loop here spilled registers
			p := (prefixSeed ^ uint64(classes[w[0]])) * fnvPrime
			p = (p ^ uint64(classes[w[1]])) * fnvPrime
			p = (p ^ uint64(classes[w[2]])) * fnvPrime
			p = (p ^ uint64(classes[w[3]])) * fnvPrime
			toks[nt] = token{hash: p, from: int32(i), to: int32(i + prefixLen), kind: kindPrefix}
			nt++
		}
		if prev >= 0 {
			toks[nt] = token{hash: ph, from: int32(prev), to: int32(j), kind: kindWord}
			nt++
		}
		prev, prevHash = i, h
		i = j - 1 // the loop moves on to the byte that ended the word
	}
	return len(text), nt
}

// grow returns s at length n, reusing its array when it is long enough
// (its contents are to be overwritten).
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// segment returns the features of segment i.
func (r *reader) segment(i int) []token {
	from := 0
	if i > 0 {
		from = r.segs[i-1].toks
	}
	return r.toks[from:r.segs[i].toks]
}

// featureText returns the text of feature t, as its hash reads it: the
// squashed words, one space between a pair's. It stays valid until the
// next call.
func (r *reader) featureText(t token) []byte {
	r.buf = squash(r.buf[:0], r.text[t.from:t.to]) // a space, the words, a space
	return r.buf[1 : len(r.buf)-1]
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
		if b := s.add(t.hash, t.kind, r.featureText(t)); t.kind == kindWord {
			bits |= b
		}
	}
	n := len(toks)
	if bits != 0 && lx != nil {
		n += emit(lx, bits, s)
	}
	return n
}
