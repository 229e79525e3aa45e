package eval

import (
	"regexp"
	"slices"
	"testing"
)

// TestDFAMatchesRegexp checks the dfas against regexp on the inputs the
// precheck gives them: on every view of every corpus text and pattern
// example, each anchored expression that has a dfa at every occurrence
// of its branch's lead and start literals (over the lead span and to the
// end of the view), and each unanchored one over the whole view and over
// its windows and digit windows. Both must say whether there is a match alike.
func TestDFAMatchesRegexp(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	texts := corpusTexts(t)
	for i := range e.pre.patterns {
		texts = append(texts, e.pre.patterns[i].Examples.Positive...)
		texts = append(texts, e.pre.patterns[i].Examples.Negative...)
	}
	s := &scan{}
	var checked, found, unknown, dfas, ends int
	compare := func(id string, d *dfa, re *regexp.Regexp, in string) {
		got, known := d.match(in)
		if !known { // the budget is spent: regexp answers
			unknown++
			return
		}
		if want := re.MatchString(in); got != want {
			t.Errorf("%s on %.120q: dfa %v, regexp %v", id, in, got, want)
		}
		checked++
		if got {
			found++
		}
		if !got || !d.anchored { // the precheck asks where a match ends only of a dfa that found one
			return
		}
		end, known := d.matchEnd(in)
		if !known {
			unknown++
			return
		}
		want := -1
		if loc := re.FindStringIndex(in); loc != nil {
			want = loc[1]
		}
		if end != want {
			t.Errorf("%s on %.120q: dfa's match ends at %d, regexp's at %d", id, in, end, want)
		}
		ends++
	}
	for i := range e.pre.patterns {
		for _, b := range e.pre.patterns[i].branches {
			if b.atDFA != nil || b.reDFA != nil {
				dfas++
			}
		}
	}
	for _, text := range texts {
		var rep NormaliseReport
		n := normaliser{lim: e.opts.Limits, rep: &rep}
		for _, v := range n.build(text) {
			v.regions = nil // read the whole view
			e.pre.read(s, &v)
			for i := range e.pre.patterns {
				c := &e.pre.patterns[i]
				in := v.lower
				if c.CaseSensitive {
					in = v.text
				}
				for bi := range c.branches {
					b := &c.branches[bi]
					if d := b.atDFA; d != nil {
						for _, l := range append(b.leads, b.starts...) {
							for _, at := range s.occurrences(l) {
								compare(c.ID, d, b.at, in[at:min(len(in), int(at)+leadSpan)])
								compare(c.ID, d, b.at, in[at:])
							}
						}
					}
					if d := b.reDFA; d != nil {
						compare(c.ID, d, b.re, in)
						ws := slices.Clone(e.pre.windows(b, s, v.lower))
						if c.MinDigits > 0 {
							ws = append(ws, s.digitWindows(&v, c.MinDigits)...)
						}
						for _, w := range ws {
							compare(c.ID, d, b.re, in[w[0]:w[1]])
						}
					}
				}
			}
		}
	}
	if dfas == 0 || found == 0 || found == checked || ends == 0 {
		t.Fatalf("%d dfas, %d inputs checked, %d matched, %d match ends: the test checks nothing", dfas, checked, found, ends)
	}
	t.Logf("%d dfas, %d inputs checked, %d matched, %d match ends, %d left to regexp (budget spent)", dfas, checked, found, ends, unknown)
}

