package eval

import (
	"regexp"
	"testing"
)

// TestDFAMatchesRegexp checks the dfas against regexp on the inputs the
// precheck gives them: on every view of every corpus text and pattern
// example, each anchored expression that has a dfa at every occurrence
// of its branch's lead and start literals (over the lead span and to the
// end of the view), and each unanchored one over the whole view and over
// its windows. Both must say whether there is a match alike.
func TestDFAMatchesRegexp(t *testing.T) {
	e, _ := hookedEvaluator(t, false)
	texts := corpusTexts(t)
	for i := range e.pre.patterns {
		texts = append(texts, e.pre.patterns[i].Examples.Positive...)
		texts = append(texts, e.pre.patterns[i].Examples.Negative...)
	}
	s := &scan{}
	var checked, found, dfas int
	compare := func(id string, d *dfa, re *regexp.Regexp, in string) {
		got, known := d.match(in)
		if !known {
			t.Fatalf("%s: the dfa is full (%d states)", id, len(d.states))
		}
		if want := re.MatchString(in); got != want {
			t.Errorf("%s on %.120q: dfa %v, regexp %v", id, in, got, want)
		}
		checked++
		if got {
			found++
		}
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
						for _, w := range e.pre.windows(b, s, v.lower) {
							compare(c.ID, d, b.re, in[w[0]:w[1]])
						}
					}
				}
			}
		}
	}
	if dfas == 0 || found == 0 || found == checked {
		t.Fatalf("%d dfas, %d inputs checked, %d matched: the test checks nothing", dfas, checked, found)
	}
	t.Logf("%d dfas, %d inputs checked, %d matched", dfas, checked, found)
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
		d, err := newDFA(re)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			got, known := d.match(in)
			if want := re.MatchString(in); !known || got != want {
				t.Errorf("%s on %q: dfa %v (known %v), regexp %v", expr, in, got, known, want)
			}
		}
	}
}
