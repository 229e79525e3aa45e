package eval

import (
	"encoding/base64"
	"hash/maphash"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/s2"
)

// entropyTexts are the corpus texts, some of their variants (upper case,
// zero-width spaces, Cyrillic o) and edge cases: the empty text, texts
// around the window size, one byte repeated, every byte value, invalid
// UTF-8, repeated words and other scripts.
func entropyTexts(t *testing.T) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var every []byte
	for i := range 1024 {
		every = append(every, byte(i*7))
	}
	out := []string{"", "a", strings.Repeat("x", 63), strings.Repeat("ab", 32), strings.Repeat("abc", 22),
		strings.Repeat("z", 4000), string(every), string(random), "\xff\xfe" + strings.Repeat("word \xc3", 50),
		strings.Repeat("the same words again ", 80), "a1 b2 c3 a1 b2 c3 a1 b2 c3",
		"pаypal Москва Αθήνα 東京 القاهرة ירושלים दिल्ली 서울 ひらがな カタカナ กรุงเทพ ǅ ᚠ ＡＢＣ"}
	texts := outputTexts(t)
	for i, s := range texts {
		out = append(out, s)
		if i%4 == 0 {
			out = append(out, strings.ToUpper(s), strings.Join(strings.Fields(s), " \u200b"), strings.ReplaceAll(s, "o", "\u043e"))
		}
	}
	return out
}

// TestEntropyStageMatchesReference compares the entropy stage's fast
// measures with straightforward ones (kept below as the reference): the
// values must be the same to the bit.
func TestEntropyStageMatchesReference(t *testing.T) {
	for _, s := range entropyTexts(t) {
		var counts [256]int
		for i := 0; i < len(s); i++ {
			counts[s[i]]++
		}
		var gotCounts [256]int
		gotH, gotHigh := windowEntropy(s, &gotCounts)
		if gotCounts != counts {
			t.Errorf("windowEntropy(%.40q) counted the bytes %v; want %v", s, gotCounts, counts)
		}
		wantH, wantHigh := referenceWindowEntropy(t, s)
		if math.Float64bits(gotH) != math.Float64bits(wantH) || gotHigh != wantHigh {
			t.Errorf("windowEntropy(%.40q) = %v, %d; want %v, %d", s, gotH, gotHigh, wantH, wantHigh)
		}
		gotRep, gotWords := repetition(s)
		wantRep, wantWords := referenceRepetition(s)
		if gotRep != wantRep || gotWords != wantWords {
			t.Errorf("repetition(%.40q) = %v, %d; want %v, %d", s, gotRep, gotWords, wantRep, wantWords)
		}
		gotScripts, gotMix := scripts(s, &counts)
		wantScripts, wantMix := referenceScripts(s)
		if !maps.Equal(gotScripts, wantScripts) || gotMix != wantMix {
			t.Errorf("scripts(%.40q) = %v, %v; want %v, %v", s, gotScripts, gotMix, wantScripts, wantMix)
		}
	}
}

// TestHighWindowSum checks the threshold on a window whose entropy is
// exactly highEntropy, 32 byte values twice each (5 bits), and on one just
// under it, one value once and another three times instead.
func TestHighWindowSum(t *testing.T) {
	var five, under []byte
	for i := range 32 {
		five = append(five, byte('A'+i), byte('A'+i))
	}
	under = slices.Clone(five)
	under[1] = under[2] // three of one value, one of another: below 5 bits
	for _, c := range []struct {
		window []byte
		high   int
	}{{five, 1}, {under, 0}} {
		h, high := windowEntropy(string(c.window), new([256]int))
		if high != c.high {
			t.Errorf("window of entropy %v: %d high; want %d", h, high, c.high)
		}
	}
	if h, _ := windowEntropy(string(five), new([256]int)); h != highEntropy {
		t.Errorf("32 byte values twice each: entropy %v; want %v", h, highEntropy)
	}
}

// TestTrigramSet checks the set against a map, past several growths and
// with the key 0, which marks an empty slot.
func TestTrigramSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s trigramSet
	for _, want := range []int{0, 1, 100} {
		s.reset(want)
		ref := map[uint64]bool{}
		for i := range 20000 {
			k := rng.Uint64() % 5000 // repeats, and keys sharing their low bits
			if i%3 == 0 {
				k <<= 40
			}
			if got := s.add(k); got != ref[k] {
				t.Fatalf("add(%#x) after %d adds = %v, want %v", k, i, got, ref[k])
			}
			ref[k] = true
		}
		if got := s.n + map[bool]int{true: 1}[s.zero]; got != len(ref) {
			t.Errorf("set holds %d keys, want %d", got, len(ref))
		}
	}
}

// TestCompressionRatio checks that the ratio is the size of a real S2
// block over the text's size, whatever text the pooled buffers held
// before.
func TestCompressionRatio(t *testing.T) {
	texts := []string{benchTexts["benign"], strings.Repeat("flood ", 400), "", "x", benchTexts["obfuscated"], denseTexts(t)[0]}
	for _, s := range append(texts, texts...) {
		block := s2.Encode(nil, []byte(s))
		back, err := s2.Decode(nil, block)
		if err != nil || string(back) != s {
			t.Fatalf("the S2 block of %.40q does not decode back: %v", s, err)
		}
		want := 1.0
		if s != "" {
			want = float64(len(block)) / float64(len(s))
		}
		if got := compressionRatio(s); got != want {
			t.Errorf("compressionRatio(%.40q) = %v, want %v", s, got, want)
		}
	}
	if r := compressionRatio(strings.Repeat("flood ", 400)); r >= 0.01 {
		t.Errorf("a flood of one word compresses to %v, not under 0.01", r)
	}
	for _, s := range devTexts(t, "benign") {
		if r := compressionRatio(s); r < 0.5 {
			t.Errorf("2 KB of ordinary texts (%.40q) compress to %v, under 0.5", s, r)
		}
	}
}

