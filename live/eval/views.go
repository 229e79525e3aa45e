package eval

import (
	"encoding/base64"
	"iter"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// homoglyphs maps letters that look like Latin ones (Cyrillic, Greek,
// Armenian, Cherokee and a few Latin variants) to the Latin letter they
// imitate. Fullwidth and mathematical letters are folded by NFKC before.
var homoglyphs = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'і': 'i', 'ї': 'i', 'ј': 'j', 'к': 'k', 'м': 'm', 'н': 'h',
	'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w',
	'һ': 'h', 'ӏ': 'l', 'ɡ': 'g',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'У': 'Y', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Һ': 'H', 'Ӏ': 'I',
	// Greek
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ρ': 'p', 'ι': 'i', 'κ': 'k', 'τ': 't', 'υ': 'u', 'χ': 'x', 'γ': 'y',
	'ε': 'e', 'ϲ': 'c', 'ϳ': 'j',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Armenian, Cherokee, Latin variants
	'օ': 'o', 'ս': 'u', 'հ': 'h', 'ո': 'n', 'ց': 'g', 'զ': 'q',
	'Ꭺ': 'A', 'Ᏼ': 'B', 'Ꮯ': 'C', 'Ꭼ': 'E', 'Ꮋ': 'H', 'Ꮶ': 'K', 'Ꮇ': 'M', 'Ꮲ': 'P', 'Ꮪ': 'S', 'Ꭲ': 'T', 'Ꮃ': 'W',
	'ı': 'i', 'ɑ': 'a', 'ɩ': 'i', 'ʏ': 'y', 'ȷ': 'j',
}

// homoglyphRange bounds the runes of homoglyphs.
var homoglyphRange = func() (r [2]rune) {
	r[0] = utf8.MaxRune
	for k := range homoglyphs {
		r[0], r[1] = min(r[0], k), max(r[1], k)
	}
	return r
}()

// homoglyph returns the Latin letter r imitates, if it is a lookalike;
// the map is read only within homoglyphRange.
func homoglyph(r rune) (rune, bool) {
	if r < homoglyphRange[0] || r > homoglyphRange[1] {
		return 0, false
	}
	f, ok := homoglyphs[r]
	return f, ok
}

