package eval

import "strings"

// Literals. A prefilter literal may carry word-boundary marks (wordMark at
// either end, from a \b next to it in the expression): "\x00ai\x00"
// counts only where "ai" is a whole word. Marks make short literals such
// as "ai" or "dan" selective.

// wordMark stands for \b at either end of a literal.
const wordMark = "\x00"

// literal is one prefilter literal.
type literal struct {
	core               string // what is searched for
	wordStart, wordEnd bool   // a word boundary must hold before / after it
}

// parseLiteral reads a literal key (core with optional marks).
func parseLiteral(key string) literal {
	return literal{core: strings.Trim(key, wordMark), wordStart: strings.HasPrefix(key, wordMark),
		wordEnd: strings.HasSuffix(key, wordMark) && len(key) > 1}
}

// at reports whether the literal's boundaries hold for an occurrence of
// its core at byte offset i of s.
func (l literal) at(s string, i int) bool {
	return (!l.wordStart || wordBoundary(s, i)) && (!l.wordEnd || wordBoundary(s, i+len(l.core)))
}

// index returns the offset of the first occurrence of l in s at or after
// from whose boundaries hold, or -1.
func (l literal) index(s string, from int) int {
	for from <= len(s) {
		at := strings.Index(s[from:], l.core)
		if at < 0 {
			return -1
		}
		if l.at(s, from+at) {
			return from + at
		}
		from += at + 1
	}
	return -1
}

// literalSet counts the occurrences of a fixed set of literals in a text,
// in one pass (Aho-Corasick). The automaton is a dense table over byte
// classes: every byte that occurs in no literal shares class 0, which
// leads back to the root from any state.
type literalSet struct {
	lits    []literal
	classes [256]uint8
	nclass  int
	// next[class*nstates+state] is the next state, with hasOutput set
	// when some literal ends there (a column per class: see column).
	next []uint16
	// column[b] is where byte b's class's column of next starts: a scan
	// step adds the state to it, with no multiplication on the chain of
	// dependent loads that the scan's steps make.
	column [256]int32
	// outputs[span.start:span.end] are the literals that end at state s
	// (failure links folded in), with spans[s] = span.
	outputs []output
	spans   []outSpan
	nstates int
}

// outSpan is where a state's outputs are, in one load for emit.
type outSpan struct {
	start, end int32
	// endsWord says that every literal ending at the state needs a word
	// boundary after it: where there is none, emit is done at once.
	// Whole-word literals of one letter ("a", "i") end at a state reached
	// at every such letter in the text, mostly inside a word.
	endsWord bool
}

// newLiteralSet builds the automaton of the literal keys.
func newLiteralSet(keys []string) *literalSet {
	ls := &literalSet{lits: make([]literal, len(keys))}
	for i, k := range keys {
		ls.lits[i] = parseLiteral(k)
		l := ls.lits[i].core
		for j := 0; j < len(l); j++ {
			if ls.classes[l[j]] == 0 {
				ls.nclass++
				ls.classes[l[j]] = uint8(ls.nclass)
			}
		}
	}
	ls.nclass++ // class 0: bytes in no literal
	// The trie is built in the dense table itself: next[s*nclass+c] is
	// its child (0, the root, for none, since no trie edge leads there).
	// The table grows a row per state; literals that share a prefix share
	// its states, so the states are fewer than the literals' bytes.
	ls.next = make([]uint16, ls.nclass)
	var ends [][]int // per state: the literals that end there
	ends = append(ends, nil)
	for i, lit := range ls.lits {
		s := 0
		for j := 0; j < len(lit.core); j++ {
			at := s*ls.nclass + int(ls.classes[lit.core[j]])
			if ls.next[at] == 0 {
				if len(ends) >= hasOutput {
					ls.nstates = len(ends) + 1 // the caller refuses it
					return ls
				}
				ls.next[at] = uint16(len(ends))
				ends = append(ends, nil)
				ls.next = append(ls.next, make([]uint16, ls.nclass)...)
			}
			s = int(ls.next[at])
		}
		ends[s] = append(ends[s], i)
	}
	ls.nstates = len(ends)
	outputs := make([][]int, ls.nstates)
	fail := make([]int, ls.nstates)
	queue := make([]int, 1, ls.nstates) // every state, breadth first
	for head := 0; head < len(queue); head++ {
		s := queue[head]
		outputs[s] = ends[s]
		if s != 0 {
			outputs[s] = append(append([]int(nil), ends[s]...), outputs[fail[s]]...)
		}
		for c := range ls.nclass {
			at := s*ls.nclass + c
			n := int(ls.next[at])
			switch {
			case n != 0:
				if s != 0 {
					fail[n] = int(ls.next[fail[s]*ls.nclass+c])
				}
				queue = append(queue, n)
			case s != 0:
				ls.next[at] = ls.next[fail[s]*ls.nclass+c]
			}
		}
	}
	// States are renumbered breadth first: the shallow states, where a
	// scan spends most of its steps, then share a few cache lines of
	// each class's column.
	id := make([]uint16, ls.nstates)
	for i, s := range queue {
		id[s] = uint16(i)
	}
	next := make([]uint16, len(ls.next))
	sorted := make([][]int, ls.nstates)
	for i, s := range queue {
		for c := range ls.nclass {
			next[c*ls.nstates+i] = id[ls.next[s*ls.nclass+c]]
		}
		sorted[i] = outputs[s]
	}
	ls.next, outputs = next, sorted
	for b, c := range ls.classes {
		ls.column[b] = int32(int(c) * ls.nstates)
	}
	ls.spans = make([]outSpan, ls.nstates)
	for s, out := range outputs {
		ls.spans[s] = outSpan{start: int32(len(ls.outputs)), end: int32(len(ls.outputs) + len(out)), endsWord: len(out) > 0}
		for _, l := range out {
			ls.spans[s].endsWord = ls.spans[s].endsWord && ls.lits[l].wordEnd
			lit := ls.lits[l]
			o := output{lit: int32(l), length: uint16(len(lit.core))}
			if lit.wordStart {
				o.flags |= outWordStart
			}
			if lit.wordEnd {
				o.flags |= outWordEnd
			}
			ls.outputs = append(ls.outputs, o)
		}
	}
	for i, n := range ls.next {
		if len(outputs[n]) > 0 {
			ls.next[i] = n | hasOutput
		}
	}
	return ls
}

