package eval

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// Prefilters. Go's regexp has no DFA: an expression with a large
// alternation up front costs a few hundred microseconds on a 2 KB text.
// So every expression is cut into its top-level alternatives (branches),
// and each branch gets a prefilter derived from its syntax tree: an AND/OR
// tree of literals that any match must contain (in the manner of RE2's
// prefilter). A branch runs only on views where its tree holds, and then
// only on windows around the occurrences of its anchor, the most selective
// set of literals every match contains.

const (
	minLiteral  = 3   // literals shorter than this say too little to test
	maxExact    = 16  // bound on an exact set of strings before it becomes a prefilter
	maxBranches = 48  // bound on the branches one expression is cut into
	matchSpan   = 200 // a match is looked for within this many bytes either side of an anchor
)

type pfOp uint8

const (
	pfAll pfOp = iota // no constraint
	pfLit             // the literal occurs
	pfAnd
	pfOr
	pfAny   // an OR of literals alone, laid out as a bitset (check)
	pfEvery // an AND of literals alone, laid out as a bitset (check)
)

// pfNode is a node of a prefilter tree.
type pfNode struct {
	op   pfOp
	lit  string
	idx  int // the literal's index in precheck.literals, once interned
	subs []*pfNode
}

var pfAllNode = &pfNode{op: pfAll}

// pfInfo is what is known of a sub-expression: the exact set of strings
// it matches when that set is small, or else a prefilter.
type pfInfo struct {
	exact []string // nil when not exact
	match *pfNode
}

// build derives prefilters whose literals are at least min bytes long
// (two for a whole word).
type build struct{ min int }

// toMatch turns an exact set into an OR of its literals.
func (bd build) toMatch(in pfInfo) *pfNode {
	if in.exact == nil {
		return in.match
	}
	or := &pfNode{op: pfOr}
	for _, s := range in.exact {
		key, ok := literalKey(s, bd.min)
		if !ok {
			return pfAllNode
		}
		or.subs = append(or.subs, &pfNode{op: pfLit, lit: key})
	}
	return simplify(or)
}

// literalKey turns an exact string into a literal key: word marks kept
// only at its ends (a mark inside is dropped, which only weakens the
// test), and false when it is too short to say anything: under min
// bytes, or two for a whole word.
func literalKey(s string, min int) (string, bool) {
	start, end := strings.HasPrefix(s, wordMark), strings.HasSuffix(s, wordMark) && len(s) > 1
	core := strings.ReplaceAll(s, wordMark, "")
	if len(strings.TrimSpace(core)) < min && !(start && end && len(core) >= 2) {
		return "", false
	}
	if start {
		core = wordMark + core
	}
	if end {
		core += wordMark
	}
	return core, true
}

// prefilterOf derives the prefilter tree of re.
func prefilterOf(re *syntax.Regexp) *pfNode { return build{minLiteral}.prefilter(re) }

func (bd build) prefilter(re *syntax.Regexp) *pfNode { return bd.toMatch(bd.info(re)) }

// lower lowers a literal's runes as the views it is looked for in are
// (lowerRune).
func lower(runes []rune) string { return strings.Map(lowerRune, string(runes)) }

// info computes the pfInfo of re (its exact set does not depend on the
// literals' length).
func info(re *syntax.Regexp) pfInfo { return build{minLiteral}.info(re) }

