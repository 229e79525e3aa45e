package eval

import (
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/s2"
)

// EngineStatus is the state of the entropy engine, which telemetry reports.
type EngineStatus string

// The entropy engine's states.
const (
	EngineOK      EngineStatus = "ok"      // the whole text was analysed
	EnginePartial EngineStatus = "partial" // only the first Limits.MaxAnalyseBytes were
	EngineIdle    EngineStatus = "idle"    // telemetry: no run in the window
)

// Entropy-stage parameters.
const (
	entropyWindow      = 64  // bytes per window
	highEntropy        = 5.0 // bits per byte: random base64 is above, prose well below
	highEntropyRun     = 48  // window positions above highEntropy that make an anomaly
	repetitiveMinWords = 60  // fewer words than this are never "repetitive"
	repetitiveShare    = 0.5 // share of repeated word trigrams that is
	compressedMinBytes = 512
	compressedRatio    = 0.14 // an S2 block under this share of the input is flooding (see compressionRatio)
)

// Anomalies the entropy stage reports.
const (
	AnomalyHighEntropy = "high_entropy" // a long run of random-looking bytes
	AnomalyRepetitive  = "repetitive"   // the same words over and over (token flooding)
	AnomalyMixedScript = "mixed_script" // words that mix scripts to pass for Latin
)

// EntropyReport is the entropy and structure stage's findings. The doc
// tags describe the fields in /api/v1/openapi.json.
type EntropyReport struct {
	Status             EngineStatus   `json:"status" doc:"ok when the whole text was analysed, partial when only its first bytes_analysed bytes were"`
	BytesAnalysed      int            `json:"bytes_analysed" doc:"Bytes of the normalised text analysed"`
	Entropy            float64        `json:"entropy" doc:"Shannon entropy of the text's bytes, in bits per byte"`
	MaxWindowEntropy   float64        `json:"max_window_entropy" doc:"The highest Shannon entropy of a 64-byte window, in bits per byte"`
	HighEntropyWindows int            `json:"high_entropy_windows" doc:"64-byte window positions above 5 bits per byte; 48 or more make the anomaly high_entropy"`
	CompressionRatio   float64        `json:"compression_ratio" doc:"Size of the text's S2 block (klauspost/compress/s2 Encode: LZ77 literals and copies, no entropy coding) over the text's size; ordinary prose is about 0.7 to 0.9, a flood of one word under 0.01. Under 0.14 on 512 bytes or more makes the anomaly repetitive"`
	Repetition         float64        `json:"repetition" doc:"Share of word trigrams seen earlier in the text; 0.5 or more over 60 words or more makes the anomaly repetitive"`
	Scripts            map[string]int `json:"scripts" doc:"Letters per script (latin, cyrillic, greek, han, ...; other)"`
	ScriptMixing       float64        `json:"script_mixing" doc:"Share of letters outside the script with the most"`
	Anomalies          []string       `json:"anomalies" doc:"high_entropy, repetitive (token flooding), mixed_script (words that mix scripts to pass for Latin)"`
}

// Σ c·log2 c over a window's byte counts c, which windowEntropy keeps up
// to date, is a whole number of units of 2⁻entropyFrac: clog2Units[c] is
// c·log2 c so rounded (exact when c is a power of two), and a window's sum
// is the sum of its counts' terms, whichever way the window got there.
// The rounding is at most 32 units over a window's 64 bytes, about 1e-13
// of a bit; the float sum it replaced drifted by more (it read an exact
// 3.0625 bits as 3.0624999, which round3 made 3.062).
const entropyFrac = 48

var clog2Units = func() (t [entropyWindow + 1]int64) {
	for c := 1; c <= entropyWindow; c++ {
		t[c] = int64(math.Round(math.Ldexp(float64(c)*math.Log2(float64(c)), entropyFrac)))
	}
	return
}()

