package eval

import (
	"encoding/hex"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ViewKind names one way of reading the input; the precheck scans every
// view (see NormaliseReport.Views).
type ViewKind string

// The views. Only ViewText always exists; the others exist when they
// differ from what they derive from.
const (
	ViewText       ViewKind = "text"       // the input as sent
	ViewNormalised ViewKind = "normalised" // NFKC, invisibles removed, lookalikes folded to Latin
	ViewLeet       ViewKind = "leet"       // leetspeak digits and symbols read as letters
	ViewSpaced     ViewKind = "spaced"     // s p a c e d or s-p-a-c-e-d letters joined
	ViewBase64     ViewKind = "base64"     // a base64 run, decoded
	ViewHex        ViewKind = "hex"        // a hex run, decoded
	ViewURL        ViewKind = "url"        // percent-encoding decoded
	ViewROT13      ViewKind = "rot13"      // ROT13, when the text speaks of it
	ViewTags       ViewKind = "tags"       // text hidden in Unicode tag characters
)

// encoded reports whether the view is a decoded layer.
func (k ViewKind) encoded() bool {
	switch k {
	case ViewBase64, ViewHex, ViewURL, ViewROT13, ViewTags:
		return true
	}
	return false
}

// view is one reading of the input.
type view struct {
	kind     ViewKind
	depth    int         // decoding layers between the input and this view
	text     string      // the view itself
	lower    string      // text with its letters lowered, in any script (lowerText: same byte offsets)
	runs     []digitSpan // digitRuns, computed on first use
	runsDone bool
	// regions, when set, are the only parts of the view a match could use
	// that an earlier view did not have (around the words leetspeak or
	// spacing changed); the scans read only them.
	regions [][2]int
}

// regions widens the changed spans of a derived view by matchSpan and
// merges them.
func regions(text string, changed [][2]int) [][2]int {
	var out [][2]int
	for _, c := range changed {
		// widenStart returns at most its start, c[0]-matchSpan: when that
		// is inside the last region, the span joins it whatever widenStart
		// says, and it need not read the text.
		if k := len(out); k > 0 && c[0]-matchSpan <= out[k-1][1] {
			out[k-1][1] = max(out[k-1][1], widenEnd(text, c[1]+matchSpan))
			continue
		}
		w := [2]int{widenStart(text, c[0]-matchSpan, c[0]), widenEnd(text, c[1]+matchSpan)}
		if k := len(out); k > 0 && w[0] <= out[k-1][1] {
			out[k-1][1] = max(out[k-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// digitSpan is a run of digits, each at most two separators (space - .
// / ( ) + :) from the next: the shape of card, account, phone and identity
// numbers.
type digitSpan struct {
	start, end, digits int
	// window is where a digit pattern looks for a match around the run
	// (view.digitWindow), once windowed.
	window   [2]int
	windowed bool
}

// digitRuns returns the view's digit runs, computed once.
func (v *view) digitRuns() []digitSpan {
	if v.runsDone {
		return v.runs
	}
	v.runsDone = true
	cur, gap := digitSpan{start: -1}, 0
	for i := 0; i <= len(v.text); i++ {
		if cur.start < 0 { // outside a run, only a digit matters
			i = nextIn(v.text, i, '0', '9')
		}
		c := byte(0)
		if i < len(v.text) {
			c = v.text[i]
		}
		switch {
		case c >= '0' && c <= '9':
			if cur.start < 0 {
				cur.start = i
			}
			cur.digits++
			cur.end = i + 1
			gap = 0
		case cur.start >= 0 && gap < 2 && byteClass[c]&clDigitGap != 0:
			gap++
		default:
			if cur.start >= 0 {
				v.runs = append(v.runs, cur)
			}
			cur, gap = digitSpan{start: -1}, 0
		}
	}
	return v.runs
}

// digitRun returns the most digits in one of the view's runs.
func (v *view) digitRun() int {
	n := 0
	for _, r := range v.digitRuns() {
		n = max(n, r.digits)
	}
	return n
}

// ViewInfo describes one scanned view, without its text.
type ViewInfo struct {
	Kind  ViewKind `json:"kind"`
	Depth int      `json:"depth"`
	Bytes int      `json:"bytes"`
}

// NormaliseReport is what the normalise stage found and produced.
type NormaliseReport struct {
	Changed        bool       `json:"changed"`           // the normalised view differs from the input
	Invisible      int        `json:"invisible_removed"` // suspicious invisible characters removed
	Bidi           int        `json:"bidi_controls"`     // bidirectional controls removed
	TagChars       int        `json:"tag_chars"`         // Unicode tag characters removed
	Controls       int        `json:"controls"`          // other control characters replaced by spaces
	Homoglyphs     int        `json:"homoglyphs_folded"` // lookalike letters folded to Latin
	HomoglyphWords int        `json:"homoglyph_words"`   // words that mix scripts or are lookalike-only in Latin text
	LeetTokens     int        `json:"leet_tokens"`       // words written with leetspeak digits or symbols
	Views          []ViewInfo `json:"views"`
	// DecodeBounded says decoding stopped at a bound (depth, views or
	// bytes), so some deeper layer may not have been read.
	DecodeBounded bool `json:"decode_bounded"`
}

// normaliser builds the views of one input within the limits.
type normaliser struct {
	lim   Limits
	rep   *NormaliseReport
	views []view
	bytes int // decoded bytes so far
}

// build fills the views and the report for text.
func (n *normaliser) build(text string) []view {
	n.push(newView(ViewText, 0, text))
	normalised, tags := n.normalise(text)
	if normalised != text {
		n.rep.Changed = true
		n.push(newView(ViewNormalised, 0, normalised))
	}
	base := n.views[len(n.views)-1]
	// The leetspeak and spaced views are made from the lowered text and
	// are their own lowered twins.
	if leet, changed := n.deleet(base.lower); leet != "" {
		n.push(view{kind: ViewLeet, text: leet, lower: leet, regions: regions(leet, changed)})
	}
	if spaced, changed := unspace(base.lower); spaced != "" {
		n.push(view{kind: ViewSpaced, text: spaced, lower: spaced, regions: regions(spaced, changed)})
	}
	if tags != "" {
		n.add(ViewTags, 1, tags, nil)
	}
	n.decode(base, 1)
	n.rep.Views = make([]ViewInfo, len(n.views))
	for i, v := range n.views {
		n.rep.Views[i] = ViewInfo{Kind: v.kind, Depth: v.depth, Bytes: len(v.text)}
	}
	return n.views
}

// push appends v to the views, reusing the digit-run buffer of the view
// of an earlier text it replaces.
func (n *normaliser) push(v view) {
	if k := len(n.views); k < cap(n.views) {
		v.runs = n.views[:k+1][k].runs[:0]
	}
	n.views = append(n.views, v)
}

// newView makes a view and its lowered twin.
func newView(kind ViewKind, depth int, text string) view {
	return view{kind: kind, depth: depth, text: text, lower: lowerText(text)}
}

// add normalises a decoded layer and adds it as a view, within the bounds;
// it returns false when a bound stopped it.
func (n *normaliser) add(kind ViewKind, depth int, decoded string, changed [][2]int) bool {
	if len(n.views) >= n.lim.MaxViews || n.bytes+len(decoded) > n.lim.MaxDecodedBytes {
		n.rep.DecodeBounded = true
		return false
	}
	n.bytes += len(decoded)
	text, _ := n.normalise(decoded)
	v := newView(kind, depth, text)
	if changed != nil && text == decoded { // offsets still hold
		v.regions = regions(text, changed)
	}
	n.push(v)
	if depth < n.lim.MaxDecodeDepth {
		n.decode(v, depth+1)
	} else if hasEncodedRun(v.text) {
		n.rep.DecodeBounded = true
	}
	return true
}

// decode adds a view for each encoded layer found in v, at depth.
func (n *normaliser) decode(v view, depth int) {
	for _, run := range encodedRuns(v.text) {
		var decoded []byte
		kind := ViewBase64
		if isHex(run) {
			kind = ViewHex
			decoded, _ = hex.DecodeString(stripHexSeparators(run))
		} else {
			decoded = decodeBase64(run)
		}
		if text := string(decoded); textual(text) && !n.add(kind, depth, text, nil) {
			return
		}
	}
	if strings.Count(v.text, "%") >= 3 {
		if u, changed := percentDecode(v.text); changed != nil && textual(u) && !n.add(ViewURL, depth, u, changed) {
			return
		}
	}
	if depth == 1 && mentionsROT13(v.lower) {
		n.add(ViewROT13, depth, rot13(v.text), nil)
	}
}

// plainASCII reports whether s is printable ASCII, tabs and line breaks
// only, which normalisation leaves as it is.
func plainASCII(s string) bool { return plainPrefix(s) == len(s) }

// plainPrefix returns the length of the longest prefix of s that is
// printable ASCII, tabs and line breaks only. It reads eight bytes at a
// time, and byte by byte only the words that hold something else than
// printable ASCII.
func plainPrefix(s string) int {
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			// high bit of a byte set: 0x80 or above (w), 0x7f (w+1), or
			// below 0x20 (w-0x20 &^ w, exact on whether any byte is)
			if w := load64(s, i); (w|(w+0x0101010101010101)|(w-0x2020202020202020)&^w)&0x8080808080808080 == 0 {
				i += 8
				continue
			}
		}
		for end := min(i+8, len(s)); i < end; i++ {
			if c := s[i]; c >= 0x7f || c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return i
			}
		}
	}
	return len(s)
}

// asciiPrefix returns the length of the longest prefix of s that is
// ASCII, reading eight bytes at a time.
func asciiPrefix(s string) int {
	i := 0
	for i+8 <= len(s) && load64(s, i)&0x8080808080808080 == 0 {
		i += 8
	}
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// load64 reads s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8] // one bounds check
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// bytesIn has the high bit set in each byte of w from lo to hi, both
// ASCII (0 < lo <= hi < 0x80).
func bytesIn(w uint64, lo, hi byte) uint64 {
	const ones, low7, high = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	a := w & low7                         // no carry between bytes below
	atLeastLo := a + ones*uint64(0x80-lo) // high bit: a >= lo
	pastHi := a + ones*uint64(0x7f-hi)    // high bit: a > hi
	return atLeastLo &^ pastHi &^ w & high
}

// nextIn returns the index of the first byte of s from lo to hi (as
// bytesIn) at or after i, or len(s); it reads eight bytes at a time.
func nextIn(s string, i int, lo, hi byte) int {
	for ; i+8 <= len(s); i += 8 {
		if m := bytesIn(load64(s, i), lo, hi); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(s) && (s[i] < lo || s[i] > hi) {
		i++
	}
	return i
}

// normalise removes invisible, bidirectional and tag characters (counting
// them, and returning the ASCII the tags spelled), applies NFKC and folds
// lookalike letters to Latin.
func (n *normaliser) normalise(s string) (out, tags string) {
	if plainASCII(s) {
		return s, ""
	}
	var b, t strings.Builder
	b.Grow(len(s))
	rtl := hasRTL(s)
	var prev rune
	for i := 0; i < len(s); {
		if j := plainPrefix(s[i:]); j > 0 { // what no case below touches, copied as it is
			b.WriteString(s[i : i+j])
			i += j
			prev = rune(s[i-1])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r >= 0xE0000 && r <= 0xE007F:
			n.rep.TagChars++
			if r >= 0xE0020 && r <= 0xE007E {
				t.WriteByte(byte(r - 0xE0000))
			}
		case isBidiControl(r):
			n.rep.Bidi++
		case r == 0x200E || r == 0x200F || r == 0x061C: // directional marks
			if !rtl {
				n.rep.Invisible++
			}
		case r == 0xFE0E || r == 0xFE0F || r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		case r == 0x200C || r == 0x200D: // joiners: legitimate inside emoji and many scripts
			if next, _ := utf8.DecodeRuneInString(s[i:]); isASCIILetter(prev) && isASCIILetter(next) {
				n.rep.Invisible++
			}
		case isInvisible(r):
			n.rep.Invisible++
		case r == utf8.RuneError || unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r':
			n.rep.Controls++
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	out = b.String()
	if !norm.NFKC.IsNormalString(out) {
		out = norm.NFKC.String(out)
	}
	return n.fold(out), t.String()
}

// isBidiControl reports the embedding, override and isolate controls.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// isInvisible reports characters that render as nothing.
func isInvisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r >= 0x180B && r <= 0x180F, r == 0x200B, r >= 0x2060 && r <= 0x2064, r >= 0x206A && r <= 0x206F,
		r == 0x3164, r == 0xFEFF, r == 0xFFA0, r >= 0xFFF9 && r <= 0xFFFB, r == 0x2800:
		return true
	}
	return false
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// hasRTL reports whether s holds Hebrew or Arabic letters, where
// directional marks are ordinary.
func hasRTL(s string) bool {
	for _, r := range s {
		if r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFEFC {
			return true
		}
	}
	return false
}

// lowerRune is the case the precheck reads, in every script: r lowered
// (unicode.ToLower) when its lower case takes as many UTF-8 bytes, else r
// as it is (the Kelvin sign, dotted İ, a few others), so that a lowered
// view keeps its text's byte offsets. The prefilter lowers the patterns'
// literals with it too, so a literal and the view it is looked for in
// agree on case ("Где" reads as "где" for both).
func lowerRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	if l := unicode.ToLower(r); l != r && utf8.RuneLen(l) == utf8.RuneLen(r) {
		return l
	}
	return r
}

// lowerText lowers every letter of s as lowerRune does, keeping byte
// offsets. ASCII text costs one pass of nextCased, eight bytes at a time.
func lowerText(s string) string {
	var b strings.Builder
	from := -1 // once b is in use, s[:from] is written
	for i := nextCased(s, 0); i < len(s); i = nextCased(s, i) {
		c, size := s[i], 1
		l := rune(c + 'a' - 'A') // s[i] is an upper-case ASCII letter or not ASCII
		if c >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if l = lowerRune(r); l == r {
				i += size
				continue
			}
		}
		if from < 0 {
			b.Grow(len(s))
			from = 0
		}
		b.WriteString(s[from:i])
		if size == 1 {
			b.WriteByte(byte(l))
		} else {
			b.WriteRune(l)
		}
		i += size
		from = i
	}
	if from < 0 {
		return s
	}
	b.WriteString(s[from:])
	return b.String()
}

// nextCased returns the index of the first byte of s at or after i that
// is an upper-case ASCII letter or not ASCII, or len(s); it reads eight
// bytes at a time.
func nextCased(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		if m := bytesIn(w, 'A', 'Z') | w&0x8080808080808080; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}
