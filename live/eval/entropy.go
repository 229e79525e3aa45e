package eval

import (
	"compress/flate"
	"hash/maphash"
	"io"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"
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
	compressedRatio    = 0.12 // deflate output under this share of the input is flooding
)

// Anomalies the entropy stage reports.
const (
	AnomalyHighEntropy = "high_entropy" // a long run of random-looking bytes
	AnomalyRepetitive  = "repetitive"   // the same words over and over (token flooding)
	AnomalyMixedScript = "mixed_script" // words that mix scripts to pass for Latin
)

// EntropyReport is the entropy and structure stage's findings.
type EntropyReport struct {
	Status             EngineStatus   `json:"status"`
	BytesAnalysed      int            `json:"bytes_analysed"`
	Entropy            float64        `json:"entropy"`              // bits per byte over the text
	MaxWindowEntropy   float64        `json:"max_window_entropy"`   // over 64-byte windows
	HighEntropyWindows int            `json:"high_entropy_windows"` // window positions above 5 bits per byte
	CompressionRatio   float64        `json:"compression_ratio"`    // deflate size over size
	Repetition         float64        `json:"repetition"`           // share of word trigrams seen before
	Scripts            map[string]int `json:"scripts"`              // letters per script
	ScriptMixing       float64        `json:"script_mixing"`        // share of letters outside the main script
	Anomalies          []string       `json:"anomalies"`
}

// clog2[c] is c*log2(c), for the sliding window's entropy.
var clog2 = func() (t [entropyWindow + 1]float64) {
	for c := 1; c <= entropyWindow; c++ {
		t[c] = float64(c) * math.Log2(float64(c))
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
	var counts [256]int
	for i := 0; i < len(text); i++ {
		counts[text[i]]++
	}
	r.Entropy = round3(entropyOf(&counts, len(text)))
	r.MaxWindowEntropy, r.HighEntropyWindows = windowEntropy(text)
	r.CompressionRatio = round3(compressionRatio(text))
	words := 0
	r.Repetition, words = repetition(text)
	r.Scripts, r.ScriptMixing = scripts(text)
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

// windowEntropy slides a 64-byte window over text, one byte at a time,
// keeping Σ c·log2 c up to date, and returns the highest entropy and how
// many positions were above highEntropy.
func windowEntropy(text string) (maxH float64, high int) {
	if len(text) < entropyWindow {
		return round3(shannon(text)), 0
	}
	var counts [256]int
	sum := 0.0
	for i := range entropyWindow {
		c := text[i]
		sum += clog2[counts[c]+1] - clog2[counts[c]]
		counts[c]++
	}
	const logW = 6 // log2(entropyWindow)
	for i := entropyWindow; ; i++ {
		h := logW - sum/entropyWindow
		if h > maxH {
			maxH = h
		}
		if h >= highEntropy {
			high++
		}
		if i == len(text) {
			break
		}
		out, in := text[i-entropyWindow], text[i]
		sum += clog2[counts[out]-1] - clog2[counts[out]]
		counts[out]--
		sum += clog2[counts[in]+1] - clog2[counts[in]]
		counts[in]++
	}
	return round3(maxH), high
}

// flater is a deflate compressor, which is large to allocate, and a
// buffer for the bytes it reads (it takes no string).
type flater struct {
	w   *flate.Writer
	buf []byte
}

// flaters reuses flaters.
var flaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(io.Discard, flate.BestSpeed)
	return &flater{w: w}
}}

// counter counts the bytes written to it.
type counter int

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

// compressionRatio is the deflate (fastest level) size of text over its size.
func compressionRatio(text string) float64 {
	if text == "" {
		return 1
	}
	var n counter
	f := flaters.Get().(*flater)
	f.w.Reset(&n)
	f.buf = append(f.buf[:0], text...)
	f.w.Write(f.buf)
	f.w.Close()
	if cap(f.buf) <= 64<<10 { // a buffer grown by a long text is left to the collector
		flaters.Put(f)
	}
	return float64(n) / float64(len(text))
}

// seed keys the word hashes of repetition (process-local; only equality matters).
var seed = maphash.MakeSeed()

// trigramSets reuses repetition's sets of seen trigrams: a set for a
// 2 KB text is a few hundred entries, worth keeping rather than building
// again for every text.
var trigramSets = sync.Pool{New: func() any { return map[uint64]struct{}{} }}

// repetition is the share of word trigrams that occurred earlier in text,
// and the number of words.
func repetition(text string) (share float64, words int) {
	var prev [2]uint64
	seen := trigramSets.Get().(map[uint64]struct{})
	defer func() {
		if len(seen) <= 4096 { // a set grown by a long text is left to the collector
			clear(seen)
			trigramSets.Put(seen)
		}
	}()
	trigrams, repeats := 0, 0
	for i := 0; i < len(text); {
		for i < len(text) && !wordByte(text[i]) {
			i++
		}
		j := i
		for j < len(text) && wordByte(text[j]) {
			j++
		}
		if j == i {
			break
		}
		h := maphash.String(seed, text[i:j])
		words++
		if words >= 3 {
			tri := h ^ prev[1]*31 ^ prev[0]*961
			trigrams++
			if _, ok := seen[tri]; ok {
				repeats++
			} else {
				seen[tri] = struct{}{}
			}
		}
		prev[0], prev[1] = prev[1], h
		i = j
	}
	if trigrams == 0 {
		return 0, words
	}
	return round3(float64(repeats) / float64(trigrams)), words
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
}

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

// scripts counts letters per script and the share outside the main one.
func scripts(text string) (map[string]int, float64) {
	counts := map[string]int{}
	latin, total := 0, 0
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if c|0x20 >= 'a' && c|0x20 <= 'z' {
				latin++
				total++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
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
		if name == "latin" {
			latin++
		} else {
			counts[name]++
		}
	}
	if latin > 0 {
		counts["latin"] = latin
	}
	if total == 0 {
		return counts, 0
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	return counts, round3(1 - float64(top)/float64(total))
}

// round3 rounds to three decimals, which is all a report needs.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
