package eval

import (
	"regexp/syntax"
	"slices"
	"strings"
)

// Gates. A lead branch's follow sets come from its prefilter, whose
// literals are at least minLiteral bytes long: an alternation with one
// shorter alternative ("ai", "c4", "my ex") gives none, and the attempts
// its near misses cost are made anyway. Its gates are the sets of
// gateOf's anchors, whose literals may be two bytes long: too common to
// say whether a view is worth reading, but found near a lead they say
// whether an attempt there is. A gate literal's word marks are checked as
// the anchored expression sees its window (which ends leadSpan bytes
// after the lead), and on a view with regions, whose scan read only them,
// the window itself is searched where it reaches past the lead's region:
// so they hold wherever a match is.
//
// A core shorter than minLiteral ("th", "in") is not in the literal
// automaton: it occurs every few bytes, and each occurrence would cost the
// scan of every view an output. The window is searched for it instead,
// which costs little since gated asks only near a lead that its follow
// sets let through. Longer cores are mostly absent from a view, which
// their count says at once.

// gate is one literal of a gate set: its core and the word boundaries it
// needs at its ends.
type gate struct {
	// lit is the core's index, a literal whose positions the scan keeps;
	// -1 for a core shorter than minLiteral, which gated searches for.
	lit                int
	core               string
	wordStart, wordEnd bool
}

// gatesOf returns a lead branch's gate sets: the anchor sets of gateOf
// that hold a literal shorter than minLiteral (the others are its follow
// sets' kind), and their word bounds (see wordBounds; -1, none, for all
// unless words).
func gatesOf(tree *syntax.Regexp, words bool) (sets [][]string, bounds []int) {
	for _, set := range anchorsOf(gateOf(tree)) {
		if slices.ContainsFunc(set, func(k string) bool { return len(parseLiteral(k).core) < minLiteral }) {
			sets = append(sets, set)
		}
	}
	bounds = make([]int, len(sets))
	for i := range bounds {
		bounds[i] = -1
	}
	if words {
		bounds = wordBounds(tree, sets, gateOf)
	}
	return sets, bounds
}

// internGates numbers the gates' cores of minLiteral bytes or more.
func (pc *precheck) internGates(sets [][]string) [][]gate {
	var out [][]gate
	for _, set := range sets {
		var gs []gate
		for _, key := range set {
			l := parseLiteral(key)
			g := gate{lit: -1, core: l.core, wordStart: l.wordStart, wordEnd: l.wordEnd}
			if len(l.core) >= minLiteral {
				g.lit = pc.intern(&pfNode{op: pfLit, lit: l.core}).idx
			}
			gs = append(gs, g)
		}
		out = append(out, gs)
	}
	return out
}

// gated reports whether each of b's gate sets has a literal that occurs
// within b's window at at (leadSpan bytes), and within the set's word
// bound of at when it has one, with its word boundaries as the window
// shows them. The scan's positions say where a core it looks for occurs
// when they cover the part of the window an occurrence may take (it read
// text up to read from at: see view.scannedTo); elsewhere, and for a core
// the scan does not look for, the window itself is searched.
func (s *scan) gated(b *branch, text string, at, read int) bool {
	end := min(len(text), at+leadSpan)
	word := func(i int) bool { return i >= at && i < end && isWordByte(text[i]) }
	holds := func(g *gate, p int) bool {
		return (!g.wordStart || word(p-1) != word(p)) && (!g.wordEnd || word(p+len(g.core)-1) != word(p+len(g.core)))
	}
	for i, set := range b.gates {
		limit := end
		if n := b.gateWords[i]; n >= 0 {
			limit = min(limit, s.runStart(text, at, n+1)+1)
		}
		found := false
		for k := range set {
			g := &set[k]                        // not copied: a gate is six words
			hi := min(end, limit-1+len(g.core)) // an occurrence starts before limit and ends in the window
			if g.lit >= 0 && hi <= read {
				if s.counts[g.lit] == 0 {
					continue
				}
				pos := s.occurrences(g.lit)
				j := firstFrom(pos, at)
				for ; j < len(pos) && int(pos[j]) <= hi-len(g.core) && !found; j++ {
					found = holds(g, int(pos[j]))
				}
			} else {
				for from := at; from < hi && !found; {
					i := strings.Index(text[from:hi], g.core)
					if i < 0 {
						break
					}
					found, from = holds(g, from+i), from+i+1
				}
			}
			if found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