// keep marks the literals whose positions scan records.
func (ls *literalSet) keep(lits []bool) {
	for i := range ls.outputs {
		if lits[ls.outputs[i].lit] {
			ls.outputs[i].flags |= outKeepAt
		}
	}
}

// hasOutput marks a transition into a state where literals end.
const hasOutput = 1 << 15

// output is a literal as the scan needs it at the state where it ends.
type output struct {
	lit    int32
	length uint16
	flags  uint8 // outWordStart, outWordEnd, outKeepAt
}

const (
	outWordStart = 1 << iota
	outWordEnd
	outKeepAt
)

// found is what a view's literal scans found: per literal its count, the
// literals that occur, and where the literals whose positions are kept
// occur, chained per literal.
type found struct {
	counts  []int32  // per literal: its occurrences
	present []uint64 // a bit per literal: whether it occurs
	seen    []int32  // the literals that occur, each once
	// chain holds the occurrences of the kept literals in text order;
	// last[l] is literal l's last one (its entry is read only when l
	// occurs), whose prev leads back to the one before.
	chain []link
	last  []int32
}

// link is one occurrence of a kept literal: where it starts, and the
// index in found.chain of the literal's occurrence before it (-1: none).
type link struct{ at, prev int32 }

// scan adds to f what it finds in text[from:] (occurrences that start
// there, since the automaton starts there, whose boundaries hold, read in
// all of text). f.counts and f.last have an entry per literal, f.present
// a bit.
func (ls *literalSet) scan(text string, from int, f *found) {
	next, column := ls.next, &ls.column
	s := 0
	rest := text[from:] // indexed from 0, which spares the loop a bounds check
	for k := range len(rest) {
		n := next[int(column[rest[k]])+s]
		s = int(n &^ hasOutput)
		if n&hasOutput != 0 {
			ls.emit(text, from+k, s, f)
		}
	}
}

// emit adds to f the literals that end at text[i], where the scan reached
// state s. It is apart from scan so that scan's loop keeps its few
// variables in registers.
func (ls *literalSet) emit(text string, i, s int, f *found) {
	// Every literal ends at text[i]: a word boundary after it holds for
	// all of them or for none.
	endOK := wordBytes[text[i]] != (i+1 < len(text) && wordBytes[text[i+1]])
	span := ls.spans[s]
	if !endOK && span.endsWord {
		return
	}
	for _, o := range ls.outputs[span.start:span.end] {
		start := i + 1 - int(o.length)
		if o.flags&outWordEnd != 0 && !endOK ||
			o.flags&outWordStart != 0 && (start > 0 && wordBytes[text[start-1]]) == wordBytes[text[start]] {
			continue
		}
		c := f.counts[o.lit]
		f.counts[o.lit] = c + 1
		if c == 0 {
			f.seen = append(f.seen, o.lit)
			f.present[o.lit>>6] |= 1 << (o.lit & 63)
		}
		if o.flags&outKeepAt != 0 {
			prev := int32(-1)
			if c > 0 {
				prev = f.last[o.lit]
			}
			f.last[o.lit] = int32(len(f.chain))
			f.chain = append(f.chain, link{at: int32(start), prev: prev})
		}
	}
}
