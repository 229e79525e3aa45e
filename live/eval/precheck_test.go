package eval

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"testing"
)

// corpusTexts reads the texts of the project's corpus (both splits).
func corpusTexts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"testdata/corpus/dev.jsonl", "testdata/corpus/heldout.jsonl"} {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var s struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s.Text)
		}
		fh.Close()
	}
	return out
}

// TestPrecheckMatchesPlainRegex checks the precheck's machinery (branches,
// literal prefilters, windows, stripped word boundaries) against each
// pattern's regex run plainly over the whole view, on every corpus text
// and every example: both must find a (validated) match, or neither.
func TestPrecheckMatchesPlainRegex(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	var texts []string
	for i, s := range corpusTexts(t) { // every eighth, to keep the test quick under -race
		if i%8 == 0 {
			texts = append(texts, s)
		}
	}
	for i := range e.pre.patterns {
		c := &e.pre.patterns[i]
		texts = append(texts, c.Examples.Positive...)
		texts = append(texts, c.Examples.Negative...)
	}
	s := &scan{}
	for i := range e.pre.patterns {
		c := &e.pre.patterns[i]
		if c.branches == nil {
			continue
		}
		plain := regexp.MustCompile(c.Regex)
		for _, text := range texts {
			v := newView(ViewText, 0, text)
			e.pre.read(s, &v)
			_, _, got := e.pre.match(c, s, &v)
			if c.MinDigits > 0 && v.digitRun() < c.MinDigits {
				if got {
					t.Errorf("%s: matched %q below its digit gate", c.ID, text)
				}
				continue
			}
			in := v.lower
			if c.CaseSensitive {
				in = v.text
			}
			want := false
			for _, m := range plain.FindAllStringSubmatchIndex(in, maxCandidates) {
				lo, hi := m[0], m[1]
				for g := 2; g+1 < len(m); g += 2 {
					if m[g] >= 0 {
						lo, hi = m[g], m[g+1]
						break
					}
				}
				if c.validate == nil || c.validate(v.text[lo:hi], c.Threshold) {
					want = true
					break
				}
			}
			if got != want {
				t.Errorf("%s on %.120q: precheck %v, plain regex %v", c.ID, text, got, want)
			}
		}
	}
}

// TestFollowSetsHold checks the follow sets, which spare anchored
// attempts: wherever a lead branch's anchored expression matches at one
// of its leads, in any view of any corpus text or example, the follow
// check lets the attempt be made.
func TestFollowSetsHold(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	texts := corpusTexts(t)
	for i := range e.pre.patterns {
		texts = append(texts, e.pre.patterns[i].Examples.Positive...)
	}
	s := &scan{}
	attempts := 0
	for _, text := range texts {
		var rep NormaliseReport
		n := normaliser{lim: e.opts.Limits, rep: &rep}
		for _, v := range n.build(text) {
			e.pre.read(s, &v)
			for i := range e.pre.patterns {
				c := &e.pre.patterns[i]
				for bi := range c.branches {
					b := &c.branches[bi]
					for _, l := range b.leads {
						for _, at := range s.occurrences(l) {
							win := v.lower[at:min(len(v.lower), int(at)+leadSpan)]
							if b.at.FindStringIndex(win) == nil {
								continue
							}
							attempts++
							if !s.followed(b, int(at)) {
								t.Errorf("%s: matches at %d of the %s view of %.80q, where its follow check skips it", c.ID, at, v.kind, text)
							}
						}
					}
				}
			}
		}
	}
	if attempts == 0 {
		t.Fatal("no anchored match was checked")
	}
	t.Logf("%d anchored matches checked", attempts)
}