// entropyUp[c] and entropyDown[c] are the changes of the sum, in units,
// when a byte's count in the sliding window goes from c to c+1 and from c
// to c-1 (indexed by a byte, so that no lookup needs a bounds check).
var entropyUp, entropyDown = func() (up, down [256]int64) {
	for c := range entropyWindow + 1 {
		if c < entropyWindow {
			up[c] = clog2Units[c+1] - clog2Units[c]
		}
		if c > 0 {
			down[c] = clog2Units[c-1] - clog2Units[c]
		}
	}
	return
}()

// analyse measures the structure of the normalised text.
func analyse(text string, homoglyphWords, limit int) EntropyReport {
	r := EntropyReport{Status: EngineOK, Anomalies: []string{}}
	if len(text) > limit {
		text, r.Status = text[:limit], EnginePartial
	}
	r.BytesAnalysed = len(text)
	var counts [256]int // the text's byte histogram, which windowEntropy counts
	r.MaxWindowEntropy, r.HighEntropyWindows = windowEntropy(text, &counts)
	r.Entropy = round3(entropyOf(&counts, len(text)))
	r.CompressionRatio = round3(compressionRatio(text))
	words := 0
	r.Repetition, words = repetition(text)
	r.Scripts, r.ScriptMixing = scripts(text, &counts)
	if r.HighEntropyWindows >= highEntropyRun {
		r.Anomalies = append(r.Anomalies, AnomalyHighEntropy)
	}
	if words >= repetitiveMinWords && r.Repetition >= repetitiveShare ||
		len(text) >= compressedMinBytes && r.CompressionRatio < compressedRatio {
		r.Anomalies = append(r.Anomalies, AnomalyRepetitive)
	}
	if homoglyphWords > 0 {
		r.Anomalies = append(r.Anomalies, AnomalyMixedScript)
	}
	return r
}

// highWindowSum is the largest sum, in units, of a window whose entropy,
// logW - sum/entropyWindow, is at least highEntropy: the entropy falls as
// the sum grows, so windowEntropy compares sums instead of entropies.
const highWindowSum = (logW - highEntropy) * entropyWindow << entropyFrac

// highWindowUnits is highWindowSum in a variable, which a loop can keep
// in a register (a constant this large it loads anew on every byte).
var highWindowUnits int64 = highWindowSum

const logW = 6 // log2(entropyWindow)

// windowEntropy slides a 64-byte window over text, one byte at a time,
// keeping Σ c·log2 c up to date in whole units (clog2Units), and returns
// the highest entropy and how many positions were at or above
// highEntropy. It adds the text's bytes to bytes on the way. Integer adds
// keep the loop short: it waits on the sum, two adds a byte.
func windowEntropy(text string, bytes *[256]int) (maxH float64, high int) {
	if len(text) < entropyWindow {
		for i := 0; i < len(text); i++ {
			bytes[text[i]]++
		}
		return round3(shannon(text)), 0
	}
	var counts [256]uint8 // a window holds 64 bytes
	// the tables and the threshold in locals, which the loop keeps in
	// registers
	up, down, highSum := &entropyUp, &entropyDown, highWindowUnits
	sum := int64(0)
	for _, c := range []byte(text[:entropyWindow]) {
		sum += up[counts[c]]
		counts[c]++
		bytes[c]++
	}
	minSum := sum
	if sum <= highSum {
		high++
	}
	in := text[entropyWindow:]
	out := text[:len(in)]
	for i := 0; i < len(in) && i < len(out); i++ {
		o, n := out[i], in[i]
		sum += down[counts[o]]
		counts[o]--
		sum += up[counts[n]]
		counts[n]++
		bytes[n]++
		minSum = min(minSum, sum)
		// sum <= highSum, without a branch: the sign of highSum - sum
		high += 1 ^ int(uint64(highSum-sum)>>63)
	}
	if h := logW - math.Ldexp(float64(minSum), -entropyFrac)/entropyWindow; h > 0 {
		maxH = h
	}
	return round3(maxH), high
}