func (bd build) info(re *syntax.Regexp) pfInfo {
	switch re.Op {
	case syntax.OpLiteral:
		return pfInfo{exact: []string{lower(re.Rune)}}
	case syntax.OpWordBoundary:
		return pfInfo{exact: []string{wordMark}}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpNoWordBoundary:
		return pfInfo{exact: []string{""}}
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 4 || len(set) > 4 {
				return pfInfo{match: pfAllNode}
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r == 0x17F || r == 0x212A { // ſ and the Kelvin sign fold to s and k; NFKC maps them there too
					continue
				}
				set = append(set, string(lowerRune(r)))
			}
		}
		return pfInfo{exact: dedupe(set)}
	case syntax.OpCapture:
		return bd.info(re.Sub[0])
	case syntax.OpQuest:
		in := bd.info(re.Sub[0])
		if in.exact != nil && len(in.exact) < maxExact {
			return pfInfo{exact: dedupe(append(in.exact, ""))}
		}
		return pfInfo{match: pfAllNode}
	case syntax.OpPlus:
		return pfInfo{match: bd.toMatch(bd.info(re.Sub[0]))}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return pfInfo{match: bd.toMatch(bd.info(re.Sub[0]))}
		}
		return pfInfo{match: pfAllNode}
	case syntax.OpConcat:
		and := &pfNode{op: pfAnd}
		exact := []string{""}
		for _, sub := range re.Sub {
			in := bd.info(sub)
			if in.exact != nil {
				if cross := crossProduct(exact, in.exact); cross != nil {
					exact = cross
					continue
				}
			}
			and.subs = append(and.subs, bd.toMatch(pfInfo{exact: exact}))
			exact = []string{""}
			if in.exact != nil {
				exact = in.exact
			} else {
				and.subs = append(and.subs, in.match)
			}
		}
		if len(and.subs) == 0 {
			return pfInfo{exact: exact}
		}
		and.subs = append(and.subs, bd.toMatch(pfInfo{exact: exact}))
		return pfInfo{match: simplify(and)}
	case syntax.OpAlternate:
		var union []string
		exact := true
		infos := make([]pfInfo, len(re.Sub))
		for i, sub := range re.Sub {
			infos[i] = bd.info(sub)
			if infos[i].exact == nil {
				exact = false
			}
			union = append(union, infos[i].exact...)
		}
		if exact && len(union) <= maxExact {
			return pfInfo{exact: dedupe(union)}
		}
		or := &pfNode{op: pfOr}
		for _, in := range infos {
			or.subs = append(or.subs, bd.toMatch(in))
		}
		return pfInfo{match: simplify(or)}
	}
	return pfInfo{match: pfAllNode}
}

// crossProduct concatenates every string of a with every string of b, or
// returns nil when the result would exceed maxExact.
func crossProduct(a, b []string) []string {
	if len(a)*len(b) > maxExact {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return dedupe(out)
}

// simplify flattens an AND or OR node: nested nodes of the same kind are
// merged, "no constraint" parts are dropped from an AND and make an OR no
// constraint, and a node with one part is that part.
func simplify(n *pfNode) *pfNode {
	var subs []*pfNode
	for _, s := range n.subs {
		switch {
		case s.op == pfAll && n.op == pfOr:
			return pfAllNode
		case s.op == pfAll:
		case s.op == n.op:
			subs = append(subs, s.subs...)
		default:
			subs = append(subs, s)
		}
	}
	switch len(subs) {
	case 0:
		return pfAllNode
	case 1:
		return subs[0]
	}
	return &pfNode{op: n.op, subs: subs}
}

// anchorsOf returns the candidate anchors of a tree: for an AND, the
// anchor of each part that has one (the precheck picks, per view, the one
// whose literals occur least); else the tree's one anchor.
func anchorsOf(n *pfNode) [][]string {
	if n.op != pfAnd {
		if a := anchorOf(n); a != nil {
			return [][]string{a}
		}
		return nil
	}
	var out [][]string
	for _, s := range n.subs {
		if a := anchorOf(s); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// anchorOf picks, from a prefilter tree, a set of literals one of which
// every match contains, as selective as the tree allows: a literal; for an
// OR, its alternatives' anchors together; for an AND, its most selective
// part's. nil when there is none.
func anchorOf(n *pfNode) []string {
	switch n.op {
	case pfLit:
		return []string{n.lit}
	case pfOr:
		var union []string
		for _, s := range n.subs {
			a := anchorOf(s)
			if a == nil {
				return nil
			}
			union = append(union, a...)
		}
		return dedupe(union)
	case pfAnd:
		var best []string
		for _, s := range n.subs {
			if a := anchorOf(s); a != nil && (best == nil || selective(a, best)) {
				best = a
			}
		}
		return best
	}
	return nil
}

// selective prefers the set whose weakest literal is stronger (longer,
// and not a stop word), then the smaller set.
func selective(a, b []string) bool {
	wa, wb := weakest(a), weakest(b)
	if wa != wb {
		return wa > wb
	}
	return len(a) < len(b)
}

// stopWords are literals too common in English to anchor a search.
var stopWords = map[string]bool{"the": true, "and": true, "you": true, "your": true, "for": true, "are": true,
	"this": true, "that": true, "with": true, "not": true, "all": true, "any": true, "what": true, "how": true,
	"can": true, "was": true, "from": true, "have": true, "will": true, "has": true, "its": true, "but": true}

// weakest is the strength of a set's weakest literal: its length, or 1
// for a stop word.
func weakest(set []string) int {
	m := -1
	for _, s := range set {
		lit := parseLiteral(s)
		w := len(lit.core)
		if lit.wordStart && lit.wordEnd {
			w++
		}
		if stopWords[strings.TrimSpace(lit.core)] {
			w = 1
		}
		if m < 0 || w < m {
			m = w
		}
	}
	return m
}

func dedupe(set []string) []string {
	slices.Sort(set)
	return slices.Compact(set)
}

// Cutting expressions into branches is done on the source text: the
// syntax tree's String method costs too much on the large negated classes
// (\W) the patterns use.

// groupEnd returns the index of the ')' closing the group that opens at
// src[open], skipping escapes and character classes; -1 if unclosed.
func groupEnd(src string, open int) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '[':
			i = classEnd(src, i)
			if i < 0 {
				return -1
			}
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// classEnd returns the index of the ']' closing the class that opens at
// src[open]; a ']' right after "[" or "[^" is a literal.
func classEnd(src string, open int) int {
	i := open + 1
	if i < len(src) && src[i] == '^' {
		i++
	}
	if i < len(src) && src[i] == ']' {
		i++
	}
	for ; i < len(src); i++ {
		switch {
		case src[i] == '\\':
			i++
		case src[i] == '[' && i+1 < len(src) && src[i+1] == ':': // [:alpha:]
			if end := strings.Index(src[i:], ":]"); end >= 0 {
				i += end + 1
			}
		case src[i] == ']':
			return i
		}
	}
	return -1
}

// splitTop splits src at its top-level '|'.
func splitTop(src string) []string {
	var out []string
	start, depth := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '[':
			if i = classEnd(src, i); i < 0 {
				return []string{src}
			}
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, src[start:i])
				start = i + 1
			}
		}
	}
	return append(out, src[start:])
}