// TestStartSearchFindsFirstMatch checks findStart, which searches a
// window only where a branch's start literals occur: on every view of
// every corpus text and example, over the whole view, the windows the
// branch's anchors give and random windows that neither start nor end
// inside a word, it finds the match the branch's expression finds in the
// window.
func TestStartSearchFindsFirstMatch(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	texts := corpusTexts(t)
	for i := range e.pre.patterns {
		texts = append(texts, e.pre.patterns[i].Examples.Positive...)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	s := &scan{}
	checked, found := 0, 0
	for _, text := range texts {
		var rep NormaliseReport
		n := normaliser{lim: e.opts.Limits, rep: &rep}
		for _, v := range n.build(text) {
			v.regions = nil // read the whole view
			e.pre.read(s, &v)
			in := v.lower
			for i := range e.pre.patterns {
				for bi := range e.pre.patterns[i].branches {
					b := &e.pre.patterns[i].branches[bi]
					if b.starts == nil {
						continue
					}
					ws := append([][2]int{{0, len(in)}}, e.pre.windows(b, s, in)...)
					for range 4 {
						lo := rng.IntN(len(in) + 1)
						ws = append(ws, [2]int{lo, lo + rng.IntN(len(in)-lo+1)})
					}
					for _, w := range ws {
						if insideWord(in, w[0]) || insideWord(in, w[1]) {
							continue
						}
						checked++
						var want []int
						if loc := b.re.FindStringIndex(in[w[0]:w[1]]); loc != nil {
							want = []int{w[0] + loc[0], loc[1] - loc[0]}
							found++
						}
						var got []int
						if off, n, ok := s.findStart(b, in, w); ok {
							got = []int{off, n}
						}
						if !slices.Equal(got, want) {
							t.Errorf("%s: window %v of the %s view of %.80q: start search finds %v, the expression %v", e.pre.patterns[i].ID, w, v.kind, text, got, want)
						}
					}
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no match was compared")
	}
	t.Logf("%d windows compared, %d with a match", checked, found)
}

// TestReusedScanAnswersAsFresh checks that a scan emptied by reset, as
// the evaluator's pool hands it on, finds what a new one finds, on every
// fourth corpus text in turn: nothing of one text carries over to the
// next.
func TestReusedScanAnswersAsFresh(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	reused := &scan{}
	found := 0
	for i, text := range corpusTexts(t) {
		if i%4 != 0 {
			continue
		}
		fresh := &scan{}
		for _, s := range []*scan{reused, fresh} {
			n := normaliser{lim: e.opts.Limits, rep: &s.norm, views: s.views[:0]}
			s.views = n.build(text)
			e.pre.run(s, ScopeInput)
		}
		if !slices.Equal(reused.hits, fresh.hits) || reused.hiddenEncoded != fresh.hiddenEncoded || reused.hiddenChars != fresh.hiddenChars {
			t.Fatalf("text %d (%.80q): a reused scan finds %+v, a new one %+v", i, text, reused.hits, fresh.hits)
		}
		for _, h := range fresh.hits {
			if h.found {
				found++
			}
		}
		reused.reset()
	}
	if found == 0 {
		t.Fatal("no pattern matched: the test compares nothing")
	}
}

// TestReadBefore checks which views run skips as equal to a view it
// read with at least the same patterns.
func TestReadBefore(t *testing.T) {
	plain := func(kind ViewKind, text string) view { return view{kind: kind, text: text, lower: text} }
	withRegions := func(v view) view { v.regions = [][2]int{{0, 1}}; return v }
	cases := []struct {
		name       string
		views      []view
		normalised bool
		want       bool // for the last view
	}{
		{"the same run decoded twice", []view{plain(ViewText, "x y"), plain(ViewBase64, "ab"), plain(ViewBase64, "ab")}, false, true},
		{"equal to the input", []view{plain(ViewText, "ab"), plain(ViewHex, "ab")}, false, true},
		{"different text", []view{plain(ViewText, "x y"), plain(ViewBase64, "ab"), plain(ViewBase64, "ac")}, false, false},
		{"first view", []view{plain(ViewText, "ab")}, false, false},
		{"the input, read by the raw patterns only", []view{plain(ViewText, "ab"), plain(ViewNormalised, "a b"), plain(ViewBase64, "ab")}, true, false},
		{"after the normalised view", []view{plain(ViewText, "a\u200bb"), plain(ViewNormalised, "ab"), plain(ViewBase64, "ab")}, true, true},
		{"after a view read by fewer patterns", []view{plain(ViewText, "x y"), plain(ViewLeet, "ab"), plain(ViewBase64, "ab")}, false, false},
		{"read by fewer patterns after one read by all", []view{plain(ViewText, "ab"), plain(ViewROT13, "ab")}, false, true},
		{"with regions", []view{plain(ViewText, "ab"), withRegions(plain(ViewURL, "ab"))}, false, false},
		{"after a view with regions", []view{plain(ViewText, "x y"), withRegions(plain(ViewURL, "ab")), plain(ViewBase64, "ab")}, false, false},
	}
	for _, tc := range cases {
		if got := readBefore(tc.views, len(tc.views)-1, tc.normalised); got != tc.want {
			t.Errorf("%s: readBefore = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// evalTree is holds' oracle: the prefilter tree evaluated as it stands.
func evalTree(n *pfNode, present []uint64) bool {
	switch n.op {
	case pfLit:
		return present[n.idx>>6]&(1<<(n.idx&63)) != 0
	case pfAnd:
		for _, sub := range n.subs {
			if !evalTree(sub, present) {
				return false
			}
		}
		return true
	case pfOr:
		for _, sub := range n.subs {
			if evalTree(sub, present) {
				return true
			}
		}
		return false
	}
	return true
}

// TestCheckHoldsAsTree compares every branch's laid-out prefilter
// (check.holds) with its tree, on the literals of the views of some
// corpus texts and on random sets of them, dense and sparse.
func TestCheckHoldsAsTree(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	pc := e.pre
	var sets [][]uint64
	s := &scan{}
	for i, text := range corpusTexts(t) {
		if i%16 != 0 {
			continue
		}
		var rep NormaliseReport
		n := normaliser{lim: e.opts.Limits, rep: &rep}
		for _, v := range n.build(text) {
			pc.read(s, &v)
			sets = append(sets, slices.Clone(s.present))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []float64{0.01, 0.1, 0.5, 0.9} {
		for range 50 {
			set := make([]uint64, (len(pc.literals)+63)/64)
			for l := range pc.literals {
				if rng.Float64() < p {
					set[l>>6] |= 1 << (l & 63)
				}
			}
			sets = append(sets, set)
		}
	}
	held := 0
	for i := range pc.patterns {
		for _, b := range pc.patterns[i].branches {
			for _, set := range sets {
				got, want := b.check.holds(0, set), evalTree(b.filter, set)
				if got != want {
					t.Fatalf("%s branch %d: holds %v, the tree says %v", pc.patterns[i].ID, b.id, got, want)
				}
				if got {
					held++
				}
			}
		}
	}
	if held == 0 {
		t.Fatal("no prefilter held: the comparison says nothing")
	}
	t.Logf("%d sets, %d held", len(sets), held)
}
