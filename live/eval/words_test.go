package eval

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWordBits8 checks wordBits8 against wordBytes for every byte value
// in every lane, the other lanes holding word and non-word bytes.
func TestWordBits8(t *testing.T) {
	for _, fill := range []byte{'a', ' ', 0x80, 0xff, '_'} {
		for lane := range 8 {
			for c := range 256 {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[lane] = byte(c)
				var want uint64
				for k, x := range b {
					if wordBytes[x] {
						want |= 1 << k
					}
				}
				x := uint64(0)
				for k, c := range b {
					x |= uint64(c) << (8 * k)
				}
				if got := wordBits8(x); got != want {
					t.Fatalf("wordBits8(%q) = %08b, want %08b", b, got, want)
				}
			}
		}
	}
}

// naiveRunStart is runStart's oracle: it walks text[at:] byte by byte.
func naiveRunStart(text string, at, n int) int {
	end := min(len(text), at+leadSpan)
	for i := at; i < end; i++ {
		if isWordByte(text[i]) && (i == at || !isWordByte(text[i-1])) {
			if n--; n == 0 {
				return i
			}
		}
	}
	return end
}

// TestRunStart compares runStart with a byte-by-byte walk at every
// offset of corpus texts and of random texts rich in word boundaries,
// for the word counts the bounds use.
func TestRunStart(t *testing.T) {
	texts := corpusTexts(t)[:40]
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "ab_9 -.\n\xc3\xa9Z"
	for range 20 {
		b := make([]byte, rng.IntN(700))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		s := &scan{}
		for at := range len(text) {
			for _, n := range []int{1, 2, 3, 5, 11, 40} {
				if got, want := s.runStart(text, at, n), naiveRunStart(text, at, n); got != want {
					t.Fatalf("runStart(%.60q, %d, %d) = %d, want %d", text, at, n, got, want)
				}
			}
		}
	}
}

// TestNextBit compares nextBit with a bit-by-bit walk on random sets,
// over ranges that start and end inside and across words.
func TestNextBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		set := make([]uint64, 4)
		for i := range set {
			set[i] = rng.Uint64() & rng.Uint64() & rng.Uint64() // sparse
		}
		from := rng.IntN(256)
		to := from + rng.IntN(256-from+1)
		want := -1
		for i := from; i < to; i++ {
			if set[i>>6]&(1<<(i&63)) != 0 {
				want = i
				break
			}
		}
		if got := nextBit(set, from, to); got != want {
			t.Fatalf("nextBit(%x, %d, %d) = %d, want %d", set, from, to, got, want)
		}
	}
}

// TestFirstFrom compares firstFrom with slices.BinarySearch on random
// sorted lists (with repeats), for targets before, inside and after them.
func TestFirstFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		pos := make([]int32, rng.IntN(20))
		for i := range pos {
			pos[i] = int32(rng.IntN(60))
		}
		slices.Sort(pos)
		for at := -1; at <= 61; at++ {
			want, _ := slices.BinarySearch(pos, int32(at))
			if got := firstFrom(pos, at); got != want {
				t.Fatalf("firstFrom(%v, %d) = %d, want %d", pos, at, got, want)
			}
		}
	}
}
