package eval

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Go's regexp has no DFA. An expression whose program has more than 500
// instructions runs on its general NFA, which walks every live thread at
// every byte: the large branches (a lead, up to ten words, then one of
// dozens of verbs and objects) cost tens of microseconds per attempt that
// way. The smaller ones run on its backtracker, which tries every start
// of a window in turn. Most attempts find nothing. A dfa answers only
// whether a match exists, from the same compiled program, building its
// states as the inputs ask for them; the expression itself runs only when
// one does, and so still decides the match's bounds and groups.

// maxDFAStates bounds the states the dfas of one precheck hold together
// (a few hundred bytes each: about 25 MB for the 60,000 or so that the
// whole corpus, dev and held-out, builds; at most about 55 MB). A dfa
// that needs one more once they are all taken drops its own and starts
// again, and when that is not enough, those of every other dfa not busy
// building a state (as RE2 flushes its cache): traffic of many distinct
// texts then rebuilds states instead of leaving each attempt to regexp,
// which costs tens of microseconds (at 1<<15 the corpus filled the
// bound, and the dev mix ran at a third of its speed before the flush).
const maxDFAStates = 1 << 17

// dfaBudget counts the states the dfas of one precheck hold, up to
// limit.
type dfaBudget struct {
	used  atomic.Int64
	limit int64
	mu    sync.Mutex
	dfas  []*dfa // the built dfas counted here, whose states a flush drops
}

// join counts d's states from now on; d is built.
func (b *dfaBudget) join(d *dfa) {
	b.mu.Lock()
	b.dfas = append(b.dfas, d)
	b.mu.Unlock()
}

// room takes one state for d, making room when the budget is spent: d's
// own states first, then every other dfa's that is not building one
// (TryLock: two dfas flushing at once never wait on each other). A
// search under way keeps the states it holds. d.mu is held; false when
// there is still no room.
func (d *dfa) room() bool {
	b := d.budget
	for try := range 3 {
		if b.used.Add(1) <= b.limit {
			return true
		}
		b.used.Add(-1)
		switch try {
		case 0:
			d.drop()
		case 1:
			b.mu.Lock()
			dfas := b.dfas
			b.mu.Unlock()
			for _, e := range dfas {
				if e != d && e.mu.TryLock() {
					e.drop()
					e.mu.Unlock()
				}
			}
		}
	}
	return false
}

// drop drops d's states, those of its matches and those of its match
// ends, and gives them back to the budget. d.mu is held.
func (d *dfa) drop() {
	d.budget.used.Add(-int64(len(d.states)))
	d.states = map[string]*dstate{}
	for i := range d.start.next {
		d.start.next[i].Store(nil)
	}
	d.start.other = nil
	if d.order != nil {
		d.budget.used.Add(-int64(len(d.order.states)))
		d.order.states = map[string]*estate{}
		for i := range d.order.start.next {
			d.order.start.next[i].Store(nil)
		}
		d.order.start.other = nil
	}
}

// dfa decides whether a compiled expression matches a string: a lazily
// built subset construction over its program. It is safe for concurrent
// use: states are added under mu, transitions are read without it.
type dfa struct {
	re       *regexp.Regexp
	once     sync.Once    // builds what follows on first use
	prog     *syntax.Prog // nil when re's source does not compile again (it does)
	anchored bool         // the program matches only at the start of its input
	// classes[c] is the class of the ASCII byte c: the bytes of a class
	// are read alike by every instruction and assertion of the program,
	// so a state has one transition per class.
	classes  [utf8.RuneSelf]uint8
	nclasses int
	budget   *dfaBudget
	mu       sync.Mutex
	states   map[string]*dstate // by key (pending instructions and the previous rune's class)
	start    *dstate
	order    *endDFA // where matches end (matchEnd), once asked
}

// dstate is a set of instructions waiting for the closure at the next
// position (which needs the next rune to read the empty-width
// assertions), and the class of the rune before it.
type dstate struct {
	pcs  []uint32
	prev int8 // a rune of the previous rune's class, for EmptyOpContext (-1 at the start)
	// next[k] is the state after an ASCII byte of class k: nil when not
	// yet built, matched when a match ends before or at the byte, dead
	// when none can come.
	next []atomic.Pointer[dstate]
	// other holds the states after runes beyond ASCII, under the dfa's mu.
	other map[rune]*dstate
	// atEnd is 1 when a match ends at the end of the input read so far,
	// 2 when none does, 0 when not yet known.
	atEnd atomic.Int32
	// final marks the sentinels, matched and dead: match stops there.
	final bool
}

