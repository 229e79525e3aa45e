package lexical

import (
	"bufio"
	"fmt"
	"io"
	mathbits "math/bits"
	"slices"
	"strconv"
	"strings"
)

// MaxLexiconClasses bounds the classes of a lexicon (a segment's classes
// are a bit set).
const MaxLexiconClasses = 32

// Lexicon groups words and two-word phrases into named classes ("weapon",
// "ask", "evasion"), so that the model can learn about a class, and about
// two classes in the same segment, from the examples of any of its words:
// "explain how to build a silencer" shares the features "ask", "weapon"
// and "ask+weapon" with the trained-on "give me steps to make a pipe
// bomb". A linear model over words alone cannot say that a request frame
// is harmless and a weapon is harmless but the two together are not; a
// pair feature can.
//
// Entries are matched as the model's word features are: squashed (see
// squash), a word or two consecutive words.
type Lexicon struct {
	Classes []string
	entries map[string]uint32 // squashed entry -> its classes' bits
	// the feature names and hashes of each class and pair of classes;
	// pairs[i*n+j] for i < j
	classFeats, pairFeats []classFeature
}

// classFeature is the name and hash of a class or pair feature.
type classFeature struct {
	text []byte
	hash uint64
}

// Feature kinds of a lexicon: a class present in a segment, and two of
// them present in the same segment.
const (
	kindClass = 'c'
	kindPair  = 'x'
)

// NewLexicon builds a lexicon from its classes' entries, in the order
// given. Entries are squashed; one of more than two words, or empty once
// squashed, is an error.
func NewLexicon(classes []string, entries [][]string) (*Lexicon, error) {
	if len(classes) != len(entries) || len(classes) > MaxLexiconClasses {
		return nil, fmt.Errorf("lexical: lexicon: %d classes (at most %d), %d entry lists", len(classes), MaxLexiconClasses, len(entries))
	}
	lx := &Lexicon{Classes: slices.Clone(classes), entries: map[string]uint32{}}
	for i, c := range classes {
		if c == "" || strings.ContainsAny(c, " \t+:|") || slices.Index(classes, c) != i {
			return nil, fmt.Errorf("lexical: lexicon: class %q is empty, repeated or holds a space, tab, '+', ':' or '|'", c)
		}
		for _, e := range entries[i] {
			sq := strings.TrimSpace(string(squash(nil, e)))
			if sq == "" || strings.Count(sq, " ") > 1 {
				return nil, fmt.Errorf("lexical: lexicon: class %s: entry %q must be one or two words", c, e)
			}
			lx.entries[sq] |= 1 << i
		}
	}
	n := len(classes)
	lx.classFeats = make([]classFeature, n)
	lx.pairFeats = make([]classFeature, n*n)
	for i, a := range classes {
		lx.classFeats[i] = newClassFeature(kindClass, a)
		for j := i + 1; j < n; j++ {
			lx.pairFeats[i*n+j] = newClassFeature(kindPair, a+"+"+classes[j])
		}
	}
	return lx, nil
}

func newClassFeature(kind byte, name string) classFeature {
	return classFeature{text: []byte(name), hash: hashOf(kind, []byte(name))}
}

// ParseLexicon reads a lexicon's source: one class a line, "name: entry |
// entry | ...", a class may take several lines; blank lines and lines
// starting with '#' are skipped.
func ParseLexicon(r io.Reader) (*Lexicon, error) {
	var classes []string
	var entries [][]string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, list, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("lexical: lexicon: line %d: want \"class: entry | entry\"", n)
		}
		name = strings.TrimSpace(name)
		i := slices.Index(classes, name)
		if i < 0 {
			i = len(classes)
			classes, entries = append(classes, name), append(entries, nil)
		}
		for e := range strings.SplitSeq(list, "|") {
			if e = strings.TrimSpace(e); e != "" {
				entries[i] = append(entries[i], e)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lexical: lexicon: read: %w", err)
	}
	return NewLexicon(classes, entries)
}

// lines returns the lexicon as a weights file keeps it: per class,
// "lexicon", its name and its entries (squashed, sorted, quoted),
// tab-separated.
func (lx *Lexicon) lines() []string {
	per := make([][]string, len(lx.Classes))
	for e, bits := range lx.entries {
		for i := range lx.Classes {
			if bits&(1<<i) != 0 {
				per[i] = append(per[i], strconv.Quote(e))
			}
		}
	}
	out := make([]string, len(lx.Classes))
	for i, c := range lx.Classes {
		slices.Sort(per[i])
		out[i] = "lexicon\t" + c + "\t" + strings.Join(per[i], "\t")
	}
	return out
}

// equal reports whether two lexicons (either may be nil) are the same.
func (lx *Lexicon) equal(o *Lexicon) bool {
	if lx == nil || o == nil {
		return lx == o
	}
	return slices.Equal(lx.lines(), o.lines())
}

// emit hands s the class and pair features of a segment whose entries
// matched the classes in bits, and returns how many there were.
func emit[S sink](lx *Lexicon, bits uint32, s S) int {
	n := 0
	k := len(lx.Classes)
	bits &= uint32(1<<k - 1)
	// class i in increasing order, then its pairs with the classes j > i
	for rest := bits; rest != 0; rest &= rest - 1 {
		i := mathbits.TrailingZeros32(rest)
		f := lx.classFeats[i]
		s.add(f.hash, kindClass, f.text)
		n++
		for pairs := rest & (rest - 1); pairs != 0; pairs &= pairs - 1 {
			f := lx.pairFeats[i*k+mathbits.TrailingZeros32(pairs)]
			s.add(f.hash, kindPair, f.text)
			n++
		}
	}
	return n
}