// s2Buffers are compressionRatio's buffers: the text's bytes (s2 takes
// no string) and the block.
type s2Buffers struct{ src, dst []byte }

// s2Pool reuses s2Buffers.
var s2Pool = sync.Pool{New: func() any { return new(s2Buffers) }}

// compressionRatio is the size of text's S2 block over its size: the
// block format of klauspost/compress/s2 as Encode writes it, the length
// of the text as a varint, then literals and copies (LZ77 matches of 4
// bytes or more, a repeated offset coded in a few bytes however long
// the match). There is no entropy coding, so the ratio measures repeated
// substrings alone (prose is about 0.75 to 0.85 of its size, a flood of
// one word under 0.01); how evenly bytes are spread is Entropy's measure.
func compressionRatio(text string) float64 {
	if text == "" {
		return 1
	}
	b := s2Pool.Get().(*s2Buffers)
	b.src = append(b.src[:0], text...)
	b.dst = s2.Encode(b.dst[:cap(b.dst)], b.src)
	n := len(b.dst)
	if cap(b.src) <= 64<<10 { // buffers grown by a long text are left to the collector
		s2Pool.Put(b)
	}
	return float64(n) / float64(len(text))
}

// trigramSet is a set of trigram hashes with open addressing: for a 2 KB
// text a few hundred entries, which a Go map spends most of repetition's
// time on.
type trigramSet struct {
	slots []uint64 // a power of two long, at most half full; 0 is empty
	n     int
	zero  bool     // whether 0, which marks an empty slot, is in the set
	keys  []uint64 // repetition's trigrams, kept with the set for reuse
}

// trigramSets reuses trigramSets.
var trigramSets = sync.Pool{New: func() any { return new(trigramSet) }}

// reset empties the set and sizes it for about want entries.
func (s *trigramSet) reset(want int) {
	size := 64
	for size < 2*want {
		size *= 2
	}
	if cap(s.slots) < size {
		s.slots = make([]uint64, size)
	} else {
		s.slots = s.slots[:size]
		clear(s.slots)
	}
	s.n, s.zero = 0, false
}

// addAll puts keys in the set, one after the other, and returns how many
// were there already when put.
func (s *trigramSet) addAll(keys []uint64) (had int) {
	for _, k := range keys {
		if k == 0 || 2*(s.n+1) > len(s.slots) {
			if s.add(k) {
				had++
			}
			continue
		}
		// add, written out for the common case
		mask := uint64(len(s.slots) - 1)
		i := slotOf(k, mask)
		for s.slots[i] != k && s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		if s.slots[i] == k {
			had++
			continue
		}
		s.slots[i] = k
		s.n++
	}
	return had
}

// add puts k in the set and reports whether it was there already. It is
// small enough to be inlined; the rare cases are addRare's.
func (s *trigramSet) add(k uint64) (had bool) {
	if k == 0 || 2*(s.n+1) > len(s.slots) {
		return s.addRare(k)
	}
	mask := uint64(len(s.slots) - 1)
	i := slotOf(k, mask)
	for s.slots[i] != k && s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	if s.slots[i] == k {
		return true
	}
	s.slots[i] = k
	s.n++
	return false
}

// addRare is add of the key 0, which marks an empty slot, and of a key
// that needs the table to grow first.
func (s *trigramSet) addRare(k uint64) (had bool) {
	if k == 0 {
		had, s.zero = s.zero, true
		return had
	}
	s.grow()
	return s.add(k)
}

// grow doubles the table and puts the entries back.
func (s *trigramSet) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, k := range old {
		if k == 0 {
			continue
		}
		i := slotOf(k, mask)
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = k
	}
}