// matched is the sentinel state: a match has been found.
var matched = &dstate{final: true}

// dead is the sentinel state of an anchored dfa that has no instruction
// left to follow (and is not at its start): no match can come.
var dead = &dstate{final: true}

// mayMatch reports whether the expression of d may match text: false
// only when d knows it does not; always true for a nil d.
func (d *dfa) mayMatch(text string) bool {
	if d == nil {
		return true
	}
	found, known := d.match(text)
	return found || !known
}

// newDFA returns the dfa of re, counting its states in budget. It is
// built on first use (a precheck has hundreds, and a short-lived
// evaluator uses few), from the same program regexp compiles.
func newDFA(re *regexp.Regexp, budget *dfaBudget) *dfa {
	return &dfa{re: re, budget: budget}
}

// build compiles d's program and its start state.
func (d *dfa) build() {
	tree, err := syntax.Parse(d.re.String(), syntax.Perl)
	if err != nil {
		return
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return
	}
	d.prog, d.anchored, d.states = prog, prog.StartCond()&syntax.EmptyBeginText != 0, map[string]*dstate{}
	d.byteClasses()
	d.start = &dstate{pcs: []uint32{uint32(prog.Start)}, prev: -1, next: make([]atomic.Pointer[dstate], d.nclasses)}
	d.budget.join(d)
}