// fold replaces lookalike letters with Latin ones and counts the words
// that used them to pass for Latin.
func (n *normaliser) fold(s string) string {
	if plainASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	var latin, folded, other int                    // letters of the current word
	var mixed, pure, latinLetters, otherLetters int // over the text
	endWord := func() {
		if folded > 0 {
			if latin > 0 {
				mixed++
			} else if other == 0 {
				pure++
			}
		}
		latin, folded, other = 0, 0, 0
	}
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf { // as below, for ASCII, a run at a time
			j := i + asciiPrefix(s[i:])
			b.WriteString(s[i:j])
			for ; i < j; i++ {
				switch c := s[i]; {
				case c|0x20 >= 'a' && c|0x20 <= 'z':
					latin++
					latinLetters++
				case c == '\'' || c == '-':
				default:
					endWord()
				}
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if f, ok := homoglyph(r); ok {
			b.WriteRune(f)
			n.rep.Homoglyphs++
			if unicode.Is(unicode.Latin, r) { // Turkish ı, IPA ɑ: Latin letters, no script mixing
				latin++
				latinLetters++
			} else {
				folded++
			}
			continue
		}
		switch {
		case unicode.IsLetter(r):
			if unicode.Is(unicode.Latin, r) {
				latin++
				latinLetters++
			} else {
				other++
				otherLetters++
			}
		case unicode.IsMark(r) || r == '\'' || r == '-':
		default:
			endWord()
		}
		b.WriteRune(r)
	}
	endWord()
	words := mixed
	if pure > 0 && latinLetters >= 4*otherLetters { // lookalike-only words in Latin text
		words += pure
	}
	n.rep.HomoglyphWords += words
	return b.String()
}

// The classes of bytes the normaliser's scans look for (byteClass).
const (
	clWord     = 1 << iota // a-z, digits, leet symbols: deleet's word bytes
	clLeet                 // leetspeak stand-ins for letters (leet)
	clSpacer               // separators of spaced letters (unspace)
	clSpace                // ASCII white space (unicode.IsSpace)
	clBase64               // the standard and URL base64 alphabets and '='
	clHexRun               // hex digits, the separators and prefix bytes of separated hex
	clDigitGap             // what may part the digits of one digit run
)

// byteClass holds the classes of each byte: one lookup instead of a chain
// of comparisons in the scans that read every byte.
var byteClass = func() (t [256]uint8) {
	set := func(class uint8, bytes string) {
		for i := 0; i < len(bytes); i++ {
			t[bytes[i]] |= class
		}
	}
	const lower, upper, digits = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"
	set(clWord, lower+digits+"@$")
	set(clLeet, "013457@$")
	set(clSpacer, " .-_*/|")
	set(clSpace, "\t\n\v\f\r ")
	set(clBase64, lower+upper+digits+"+/=-_")
	set(clHexRun, digits+"abcdefABCDEF ,:\\x")
	set(clDigitGap, " -./()+:")
	return t
}()

// leet maps the digits and symbols leetspeak uses for letters, all
// from leetLow to leetHigh.
var leet = [256]byte{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's'}

const leetLow, leetHigh = '$', '@'

// deleet returns the lowered text with leetspeak words read as letters, or
// "" when there are none. A word counts when it has at least two letters
// and a leet character followed by a letter ("1gn0r3", not "python3"), or
// two leet characters ("byp455", "4r3"). When two or more words count, the
// text is taken as written in leetspeak and every word with a leet
// character is read so ("ar3", a lone "4", and "70" or "15", digits alone
// that spell a small word: leetSmallWords).
func (n *normaliser) deleet(lower string) (string, [][2]int) {
	type token struct{ start, end, letters, leets int }
	var toks []token
	strong := 0
	// Only the words (runs of letters, digits and leet symbols) holding a
	// leet character matter: find each such character, then its word.
	for i := 0; i < len(lower); {
		k := nextIn(lower, i, leetLow, leetHigh)
		for k < len(lower) && byteClass[lower[k]]&clLeet == 0 {
			k = nextIn(lower, k+1, leetLow, leetHigh)
		}
		if k == len(lower) {
			break
		}
		t := token{start: k, end: k + 1}
		for t.start > i && byteClass[lower[t.start-1]]&clWord != 0 {
			t.start--
		}
		for t.end < len(lower) && byteClass[lower[t.end]]&clWord != 0 {
			t.end++
		}
		inner := false
		for p := t.start; p < t.end; p++ {
			switch c := lower[p]; {
			case c >= 'a' && c <= 'z':
				t.letters++
			case leet[c] != 0:
				t.leets++
				inner = inner || p+1 < t.end && lower[p+1] >= 'a' && lower[p+1] <= 'z'
			}
		}
		if t.letters >= 2 && (inner || t.leets >= 2) || t.letters >= 1 && t.leets >= 2 {
			strong++
			t.leets = -t.leets // marks a word that counts on its own
		}
		toks = append(toks, t)
		i = t.end
	}
	if strong == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(len(lower))
	var changed [][2]int
	done := 0 // lower[:done] is written
	for _, t := range toks {
		ownRight := t.leets < 0
		if !ownRight && (strong < 2 || t.end-t.start > 1 && t.letters == 0 && !leetSmallWord(lower[t.start:t.end])) {
			continue
		}
		n.rep.LeetTokens++
		changed = append(changed, [2]int{t.start, t.end})
		b.WriteString(lower[done:t.start])
		for k := t.start; k < t.end; k++ {
			c := lower[k]
			if l := leet[c]; l != 0 {
				c = l
			}
			b.WriteByte(c)
		}
		done = t.end
	}
	b.WriteString(lower[done:])
	return b.String(), changed
}

// leetSmallWords are the two-letter words leetspeak writes with digits
// alone ("70" for "to", "15" for "is"), which a text taken as written in
// leetspeak reads so; other runs of digits stay numbers.
var leetSmallWords = map[string]bool{"to": true, "so": true, "is": true, "as": true, "at": true, "it": true}

// leetSmallWord reports whether tok, leet characters only, reads as one
// of leetSmallWords.
func leetSmallWord(tok string) bool {
	if len(tok) != 2 || leet[tok[0]] == 0 || leet[tok[1]] == 0 {
		return false
	}
	return leetSmallWords[string([]byte{leet[tok[0]], leet[tok[1]]})]
}

func isLowerLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// unspace joins letters written one at a time ("i g n o r e", "i.g.n.o.r.e",
// at least four in a row with one separator between each) in the lowered
// text; it returns "" when there are none. Two spaces still part words.
func unspace(lower string) (string, [][2]int) {
	if s, ok := unspaceAll(lower); ok {
		return s, nil // the whole text changed
	}
	var b strings.Builder
	var changed [][2]int
	done := 0 // lower[:done] is written
	// A spaced run starts with a one-letter word.
	for i := nextSingle(lower, 0); i < len(lower); i = nextSingle(lower, i+1) {
		if i+1 >= len(lower) || byteClass[lower[i+1]]&clSpacer == 0 {
			continue
		}
		j, count, sep := i, 1, byte(0)
		for j+2 < len(lower) && byteClass[lower[j+1]]&clSpacer != 0 &&
			(sep == 0 || lower[j+1] == sep) && isLowerLetter(lower[j+2]) &&
			(j+3 >= len(lower) || !isLowerLetter(lower[j+3])) {
			sep = lower[j+1]
			j += 2
			count++
		}
		if count >= 4 {
			if changed == nil {
				b.Grow(len(lower))
			}
			b.WriteString(lower[done:i])
			from := b.Len()
			for k := i; k <= j; k += 2 {
				b.WriteByte(lower[k])
			}
			changed = append(changed, [2]int{from, b.Len()})
			i, done = j, j+1
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	b.WriteString(lower[done:])
	return b.String(), changed
}

// nextSingle returns the index of the first one-letter word (a-z) of s at
// or after i, or len(s); it reads eight bytes at a time, six of which it
// judges (their neighbours are in the word).
func nextSingle(s string, i int) int {
	single := func(i int) bool {
		return isLowerLetter(s[i]) && (i == 0 || !isLowerLetter(s[i-1])) && (i+1 == len(s) || !isLowerLetter(s[i+1]))
	}
	if i == 0 && len(s) > 0 && single(0) {
		return 0
	}
	i = max(i, 1)
	for ; i+7 <= len(s); i += 6 { // s[i-1:i+7], judging s[i:i+6]
		l := bytesIn(load64(s, i-1), 'a', 'z')
		if m := l &^ (l << 8) &^ (l >> 8) & 0x00ffffffffffff00; m != 0 {
			return i - 1 + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if single(i) {
			return i
		}
	}
	return len(s)
}

// unspaceAll handles a text written wholly one character at a time
// ("i g n o r e   a l l"): when at least 60% of its (eight or more)
// space-separated tokens are single characters, single spaces are dropped
// and runs of two or more spaces become word breaks.
func unspaceAll(lower string) (string, bool) {
	tokens, single := fieldsAndSingles(lower)
	if tokens < 8 || single*10 < tokens*6 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		if c != ' ' {
			b.WriteByte(c)
			continue
		}
		j := i
		for j < len(lower) && lower[j] == ' ' {
			j++
		}
		if j-i >= 2 {
			b.WriteByte(' ')
		}
		i = j - 1
	}
	return b.String(), true
}

// fieldsAndSinglesASCII is fieldsAndSingles of an ASCII text, eight
// bytes at a time: a token starts at a byte that is no space after one
// that is (or the text's start), and is one byte long when a space (or
// the text's end) follows its start.
func fieldsAndSinglesASCII(s string) (tokens, single int) {
	const high = 0x8080808080808080
	prevSpace := true  // before the text
	lastStart := false // a token started at the byte before i
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		sp := bytesIn(w, '\t', '\r') | bytesIn(w, ' ', ' ') // high bit: a space byte
		starts := ^sp & high & (sp << 8)
		if prevSpace && sp&0x80 == 0 {
			starts |= 0x80
		}
		if lastStart && sp&0x80 != 0 {
			single++
		}
		tokens += bytesSet(starts)
		single += bytesSet(starts & (sp >> 8)) // byte 7's follower is in the next word
		prevSpace, lastStart = sp>>63 != 0, starts>>63 != 0
	}
	for ; i < len(s); i++ {
		space := byteClass[s[i]]&clSpace != 0
		if lastStart && space {
			single++
		}
		lastStart = !space && prevSpace
		if lastStart {
			tokens++
		}
		prevSpace = space
	}
	if lastStart {
		single++
	}
	return tokens, single
}

// bytesSet counts the bytes of m whose high bit is set, its only bits
// set: a multiply adds them up in the top byte. (bits.OnesCount64 checks
// for the POPCNT instruction at every call, which made the caller keep its
// loop's state in memory.)
func bytesSet(m uint64) int { return int((m >> 7) * 0x0101010101010101 >> 56) }

// fieldsAndSingles counts the tokens strings.Fields would return and
// those of them one byte long, without making them.
func fieldsAndSingles(s string) (tokens, single int) {
	if asciiPrefix(s) == len(s) {
		return fieldsAndSinglesASCII(s)
	}
	field := 0 // bytes of the current token
	for i := 0; i <= len(s); {
		size, space := 1, true // the end closes the last token
		if i < len(s) {
			space = byteClass[s[i]]&clSpace != 0
			if s[i] >= utf8.RuneSelf {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				space = unicode.IsSpace(r)
			}
		}
		i += size
		if !space {
			field += size
			continue
		}
		if field > 0 {
			tokens++
		}
		if field == 1 {
			single++
		}
		field = 0
	}
	return tokens, single
}

// minEncodedRun is the shortest base64 or hex run worth decoding.
const minEncodedRun = 20

func isHexChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// encodedRuns returns the runs of s that may be base64 or hex: unbroken
// runs of the base64 alphabet of at least minEncodedRun bytes, and runs of
// at least eight hex pairs written with separators ("69 67", "\x69\x67").
func encodedRuns(s string) []string {
	var runs []string
	for start, end := range longRuns(s, clBase64, minEncodedRun) {
		runs = append(runs, s[start:end])
	}
	if strings.Contains(s, `\x`) || strings.Contains(s, "0x") || strings.Contains(s, " ") {
		runs = append(runs, separatedHex(s)...)
	}
	return runs
}

// hasEncodedRun reports whether s holds a run encodedRuns would return.
func hasEncodedRun(s string) bool { return len(encodedRuns(s)) > 0 }

// longRuns yields the start and end of each run of at least n (> 0)
// bytes of the class in s. It reads one byte in n where there are none:
// when s[i+n-1] is not of the class, no such run starts in s[i:i+n].
func longRuns(s string, class uint8, n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		in := func(i int) bool { return byteClass[s[i]]&class != 0 }
		for i := 0; i+n <= len(s); { // i == 0 or s[i-1] is not of the class
			k := i + n - 1
			if !in(k) {
				i = k + 1
				continue
			}
			start, end := k, k+1
			for start > i && in(start-1) {
				start--
			}
			for end < len(s) && in(end) {
				end++
			}
			if end-start >= n && !yield(start, end) {
				return
			}
			i = end + 1
		}
	}
}

// separatedHex finds runs of at least eight hex pairs, each optionally
// prefixed with \x or 0x and followed by a separator (one space, comma or
// colon), a prefix or the end; unbroken hex is encodedRuns' business.
func separatedHex(s string) []string {
	var runs []string
	// A run is made of hex digits, separators and prefixes only, and eight
	// pairs take at least 16 bytes.
	for start, end := range longRuns(s, clHexRun, 16) {
		runs = hexPairRuns(s[:end], start, runs)
	}
	return runs
}

// hexPairRuns appends to runs the separated hex runs that start in s[i:].
func hexPairRuns(s string, i int, runs []string) []string {
	for i < len(s) {
		if !isHexChar(s[i]) && s[i] != '\\' { // no pair or prefix starts here
			i++
			continue
		}
		j, pairs := i, 0
		for {
			k := j
			if k+1 < len(s) && (s[k] == '\\' || s[k] == '0') && s[k+1] == 'x' {
				k += 2
			}
			if k+1 >= len(s) || !isHexChar(s[k]) || !isHexChar(s[k+1]) || k+2 < len(s) && isHexChar(s[k+2]) {
				break
			}
			pairs++
			j = k + 2
			if j < len(s) && (s[j] == ' ' || s[j] == ',' || s[j] == ':') {
				j++
			}
		}
		if pairs >= 8 {
			runs = append(runs, strings.TrimRight(s[i:j], " ,:"))
			i = j
			continue
		}
		i++
	}
	return runs
}

// isHex reports whether run is hex (plain or separated) rather than base64.
func isHex(run string) bool {
	digits := 0
	for i := 0; i < len(run); i++ {
		switch c := run[i]; {
		case isHexChar(c):
			digits++
		case c == ' ' || c == ',' || c == ':' || c == '\\' || c == 'x':
		default:
			return false
		}
	}
	return digits%2 == 0 && digits >= 16
}

// stripHexSeparators keeps only the hex digits of a separated run.
func stripHexSeparators(run string) string {
	run = strings.ReplaceAll(strings.ReplaceAll(run, `\x`, ""), "0x", "")
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && isHexChar(byte(r)) {
			return r
		}
		return -1
	}, run)
}

