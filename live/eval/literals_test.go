package eval

import (
	"slices"
	"strings"
	"testing"
)

// indexAll returns where lit occurs in text[from:] with its boundaries
// holding (as read in all of text), by strings.Index: the oracle of the
// literal automaton.
func indexAll(lit literal, text string, from int) []int32 {
	var out []int32
	for at := lit.index(text, from); at >= 0; at = lit.index(text, at+1) {
		out = append(out, int32(at))
	}
	return out
}

// checkScan reads v with set and compares, for every literal of the
// precheck, its count, its presence bit and (for a kept literal) its positions with
// indexAll over the view or its regions; it returns how many
// occurrences it compared.
func checkScan(t *testing.T, pc *precheck, set *literalSet, s *scan, v *view) int {
	t.Helper()
	pc.readWith(set, s, v)
	in, kept := make([]bool, len(pc.literals)), make([]bool, len(pc.literals))
	for _, o := range set.outputs {
		in[o.lit] = true
		kept[o.lit] = o.flags&outKeepAt != 0
	}
	seen := 0
	for l, key := range pc.literals {
		var want []int32
		if in[l] {
			lit := parseLiteral(key)
			if v.regions == nil {
				want = indexAll(lit, v.lower, 0)
			}
			for _, r := range v.regions {
				want = append(want, indexAll(lit, v.lower[:r[1]], r[0])...)
			}
		}
		if int(s.counts[l]) != len(want) {
			t.Fatalf("%q in the %s view of %.80q: counted %d, strings.Index finds %d", key, v.kind, v.text, s.counts[l], len(want))
		}
		if present := s.present[l>>6]&(1<<(l&63)) != 0; present != (len(want) > 0) {
			t.Fatalf("%q in the %s view of %.80q: present %v, strings.Index finds %d", key, v.kind, v.text, present, len(want))
		}
		if !kept[l] {
			continue
		}
		if got := s.occurrences(l); !slices.Equal(got, want) {
			t.Fatalf("%q in the %s view of %.80q: occurs at %v, strings.Index finds %v", key, v.kind, v.text, got, want)
		}
	}
	for _, c := range s.counts {
		seen += int(c)
	}
	if len(s.seen) != countNonZero(s.counts) {
		t.Fatalf("the %s view of %.80q: %d literals seen, %d counted", v.kind, v.text, len(s.seen), countNonZero(s.counts))
	}
	return seen
}

func countNonZero(counts []int32) int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	return n
}

// TestLiteralScanMatchesIndex checks the literal automata (the whole set
// and the raw characters' subset) against strings.Index on every view of
// every fourth corpus text and of every pattern example, whole and in its
// regions: every literal's count, and every kept literal's positions.
func TestLiteralScanMatchesIndex(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	var texts []string
	for i, s := range corpusTexts(t) {
		if i%4 == 0 {
			texts = append(texts, s)
		}
	}
	for i := range e.pre.patterns {
		texts = append(texts, e.pre.patterns[i].Examples.Positive...)
		texts = append(texts, e.pre.patterns[i].Examples.Negative...)
	}
	s := &scan{}
	views, occurrences := 0, 0
	for _, text := range texts {
		var rep NormaliseReport
		n := normaliser{lim: e.opts.Limits, rep: &rep}
		for _, v := range n.build(text) {
			views++
			occurrences += checkScan(t, e.pre, e.pre.set, s, &v)
			occurrences += checkScan(t, e.pre, e.pre.raw, s, &v)
			if v.regions != nil {
				v.regions = nil
				occurrences += checkScan(t, e.pre, e.pre.set, s, &v)
			}
		}
	}
	if occurrences == 0 {
		t.Fatal("no occurrence was compared")
	}
	t.Logf("%d views, %d occurrences compared", views, occurrences)
}

// TestLiteralScanEdgeCases compares a small automaton with strings.Index
// where the corpus says little: overlapping occurrences, literals that
// are suffixes of others, word marks at the ends of the text and of a
// region, one-byte literals, bytes beyond ASCII and empty texts.
func TestLiteralScanEdgeCases(t *testing.T) {
	keys := []string{"aa", "aaa", "\x00ai\x00", "ai", "\x00the ", "the", "he", "e\x00", "\x00e", "-", "é", "\x00x\x00", "abcab", "bca"}
	pc := &precheck{literals: keys, leadOf: make([][]int32, len(keys))}
	pc.set = newLiteralSet(keys)
	pc.set.keep(slices.Repeat([]bool{true}, len(keys)))
	texts := []string{"", "a", "aa", "aaaaa", "ai", "ai ai", "said ai-ai_ai", "the theme", "he the\nthe ", "e", " e e", "x", "x-x", "éé é",
		"abcabcab", "bcabcab", "e\x00e", "the"}
	s := &scan{}
	for _, text := range texts {
		v := newView(ViewText, 0, text)
		checkScan(t, pc, pc.set, s, &v)
		for lo := 0; lo <= len(text); lo++ {
			for hi := lo; hi <= len(text); hi++ {
				v.regions = [][2]int{{lo, hi}}
				checkScan(t, pc, pc.set, s, &v)
				if hi+1 < len(text) {
					v.regions = [][2]int{{0, lo}, {hi, len(text)}}
					checkScan(t, pc, pc.set, s, &v)
				}
			}
		}
	}
}

// BenchmarkLiteralScan measures the literal automaton's scan of the
// dense 2 KB texts (lowered), with its outputs: the per-byte step is a
// chain of dependent loads, which instruction counts do not show.
func BenchmarkLiteralScan(b *testing.B) {
	e := newTestEvaluator(b, nil)
	var texts []string
	for _, t := range denseTexts(b) {
		texts = append(texts, strings.ToLower(t))
	}
	pc := e.pre
	f := &found{counts: make([]int32, len(pc.literals)), last: make([]int32, len(pc.literals)),
		present: make([]uint64, (len(pc.literals)+63)/64)}
	b.SetBytes(int64(len(texts[0])))
	i := 0
	for b.Loop() {
		for _, l := range f.seen {
			f.counts[l] = 0
		}
		f.seen, f.chain = f.seen[:0], f.chain[:0]
		pc.set.scan(texts[i%len(texts)], 0, f)
		i++
	}
}