// globalFlags splits a leading flag group such as "(?m)" from src.
func globalFlags(src string) (flags, rest string) {
	if strings.HasPrefix(src, "(?") && !strings.HasPrefix(src, "(?:") && !strings.HasPrefix(src, "(?P<") {
		if end := strings.IndexByte(src, ')'); end > 0 && !strings.Contains(src[:end], ":") {
			return src[:end+1], src[end+1:]
		}
	}
	return "", src
}

// branchesOf cuts an expression's source into its top-level alternatives,
// then distributes each over the non-capturing group it starts with
// (after word boundaries), so that each branch starts with a literal: Go's
// regexp then skips to that literal's occurrences instead of trying every
// position. At most limit branches come out of the distribution.
func branchesOf(src string, limit int) []string {
	flags, body := globalFlags(src)
	top := splitTop(body)
	budget := limit - len(top)
	var out []string
	for _, b := range top {
		subs := splitLeading(b, budget+1)
		budget -= len(subs) - 1
		for _, s := range subs {
			out = append(out, flags+s)
		}
	}
	return out
}

// splitLeading distributes "\b(?:a|b)rest" into "\barest", "\bbrest",
// unless the group is quantified or has more than limit alternatives.
func splitLeading(b string, limit int) []string {
	lead := 0
	for strings.HasPrefix(b[lead:], `\b`) {
		lead += 2
	}
	if !strings.HasPrefix(b[lead:], "(?:") {
		return []string{b}
	}
	end := groupEnd(b, lead)
	if end < 0 || end+1 < len(b) && strings.IndexByte("?*+{", b[end+1]) >= 0 {
		return []string{b}
	}
	alts := splitTop(b[lead+3 : end])
	if len(alts) < 2 || len(alts) > limit {
		return []string{b}
	}
	out := make([]string, len(alts))
	for i, a := range alts {
		out[i] = b[:lead] + a + b[end+1:]
	}
	return out
}

// stripWordStart removes the word boundaries a branch starts with (after
// its flags) and reports whether there were any; the caller then checks
// the boundary itself, so the branch can start with a literal prefix.
func stripWordStart(src string) (string, bool) {
	flags, body := globalFlags(src)
	if !strings.HasPrefix(body, `\b`) {
		return src, false
	}
	for strings.HasPrefix(body, `\b`) {
		body = body[2:]
	}
	return flags + body, true
}

// isWordByte is \b's notion of a word character (ASCII only, as in Go).
func isWordByte(c byte) bool { return wordBytes[c] }

// wordBytes[c] says whether c is a word character.
var wordBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	return t
}()

// wordBoundary reports whether \b holds at byte offset i of s.
func wordBoundary(s string, i int) bool {
	before := i > 0 && isWordByte(s[i-1])
	after := i < len(s) && isWordByte(s[i])
	return before != after
}

// maxLeads bounds the lead literals of a branch.
const maxLeads = 64

// lead is what leadsOf found: the literal keys every match starts with,
// and the branch without its leading \b or ^\s*, parsed.
type lead struct {
	keys      []string
	flags     string
	body      string
	tree      *syntax.Regexp
	lineStart bool // a leading "^\s*" (with the m flag): the lead must start its line
}