// TestDFAEdgeCases compares a dfa with regexp on the assertions, runes
// and bytes the corpus holds little of: word boundaries at either end,
// lines, case folding beyond ASCII, invalid UTF-8 and the empty input.
func TestDFAEdgeCases(t *testing.T) {
	exprs := []string{`\bkill\b`, `(?m)^\s*ignore$`, `\A(?:how\W+(?:\w+\W+){0,3}?make)\b`, `(?i)straße|ſecret`,
		`é+x`, `[^a]b`, `a.c`, `(?s)a.c`, `x*`, `\Bin\B`, `\A\z`, `(?:a|ab)(?:c|bcd)(?:d*)$`}
	inputs := []string{"", "kill", "skill", "kill\n", "  ignore\nx", "x\n ignore", "ignore", "how to make", "how, do you make it",
		"how a b c d make", "STRASSE", "straße", "ſecret", "SECRET", "ééx", "é\xffx", "\xff\xfeb", "aab", "a\nc", "abc",
		"inside", "in", "abcd", "abcdd\n", "ab\xc3"}
	for _, expr := range exprs {
		re := regexp.MustCompile(expr)
		d := newDFA(re, &dfaBudget{limit: maxDFAStates})
		for _, in := range inputs {
			got, known := d.match(in)
			if want := re.MatchString(in); !known || got != want {
				t.Errorf("%s on %q: dfa %v (known %v), regexp %v", expr, in, got, known, want)
			}
		}
		// With room for two states, the dfa starts again at nearly every
		// new one, and says it cannot tell when two are not enough.
		small := newDFA(re, &dfaBudget{limit: 2})
		for range 2 {
			for _, in := range inputs {
				got, known := small.match(in)
				if want := re.MatchString(in); known && got != want {
					t.Errorf("%s on %q with two states: dfa %v, regexp %v", expr, in, got, want)
				}
				if small.budget.used.Load() > 2 {
					t.Fatalf("%s: %d states held, over the budget of 2", expr, small.budget.used.Load())
				}
			}
		}
	}
}

// TestDFAMatchEnd compares where an anchored dfa's match ends with
// regexp on the preferences leftmost-first matching reads: alternatives
// in order (the first that leads to a match wins, even when a later one
// is longer), greedy and lazy repetition, word boundaries and line ends
// after the match, runes beyond ASCII and invalid UTF-8.
func TestDFAMatchEnd(t *testing.T) {
	exprs := []string{`\A(?:a|ab)(?:c|bcd)(?:d*)`, `\A(?:ab|a)(?:c|bcd)`, `\A(?:a+?)`, `\A(?:a+)`, `\A(?:a*?b|a*)`,
		`\A(?:how\W+(?:\w+\W+){0,3}?make)\b`, `\A(?:how\W+(?:\w+\W+){0,3}make)`, `(?m)\A(?:ignore.*$)`, `\A(?:kill\b|killer)`,
		`\A(?:é+x?)`, `(?i)\A(?:straße|ſecret\w*)`, `\A(?:a.c)`, `\A(?:x*)`, `\A\z`, `\A(?:(a)|b)+`, `\A(?:\bin\B\w*)`}
	inputs := []string{"", "a", "ab", "abc", "abcd", "abcdd", "abcdddx", "aaab", "aaaa", "how to make", "how a b c make it",
		"how a b c d make", "ignore this\nnot", "ignore", "kill", "killer", "killers", "ééx", "ééé", "é\xffx", "STRASSE",
		"straße", "ſecretly yes", "a\nc", "aXc", "xxx", "abab", "bab", "inside", "in", "\xff\xfe"}
	for _, expr := range exprs {
		re := regexp.MustCompile(expr)
		for _, limit := range []int64{maxDFAStates, 2} {
			d := newDFA(re, &dfaBudget{limit: limit})
			for range 2 { // building the states, then reading them
				for _, in := range inputs {
					end, known := d.matchEnd(in)
					want := -1
					if loc := re.FindStringIndex(in); loc != nil {
						want = loc[1]
					}
					if limit == maxDFAStates && !known || known && end != want {
						t.Errorf("%s on %q (budget %d): dfa's match ends at %d (known %v), regexp's at %d", expr, in, limit, end, known, want)
					}
					if d.budget.used.Load() > limit {
						t.Fatalf("%s: %d states held, over the budget of %d", expr, d.budget.used.Load(), limit)
					}
				}
			}
		}
	}
	if _, known := newDFA(regexp.MustCompile(`a|ab`), &dfaBudget{limit: maxDFAStates}).matchEnd("ab"); known {
		t.Error("an unanchored expression's match end is known")
	}
}