// decodeBase64 decodes run in the standard or URL alphabet, padded or
// not; nil when it is not base64.
func decodeBase64(run string) []byte {
	run = strings.TrimRight(run, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(run, "-_") {
		enc = base64.RawURLEncoding
	}
	if len(run)%4 == 1 {
		run = run[:len(run)-1]
	}
	out, err := enc.DecodeString(run)
	if err != nil {
		return nil
	}
	return out
}

// textual reports whether decoded bytes read as text: valid UTF-8, mostly
// printable, mostly letters and spaces.
func textual(s string) bool {
	if len(s) < 6 || !utf8.ValidString(s) {
		return false
	}
	var runes, printable, letters int
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf { // ASCII, by asciiTextual's table
			t := asciiTextual[c]
			runes++
			printable += int(t & 1)
			letters += int(t >> 1)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		runes++
		if unicode.IsPrint(r) {
			printable++
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return printable*100 >= runes*90 && letters*2 >= runes
}

// asciiTextual holds what textual counts of each ASCII character: 1 when
// it is printable (unicode.IsPrint, or a line break or tab), 2 when it is
// a letter (unicode.IsLetter) or a space.
var asciiTextual = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || r == '\r' {
			t[r] |= 1
		}
		if unicode.IsLetter(r) || r == ' ' {
			t[r] |= 2
		}
	}
	return
}()

// percentDecode decodes %XX escapes (invalid ones stay as they are); it
// returns the decoded text and the spans of it that decoding produced
// (nil when there was nothing to decode).
func percentDecode(s string) (string, [][2]int) {
	var b strings.Builder
	var changed [][2]int
	done := 0 // s[:done] is written
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHexChar(s[i+1]) && isHexChar(s[i+2]) {
			if changed == nil {
				b.Grow(len(s))
			}
			b.WriteString(s[done:i])
			if n := len(changed); n > 0 && changed[n-1][1] == b.Len() {
				changed[n-1][1]++
			} else {
				changed = append(changed, [2]int{b.Len(), b.Len() + 1})
			}
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			done = i + 1
		}
	}
	if changed == nil {
		return "", nil
	}
	b.WriteString(s[done:])
	return b.String(), changed
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// mentionsROT13 reports whether the lowered text names a rotation cipher
// ("rot13", "rot-13", "rot 13", "caesar"). The rotations are found from
// their "13", rarer in text than the letters.
func mentionsROT13(lower string) bool {
	for from := 0; ; {
		i := strings.Index(lower[from:], "13")
		if i < 0 {
			break
		}
		i += from
		if p := lower[:i]; strings.HasSuffix(p, "rot") || strings.HasSuffix(p, "rot-") || strings.HasSuffix(p, "rot ") {
			return true
		}
		from = i + 1
	}
	return strings.Contains(lower, "caesar")
}

// rot13 rotates ASCII letters by 13.
func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}