// anchored compiles the branch anchored at the start of its input (its
// leading \b or ^\s* dropped, which the caller checks).
func (l *lead) anchored() (*regexp.Regexp, error) {
	return regexp.Compile(l.flags + `\A(?:` + l.body + `)`)
}

// leadsOf finds the literals every match of src starts with, when there
// are a few (at most maxLeads): the exact strings of the longest run of
// its first elements that has a small exact set, each at least two bytes,
// or one that is not a word character, or a whole one-letter word. A
// leading \b becomes a word mark on each key. It returns nil when there
// is no such set.
func leadsOf(src string) (*lead, error) {
	l := &lead{}
	var body string
	l.flags, body = globalFlags(src)
	mark := ""
	for strings.HasPrefix(body, `\b`) {
		body, mark = body[2:], wordMark
	}
	if rest, ok := strings.CutPrefix(body, `^\s*`); ok && strings.Contains(l.flags, "m") {
		body, l.lineStart = rest, true
	}
	tree, err := syntax.Parse(l.flags+body, syntax.Perl)
	if err != nil {
		return nil, err
	}
	set := leadStrings(tree)
	if set == nil {
		return nil, nil
	}
	for _, s := range set {
		start := mark != "" || strings.HasPrefix(s, wordMark)
		end := strings.HasSuffix(s, wordMark)
		core := strings.ReplaceAll(s, wordMark, "") // a mark inside is dropped: the regex checks it
		switch {
		case len(core) >= 2, len(core) == 1 && (!isWordByte(core[0]) || start && end):
		default:
			return nil, nil
		}
		if start {
			core = wordMark + core
		}
		if end {
			core += wordMark
		}
		l.keys = append(l.keys, core)
	}
	l.body, l.tree = body, tree
	return l, nil
}

// crossAll concatenates every string of a with every string of b.
func crossAll(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return dedupe(out)
}

// startsNonWord reports whether every match of re starts with at least
// one character that is not a word character (\s+, \W, a space).
func startsNonWord(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpPlus:
		return startsNonWord(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min >= 1 && startsNonWord(re.Sub[0])
	case syntax.OpLiteral:
		return len(re.Rune) > 0 && re.Rune[0] < 0x80 && !isWordByte(byte(re.Rune[0]))
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, w := range [][2]rune{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}} {
				if re.Rune[i] <= w[1] && re.Rune[i+1] >= w[0] {
					return false
				}
			}
		}
		return len(re.Rune) > 0
	}
	return false
}

// leadStrings returns the set of strings every match of re starts with
// (lowered), or nil.
func leadStrings(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpCapture:
		return leadStrings(re.Sub[0])
	case syntax.OpPlus:
		return leadStrings(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return leadStrings(re.Sub[0])
		}
		return nil
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(set) == 16 {
					return nil
				}
				set = append(set, string(lowerRune(r)))
			}
		}
		return dedupe(set)
	case syntax.OpAlternate:
		var union []string
		for _, sub := range re.Sub {
			l := leadStrings(sub)
			if l == nil {
				return nil
			}
			union = append(union, l...)
		}
		if union = dedupe(union); len(union) > maxLeads {
			return nil
		}
		return union
	case syntax.OpConcat:
		if first := re.Sub[0]; (first.Op == syntax.OpQuest || first.Op == syntax.OpStar) && len(re.Sub) > 1 {
			// an optional first element: what starts with it, and what
			// starts without it
			with := leadStrings(&syntax.Regexp{Op: syntax.OpConcat, Sub: append([]*syntax.Regexp{first.Sub[0]}, re.Sub[1:]...)})
			without := leadStrings(&syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[1:]})
			if with == nil || without == nil || len(with)+len(without) > maxLeads {
				return nil
			}
			return dedupe(append(with, without...))
		}
		set := []string{""}
		for _, sub := range re.Sub {
			in := info(sub)
			if in.exact == nil || len(set)*len(in.exact) > maxLeads {
				// Not exact (or too many): the leads end with this
				// element's own leads, or here.
				if len(set) == 1 && set[0] == "" {
					return leadStrings(sub) // a first element that is not exact: its own leads
				}
				if startsNonWord(sub) { // the lead words end here
					for i := range set {
						set[i] += wordMark
					}
				} else if leads := leadStrings(sub); leads != nil && len(set)*len(leads) <= maxLeads {
					set = crossAll(set, leads)
				}
				break
			}
			set = crossAll(set, in.exact)
		}
		if slices.Contains(set, "") {
			return nil
		}
		return set
	}
	if in := info(re); in.exact != nil && len(in.exact) <= maxLeads && !slices.Contains(in.exact, "") {
		return dedupe(in.exact)
	}
	return nil
}
