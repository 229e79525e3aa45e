package eval

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestScansMatchOld compares the normaliser's byte scans with the
// versions they replaced (normalise_old_test.go) on every view of every
// corpus text and variant TestOutputs reads, and on random text made of
// the bytes the scans look for; and checks each view's lowered twin.
func TestScansMatchOld(t *testing.T) {
	texts := outputTexts(t)
	var inputs []string
	for i, s := range texts {
		inputs = append(append(inputs, s), variants(s, texts[(i+1)%len(texts)])...)
	}
	lim := Limits{}
	lim.fill()
	seen := map[string]bool{}
	for _, in := range inputs {
		var rep NormaliseReport
		n := normaliser{lim: lim, rep: &rep}
		for _, v := range n.build(in) {
			if v.lower != oldLowerText(v.text) {
				t.Fatalf("%s view of %q: lower %q, want %q", v.kind, in, v.lower, oldLowerText(v.text))
			}
			for _, s := range []string{v.text, v.lower} {
				if !seen[s] {
					seen[s] = true
					compareScans(t, s, false)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbcdefxXzZ0123456789 ,:.-_*/|+=()@$\\\t\n\r\v\f\x00\x1f\x7f\u00e9\u00a0\u2003\u200b\u0430\u03bf\u0131\u13a0\u4e2d\u2019"
	runes := []rune(alphabet)
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(64) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		compareScans(t, b.String(), true)
		compareScans(t, strings.Repeat(b.String(), 1+rng.IntN(4)), true)
	}
	t.Logf("%d inputs, %d texts of their views compared, and 10,000 random texts", len(inputs), len(seen))
}

// compareScans compares the scans of s, and with alignments the
// eight-byte reads at every alignment.
func compareScans(t *testing.T, s string, alignments bool) {
	t.Helper()
	same := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s(%q) = %v, want %v", name, s, got, want)
		}
	}
	var newRep, oldRep NormaliseReport
	nn, on := normaliser{rep: &newRep}, normaliser{rep: &oldRep}
	got, gotChanged := nn.deleet(s)
	want, wantChanged := on.oldDeleet(s)
	same("deleet", []any{got, gotChanged, newRep}, []any{want, wantChanged, oldRep})
	got, gotChanged = unspace(s)
	want, wantChanged = oldUnspace(s)
	same("unspace", []any{got, gotChanged}, []any{want, wantChanged})
	fields := strings.Fields(s)
	single := 0
	for _, f := range fields {
		if len(f) == 1 {
			single++
		}
	}
	gotTokens, gotSingle := fieldsAndSingles(s)
	same("fieldsAndSingles", []int{gotTokens, gotSingle}, []int{len(fields), single})
	gotAll, gotOK := unspaceAll(s)
	wantAll, wantOK := oldUnspaceAll(s)
	same("unspaceAll", []any{gotAll, gotOK}, []any{wantAll, wantOK})
	same("encodedRuns", encodedRuns(s), oldEncodedRuns(s))
	same("separatedHex", separatedHex(s), oldSeparatedHex(s))
	same("mentionsROT13", mentionsROT13(s), oldMentionsROT13(s))
	same("textual", textual(s), oldTextual(s))
	for _, run := range encodedRuns(s) { // what textual reads: decoded runs of the views
		if !alignments {
			d := string(decodeBase64(run))
			same("textual", textual(d), oldTextual(d))
		}
	}
	gotFold, wantFold := nn.fold(s), on.oldFold(s)
	same("fold", []any{gotFold, newRep}, []any{wantFold, oldRep})
	v := view{text: s}
	same("digitRuns", v.digitRuns(), oldDigitRuns(s))
	same("lowerText", lowerText(s), oldLowerText(s))
	for i := range min(len(s), 9) {
		if !alignments {
			break
		}
		same("plainPrefix", plainPrefix(s[i:]), oldPlainPrefix(s[i:]))
		same("lowerText", lowerText(s[i:]), oldLowerText(s[i:]))
		same("fold", nn.fold(s[i:]), on.oldFold(s[i:]))
	}
}

// FuzzScansMatchOld compares the byte scans with the versions they
// replaced on any input.
func FuzzScansMatchOld(f *testing.F) {
	for _, s := range []string{"", "i g n o r e  a l l", "1gn0r3 4ll pr3v10u5", "\\x69\\x67\\x6e\\x6f\\x72\\x65\\x20\\x61",
		"69 67 6e 6f 72 65 20 61 6c 6c", "SWdub3JlIGFsbCBwcmV2aW91cw==", "ROT 13: vtaber", "4111 1111-1111 (1111)", "ABC\u00e9DEF\tGH\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { compareScans(t, s, true) })
}

// TestNextIn compares nextIn with a byte-by-byte search for every byte
// value at every place of an eight-byte word, next to every other.
func TestNextIn(t *testing.T) {
	for _, r := range [][2]byte{{'A', 'Z'}, {leetLow, leetHigh}, {1, 0x7f}, {'a', 'z'}, {'0', '0'}} {
		for b := range 256 {
			for c := range 256 {
				for at := range 9 {
					buf := []byte("----------------")
					if r[0] <= '-' && '-' <= r[1] {
						buf = []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
					}
					buf[at], buf[at+1] = byte(b), byte(c)
					s := string(buf)
					want := strings.IndexFunc(s, func(x rune) bool { return x >= rune(r[0]) && x <= rune(r[1]) })
					if want < 0 {
						want = len(s)
					}
					if got := nextIn(s, 0, r[0], r[1]); got != want {
						t.Fatalf("nextIn(%q, 0, %#x, %#x) = %d, want %d", s, r[0], r[1], got, want)
					}
				}
			}
		}
	}
}

// TestNextSingle compares nextSingle with a byte-by-byte search on every
// pair of bytes at every place of two words, from every start.
func TestNextSingle(t *testing.T) {
	naive := func(s string, i int) int {
		for ; i < len(s); i++ {
			if isLowerLetter(s[i]) && (i == 0 || !isLowerLetter(s[i-1])) && (i+1 == len(s) || !isLowerLetter(s[i+1])) {
				return i
			}
		}
		return len(s)
	}
	for _, fill := range []string{"xxxxxxxxxxxxxxxx", "x x-x.x x,x x x ", "................"} {
		for _, b := range []byte("a z.`{A@x-") {
			for _, c := range []byte("a z.`{A@x-") {
				for at := range 15 {
					buf := []byte(fill)
					buf[at], buf[at+1] = b, c
					for _, s := range []string{string(buf), string(buf[:at+2])} {
						for i := range len(s) + 1 {
							if got, want := nextSingle(s, i), naive(s, i); got != want {
								t.Fatalf("nextSingle(%q, %d) = %d, want %d", s, i, got, want)
							}
						}
					}
				}
			}
		}
	}
}