// byteClasses sorts the ASCII bytes into classes: bytes that every rune
// instruction takes or refuses alike, and that the assertions read alike
// (word character, newline or other).
func (d *dfa) byteClasses() {
	var single [utf8.RuneSelf]bool // the bytes a one-rune instruction takes
	var sets []*syntax.Inst        // the instructions with distinct rune sets
	seen := map[string]bool{}
	for i := range d.prog.Inst {
		in := &d.prog.Inst[i]
		switch in.Op {
		case syntax.InstRune1:
			if r := in.Rune[0]; r >= 0 && r < utf8.RuneSelf {
				single[r] = true
			}
		case syntax.InstRune:
			if key := fmt.Sprint(in.Arg, in.Rune); !seen[key] {
				seen[key] = true
				sets = append(sets, in)
			}
		}
	}
	ids := map[string]uint8{}
	for c := range rune(utf8.RuneSelf) {
		sig := []byte{byte(class(c)), 0}
		if single[c] {
			sig[1] = byte(c)
		}
		for _, in := range sets {
			sig = append(sig, boolByte(in.MatchRune(c)))
		}
		id, ok := ids[string(sig)]
		if !ok {
			id = uint8(len(ids))
			ids[string(sig)] = id
		}
		d.classes[c] = id
	}
	d.nclasses = len(ids)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// state returns the state of pending instructions pcs after a rune of
// class prev, adding it; nil when the budget has no room for it. d.mu is
// held.
func (d *dfa) state(pcs []uint32, prev int8) *dstate {
	key := make([]byte, 1, 1+4*len(pcs))
	key[0] = byte(prev)
	for _, pc := range pcs {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	if s, ok := d.states[string(key)]; ok {
		return s
	}
	if !d.room() {
		return nil
	}
	s := &dstate{pcs: pcs, prev: prev, next: make([]atomic.Pointer[dstate], d.nclasses)}
	d.states[string(key)] = s
	return s
}

// class is a rune that stands for r in EmptyOpContext's eyes: the start
// or end of the input, a newline, a word character or another one.
func class(r rune) int8 {
	switch {
	case r < 0:
		return -1
	case r == '\n':
		return '\n'
	case syntax.IsWordChar(r):
		return 'a'
	}
	return ' '
}

// closure follows s's pending instructions (and, unanchored, the
// program's start) through the instructions that read no rune, with the
// empty-width assertions read between s's previous rune and next (-1 at
// the end), and returns the instructions that read a rune, in program
// order, or matched.
func (d *dfa) closure(s *dstate, next rune) ([]uint32, bool) {
	stack := slices.Clone(s.pcs)
	if !d.anchored || s == d.start {
		stack = append(stack, uint32(d.prog.Start))
	}
	out, matched := d.follow(stack, syntax.EmptyOpContext(rune(s.prev), next))
	if matched {
		return nil, true
	}
	slices.Sort(out)
	return out, false
}

// takes reports whether the rune instruction in reads r.
func takes(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRune:
		return in.MatchRune(r)
	case syntax.InstRune1:
		return r == in.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// step returns the state after rune r from s, or matched, or dead, or
// nil when the budget has no room for it.
func (d *dfa) step(s *dstate, r rune) *dstate {
	d.mu.Lock()
	defer d.mu.Unlock()
	pcs, ok := d.closure(s, r)
	if ok {
		return matched
	}
	var next []uint32
	for _, pc := range pcs {
		in := &d.prog.Inst[pc]
		if takes(in, r) {
			next = append(next, in.Out)
		}
	}
	slices.Sort(next)
	ns := d.state(slices.Compact(next), class(r))
	if ns != nil && d.anchored && len(ns.pcs) == 0 && ns != d.start {
		return dead
	}
	return ns
}

// stepOther is step for a rune beyond ASCII, remembered in s.other.
func (d *dfa) stepOther(s *dstate, r rune) *dstate {
	return remembered(d, &s.other, r, func() *dstate { return d.step(s, r) })
}

// remembered returns the step on rune r kept in *other, taking it from
// step (which locks d.mu itself) and keeping it when it is not there.
func remembered[T any](d *dfa, other *map[rune]*T, r rune, step func() *T) *T {
	d.mu.Lock()
	next, ok := (*other)[r]
	d.mu.Unlock()
	if ok {
		return next
	}
	if next = step(); next != nil {
		d.mu.Lock()
		if *other == nil {
			*other = map[rune]*T{}
		}
		(*other)[r] = next
		d.mu.Unlock()
	}
	return next
}

// ends reports whether a match ends where s stands at the end of the
// input.
func (d *dfa) ends(s *dstate) bool {
	return d.endsAt(&s.atEnd, func() bool { _, ok := d.closure(s, -1); return ok })
}

// endsAt returns what atEnd records (1: a match ends at the end of the
// input, 2: none does), asking closure under d.mu and recording its
// answer the first time.
func (d *dfa) endsAt(atEnd *atomic.Int32, closure func() bool) bool {
	switch atEnd.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	d.mu.Lock()
	ok := closure()
	d.mu.Unlock()
	if ok {
		atEnd.Store(1)
	} else {
		atEnd.Store(2)
	}
	return ok
}

// match reports whether the expression matches text (as regexp's
// MatchString would), and false for known when the budget has no room
// for the states it needs.
func (d *dfa) match(text string) (found, known bool) {
	if d.once.Do(d.build); d.prog == nil {
		return false, false
	}
	// The loop reads a known transition of an ASCII byte; the rest is
	// left to stepSlow, out of line, so that the loop keeps its
	// variables in registers.
	s, classes := d.start, &d.classes
	for i := 0; i < len(text); {
		var next *dstate
		if c := text[i]; c < utf8.RuneSelf {
			next = s.next[classes[c]].Load()
		}
		if next == nil {
			var w int
			if next, w = d.stepSlow(s, text[i:]); next == nil {
				return false, false
			}
			i += w
		} else {
			i++
		}
		if next.final {
			return next == matched, true
		}
		s = next
	}
	return d.ends(s), true
}

// stepSlow is match's step from s on the rune text starts with, where
// its transition is not yet built or the rune is beyond ASCII. It
// returns the next state and the rune's width; nil when the budget has
// no room for the state.
//
//go:noinline
func (d *dfa) stepSlow(s *dstate, text string) (*dstate, int) {
	if c := text[0]; c < utf8.RuneSelf {
		next := d.step(s, rune(c))
		if next != nil {
			s.next[d.classes[c]].Store(next)
		}
		return next, 1
	}
	r, w := utf8.DecodeRuneInString(text)
	return d.stepOther(s, r), w
}

// Match ends. Where the dfa says an anchored expression matches, the
// precheck needs where its match ends, as regexp would find it: the
// leftmost-first match, whose alternatives and repetitions are preferred
// in the expression's order. regexp's general NFA costs tens of
// microseconds for that on the large branches. endDFA finds it from the
// same program in one pass, as RE2's dfa does: its states are the
// pending instructions in order of preference, and a match cuts off
// every instruction less preferred than it; the match ends where the
// last one is found, once no instruction is left.

// endDFA is the leftmost-first dfa of an anchored program, built lazily
// beside d's own states (under d.mu, counted in d.budget).
type endDFA struct {
	states map[string]*estate
	start  *estate
}

// estate is an ordered set of pending instructions (most preferred
// first) and the class of the rune before it.
type estate struct {
	pcs  []uint32
	prev int8
	// next[k] is the step on an ASCII byte of class k, nil when not yet
	// built.
	next []atomic.Pointer[estep]
	// other holds the steps on runes beyond ASCII, under the dfa's mu.
	other map[rune]*estep
	// atEnd is 1 when a match ends at the end of the input, 2 when none
	// does, 0 when not yet known.
	atEnd atomic.Int32
}

// estep is a step of an endDFA: whether a match ends before the rune,
// and the state after it (nil: no instruction is left).
type estep struct {
	match bool
	to    *estate
}

// matchEnd returns where the leftmost-first match of d's anchored
// expression in text ends (as regexp's FindStringIndex(text)[1]), or -1
// when it does not match; known is false when the budget has no room
// for the states it needs, or the expression is not anchored.
func (d *dfa) matchEnd(text string) (end int, known bool) {
	if d.once.Do(d.build); d.prog == nil || !d.anchored {
		return -1, false
	}
	d.mu.Lock()
	if d.order == nil {
		d.order = &endDFA{states: map[string]*estate{}}
		d.order.start = &estate{pcs: []uint32{uint32(d.prog.Start)}, prev: -1, next: make([]atomic.Pointer[estep], d.nclasses)}
	}
	s := d.order.start
	d.mu.Unlock()
	end = -1
	for i := 0; i < len(text); {
		c := text[i]
		var st *estep
		if c < utf8.RuneSelf {
			k := d.classes[c]
			if st = s.next[k].Load(); st == nil {
				if st = d.estepOn(s, rune(c)); st == nil {
					return -1, false
				}
				s.next[k].Store(st)
			}
			if st.match {
				end = i
			}
			i++
		} else {
			r, w := utf8.DecodeRuneInString(text[i:])
			if st = d.estepOther(s, r); st == nil {
				return -1, false
			}
			if st.match {
				end = i
			}
			i += w
		}
		if st.to == nil {
			return end, true
		}
		s = st.to
	}
	if d.eends(s) {
		end = len(text)
	}
	return end, true
}

// eclosure follows s's pending instructions, most preferred first,
// through the instructions that read no rune (with the empty-width
// assertions read between s's previous rune and next, -1 at the end),
// as regexp's NFA adds threads: depth first, an alternative's first
// branch before its second. It returns the instructions that read a
// rune, in order of preference, up to the first match (which cuts off
// the rest), and whether there is one.
func (d *dfa) eclosure(s *estate, next rune) ([]uint32, bool) {
	stack := make([]uint32, 0, len(s.pcs)+8)
	for i := len(s.pcs) - 1; i >= 0; i-- {
		stack = append(stack, s.pcs[i])
	}
	return d.follow(stack, syntax.EmptyOpContext(rune(s.prev), next))
}

// follow walks the program from the instructions on stack (the last
// first) through those that read no rune, with the empty-width
// assertions flag admits, and returns the instructions that read a rune
// in the order it reaches them, up to the first match if one is reached
// (matched).
func (d *dfa) follow(stack []uint32, flag syntax.EmptyOp) (out []uint32, matched bool) {
	seen := make([]bool, len(d.prog.Inst))
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flag == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstMatch:
			return out, true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			out = append(out, pc)
		}
	}
	return out, false
}

// estepOn returns the step on rune r from s, or nil when the budget has
// no room for the state after it.
func (d *dfa) estepOn(s *estate, r rune) *estep {
	d.mu.Lock()
	defer d.mu.Unlock()
	pcs, match := d.eclosure(s, r)
	var next []uint32
	for _, pc := range pcs {
		in := &d.prog.Inst[pc]
		if takes(in, r) && !slices.Contains(next, in.Out) { // the first, most preferred, stands
			next = append(next, in.Out)
		}
	}
	if len(next) == 0 {
		return &estep{match: match}
	}
	to := d.estate(next, class(r))
	if to == nil {
		return nil
	}
	return &estep{match: match, to: to}
}

// estate returns the ordered state of pending instructions pcs after a
// rune of class prev, adding it; nil when the budget has no room for
// it. d.mu is held.
func (d *dfa) estate(pcs []uint32, prev int8) *estate {
	key := make([]byte, 1, 1+4*len(pcs))
	key[0] = byte(prev)
	for _, pc := range pcs {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	if s, ok := d.order.states[string(key)]; ok {
		return s
	}
	if !d.room() {
		return nil
	}
	s := &estate{pcs: pcs, prev: prev, next: make([]atomic.Pointer[estep], d.nclasses)}
	d.order.states[string(key)] = s
	return s
}

// estepOther is estepOn for a rune beyond ASCII, remembered in s.other.
func (d *dfa) estepOther(s *estate, r rune) *estep {
	return remembered(d, &s.other, r, func() *estep { return d.estepOn(s, r) })
}

// eends reports whether a match ends where s stands at the end of the
// input.
func (d *dfa) eends(s *estate) bool {
	return d.endsAt(&s.atEnd, func() bool { _, ok := d.eclosure(s, -1); return ok })
}
