package lexical

import (
	"hash/maphash"
	"math/bits"
)

// Memo remembers, for the scans of one text's views (Model.ScanMemo),
// the feature count and weight sums of each segment read, keyed by the
// segment's bytes. The views of a text share much of their text (a
// leetspeak view differs from the text only around the words it changed),
// and a segment's features depend on its bytes alone. A Memo serves one
// model (another model's scan empties it) and one goroutine; the zero
// Memo is empty and ready. It holds on to the texts scanned until Reset.
type Memo struct {
	model   *Model
	entries []memoEntry
	// entries[:indexed] are in slots. The first scan only records its
	// segments: a text scanned once (most are) never pays for hashing.
	indexed int
	slots   []int32 // an index in entries plus one; 0 is empty
	seed    maphash.Seed
}

// memoEntry is one segment read: its bytes, their hash (once indexed),
// its feature count and its weight sums.
type memoEntry struct {
	text string
	hash uint64
	n    int
	sums [MaxClasses]float64
}

// Reset empties the memo, keeping its memory.
func (mm *Memo) Reset() {
	clear(mm.entries) // the texts, for the collector
	mm.entries, mm.indexed, mm.model = mm.entries[:0], 0, nil
	clear(mm.slots)
}

// record keeps the segments a scan read from text.
func (mm *Memo) record(text string, segs []segment, sums [][MaxClasses]float64, counts []int) {
	for i, sg := range segs {
		if i == maxSegments-1 {
			break // the last of maxSegments is read to the end, delimiters and all
		}
		mm.entries = append(mm.entries, memoEntry{text: text[sg.start:sg.end], n: counts[i], sums: sums[i]})
	}
}

// index puts the recorded entries in the table, growing it to at most
// half full; an entry whose text is there already is left out.
func (mm *Memo) index() {
	if mm.indexed == len(mm.entries) {
		return
	}
	if mm.seed == (maphash.Seed{}) {
		mm.seed = maphash.MakeSeed()
	}
	if 2*len(mm.entries) > len(mm.slots) {
		size := 64
		for size < 4*len(mm.entries) {
			size *= 2
		}
		mm.slots = make([]int32, size)
		mm.indexed = 0
	}
	mask := len(mm.slots) - 1
	for i := mm.indexed; i < len(mm.entries); i++ {
		e := &mm.entries[i]
		if i >= mm.indexed && e.hash == 0 {
			e.hash = maphash.String(mm.seed, e.text)
		}
		at := int(e.hash) & mask
		for mm.slots[at] != 0 && !mm.same(mm.slots[at], e) {
			at = (at + 1) & mask
		}
		if mm.slots[at] == 0 {
			mm.slots[at] = int32(i + 1)
		}
	}
	mm.indexed = len(mm.entries)
}

// same reports whether slot value v holds e's text.
func (mm *Memo) same(v int32, e *memoEntry) bool {
	o := &mm.entries[v-1]
	return o.hash == e.hash && o.text == e.text
}

// find returns the entry of a segment's text, or nil, and the text's hash.
func (mm *Memo) find(text string) (*memoEntry, uint64) {
	h := maphash.String(mm.seed, text)
	mask := len(mm.slots) - 1
	for at := int(h) & mask; mm.slots[at] != 0; at = (at + 1) & mask {
		if e := &mm.entries[mm.slots[at]-1]; e.hash == h && e.text == text {
			return e, h
		}
	}
	return nil, h
}

// readMemo reads text's segments as read does, into s, taking the sums
// of a segment the memo holds from it, and records the others.
func (m *Model) readMemo(s *scratch, text string, memo *Memo) {
	memo.index()
	rd := &s.rd
	rd.text = text
	toks := grow(rd.toks, 3*(len(text)/2+1))
	rd.segs, s.sums, s.counts = rd.segs[:0], s.sums[:0], s.counts[:0]
	for start := 0; start < len(text); {
		var sum [MaxClasses]float64
		var end, n int
		if len(rd.segs) == maxSegments-1 { // the last segment takes the rest
			var nt int
			end, nt = readSegment(text, start, &squashed, toks, 0)
			n = m.segmentSums(s, &sum, toks[:nt])
		} else {
			end = cutEnd(text, start)
			if e, h := memo.find(text[start:end]); e != nil {
				sum, n = e.sums, e.n
			} else {
				_, nt := readSegment(text, start, &cutting, toks, 0)
				n = m.segmentSums(s, &sum, toks[:nt])
				memo.entries = append(memo.entries, memoEntry{text: text[start:end], hash: h, n: n, sums: sum})
			}
		}
		rd.segs = append(rd.segs, segment{start: start, end: end})
		s.sums = append(s.sums, sum)
		s.counts = append(s.counts, n)
		start = end
	}
	rd.toks = toks[:0]
}

// cutEnd returns the end of the segment of text that starts at start:
// after the first byte that ends a segment (. ! ? ; or a line break, as
// cutting has them), or len(text). It reads eight bytes at a time: a
// byte equal to a delimiter is a zero byte of the word xor the delimiter
// repeated, and the lowest zero byte the classic test flags is exact.
func cutEnd(text string, start int) int {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) &^ x & high }
	i := start
	for ; i+8 <= len(text); i += 8 {
		b := text[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if m := zero(w^'.'*ones) | zero(w^'!'*ones) | zero(w^'?'*ones) | zero(w^';'*ones) | zero(w^'\n'*ones); m != 0 {
			return i + bits.TrailingZeros64(m)/8 + 1
		}
	}
	for ; i < len(text); i++ {
		if cutting[text[i]] == 1 {
			return i + 1
		}
	}
	return len(text)
}
