package eval

import (
	"fmt"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// maxCandidates bounds the regex matches a validator checks per view.
const maxCandidates = 32

// compiled is a Pattern ready to run.
type compiled struct {
	*Pattern
	branches  []branch // the regex cut at its top-level alternatives
	validate  matchValidator
	signal    func(*scan) int
	charViews bool // also read the leetspeak, spaced and ROT13 views
}

// branch is one top-level alternative of a pattern's regex.
type branch struct {
	re        *regexp.Regexp
	wordStart bool    // the branch started with \b, which match checks itself
	group     bool    // the branch has a capture group; validators read the first that took part
	filter    *pfNode // prefilter; literals indexed in precheck.literals
	check     check   // filter laid out for holds
	// anchors are sets of literals (indices) every match contains one of;
	// windows are cut around the occurrences of the set that occurs least.
	// nil scans the whole view.
	anchors [][]int
	id      int // the branch's number in the precheck (precheck.leadOf, scan.live)
	// leads, when every match starts with one of a few literals, are those
	// literals' indices: the branch is then tried only where one of them
	// occurs, by at, the branch anchored at the start of its input. nil
	// when the branch has no such set; it then runs on windows.
	leads []int
	at    *regexp.Regexp
	// reDFA and atDFA tell whether re and at match at all (see dfa);
	// nil when re or at is.
	reDFA, atDFA *dfa
	// follows are sets of literals (indices) that every match of a lead
	// branch holds one of besides its lead: an attempt is made only where
	// one of each occurs within leadSpan bytes after the lead.
	follows [][]int
	// followIDs number the follow sets across the precheck (equal sets
	// share a number), for scan.followers.
	followIDs []int32
	// lineStart says a lead must start its line, after white space.
	lineStart bool
	// starts, for a branch run on windows whose matches all start with
	// one of a few literals, are those literals' indices: a window is then
	// searched only where one of them occurs, by at (findStart).
	starts []int
}

// leadSpan bounds the bytes an anchored attempt reads after its lead.
const leadSpan = 256

// precheck is the compiled pattern set.
type precheck struct {
	patterns []compiled
	literals []string
	index    map[string]int
	set      *literalSet // finds every literal in one pass per view
	// raw finds the literals of the patterns that read raw characters
	// (secrets, personal data) only: the input as sent is read with it
	// when there is a normalised view, which the other patterns read.
	raw *literalSet
	// leadOf[l] are the branches whose lead set holds literal l;
	// nbranches is how many branches there are; plain has the bit of
	// every branch without a lead set (see scan.live).
	leadOf    [][]int32
	nbranches int
	plain     []uint64
	// followID numbers the distinct follow sets (keyed by their sorted
	// literals).
	followID map[string]int32
	dfas     dfaBudget // the states of the branches' dfas
}

// compilePatterns checks and compiles every pattern; it reports every
// problem, joined.
func compilePatterns(ps []Pattern) (*precheck, error) {
	pc := &precheck{patterns: make([]compiled, len(ps)), index: map[string]int{}, dfas: dfaBudget{limit: maxDFAStates}}
	// Compiling the expressions is the slow part and needs nothing shared:
	// it runs on every core; numbering the literals, after, does not.
	drafts := make([]patternDraft, len(ps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				drafts[i] = draftPattern(&ps[i], &pc.dfas)
			}
		})
	}
	for i := range ps {
		if ps[i].Regex != "" {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	var errs []error
	bad := func(id, format string, args ...any) {
		errs = append(errs, &DataError{File: PatternsFile, Pattern: id, Msg: fmt.Sprintf(format, args...)})
	}
	for i := range ps {
		p := &ps[i]
		c := compiled{Pattern: p, charViews: p.Category != Secrets && p.Category != PersonalData}
		if p.Validator != "" {
			c.validate = matchValidators[p.Validator]
			c.signal = signalValidators[p.Validator]
			switch {
			case c.validate == nil && c.signal == nil:
				bad(p.ID, "unknown validator %q", p.Validator)
			case c.signal != nil && p.Regex != "":
				bad(p.ID, "validator %q reads the normalisation's findings and takes no regex", p.Validator)
			case c.validate != nil && p.Regex == "":
				bad(p.ID, "validator %q checks regex matches and needs a regex", p.Validator)
			}
		}
		if p.Regex != "" {
			for _, d := range drafts[i].branches {
				c.branches = append(c.branches, pc.finish(d))
			}
			for _, err := range drafts[i].errs {
				bad(p.ID, "%v", err)
			}
		}
		pc.patterns[i] = c
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	pc.set = newLiteralSet(pc.literals)
	if pc.set.nstates >= hasOutput {
		return nil, &DataError{File: PatternsFile, Msg: fmt.Sprintf("the patterns' literals are too many for the prefilter (over %d automaton states)", hasOutput-1)}
	}
	keep := make([]bool, len(pc.literals))
	for i := range pc.patterns {
		for _, b := range pc.patterns[i].branches {
			for _, l := range slices.Concat(b.leads, b.starts) {
				keep[l] = true
			}
			for _, set := range b.follows {
				for _, l := range set {
					keep[l] = true
				}
			}
		}
	}
	pc.set.keep(keep)
	pc.raw = pc.subset(func(c *compiled) bool { return !c.charViews }, keep)
	pc.leadOf = make([][]int32, len(pc.literals))
	for i := range pc.patterns {
		for j := range pc.patterns[i].branches {
			b := &pc.patterns[i].branches[j]
			b.id = pc.nbranches
			pc.nbranches++
			for _, l := range b.leads {
				pc.leadOf[l] = append(pc.leadOf[l], int32(b.id))
			}
		}
	}
	pc.plain = make([]uint64, (pc.nbranches+63)/64)
	for i := range pc.patterns {
		for _, b := range pc.patterns[i].branches {
			if b.leads == nil {
				pc.plain[b.id>>6] |= 1 << (b.id & 63)
			}
		}
	}
	return pc, nil
}

// subset builds the automaton of the literals of the patterns that want
// says, numbered as in pc.literals, keeping the positions keep says.
func (pc *precheck) subset(want func(*compiled) bool, keep []bool) *literalSet {
	used := make([]bool, len(pc.literals))
	var mark func(n *pfNode)
	mark = func(n *pfNode) {
		if n.op == pfLit {
			used[n.idx] = true
		}
		for _, sub := range n.subs {
			mark(sub)
		}
	}
	for i := range pc.patterns {
		c := &pc.patterns[i]
		if !want(c) {
			continue
		}
		for _, b := range c.branches {
			mark(b.filter)
			for _, set := range slices.Concat([][]int{b.leads, b.starts}, b.anchors, b.follows) {
				for _, l := range set {
					used[l] = true
				}
			}
		}
	}
	var keys []string
	var ids []int32
	for l, u := range used {
		if u {
			keys = append(keys, pc.literals[l])
			ids = append(ids, int32(l))
		}
	}
	ls := newLiteralSet(keys)
	for i := range ls.outputs {
		ls.outputs[i].lit = ids[ls.outputs[i].lit]
	}
	ls.keep(keep)
	return ls
}

// part is one branch's source, with its lead set when it has one.
type part struct {
	src  string
	lead *lead
}

// split cuts an expression into its top-level alternatives, each with its
// leading flags. When leads is set, an alternative's lead set is found
// (leadsOf); one with none is cut further, when its leading group can be
// distributed (branchesOf).
func split(src string, leads bool) ([]part, error) {
	var out []part
	flags, body := globalFlags(src)
	for _, alt := range splitTop(body) {
		if !leads {
			out = append(out, part{src: flags + alt})
			continue
		}
		l, err := leadsOf(flags + alt)
		if err != nil {
			return nil, err
		}
		if l != nil {
			out = append(out, part{src: flags + alt, lead: l})
			continue
		}
		for _, b := range branchesOf(flags+alt, maxBranches) {
			l, err := leadsOf(b)
			if err != nil {
				return nil, err
			}
			out = append(out, part{src: b, lead: l})
		}
	}
	return out, nil
}

// branch compiles one alternative with its prefilter and anchor. A
// leading \b is checked by match itself when that leaves the expression a
// strong literal prefix (Go's regexp then skips to the prefix's
// occurrences); a branch without one is run only on windows around its
// anchor.
// patternDraft is one pattern's compiled branches before their literals
// are numbered, and the problems found.
type patternDraft struct {
	branches []branchDraft
	errs     []error
}

// branchDraft is a branch before its literals are numbered.
type branchDraft struct {
	branch
	filter     *pfNode    // literals not yet interned
	leadKeys   []string   // the lead set's literal keys
	startKeys  []string   // the start set's literal keys
	anchorSets [][]string // anchorsOf(filter)
}

// draftPattern checks and compiles one pattern's expression, branch by
// branch, its dfas counting their states in budget.
func draftPattern(p *Pattern, budget *dfaBudget) patternDraft {
	var d patternDraft
	parts, err := split(p.Regex, !p.CaseSensitive && p.MinDigits == 0)
	if err != nil {
		d.errs = append(d.errs, fmt.Errorf("regex: %w", err))
		return d
	}
	for _, pt := range parts {
		b, err := draftBranch(pt, p, budget)
		if err != nil {
			d.errs = append(d.errs, fmt.Errorf("branch %s: %w", pt.src, err))
			continue
		}
		d.branches = append(d.branches, b)
	}
	return d
}

// draftBranch compiles one alternative with its prefilter and, when it
// has a lead set, anchored at its start (see findLead); otherwise with
// the anchors its windows are cut around. A leading \b is checked by
// match itself when that leaves the expression a strong literal prefix
// (Go's regexp then skips to the prefix's occurrences).
func draftBranch(pt part, p *Pattern, budget *dfaBudget) (branchDraft, error) {
	src := pt.src
	var tree *syntax.Regexp
	if pt.lead != nil {
		tree = pt.lead.tree // the same literals, less a leading word mark
	} else {
		var err error
		if tree, err = syntax.Parse(src, syntax.Perl); err != nil {
			return branchDraft{}, err
		}
	}
	if !p.CaseSensitive {
		if r, ok := upperLiteral(tree); ok {
			return branchDraft{}, fmt.Errorf("regex holds the upper-case letter %q but reads lowered text: write it in lower case, or set case_sensitive", r)
		}
	}
	d := branchDraft{filter: prefilterOf(tree)}
	if len(p.Prefilter) > 0 {
		d.filter = &pfNode{op: pfOr}
		for _, l := range p.Prefilter {
			d.filter.subs = append(d.filter.subs, &pfNode{op: pfLit, lit: strings.Map(lowerRune, l)})
		}
	}
	if l := pt.lead; l != nil {
		at, err := l.anchored()
		if err != nil {
			return branchDraft{}, err
		}
		d.at, d.group, d.lineStart, d.leadKeys = at, at.NumSubexp() > 0, l.lineStart, l.keys
		d.anchorSets = anchorsOf(d.filter)
		d.atDFA = newDFA(at, budget)
		return d, nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return branchDraft{}, err
	}
	d.re, d.group = re, re.NumSubexp() > 0
	if stripped, ok := stripWordStart(src); ok {
		if re2, err := regexp.Compile(stripped); err == nil && strongPrefix(re2) {
			d.re, d.wordStart = re2, true
		}
	}
	if !strongPrefix(d.re) {
		d.anchorSets = anchorsOf(d.filter)
		if l, err := leadsOf(src); err == nil && l != nil && !l.lineStart && !p.CaseSensitive {
			if d.at, err = l.anchored(); err != nil {
				return branchDraft{}, err
			}
			d.startKeys = l.keys
		}
	}
	d.reDFA = newDFA(d.re, budget)
	if d.at != nil {
		d.atDFA = newDFA(d.at, budget)
	}
	return d, nil
}

// finish numbers a draft's literals: its prefilter's, its leads', and its
// anchors' (which, for a lead branch, become its follow sets, less the
// lead set itself).
func (pc *precheck) finish(d branchDraft) branch {
	b := d.branch
	b.filter = pc.intern(d.filter)
	b.check.layOut(b.filter)
	for _, k := range d.leadKeys {
		b.leads = append(b.leads, pc.intern(&pfNode{op: pfLit, lit: k}).idx)
	}
	for _, k := range d.startKeys {
		b.starts = append(b.starts, pc.intern(&pfNode{op: pfLit, lit: k}).idx)
	}
	for _, set := range d.anchorSets {
		var idx []int
		for _, lit := range set {
			idx = append(idx, pc.index[lit])
		}
		switch {
		case b.leads == nil:
			b.anchors = append(b.anchors, idx)
		case !sameSet(idx, b.leads):
			b.follows = append(b.follows, idx)
			b.followIDs = append(b.followIDs, pc.followSetID(idx))
		}
	}
	return b
}

// followSetID returns the number of a follow set, the same for equal
// sets.
func (pc *precheck) followSetID(set []int) int32 {
	key := fmt.Sprint(slices.Sorted(slices.Values(set)))
	id, ok := pc.followID[key]
	if !ok {
		if pc.followID == nil {
			pc.followID = map[string]int32{}
		}
		id = int32(len(pc.followID))
		pc.followID[key] = id
	}
	return id
}

// strongPrefix reports whether re starts with a literal rare enough for
// the engine's skipping to pay: three bytes or more, and not a stop word.
func strongPrefix(re *regexp.Regexp) bool {
	prefix, _ := re.LiteralPrefix()
	return len(prefix) >= 3 && !stopWords[prefix]
}

// intern copies a prefilter tree, numbering its literals.
func (pc *precheck) intern(n *pfNode) *pfNode {
	out := &pfNode{op: n.op, lit: n.lit}
	if n.op == pfLit {
		at, ok := pc.index[n.lit]
		if !ok {
			at = len(pc.literals)
			pc.index[n.lit] = at
			pc.literals = append(pc.literals, n.lit)
		}
		out.idx = at
	}
	for _, s := range n.subs {
		out.subs = append(out.subs, pc.intern(s))
	}
	return out
}

// upperLiteral finds an upper-case letter a case-sensitive regex would
// need in a literal, which lowered text never has.
func upperLiteral(re *syntax.Regexp) (rune, bool) {
	if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 {
		for _, r := range re.Rune {
			if unicode.IsUpper(r) {
				return r, true
			}
		}
	}
	for _, sub := range re.Sub {
		if r, ok := upperLiteral(sub); ok {
			return r, true
		}
	}
	return 0, false
}

// hit is where a pattern first matched.
type hit struct {
	found  bool
	view   ViewKind
	depth  int
	offset int // byte offset in the view
	length int
}

// scan is the precheck's working state for one text.
type scan struct {
	views []view
	norm  NormaliseReport
	hits  []hit
	found // the literals of the current view
	// positions hold the kept literals' occurrences laid out by literal
	// as occurrences asks for them: literal l's are positions[start[l]-1:]
	// once start[l] > 0 (start is reset, and read, only for the literals
	// that occur).
	positions []int32
	start     []int32
	windows   [][2]int
	// live has the bit of every branch that has no lead set or one of
	// whose lead literals occurs in the view: match tries only those.
	// A pattern's branches are numbered in a row, so its live ones are
	// found with a few words of it.
	live []uint64
	// startsAt is findStart's buffer.
	startsAt []int32
	// followers[id] are where the literals of follow set id occur in the
	// current view, in order, once asked for (followerIDs lists the sets
	// asked for; followerBuf holds their positions).
	followers   [][]int32
	followerIDs []int32
	followerBuf []int32
	// hiddenEncoded and hiddenChars count the patterns (other than
	// obfuscation ones) that matched only in a decoded layer, or only once
	// character tricks were undone.
	hiddenEncoded, hiddenChars int
}

// reset empties s for another text, keeping its buffers.
func (s *scan) reset() {
	s.forgetCounts()
	s.forgetFollowers()
	*s = scan{views: s.views[:0], hits: s.hits[:0],
		found:     found{counts: s.counts[:0], present: s.present[:0], seen: s.seen[:0], chain: s.chain[:0], last: s.last[:0]},
		positions: s.positions[:0], start: s.start[:0], windows: s.windows[:0],
		live: s.live[:0], startsAt: s.startsAt[:0],
		followers: s.followers[:0], followerIDs: s.followerIDs[:0], followerBuf: s.followerBuf[:0]}
}

// run scans every view with every pattern whose scope covers side.
func (pc *precheck) run(s *scan, side Scope) {
	s.hits = resize(s.hits, len(pc.patterns))
	clear(s.hits)
	// When there is a normalised view, it is read first and the input as
	// sent only by the patterns that read raw characters (secrets, personal
	// data). What the normalised view found counts as found in the input
	// when the matched text is there as it stands (seen, not hidden by
	// character tricks).
	normalised := len(s.views) > 1 && s.views[1].kind == ViewNormalised
	for vi := range s.views {
		if normalised && vi == 0 || readBefore(s.views, vi, normalised) {
			continue
		}
		v := &s.views[vi]
		pc.read(s, v)
		for i := range pc.patterns {
			c := &pc.patterns[i]
			if c.branches == nil || s.hits[i].found || !c.Scope.covers(side) {
				continue
			}
			if !c.charViews && v.kind.charsOnly() {
				continue
			}
			if off, n, ok := pc.match(c, s, v); ok {
				s.hits[i] = hit{found: true, view: v.kind, depth: v.depth, offset: off, length: n}
			}
		}
		if normalised && vi == 1 {
			text := &s.views[0]
			unseen := false
			for i := range pc.patterns {
				h := &s.hits[i]
				if !h.found || !pc.patterns[i].charViews {
					continue
				}
				if at := strings.Index(text.lower, v.lower[h.offset:h.offset+h.length]); at >= 0 {
					*h = hit{found: true, view: text.kind, depth: text.depth, offset: at, length: h.length}
				} else {
					unseen = true
				}
			}
			if unseen {
				pc.matchAsSent(s, v, text)
			}
			pc.readWith(pc.raw, s, text)
			for i := range pc.patterns {
				c := &pc.patterns[i]
				if c.branches == nil || c.charViews || !c.Scope.covers(side) {
					continue
				}
				if off, n, ok := pc.match(c, s, text); ok {
					s.hits[i] = hit{found: true, view: text.kind, depth: text.depth, offset: off, length: n}
				}
			}
		}
	}
	for i := range pc.patterns {
		c := &pc.patterns[i]
		h := s.hits[i]
		if !h.found || c.Category == Obfuscation || c.Severity == Info {
			continue
		}
		switch {
		case h.view.encoded():
			s.hiddenEncoded++
		case h.view != ViewText:
			s.hiddenChars++
		}
	}
	for i := range pc.patterns {
		c := &pc.patterns[i]
		if c.signal != nil && c.Scope.covers(side) && float64(c.signal(s)) >= max(c.Threshold, 1) {
			s.hits[i] = hit{found: true, view: ViewNormalised}
		}
	}
}

// charsOnly reports whether only the patterns that read characters
// (charViews) read views of kind k: k undoes character tricks, which
// secrets and personal data do not hide behind.
func (k ViewKind) charsOnly() bool { return k == ViewLeet || k == ViewSpaced || k == ViewROT13 }

// readBefore reports whether views[vi] reads exactly as an earlier view
// that run read with every pattern views[vi] would be read with: the same
// text, neither with regions, the earlier one read by every pattern or
// views[vi] only by those that read characters. The patterns that
// matched nothing there match nothing here, and the others have their
// hit, so views[vi] need not be read. A text often holds the same
// encoded run twice, which decodes to two equal views.
func readBefore(views []view, vi int, normalised bool) bool {
	v := &views[vi]
	if v.regions != nil {
		return false
	}
	for ui := range vi {
		u := &views[ui]
		if normalised && ui == 0 { // read by the raw patterns only
			continue
		}
		if u.regions == nil && u.text == v.text && (!u.kind.charsOnly() || v.kind.charsOnly()) {
			return true
		}
	}
	return false
}

// matchAsSent moves to the text as sent (text) the hits of the normalised
// view (v) that the pattern also makes there, with other words: text
// written in another script, which the normaliser folds where its letters
// look Latin (Cyrillic "сделать" reads "cдeлatь"), is matched by a
// pattern's alternatives in that script, and is not hidden by character
// tricks. Only a hit whose span is not in the text as it stands needs
// this (run); reading the text with every pattern is then worth it.
func (pc *precheck) matchAsSent(s *scan, v, text *view) {
	pc.read(s, text)
	for i := range pc.patterns {
		c, h := &pc.patterns[i], &s.hits[i]
		if !h.found || !c.charViews || h.view != v.kind {
			continue
		}
		if off, n, ok := pc.match(c, s, text); ok {
			*h = hit{found: true, view: text.kind, depth: text.depth, offset: off, length: n}
		}
	}
}

// match runs one pattern's branches on one view, each behind its
// prefilter and only around its anchor's occurrences.
func (pc *precheck) match(c *compiled, s *scan, v *view) (offset, length int, ok bool) {
	if c.MinDigits > 0 && v.digitRun() < c.MinDigits {
		return 0, 0, false
	}
	if len(c.branches) == 0 {
		return 0, 0, false
	}
	first := c.branches[0].id // the pattern's branches are numbered first, first+1, ...
	for id := nextBit(s.live, first, first+len(c.branches)); id >= 0; id = nextBit(s.live, id+1, first+len(c.branches)) {
		b := &c.branches[id-first]
		if !b.check.holds(0, s.present) {
			continue
		}
		text := v.lower
		if c.CaseSensitive {
			text = v.text
		}
		if b.leads != nil {
			if off, n, ok := pc.findLead(c, b, s, v, text); ok {
				return off, n, true
			}
			continue
		}
		ws := pc.windows(b, s, v.lower)
		switch {
		case v.regions != nil:
			ws = clip(ws, v.regions)
		case c.MinDigits > 0 && b.anchors == nil && !strongPrefix(b.re):
			ws = s.digitWindows(v, c.MinDigits)
		}
		for _, w := range ws {
			if off, n, ok := pc.find(c, b, s, v, text, w); ok {
				return off, n, true
			}
		}
	}
	return 0, 0, false
}

// nextBit returns the first bit of set in [from, to), or -1.
func nextBit(set []uint64, from, to int) int {
	for from < to {
		if m := set[from>>6] >> (from & 63); m != 0 {
			if at := from + bits.TrailingZeros64(m); at < to {
				return at
			}
			return -1
		}
		from = from&^63 + 64
	}
	return -1
}

// find looks for a (validated) match of branch b in text[w[0]:w[1]].
func (pc *precheck) find(c *compiled, b *branch, s *scan, v *view, text string, w [2]int) (offset, length int, ok bool) {
	win := text[w[0]:w[1]]
	if !b.reDFA.mayMatch(win) {
		return 0, 0, false
	}
	if c.validate == nil && !b.wordStart {
		if b.starts != nil && !insideWord(text, w[0]) && !insideWord(text, w[1]) {
			return s.findStart(b, text, w)
		}
		loc := b.re.FindStringIndex(win)
		if loc == nil {
			return 0, 0, false
		}
		return w[0] + loc[0], loc[1] - loc[0], true
	}
	for pos, tries := 0, 0; pos <= len(win) && tries < maxCandidates; tries++ {
		m := b.re.FindStringSubmatchIndex(win[pos:])
		if m == nil {
			return 0, 0, false
		}
		start, end := w[0]+pos+m[0], w[0]+pos+m[1]
		next := pos + m[1]
		if m[1] == m[0] {
			next++
		}
		if b.wordStart && !wordBoundary(text, start) {
			pos += m[0] + 1
			continue
		}
		pos = next
		if c.validate == nil {
			return start, end - start, true
		}
		lo, hi := start, end
		for g := 2; b.group && g+1 < len(m); g += 2 { // the first group that took part
			if m[g] >= 0 {
				lo, hi = start+(m[g]-m[0]), start+(m[g+1]-m[0])
				break
			}
		}
		if c.validate(v.text[lo:hi], c.Threshold) { // the validator reads the view's own case
			return start, end - start, true
		}
	}
	return 0, 0, false
}

// findStart finds the first match of branch b in text[w[0]:w[1]], as
// the branch's expression would there, trying its anchored expression
// where one of its start literals occurs in the window, in text order.
// The window must neither start nor end inside a word, so that a start
// literal's word marks read the same in the window as in the view.
func (s *scan) findStart(b *branch, text string, w [2]int) (offset, length int, ok bool) {
	s.startsAt = s.startsAt[:0]
	for _, l := range b.starts {
		pos := s.occurrences(l)
		j := firstFrom(pos, w[0])
		for ; j < len(pos) && int(pos[j]) < w[1]; j++ {
			s.startsAt = append(s.startsAt, pos[j])
		}
	}
	slices.Sort(s.startsAt)
	for i, at := range s.startsAt {
		if i > 0 && at == s.startsAt[i-1] {
			continue
		}
		if !b.atDFA.mayMatch(text[at:w[1]]) {
			continue
		}
		if end := b.atEnd(text[at:w[1]]); end >= 0 {
			return int(at), end, true
		}
	}
	return 0, 0, false
}

// atEnd returns where the match of b's anchored expression in in ends
// (as b.at.FindStringIndex(in)[1]), or -1 when there is none: its dfa
// finds it, or regexp when the dfa's budget is spent.
func (b *branch) atEnd(in string) int {
	if b.atDFA != nil {
		if end, known := b.atDFA.matchEnd(in); known {
			return end
		}
	}
	if loc := b.at.FindStringIndex(in); loc != nil {
		return loc[1]
	}
	return -1
}

// insideWord reports whether offset i of text is between two word bytes.
func insideWord(text string, i int) bool {
	return i > 0 && i < len(text) && isWordByte(text[i-1]) && isWordByte(text[i])
}

// findLead tries branch b where one of its lead literals occurs (within
// the view's regions, when it has them), anchored there.
func (pc *precheck) findLead(c *compiled, b *branch, s *scan, v *view, text string) (offset, length int, ok bool) {
	for _, l := range b.leads {
		for _, at32 := range s.occurrences(l) {
			at := int(at32)
			if b.lineStart && !startsLine(text, at) {
				continue
			}
			if v.scannedTo(at) < 0 || !s.followed(b, at) {
				continue
			}
			win := text[at:min(len(text), at+leadSpan)]
			if !b.atDFA.mayMatch(win) {
				continue
			}
			if c.validate == nil {
				if end := b.atEnd(win); end >= 0 {
					return at, end, true
				}
				continue
			}
			if !b.group { // the validator reads the whole match
				if end := b.atEnd(win); end >= 0 && c.validate(v.text[at:at+end], c.Threshold) {
					return at, end, true
				}
				continue
			}
			m := b.at.FindStringSubmatchIndex(win)
			if m == nil {
				continue
			}
			lo, hi := at, at+m[1]
			for g := 2; b.group && g+1 < len(m); g += 2 { // the first group that took part
				if m[g] >= 0 {
					lo, hi = at+m[g], at+m[g+1]
					break
				}
			}
			if c.validate(v.text[lo:hi], c.Threshold) {
				return at, m[1], true
			}
		}
	}
	return 0, 0, false
}

// read finds the literals in a view's lowered text (only in its regions,
// when it has them): their counts, and where the lead literals occur.
func (pc *precheck) read(s *scan, v *view) { pc.readWith(pc.set, s, v) }

// readWith is read with the given automaton.
func (pc *precheck) readWith(set *literalSet, s *scan, v *view) {
	s.forgetCounts()
	s.counts = resize(s.counts, len(pc.literals))
	s.last = resize(s.last, len(pc.literals))
	s.present = resize(s.present, (len(pc.literals)+63)/64)
	clear(s.present)
	s.start = resize(s.start, len(pc.literals))
	s.seen, s.chain = s.seen[:0], s.chain[:0]
	if v.regions == nil {
		set.scan(v.lower, 0, &s.found)
	}
	for _, r := range v.regions {
		set.scan(v.lower[:r[1]], r[0], &s.found)
	}
	s.positions = slices.Grow(s.positions[:0], len(s.chain))
	s.forgetFollowers()
	s.followers = resize(s.followers, len(pc.followID))
	s.live = resize(s.live, len(pc.plain))
	copy(s.live, pc.plain)
	for _, l := range s.seen { // every lead literal keeps its positions
		s.start[l] = 0
		for _, b := range pc.leadOf[l] {
			s.live[b>>6] |= 1 << (b & 63)
		}
	}
}

// forgetCounts zeroes the counts of the literals seen: the others are
// zero already, which is cheaper to keep than to clear thousands of
// counts per view. (counts' array, even past its length, holds only
// zeros but for them: a fresh array is zero, and reset forgets first.)
func (s *scan) forgetCounts() {
	for _, l := range s.seen {
		s.counts[l] = 0
	}
	s.seen = s.seen[:0]
}

// followed reports whether each of b's follow sets has a literal that
// occurs within leadSpan bytes after at (where a lead occurs).
func (s *scan) followed(b *branch, at int) bool {
	for i, set := range b.follows {
		pos := s.follower(b.followIDs[i], set)
		j := firstFrom(pos, at)
		if j == len(pos) || int(pos[j]) >= at+leadSpan {
			return false
		}
	}
	return true
}

// firstFrom returns the index of the first of the sorted positions pos
// at or after at (len(pos) when none is). It is slices.BinarySearch
// without its generic comparison, which costs more than the search on
// the short lists it is asked of.
func firstFrom(pos []int32, at int) int {
	lo, hi := 0, len(pos)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(pos[mid]) < at {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// forgetFollowers empties followers (every entry nil: only those
// followerIDs lists are not).
func (s *scan) forgetFollowers() {
	for _, id := range s.followerIDs {
		s.followers[id] = nil
	}
	s.followerIDs, s.followerBuf = s.followerIDs[:0], s.followerBuf[:0]
}

// noPositions marks a follow set none of whose literals occurs.
var noPositions = []int32{}

// follower returns where the literals of follow set id (set) occur in
// the current view, merged in order; it merges them the first time it
// is asked.
func (s *scan) follower(id int32, set []int) []int32 {
	if pos := s.followers[id]; pos != nil {
		return pos
	}
	var pos []int32
	k := -1 // where the merged positions start in followerBuf, once there are two lists
	for _, l := range set {
		if s.counts[l] == 0 {
			continue
		}
		occ := s.occurrences(l)
		if pos == nil {
			pos = occ
			continue
		}
		if k < 0 {
			k = len(s.followerBuf)
			s.followerBuf = append(s.followerBuf, pos...)
		}
		s.followerBuf = append(s.followerBuf, occ...)
		pos = s.followerBuf[k:]
	}
	if k >= 0 {
		slices.Sort(pos)
	}
	if pos == nil {
		pos = noPositions
	}
	s.followers[id] = pos
	s.followerIDs = append(s.followerIDs, id)
	return pos
}

// sameSet reports whether a and b hold the same indices.
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// occurrences returns where literal l (one the set keeps positions of)
// occurs in the current view, in text order. They are laid out from
// their chain the first time they are asked for.
func (s *scan) occurrences(l int) []int32 {
	n := s.counts[l]
	if n == 0 {
		return nil
	}
	if at := s.start[l]; at > 0 {
		return s.positions[at-1 : at-1+n]
	}
	at := len(s.positions)
	s.positions = s.positions[:at+int(n)] // readWith made room for every occurrence
	for i, k := at+int(n)-1, s.last[l]; k >= 0; i, k = i-1, s.chain[k].prev {
		s.positions[i] = s.chain[k].at
	}
	s.start[l] = int32(at + 1)
	return s.positions[at : at+int(n)]
}

// clip cuts sorted windows down to their overlap with sorted regions, in
// place.
func clip(ws, regions [][2]int) [][2]int {
	out := ws[:0]
	for _, w := range ws {
		for _, r := range regions {
			lo, hi := max(w[0], r[0]), min(w[1], r[1])
			if lo < hi {
				out = append(out, [2]int{lo, hi})
			}
		}
	}
	return out
}

// startsLine reports whether only spaces and tabs stand between the start
// of text[i]'s line and i.
func startsLine(text string, i int) bool {
	for i > 0 {
		switch text[i-1] {
		case '\n':
			return true
		case ' ', '\t', '\r', '\f':
			i--
		default:
			return false
		}
	}
	return true
}

// scannedTo returns where the scan's record of v's literals ends for an
// offset i that it read: the view's end, or on a view with regions the end
// of i's region (the scan found every occurrence that lies inside one).
// It returns -1 for an offset in no region, which the scan did not read.
func (v *view) scannedTo(i int) int {
	if v.regions == nil {
		return len(v.lower)
	}
	for _, r := range v.regions {
		if i >= r[0] && i < r[1] {
			return r[1]
		}
	}
	return -1
}

// digitWindows returns windows around the view's runs of at least min
// digits (see view.digitRun): the runs a digit pattern can match, with
// room before them for a label ("passport number:") and after for a
// suffix.
func (s *scan) digitWindows(v *view, min int) [][2]int {
	s.windows = s.windows[:0]
	runs := v.digitRuns()
	for k := range runs {
		if runs[k].digits < min {
			continue
		}
		w := v.digitWindow(&runs[k])
		if n := len(s.windows); n > 0 && w[0] <= s.windows[n-1][1] {
			s.windows[n-1][1] = max(s.windows[n-1][1], w[1])
			continue
		}
		s.windows = append(s.windows, w)
	}
	return s.windows
}

// digitWindow returns the window of r, one of the view's digit runs:
// with room before it for a label ("passport number:") and after it for
// a suffix. It is widened once (widenStart may read a few hundred bytes),
// though every digit pattern asks for it.
func (v *view) digitWindow(r *digitSpan) [2]int {
	if !r.windowed {
		r.window = [2]int{widenStart(v.lower, r.start-48, r.start), widenEnd(v.lower, r.end+8)}
		r.windowed = true
	}
	return r.window
}

// pfStep is a prefilter node laid out in preorder: its subtree ends
// before end; a literal's index is lit. The literals of an AND or an OR
// are one step (pfEvery, pfAny) whose literals are the bits of
// masks[lit:lit+n]: an AND or an OR of literals alone is that step, and
// one with deeper parts too has it as its first part.
type pfStep struct {
	op     pfOp
	lit, n int32
	end    int32
}

// litMask is one word of a set of literals: the bits of literals
// 64*word to 64*word+63.
type litMask struct {
	word int32
	bits uint64
}

// check is a branch's prefilter laid out for holds.
type check struct {
	steps []pfStep
	masks []litMask
}

// layOut appends n's subtree to c, in preorder.
func (c *check) layOut(n *pfNode) {
	at := len(c.steps)
	if n.op != pfAnd && n.op != pfOr {
		c.steps = append(c.steps, pfStep{op: n.op, lit: int32(n.idx), end: int32(at + 1)})
		return
	}
	var lits []int
	var deep []*pfNode
	for _, sub := range n.subs {
		if sub.op == pfLit {
			lits = append(lits, sub.idx)
		} else {
			deep = append(deep, sub)
		}
	}
	set := pfEvery
	if n.op == pfOr {
		set = pfAny
	}
	if len(deep) == 0 { // the node is its literals
		c.addSet(set, lits)
		return
	}
	c.steps = append(c.steps, pfStep{op: n.op})
	// The parts of an AND or OR are independent: the literals go first,
	// then the parts that are one step, so that holds settles the node
	// with them when it can before it walks the deeper parts. Of those,
	// an AND tries the ORs of fewest literals first, the likeliest to be
	// false, and an OR those of most, the likeliest to be true.
	if len(lits) > 0 {
		c.addSet(set, lits)
	}
	size := func(n *pfNode) int {
		if n.op == pfOr {
			return len(n.subs)
		}
		return 0
	}
	slices.SortStableFunc(deep, func(a, b *pfNode) int {
		if fa, fb := flat(a), flat(b); fa != fb {
			return boolInt(!fa) - boolInt(!fb)
		}
		if n.op == pfOr {
			return size(b) - size(a)
		}
		return size(a) - size(b)
	})
	for _, sub := range deep {
		c.layOut(sub)
	}
	c.steps[at].end = int32(len(c.steps))
}

// addSet appends a step of the given op (pfAny or pfEvery) over the
// literals lits.
func (c *check) addSet(op pfOp, lits []int) {
	start := len(c.masks)
	for _, l := range lits {
		w := int32(l >> 6)
		k := slices.IndexFunc(c.masks[start:], func(m litMask) bool { return m.word == w })
		if k < 0 {
			k = len(c.masks) - start
			c.masks = append(c.masks, litMask{word: w})
		}
		c.masks[start+k].bits |= 1 << (l & 63)
	}
	at := len(c.steps)
	c.steps = append(c.steps, pfStep{op: op, lit: int32(start), n: int32(len(c.masks) - start), end: int32(at + 1)})
}

// flat reports whether layOut makes n one step: a literal, or an AND or
// an OR of literals alone.
func flat(n *pfNode) bool {
	return n.op == pfLit || (n.op == pfOr || n.op == pfAnd) && !slices.ContainsFunc(n.subs, func(sub *pfNode) bool { return sub.op != pfLit })
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// holds evaluates the prefilter laid out in c from step i on the view's
// literals (present has the bit of every literal that occurs).
func (c *check) holds(i int, present []uint64) bool {
	n := c.steps[i]
	if n.op != pfAnd && n.op != pfOr {
		return c.leaf(n, present)
	}
	want := n.op == pfOr // the answer a sub gives that settles the node
	for j := i + 1; j < int(n.end); j = int(c.steps[j].end) {
		var ok bool
		if sub := c.steps[j]; sub.op != pfAnd && sub.op != pfOr {
			ok = c.leaf(sub, present)
		} else {
			ok = c.holds(j, present)
		}
		if ok == want {
			return want
		}
	}
	return !want
}

// leaf evaluates a step that is no AND or OR.
func (c *check) leaf(n pfStep, present []uint64) bool {
	switch n.op {
	case pfLit:
		return present[n.lit>>6]&(1<<(n.lit&63)) != 0
	case pfAny:
		for _, m := range c.masks[n.lit : n.lit+n.n] {
			if present[m.word]&m.bits != 0 {
				return true
			}
		}
		return false
	case pfEvery:
		for _, m := range c.masks[n.lit : n.lit+n.n] {
			if present[m.word]&m.bits != m.bits {
				return false
			}
		}
		return true
	}
	return true
}

// windows returns the merged ranges of lower, matchSpan bytes either side
// of every occurrence of b's least frequent anchor, widened so a window
// does not start or end inside a word; the whole view when b has no
// anchor.
func (pc *precheck) windows(b *branch, s *scan, lower string) [][2]int {
	s.windows = s.windows[:0]
	var anchor []int
	least := int32(-1)
	for _, set := range b.anchors {
		n := int32(0)
		for _, l := range set {
			n += s.counts[l]
		}
		if least < 0 || n < least {
			anchor, least = set, n
		}
	}
	if anchor == nil || int(least)*2*matchSpan > len(lower) { // windows would cover it all
		return append(s.windows, [2]int{0, len(lower)})
	}
	for _, l := range anchor {
		if s.counts[l] == 0 {
			continue
		}
		lit := pc.set.lits[l]
		for at := lit.index(lower, 0); at >= 0; at = lit.index(lower, at+len(lit.core)) {
			s.windows = append(s.windows, [2]int{widenStart(lower, at-matchSpan, at), widenEnd(lower, at+len(lit.core)+matchSpan)})
		}
	}
	slices.SortFunc(s.windows, func(a, b [2]int) int { return a[0] - b[0] })
	merged := s.windows[:0]
	for _, w := range s.windows {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	s.windows = merged
	return merged
}

// widenStart moves a window's start back to the start of a line (if one
// is within matchSpan bytes) or of a word (within 64 bytes), or to 0, so
// that ^ and \b read the window as they would the view. at is the anchor.
func widenStart(s string, i, at int) int {
	if i <= 0 {
		return 0
	}
	if nl := strings.LastIndexByte(s[max(0, i-matchSpan):at], '\n'); nl >= 0 && max(0, i-matchSpan)+nl+1 <= i {
		return max(0, i-matchSpan) + nl + 1
	}
	for j := i; j > 0 && j > i-64; j-- {
		if c := s[j-1]; c == ' ' || c == '\n' || c == '\t' {
			return j
		}
	}
	return i
}

// widenEnd moves a window's end forward to white space (at most 64 bytes),
// or to the end.
func widenEnd(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for j := i; j < len(s) && j < i+64; j++ {
		if c := s[j]; c == ' ' || c == '\n' || c == '\t' {
			return j
		}
	}
	return i
}

// resize returns s with length n, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
