package lexical

// Feature kinds, the first byte of every feature's hash input and the
// first field of its line in a weights file.
const (
	kindWord   = 'w' // a word, or two consecutive words
	kindPrefix = 'p' // the first prefixLen bytes of a longer word: a crude stem
)

// prefixLen is the length of the prefix features ("igno", "inst").
const prefixLen = 4

// squash appends to buf the squashed form of s: ASCII letters lowered,
// ASCII letters and digits and every non-ASCII byte kept, and one space
// for every run of anything else. The result starts and ends with a space.
func squash(buf []byte, s string) []byte {
	buf = append(buf, ' ')
	space := true
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

// sink receives the features of a segment. For a word feature it returns
// the lexicon classes of the word (or two), 0 when it has none.
type sink interface {
	add(h uint64, kind byte, b []byte) uint32
}

// walk hands s every feature of a squashed segment (which starts and ends
// with a space): each word, each pair of consecutive words (with the
// space between), the prefix of each word longer than prefixLen, and,
// with a lexicon, the classes its words matched and their pairs. It
// returns how many there were.
func walk[S sink](sq []byte, s S, lx *Lexicon) int {
	n := 0
	var bits uint32
	prev := -1 // start of the previous word
	for i := 1; i < len(sq); {
		j := i
		for j < len(sq) && sq[j] != ' ' {
			j++
		}
		if j > i {
			bits |= s.add(hashOf(kindWord, sq[i:j]), kindWord, sq[i:j])
			n++
			if j-i > prefixLen {
				s.add(hashOf(kindPrefix, sq[i:i+prefixLen]), kindPrefix, sq[i:i+prefixLen])
				n++
			}
			if prev >= 0 {
				bits |= s.add(hashOf(kindWord, sq[prev:j]), kindWord, sq[prev:j])
				n++
			}
			prev = i
		}
		i = j + 1
	}
	if bits != 0 && lx != nil {
		n += emit(lx, bits, s)
	}
	return n
}

// segments cuts text into segments at . ! ? ; and line breaks (the
// delimiter ends its segment); at most max of them, the last taking the
// rest. It appends [start, end) pairs to out.
func segments(text string, max int, out [][2]int) [][2]int {
	start := 0
	for i := 0; i < len(text) && len(out) < max-1; i++ {
		switch text[i] {
		case '.', '!', '?', ';', '\n':
			out = append(out, [2]int{start, i + 1})
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}
