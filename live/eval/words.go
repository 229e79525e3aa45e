package eval

import "math/bits"

// Word runs. A lead branch's follow sets may be bounded in
// words (runStart): how many runs of word bytes (ASCII letters, digits
// and '_', as \w reads them) a match holds before a literal. The runs of
// a view are found once, as a bitmap of where they start, eight bytes at
// a time; runStart then counts set bits.

// runStartBits sets in bits (resized to hold a bit per byte of text) the
// bit of every byte of text that starts a run of word bytes.
func runStartBits(text string, bits []uint64) []uint64 {
	bits = resize(bits, (len(text)+63)/64)
	clear(bits)
	// First the bit of every word byte, eight bytes at a time, then the
	// few bytes after the last eight.
	whole := len(text) &^ 7
	for i := 0; i < whole; i += 8 {
		b := text[i : i+8]
		// The compiler loads the eight bytes at once.
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		bits[i>>6] |= wordBits8(x) << (i & 63)
	}
	for i := whole; i < len(text); i++ {
		if wordBytes[text[i]] {
			bits[i>>6] |= 1 << (i & 63)
		}
	}
	// A run starts at a word byte after a byte that is none.
	prev := uint64(0) // 1 when the byte before the current 64 is a word byte
	for w, m := range bits {
		bits[w] = m &^ (m<<1 | prev)
		prev = m >> 63
	}
	return bits
}

// Byte-lane constants for wordBits8: every byte 0x01, and every byte 0x80.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// wordBits8 returns a bit per byte of x (eight bytes, the first the
// lowest), bit k set when byte k is a word byte. It classifies the eight
// at once (SWAR): for bytes under 0x80, v + (0x80-lo) has its top bit set
// when v >= lo, and (0x80+hi) - v when v <= hi, with no carry or borrow
// between bytes; letters are matched with bit 0x20 set, which lowers
// them; bytes from 0x80 up, which are no word bytes, are masked out. The
// multiply gathers the eight top bits, shifted to each byte's bit 0,
// into the top byte. TestWordBits8 compares it with wordBytes for every
// byte in every lane.
func wordBits8(x uint64) uint64 {
	t := x &^ lanes80
	folded := t | 0x20*lanes01
	letter := (folded + (0x80-'a')*lanes01) & (('z'+0x80)*lanes01 - folded)
	digit := (t + (0x80-'0')*lanes01) & (('9'+0x80)*lanes01 - t)
	under := (t + (0x80-'_')*lanes01) & (('_'+0x80)*lanes01 - t)
	word := (letter | digit | under) &^ x & lanes80
	return (word >> 7) * 0x0102040810204080 >> 56
}

// runStart returns where the nth run of word bytes of text[at:] starts,
// or the end of at's window (leadSpan bytes) when there are fewer in it:
// a string that starts at at and holds no more than n-1 runs ends there
// at the latest. text is the current view's text or its lowered twin,
// whose runs are the same: they are found once per view (runStartBits).
func (s *scan) runStart(text string, at, n int) int {
	if !s.wordsRead {
		s.runBits = runStartBits(text, s.runBits)
		s.wordsRead = true
	}
	end := min(len(text), at+leadSpan)
	if isWordByte(text[at]) { // text[at:] starts with a run, whether or not text does there
		if n == 1 {
			return at
		}
		n--
	}
	// The nth run start after at and before end, 64 bytes at a time.
	for i := at + 1; i < end; {
		m := s.runBits[i>>6] >> (i & 63)
		span := 64 - i&63
		if end-i < span {
			span = end - i
			m &= 1<<span - 1
		}
		if c := bits.OnesCount64(m); c < n {
			n -= c
			i += span
			continue
		}
		for ; n > 1; n-- {
			m &= m - 1
		}
		return i + bits.TrailingZeros64(m)
	}
	return end
}