// TestAnalyseAnomalies checks the entropy stage's anomalies on texts
// made to show each, and on ordinary prose, which shows none.
func TestAnalyseAnomalies(t *testing.T) {
	random := make([]byte, 1536)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := []struct {
		desc      string
		text      string
		homoglyph int
		want      []string
	}{
		{"ordinary prose", devTexts(t, "benign")[0], 0, []string{}},
		{"more ordinary prose", devTexts(t, "benign")[1], 0, []string{}},
		{"the same words over and over", strings.Repeat("the same words again ", 80), 0, []string{AnomalyRepetitive}},
		{"one character 4,000 times: one word", strings.Repeat("z", 4000), 0, []string{AnomalyRepetitive}},
		{"punctuation, no words", strings.Repeat("!?", 600), 0, []string{AnomalyRepetitive}},
		{"a long word 50 times: too few words for trigrams", strings.Repeat("supercalifragilistic ", 50), 0, []string{AnomalyRepetitive}},
		{"a flood under 512 bytes", strings.Repeat("ab", 200), 0, []string{}},
		{"random bytes as base64", base64.StdEncoding.EncodeToString(random), 0, []string{AnomalyHighEntropy}},
		{"words that mix scripts", "pаypal login", 1, []string{AnomalyMixedScript}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			r := analyse(tc.text, tc.homoglyph, DefaultMaxBytes)
			if !slices.Equal(r.Anomalies, tc.want) {
				t.Errorf("anomalies %v (compression ratio %v, repetition %v), want %v", r.Anomalies, r.CompressionRatio, r.Repetition, tc.want)
			}
		})
	}
}

// BenchmarkAnalyse measures the entropy stage alone on the 2 KB benign
// text and the dev split's 2 KB texts.
func BenchmarkAnalyse(b *testing.B) {
	for name, texts := range map[string][]string{"benign": {benchTexts["benign"]}, "dense": denseTexts(b)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				analyse(texts[i%len(texts)], 0, DefaultMaxBytes)
				i++
			}
		})
	}
}

// referenceWindowEntropy is windowEntropy written plainly: counts in
// ints and the units of c·log2 c looked up on both sides of every change.
// Every 32nd window it counts anew, and checks that the sum in units is
// the window's, and the float sum of c·log2 c within 1e-12.
func referenceWindowEntropy(t *testing.T, text string) (maxH float64, high int) {
	if len(text) < entropyWindow {
		return round3(shannon(text)), 0
	}
	var counts [256]int
	var sum int64
	for i := range entropyWindow {
		c := text[i]
		sum += clog2Units[counts[c]+1] - clog2Units[counts[c]]
		counts[c]++
	}
	minSum := sum
	for i := entropyWindow; ; i++ {
		if i%32 == 0 {
			var fresh [256]int
			for _, c := range []byte(text[i-entropyWindow : i]) {
				fresh[c]++
			}
			var units int64
			exact := 0.0
			for _, c := range fresh {
				units += clog2Units[c]
				if c > 0 {
					exact += float64(c) * math.Log2(float64(c))
				}
			}
			if d := math.Ldexp(float64(units), -entropyFrac) - exact; units != sum || math.Abs(d) > 1e-12 {
				t.Fatalf("window ending at %d of %.40q: %d units slid, %d counted, %v off c·log2 c", i, text, sum, units, d)
			}
		}
		minSum = min(minSum, sum)
		if sum <= (logW-highEntropy)*entropyWindow<<entropyFrac {
			high++
		}
		if i == len(text) {
			break
		}
		out, in := text[i-entropyWindow], text[i]
		sum += clog2Units[counts[out]-1] - clog2Units[counts[out]]
		counts[out]--
		sum += clog2Units[counts[in]+1] - clog2Units[counts[in]]
		counts[in]++
	}
	if h := logW - math.Ldexp(float64(minSum), -entropyFrac)/entropyWindow; h > 0 {
		maxH = h
	}
	return round3(maxH), high
}

// referenceSeed keys referenceRepetition's word hashes.
var referenceSeed = maphash.MakeSeed()

// referenceRepetition is repetition as first written: a Go map for the
// seen trigrams and maphash for the words.
func referenceRepetition(text string) (share float64, words int) {
	var prev [2]uint64
	seen := map[uint64]bool{}
	trigrams, repeats := 0, 0
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
	}
	for i := 0; i < len(text); {
		for i < len(text) && !isWord(text[i]) {
			i++
		}
		j := i
		for j < len(text) && isWord(text[j]) {
			j++
		}
		if j == i {
			break
		}
		h := maphash.String(referenceSeed, text[i:j])
		words++
		if words >= 3 {
			tri := h ^ prev[1]*31 ^ prev[0]*961
			trigrams++
			if seen[tri] {
				repeats++
			}
			seen[tri] = true
		}
		prev[0], prev[1] = prev[1], h
		i = j
	}
	if trigrams == 0 {
		return 0, words
	}
	return round3(float64(repeats) / float64(trigrams)), words
}

// referenceScripts is scripts decoding every character and trying the
// script tables in order.
func referenceScripts(text string) (map[string]int, float64) {
	counts := map[string]int{}
	total := 0
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		total++
		name := "other"
		for _, s := range scriptTables {
			if unicode.Is(s.table, r) {
				name = s.name
				break
			}
		}
		counts[name]++
	}
	return counts, mixing(counts, total)
}