// slotOf is k's first slot: the top bits of k times 2⁶⁴/φ, which mixes
// the word hashes' weak low bits into the slot number.
func slotOf(k, mask uint64) uint64 {
	return k * 0x9e3779b97f4a7c15 >> 32 & mask
}

// FNV-1a, which hashes a word as repetition reads it.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// repetition is the share of word trigrams that occurred earlier in text,
// and the number of words. It hashes the trigrams in one loop and puts
// them in the set in another: the set's calls in the word loop made the
// compiler keep that loop's state in memory.
func repetition(text string) (share float64, words int) {
	seen := trigramSets.Get().(*trigramSet)
	// a word and the byte after it are two bytes or more: room for every
	// trigram, written by index (an append's call would spill too)
	keys := seen.keys
	if need := len(text)/2 + 1; cap(keys) < need {
		keys = make([]uint64, need)
	}
	keys = keys[:cap(keys)]
	n := 0
	var prev0, prev1 uint64 // the hashes of the two words before
	for i := 0; i < len(text); i++ {
		if !trigramWordBytes[text[i]] {
			continue
		}
		// a word, text[i:j]
		h := uint64(fnvOffset)
		j := i
		for ; j < len(text) && trigramWordBytes[text[j]]; j++ {
			h = (h ^ uint64(text[j])) * fnvPrime
		}
		words++
		if words >= 3 {
			keys[n] = h ^ prev1*31 ^ prev0*961
			n++
		}
		prev0, prev1 = prev1, h
		i = j // text[j] is no word byte (or j is the end): the loop moves past it
	}
	seen.reset(len(text) / 4)
	repeats := seen.addAll(keys[:n])
	if len(seen.slots) <= 1<<14 { // a set grown by a long text is left to the collector
		seen.keys = keys
		trigramSets.Put(seen)
	}
	if n == 0 {
		return 0, words
	}
	return round3(float64(repeats) / float64(n)), words
}

// trigramWordBytes marks the bytes of repetition's words: ASCII letters
// and digits, and every byte of a multi-byte character.
var trigramWordBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
	}
	return
}()

// scriptTables names the scripts scripts counts; other letters count as "other".
var scriptTables = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"latin", unicode.Latin}, {"cyrillic", unicode.Cyrillic}, {"greek", unicode.Greek},
	{"han", unicode.Han}, {"arabic", unicode.Arabic}, {"hebrew", unicode.Hebrew},
	{"devanagari", unicode.Devanagari}, {"hangul", unicode.Hangul}, {"hiragana", unicode.Hiragana},
	{"katakana", unicode.Katakana}, {"thai", unicode.Thai},
}

// scripts counts letters per script and the share outside the main one;
// bytes is the text's byte histogram, which counts the ASCII letters.
func scripts(text string, bytes *[256]int) (map[string]int, float64) {
	counts := map[string]int{}
	latin, high := 0, 0
	for c := 'A'; c <= 'Z'; c++ {
		latin += bytes[c] + bytes[c|0x20]
	}
	for _, n := range bytes[utf8.RuneSelf:] {
		high += n
	}
	total := latin
	last := 0 // the script of the previous letter, tried first
	for i := 0; high > 0 && i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i, high = i+n, high-n
		if !unicode.IsLetter(r) {
			continue
		}
		total++
		name := "other"
		if unicode.Is(scriptTables[last].table, r) {
			name = scriptTables[last].name
		} else {
			for k, s := range scriptTables {
				if unicode.Is(s.table, r) {
					name, last = s.name, k
					break
				}
			}
		}
		if name == "latin" {
			latin++
		} else {
			counts[name]++
		}
	}
	if latin > 0 {
		counts["latin"] = latin
	}
	return counts, mixing(counts, total)
}

// mixing is the share of total letters outside the script with the most.
func mixing(counts map[string]int, total int) float64 {
	if total == 0 {
		return 0
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	return round3(1 - float64(top)/float64(total))
}

// round3 rounds to three decimals, which is all a report needs.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
