package eval

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Go's regexp has no DFA: an expression whose program has more than 500
// instructions runs on its general NFA, which walks every live thread at
// every byte. The large branches (a lead, up to ten words, then one of
// dozens of verbs and objects) cost tens of microseconds per attempt that
// way, and most attempts find nothing. A dfa answers only whether a match
// exists, from the same compiled program, building its states as the
// input asks for them; the expression itself runs only when one does, and
// so still decides the match's bounds and groups.

// maxDFAStates bounds a dfa's states; past it, the dfa gives up and every
// question goes to the expression.
const maxDFAStates = 4096

// dfa decides whether a compiled expression matches a string: a lazily
// built subset construction over its program. It is safe for concurrent
// use: states are added under mu, transitions are read without it.
type dfa struct {
	prog     *syntax.Prog
	anchored bool // the program matches only at the start of its input
	mu       sync.Mutex
	states   map[string]*dstate // by key (pending instructions and the previous rune's class)
	start    *dstate
	full     atomic.Bool // maxDFAStates reached
}

// dstate is a set of instructions waiting for the closure at the next
// position (which needs the next rune to read the empty-width
// assertions), and the class of the rune before it.
type dstate struct {
	pcs  []uint32
	prev int8 // a rune of the previous rune's class, for EmptyOpContext (-1 at the start)
	// next[c] is the state after the ASCII byte c: nil when not yet built,
	// matched when a match ends before or at c.
	next [utf8.RuneSelf]atomic.Pointer[dstate]
	// other holds the states after runes beyond ASCII, under the dfa's mu.
	other map[rune]*dstate
	// atEnd is 1 when a match ends at the end of the input read so far,
	// 2 when none does, 0 when not yet known.
	atEnd atomic.Int32
}

// matched is the sentinel state: a match has been found.
var matched = &dstate{}

// dfaFor returns the dfa of re when its program is too large for
// regexp's backtracker (which it runs on small programs and short
// inputs), and nil otherwise.
func dfaFor(re *regexp.Regexp) (*dfa, error) {
	d, err := newDFA(re)
	if err != nil || len(d.prog.Inst) <= maxBacktrackProg {
		return nil, err
	}
	return d, nil
}

// maxBacktrackProg is the largest program regexp runs on its backtracker.
const maxBacktrackProg = 500

// mayMatch reports whether the expression of d may match text: false
// only when d knows it does not; always true for a nil d.
func (d *dfa) mayMatch(text string) bool {
	if d == nil {
		return true
	}
	found, known := d.match(text)
	return found || !known
}

// newDFA builds the dfa of re, from the same program regexp compiles.
func newDFA(re *regexp.Regexp) (*dfa, error) {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return nil, err
	}
	d := &dfa{prog: prog, anchored: prog.StartCond()&syntax.EmptyBeginText != 0, states: map[string]*dstate{}}
	d.start = d.state([]uint32{uint32(prog.Start)}, -1)
	return d, nil
}

// state returns the state of pending instructions pcs after a rune of
// class prev, adding it; nil when the dfa is full. d.mu is held, or d is
// being built.
func (d *dfa) state(pcs []uint32, prev int8) *dstate {
	key := make([]byte, 1, 1+4*len(pcs))
	key[0] = byte(prev)
	for _, pc := range pcs {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	if s, ok := d.states[string(key)]; ok {
		return s
	}
	if len(d.states) >= maxDFAStates {
		d.full.Store(true)
		return nil
	}
	s := &dstate{pcs: pcs, prev: prev}
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
	flag := syntax.EmptyOpContext(rune(s.prev), next)
	seen := make([]bool, len(d.prog.Inst))
	var out []uint32
	stack := slices.Clone(s.pcs)
	if !d.anchored || s == d.start {
		stack = append(stack, uint32(d.prog.Start))
	}
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
			return nil, true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			out = append(out, pc)
		}
	}
	slices.Sort(out)
	return out, false
}

// step returns the state after rune r from s, or matched, or nil when
// the dfa is full.
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
		var take bool
		switch in.Op {
		case syntax.InstRune:
			take = in.MatchRune(r)
		case syntax.InstRune1:
			take = r == in.Rune[0]
		case syntax.InstRuneAny:
			take = true
		case syntax.InstRuneAnyNotNL:
			take = r != '\n'
		}
		if take {
			next = append(next, in.Out)
		}
	}
	slices.Sort(next)
	return d.state(slices.Compact(next), class(r))
}

// stepOther is step for a rune beyond ASCII, remembered in s.other.
func (d *dfa) stepOther(s *dstate, r rune) *dstate {
	d.mu.Lock()
	next, ok := s.other[r]
	d.mu.Unlock()
	if ok {
		return next
	}
	if next = d.step(s, r); next != nil {
		d.mu.Lock()
		if s.other == nil {
			s.other = map[rune]*dstate{}
		}
		s.other[r] = next
		d.mu.Unlock()
	}
	return next
}

// ends reports whether a match ends where s stands at the end of the
// input.
func (d *dfa) ends(s *dstate) bool {
	switch s.atEnd.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	d.mu.Lock()
	_, ok := d.closure(s, -1)
	d.mu.Unlock()
	if ok {
		s.atEnd.Store(1)
	} else {
		s.atEnd.Store(2)
	}
	return ok
}

// match reports whether the expression matches text (as regexp's
// MatchString would), and false for known when the dfa is full and cannot
// tell.
func (d *dfa) match(text string) (found, known bool) {
	if d.full.Load() {
		return false, false
	}
	s := d.start
	for i := 0; i < len(text); {
		if d.anchored && len(s.pcs) == 0 && s != d.start {
			return false, true
		}
		c := text[i]
		var next *dstate
		if c < utf8.RuneSelf {
			if next = s.next[c].Load(); next == nil {
				if next = d.step(s, rune(c)); next == nil {
					return false, false
				}
				s.next[c].Store(next)
			}
			i++
		} else {
			r, w := utf8.DecodeRuneInString(text[i:])
			if next = d.stepOther(s, r); next == nil {
				return false, false
			}
			i += w
		}
		if next == matched {
			return true, true
		}
		s = next
	}
	return d.ends(s), true
}
