package eval

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The normaliser's scans as they were before the fast paths; the tests
// compare the fast ones with them.

func (n *normaliser) oldDeleet(lower string) (string, [][2]int) {
	type token struct{ start, end, letters, leets int }
	var toks []token
	strong := 0
	start := -1
	for i := 0; i <= len(lower); i++ {
		word := i < len(lower) && (lower[i] >= 'a' && lower[i] <= 'z' || leet[lower[i]] != 0 || lower[i] >= '0' && lower[i] <= '9')
		if word && start < 0 {
			start = i
		}
		if word || start < 0 {
			continue
		}
		t := token{start: start, end: i}
		inner := false
		for k := start; k < i; k++ {
			switch c := lower[k]; {
			case c >= 'a' && c <= 'z':
				t.letters++
			case leet[c] != 0:
				t.leets++
				inner = inner || k+1 < i && lower[k+1] >= 'a' && lower[k+1] <= 'z'
			}
		}
		if t.leets > 0 {
			if t.letters >= 2 && (inner || t.leets >= 2) || t.letters >= 1 && t.leets >= 2 {
				strong++
				t.leets = -t.leets // marks a word that counts on its own
			}
			toks = append(toks, t)
		}
		start = -1
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

func oldUnspace(lower string) (string, [][2]int) {
	if s, ok := oldUnspaceAll(lower); ok {
		return s, nil // the whole text changed
	}
	var b strings.Builder
	var changed [][2]int
	done := 0 // lower[:done] is written
	for i := 0; i < len(lower); {
		if isLowerLetter(lower[i]) && (i == 0 || !isLowerLetter(lower[i-1])) {
			j, count, sep := i, 1, byte(0)
			for j+2 < len(lower) && strings.IndexByte(" .-_*/|", lower[j+1]) >= 0 &&
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
				i = j + 1
				done = i
				continue
			}
		}
		i++
	}
	if len(changed) == 0 {
		return "", nil
	}
	b.WriteString(lower[done:])
	return b.String(), changed
}

func oldUnspaceAll(lower string) (string, bool) {
	tokens, single := 0, 0
	for f := range strings.FieldsSeq(lower) {
		tokens++
		if len(f) == 1 {
			single++
		}
	}
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

func oldEncodedRuns(s string) []string {
	var runs []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isBase64Char(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= minEncodedRun {
			runs = append(runs, s[start:i])
		}
		start = -1
	}
	if strings.Contains(s, `\x`) || strings.Contains(s, "0x") || strings.Contains(s, " ") {
		runs = append(runs, oldSeparatedHex(s)...)
	}
	return runs
}

// oldSeparatedHex is separatedHex trying every offset, without skipping
// what cannot start a run.
func oldSeparatedHex(s string) []string {
	var runs []string
	for i := 0; i < len(s); {
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

func oldMentionsROT13(lower string) bool {
	return strings.Contains(lower, "rot13") || strings.Contains(lower, "rot-13") ||
		strings.Contains(lower, "rot 13") || strings.Contains(lower, "caesar")
}

func oldDigitRuns(text string) []digitSpan {
	var runs []digitSpan
	cur, gap := digitSpan{start: -1}, 0
	for i := 0; i <= len(text); i++ {
		c := byte(0)
		if i < len(text) {
			c = text[i]
		}
		switch {
		case c >= '0' && c <= '9':
			if cur.start < 0 {
				cur.start = i
			}
			cur.digits++
			cur.end = i + 1
			gap = 0
		case cur.start >= 0 && gap < 2 && (c == ' ' || c == '-' || c == '.' || c == '/' || c == '(' || c == ')' || c == '+' || c == ':'):
			gap++
		default:
			if cur.start >= 0 {
				runs = append(runs, cur)
			}
			cur, gap = digitSpan{start: -1}, 0
		}
	}
	return runs
}

func oldLowerASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for from := 0; ; {
		b.WriteString(s[from:i]) // s[i] is an upper-case letter
		b.WriteByte(s[i] + 'a' - 'A')
		from, i = i+1, i+1
		for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
			i++
		}
		if i == len(s) {
			b.WriteString(s[from:])
			return b.String()
		}
	}
}

func oldPlainPrefix(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return len(s)
}

func isBase64Char(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}

func (n *normaliser) oldFold(s string) string {
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
		if c := s[i]; c < utf8.RuneSelf { // as below, for ASCII
			switch {
			case c|0x20 >= 'a' && c|0x20 <= 'z':
				latin++
				latinLetters++
			case c == '\'' || c == '-':
			default:
				endWord()
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if f, ok := homoglyphs[r]; ok {
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

// oldTextual is textual as first written: every character through the
// unicode tables.
func oldTextual(s string) bool {
	if len(s) < 6 || !utf8.ValidString(s) {
		return false
	}
	var runes, printable, letters int
	for _, r := range s {
		runes++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || r == '\r' {
			printable++
		}
		if unicode.IsLetter(r) || r == ' ' {
			letters++
		}
	}
	return printable*100 >= runes*90 && letters*2 >= runes
}
