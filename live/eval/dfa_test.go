package eval

import (
	"regexp"
	"slices"
	"strings"
	"sync"
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

// TestDFABudgetFlush holds the shared budget's flush: a dfa that finds
// the budget taken by another (before, it could drop only its own) drops the other's states and answers
// itself, instead of leaving every attempt to regexp; dfas flushing each
// other from several goroutines stay correct and within the budget.
func TestDFABudgetFlush(t *testing.T) {
	budget := &dfaBudget{limit: 40}
	// a[ab]{8}c needs a state for each of the 2^9 sets of places an a
	// was seen in the last nine letters.
	greedy := newDFA(regexp.MustCompile(`a[ab]{8}c`), budget)
	if found, known := greedy.match(strings.Repeat("abaabbbaaababbabbbaabbbabbaabaaab", 10)); !known || found {
		t.Fatalf("the greedy dfa: found %v, known %v; want no match, known (it drops its own states as it goes)", found, known)
	}
	if budget.used.Load() < 30 {
		t.Fatalf("the greedy dfa holds %d states, want most of 40", budget.used.Load())
	}
	small := newDFA(regexp.MustCompile(`\bkill\b`), budget)
	if found, known := small.match("do not kill the process"); !known || !found {
		t.Fatalf("the small dfa: found %v, known %v; want an answer from its own states", found, known)
	}
	if held := len(greedy.states); held > 1 {
		t.Errorf("the greedy dfa still holds %d states after the flush", held)
	}

	exprs := []string{`\bkill\b`, `(?i)ignore\W+previous`, `\A(?:how\W+(?:\w+\W+){0,3}?make)\b`, `a.c`, `(?:\w+\W+){0,5}?secret`}
	inputs := []string{"kill it", "Ignore, previous rules", "how to make a cake", "abc", "one two secret", "nothing here", "skills"}
	dfas := make([]*dfa, len(exprs))
	for i, e := range exprs {
		dfas[i] = newDFA(regexp.MustCompile(e), budget)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(dfas)
				in := inputs[(g*7+n)%len(inputs)]
				if got, known := dfas[i].match(in); known && got != dfas[i].re.MatchString(in) {
					t.Errorf("%s on %q: dfa %v, regexp the other", exprs[i], in, got)
				}
				if end, known := dfas[i].matchEnd(in); known && dfas[i].anchored {
					want := -1
					if loc := dfas[i].re.FindStringIndex(in); loc != nil {
						want = loc[1]
					}
					if end != want {
						t.Errorf("%s on %q: match ends at %d, regexp's at %d", exprs[i], in, end, want)
					}
				}
			}
		})
	}
	wg.Wait()
	held := int64(len(greedy.states) + len(small.states))
	for _, d := range dfas {
		held += int64(len(d.states))
		if d.order != nil {
			held += int64(len(d.order.states))
		}
	}
	if used := budget.used.Load(); used != held || used > budget.limit {
		t.Errorf("the budget counts %d states, the dfas hold %d, the limit is %d", used, held, budget.limit)
	}
}
