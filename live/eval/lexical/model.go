package lexical

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Format is the first line of a weights file.
const Format = "lexical\tv2"

// MaxClasses bounds the classes of a model, the benign class included.
const MaxClasses = 8

// Scan's bounds.
const (
	maxSegments = 512 // a longer text's last segment takes the rest
	maxSpan     = 3   // segments per window, besides the whole text
	// minWindow is the fewest features a window other than the whole text
	// needs to be scored: a few words say too little.
	minWindow = 16
)

// ErrFormat matches every problem in a weights file.
var ErrFormat = errors.New("lexical: bad weights file")

// Model is a trained classifier. Classes[0] is the benign class, whose
// logit is 0; every other class has a bias and a weight per feature.
type Model struct {
	Classes []string
	// Threshold is the attack probability (1 - P(benign)) at which a window
	// counts as an attack; chosen by cross-validation on the training data.
	Threshold float64
	// ClassThresholds, when set, holds one threshold per class (index 0,
	// benign, unused): a window counts as an attack when its attack
	// probability reaches the threshold of its most likely attack class
	// (ThresholdOf). Threshold is then the lowest of them.
	ClassThresholds []float64
	// Note is free text kept in the file's header (how it was trained).
	Note string

	// Lexicon, when set, adds class and pair features (see Lexicon).
	Lexicon *Lexicon

	bias    []float64 // per attack class
	feats   []feature
	weights []float32 // feats[i]'s weights are weights[i*(k-1) : (i+1)*(k-1)]
	// wide[i] holds feats[i]'s weights too, padded with zeros, for Scan
	wide [][MaxClasses]float32
	// open addressing over the features and the lexicon's entries
	slots    []slot
	mask     uint64
	scratchs sync.Pool
}

// slot is one place of the hash table: the hash of a feature or lexicon
// entry (0 for empty), the feature's index (-1 for an entry without
// weights) and the entry's lexicon classes.
type slot struct {
	key  uint64
	row  int32
	bits uint32
}

// feature is one feature of the model, as the file names it.
type feature struct {
	kind byte
	text string
	hash uint64
}

// attackClasses is the number of classes other than benign.
func (m *Model) attackClasses() int { return len(m.Classes) - 1 }

// Features returns how many features carry weights.
func (m *Model) Features() int { return len(m.feats) }

// index builds the hash table.
func (m *Model) index() error {
	var entries map[string]uint32
	if m.Lexicon != nil {
		entries = m.Lexicon.entries
	}
	size := 1
	for size < 2*(len(m.feats)+len(entries))+2 {
		size <<= 1
	}
	k := m.attackClasses()
	m.wide = make([][MaxClasses]float32, len(m.feats))
	for i := range m.wide {
		copy(m.wide[i][:], m.weights[i*k:(i+1)*k])
	}
	m.slots = make([]slot, size)
	m.mask = uint64(size - 1)
	// place returns h's slot and whether it was taken.
	place := func(h uint64) (*slot, bool) {
		at := h & m.mask
		for m.slots[at].key != 0 && m.slots[at].key != h {
			at = (at + 1) & m.mask
		}
		return &m.slots[at], m.slots[at].key == h
	}
	for i, f := range m.feats {
		h := nonzero(f.hash)
		sl, taken := place(h)
		if taken {
			return fmt.Errorf("%w: feature %c %q is listed twice (or its hash collides)", ErrFormat, f.kind, f.text)
		}
		sl.key, sl.row = h, int32(i)
	}
	for e, bits := range entries {
		h := nonzero(hashOf(kindWord, []byte(e)))
		sl, taken := place(h)
		if !taken {
			sl.key, sl.row = h, -1
		}
		sl.bits = bits
	}
	return nil
}

// nonzero keeps 0 free to mark an empty slot.
func nonzero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// Parse reads a weights file (see WriteTo).
func Parse(r io.Reader) (*Model, error) {
	m := &Model{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	bad := func(n int, format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrFormat, n, fmt.Sprintf(format, args...))
	}
	n := 0
	var notes []string
	var lexClasses []string
	var lexEntries [][]string
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			if line != Format {
				return nil, bad(n, "want %q first", Format)
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			notes = append(notes, rest)
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Split(line, "\t")
		switch fields[0] {
		case "classes":
			m.Classes = fields[1:]
			if len(m.Classes) < 2 || len(m.Classes) > MaxClasses {
				return nil, bad(n, "%d classes; a model has 2 to %d", len(m.Classes), MaxClasses)
			}
		case "threshold":
			t, err := strconv.ParseFloat(strings.Join(fields[1:], ""), 64)
			if err != nil || t <= 0 || t >= 1 {
				return nil, bad(n, "threshold must be a number between 0 and 1")
			}
			m.Threshold = t
		case "class_thresholds":
			if m.Classes == nil {
				return nil, bad(n, "class_thresholds before classes")
			}
			t, err := floats(fields[1:], m.attackClasses())
			if err != nil {
				return nil, bad(n, "class_thresholds: %v", err)
			}
			for _, x := range t {
				if x <= 0 || x > 1 {
					return nil, bad(n, "class_thresholds must be numbers above 0 and at most 1")
				}
			}
			m.ClassThresholds = append([]float64{0}, t...)
		case "bias":
			if m.Classes == nil {
				return nil, bad(n, "bias before classes")
			}
			b, err := floats(fields[1:], m.attackClasses())
			if err != nil {
				return nil, bad(n, "bias: %v", err)
			}
			m.bias = b
		case "lexicon":
			if len(fields) < 2 {
				return nil, bad(n, "a lexicon line without its class")
			}
			var entries []string
			for _, q := range fields[2:] {
				e, err := strconv.Unquote(q)
				if err != nil {
					return nil, bad(n, "lexicon entry: %v", err)
				}
				entries = append(entries, e)
			}
			lexClasses, lexEntries = append(lexClasses, fields[1]), append(lexEntries, entries)
		case "w", "p", "c", "x":
			if m.bias == nil || len(fields) < 2 {
				return nil, bad(n, "a feature line before classes and bias, or without its text")
			}
			text, err := strconv.Unquote(fields[1])
			if err != nil {
				return nil, bad(n, "feature text: %v", err)
			}
			w, err := floats(fields[2:], m.attackClasses())
			if err != nil {
				return nil, bad(n, "feature %q: %v", text, err)
			}
			kind := fields[0][0]
			m.feats = append(m.feats, feature{kind: kind, text: text, hash: hashOf(kind, []byte(text))})
			for _, x := range w {
				m.weights = append(m.weights, float32(x))
			}
		default:
			return nil, bad(n, "unknown line %q", fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lexical: read: %w", err)
	}
	if m.Classes == nil || m.bias == nil || m.Threshold == 0 {
		return nil, fmt.Errorf("%w: needs classes, threshold and bias", ErrFormat)
	}
	m.Note = strings.Join(notes, "\n")
	if lexClasses != nil {
		lx, err := NewLexicon(lexClasses, lexEntries)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		m.Lexicon = lx
	}
	if err := m.index(); err != nil {
		return nil, err
	}
	return m, nil
}

// floats parses exactly k numbers.
func floats(fields []string, k int) ([]float64, error) {
	if len(fields) != k {
		return nil, fmt.Errorf("%d numbers, want %d", len(fields), k)
	}
	out := make([]float64, k)
	for i, f := range fields {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out[i] = x
	}
	return out, nil
}

// WriteTo writes the model as text: the Format line, the note as "# "
// lines, then "classes", "threshold", "class_thresholds" (when set) and
// "bias" lines, the lexicon's
// lines (see Lexicon.lines), then one line per feature: its kind (w for a
// word or two, p for a prefix, c for a lexicon class, x for a pair of
// them), its text quoted as in Go, and its weight for each attack class,
// tab-separated.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	cw := &countWriter{w: bw}
	fmt.Fprintln(cw, Format)
	for l := range strings.SplitSeq(m.Note, "\n") {
		if l != "" {
			fmt.Fprintf(cw, "# %s\n", l)
		}
	}
	fmt.Fprintf(cw, "classes\t%s\nthreshold\t%s\n", strings.Join(m.Classes, "\t"), num(m.Threshold))
	if m.ClassThresholds != nil {
		fmt.Fprint(cw, "class_thresholds")
		for _, t := range m.ClassThresholds[1:] {
			fmt.Fprintf(cw, "\t%s", num(t))
		}
		fmt.Fprintln(cw)
	}
	fmt.Fprint(cw, "bias")
	for _, b := range m.bias {
		fmt.Fprintf(cw, "\t%s", num(b))
	}
	fmt.Fprintln(cw)
	if m.Lexicon != nil {
		for _, l := range m.Lexicon.lines() {
			fmt.Fprintln(cw, l)
		}
	}
	k := m.attackClasses()
	for i, f := range m.feats {
		fmt.Fprintf(cw, "%c\t%s", f.kind, strconv.Quote(f.text))
		for _, x := range m.weights[i*k : (i+1)*k] {
			fmt.Fprintf(cw, "\t%s", num(float64(x)))
		}
		fmt.Fprintln(cw)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("lexical: write: %w", err)
	}
	return cw.n, cw.err
}

// num formats a weight with the file's precision: four decimals, no
// trailing zeros.
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// Result is what Scan found in a text.
type Result struct {
	// Attack is the highest attack probability (1 - P(benign)) of any
	// window; Class is that window's most likely attack class (an index
	// in Classes, never 0) and [Start, End) its bytes in the text.
	Attack     float64
	Class      int
	Start, End int
	// Max holds, per class, the highest probability any window gave it
	// (Max[0], the benign class, is unused).
	Max [MaxClasses]float64
}

// Flagged reports whether the best window reaches the model's threshold.
func (m *Model) Flagged(r Result) bool { return r.Attack >= m.ThresholdOf(r.Class) }

// ThresholdOf returns the attack probability at which a window whose most
// likely attack class is class counts as an attack: its class threshold
// when the model has them, Threshold otherwise.
func (m *Model) ThresholdOf(class int) float64 {
	if class > 0 && class < len(m.ClassThresholds) {
		return m.ClassThresholds[class]
	}
	return m.Threshold
}

// scratch is one scan's reusable memory.
type scratch struct {
	rd     reader
	extra  tokens                // a segment's class and pair features
	sums   [][MaxClasses]float64 // per segment and attack class (0 past the model's classes)
	counts []int                 // per segment: features
}

// accumulate adds to sum the weights of the features toks, in order, and
// returns the lexicon classes of its word features.
func (m *Model) accumulate(sum *[MaxClasses]float64, toks []token) uint32 {
	var bits uint32
	// one variable per attack class keeps the sums in registers; a model
	// has at most MaxClasses-1 attack classes, the others add zeros
	s0, s1, s2, s3, s4, s5, s6 := sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6]
	// the table in locals, which the loop keeps in registers
	slots, mask, wide := m.slots, m.mask, m.wide
	for _, t := range toks {
		// the slot of t: open addressing, as index placed the keys
		h := nonzero(t.hash)
		at := h & mask
		for slots[at].key != h && slots[at].key != 0 {
			at = (at + 1) & mask
		}
		sl := &slots[at]
		if sl.key == 0 {
			continue // not a feature, nor a lexicon entry
		}
		if t.kind == kindWord {
			bits |= sl.bits
		}
		if sl.row < 0 {
			continue
		}
		w := &wide[sl.row]
		s0 += float64(w[0])
		s1 += float64(w[1])
		s2 += float64(w[2])
		s3 += float64(w[3])
		s4 += float64(w[4])
		s5 += float64(w[5])
		s6 += float64(w[6])
	}
	sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6] = s0, s1, s2, s3, s4, s5, s6
	return bits
}

// segmentSums adds up the weights of the features toks of one segment,
// and of the lexicon's class and pair features their words make, into
// sum, and returns how many features there were.
func (m *Model) segmentSums(s *scratch, sum *[MaxClasses]float64, toks []token) int {
	n := len(toks)
	if bits := m.accumulate(sum, toks); bits != 0 && m.Lexicon != nil {
		s.extra = s.extra[:0]
		n += emit(m.Lexicon, bits, &s.extra)
		m.accumulate(sum, s.extra)
	}
	return n
}

// Scan scores every window of text and returns the best.
func (m *Model) Scan(text string) Result { return m.ScanMemo(text, nil) }

// ScanMemo is Scan, remembering in memo the sums of the segments it read
// for the scans after it: a segment whose bytes an earlier scan with the
// same memo read (the same sentence in another view of a text) is not
// read again. Its sums are the same to the bit, as every segment's sums
// start at zero, so the result is Scan's. A nil memo remembers nothing.
func (m *Model) ScanMemo(text string, memo *Memo) Result {
	s, _ := m.scratchs.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer m.scratchs.Put(s)
	k := m.attackClasses()
	if memo != nil && memo.model != m {
		memo.Reset()
		memo.model = m
	}
	if memo != nil && len(memo.entries) > 0 {
		m.readMemo(s, text, memo)
	} else {
		s.rd.read(text, maxSegments)
		ns := len(s.rd.segs)
		s.sums = resize(s.sums, ns)
		s.counts = resize(s.counts, ns)
		for i := range ns {
			// walk, written for speed
			var sum [MaxClasses]float64
			s.counts[i] = m.segmentSums(s, &sum, s.rd.segment(i))
			s.sums[i] = sum
		}
		if memo != nil {
			memo.record(text, s.rd.segs, s.sums, s.counts)
		}
	}
	segs := s.rd.segs
	ns := len(segs)
	// the whole text's features and sums, added up segment by segment in
	// the order window would add them, so the same to the last bit
	var whole [MaxClasses]float64
	nWhole := 0
	for i := range ns {
		addRow(&whole, &s.sums[i])
		nWhole += s.counts[i]
	}
	var r Result
	var logits, sums [MaxClasses]float64
	// A window whose logits are all at or under these bounds can change
	// nothing in r (see attackBound and classBound), and its softmax is
	// skipped. -Inf until r has a value to beat.
	limAttack := math.Inf(-1)
	var lim [MaxClasses]float64
	for c := range k {
		lim[c] = math.Inf(-1)
	}
	// score rates the window of segments [from, to), whose n features'
	// weights add up to sums; n is at least minWindow, or the window is
	// the whole text and n is not 0.
	score := func(from, to, n int) {
		q := 1 / math.Sqrt(float64(n))
		top := math.Inf(-1)
		decided := true
		for c := range k {
			z := m.bias[c] + sums[c]*q
			logits[c] = z
			top = max(top, z)
			decided = decided && z <= lim[c]
		}
		if decided && top <= limAttack {
			return
		}
		p0, best, sum := softmax(logits[:k])
		if attack := 1 - p0; attack > r.Attack || r.Class == 0 {
			r.Attack, r.Class = attack, best+1
			r.Start, r.End = segs[from].start, segs[to-1].end
			limAttack = attackBound(attack, k)
		}
		for c := range k {
			if p := logits[c] / sum; p > r.Max[c+1] {
				r.Max[c+1] = p
				lim[c] = classBound(p)
			}
		}
	}
	// Each window of up to maxSpan segments grows from its first segment
	// one segment at a time, adding that segment's features and weights
	// to the running totals, and every prefix of at least minWindow
	// features is scored (or with any, when it is a whole short text).
	// A window that adds a segment without features to the one scored
	// just before it has the same n and sums (they are +0, as sums start
	// at +0, which a sum of weights never turns into -0), so its scores
	// are the same and can change nothing in r: it is skipped. Texts cut
	// into lines have many empty segments.
	//
	// After a segment without features, every prefix of a window but its
	// longest has the n and sums of a prefix of the window before it,
	// which starts with that segment (+0 and no features): those were
	// scored just before, and only the longest is.
	window := func(from, to int) {
		sums = [MaxClasses]float64{}
		n := 0
		fresh := from // prefixes ending before fresh were scored before
		if from > 0 && s.counts[from-1] == 0 {
			fresh = from + maxSpan - 1
		}
		for i := from; i < to; i++ {
			if i > from && s.counts[i] == 0 && n >= minWindow {
				continue
			}
			n += s.counts[i]
			addRow(&sums, &s.sums[i])
			if i >= fresh && (n >= minWindow || n > 0 && from == 0 && i == ns-1) {
				score(from, i+1, n)
			}
		}
	}
	for from := range ns {
		window(from, min(ns, from+maxSpan))
	}
	if ns > maxSpan && nWhole > 0 {
		// the whole text, a window too, scored only whole (n > 0 is
		// enough: it starts at the first segment and ends with the last)
		sums = whole
		score(0, ns, nWhole)
	}
	return r
}

// addRow adds row to sums, class by class. Every class, also those past
// the model's, which are 0 in both: a loop over the model's classes
// costs more than the adds it saves.
func addRow(sums, row *[MaxClasses]float64) {
	sums[0] += row[0]
	sums[1] += row[1]
	sums[2] += row[2]
	sums[3] += row[3]
	sums[4] += row[4]
	sums[5] += row[5]
	sums[6] += row[6]
}

// Bounds that let Scan skip a window's softmax without changing its
// result. Every class probability softmax computes from logits z is
// within a relative 1e-13 of the exact one, and 1 - P(benign) within an
// absolute 1e-14; the exact class probabilities are at most sigmoid(z[c])
// and the attack probability at most sigmoid(max(z) + log k). A bound is
// the logit of the best probability so far less margins wider than those
// errors (a relative 1e-12, an absolute 1e-13, then 1e-9 on the logit for
// the logarithm's), so a window at or under it cannot beat the best.

// classBound returns the highest logit a class may have in a window that
// cannot raise the class's best probability p.
func classBound(p float64) float64 {
	q := p * (1 - 1e-12)
	return math.Log(q/(1-q)) - 1e-9
}

// attackBound returns the highest attack logit a window of a model with k
// attack classes may have and not beat the attack probability a.
func attackBound(a float64, k int) float64 {
	q := (a - 1e-13) * (1 - 1e-12)
	if q <= 0 {
		return math.Inf(-1)
	}
	return math.Log(q/(1-q)) - math.Log(float64(k)) - 1e-9
}

// softmax returns P(benign) for attack logits z (the benign logit is 0)
// and the index of the largest attack logit. It replaces each logit by
// its exponential less the largest, which divided by sum is the class's
// probability.
func softmax(z []float64) (p0 float64, best int, sum float64) {
	top := 0.0
	for c, x := range z {
		if x > z[best] {
			best = c
		}
		top = max(top, x)
	}
	// the largest logit's exponential is exp(0) = 1 (TestExpZero), and
	// the benign one's too when no attack logit is over 0: one exp saved
	e0 := 1.0
	if top != 0 {
		e0 = math.Exp(-top)
	}
	sum = e0
	for c, x := range z {
		e := 1.0
		if x != top {
			e = math.Exp(x - top)
		}
		z[c] = e
		sum += e
	}
	return e0 / sum, best, sum
}

// resize returns s with length n, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// Diff describes the first difference between two models, or returns ""
// when they have the same classes, threshold, note and features, and
// weights and biases within tol of each other.
func Diff(a, b *Model, tol float64) string {
	switch {
	case strings.Join(a.Classes, ",") != strings.Join(b.Classes, ","):
		return fmt.Sprintf("classes %v and %v", a.Classes, b.Classes)
	case math.Abs(a.Threshold-b.Threshold) > tol:
		return fmt.Sprintf("threshold %v and %v", a.Threshold, b.Threshold)
	case len(a.ClassThresholds) != len(b.ClassThresholds):
		return fmt.Sprintf("class thresholds %v and %v", a.ClassThresholds, b.ClassThresholds)
	case a.Note != b.Note:
		return fmt.Sprintf("note %q and %q", a.Note, b.Note)
	case !a.Lexicon.equal(b.Lexicon):
		return "different lexicons"
	case len(a.feats) != len(b.feats):
		return fmt.Sprintf("%d and %d features", len(a.feats), len(b.feats))
	}
	for c, t := range a.ClassThresholds {
		if math.Abs(t-b.ClassThresholds[c]) > tol {
			return fmt.Sprintf("class thresholds %v and %v", a.ClassThresholds, b.ClassThresholds)
		}
	}
	for c := range a.bias {
		if math.Abs(a.bias[c]-b.bias[c]) > tol {
			return fmt.Sprintf("bias of %s: %v and %v", a.Classes[c+1], a.bias[c], b.bias[c])
		}
	}
	k := a.attackClasses()
	for i, f := range a.feats {
		if f != b.feats[i] {
			return fmt.Sprintf("feature %d: %c %q and %c %q", i, f.kind, f.text, b.feats[i].kind, b.feats[i].text)
		}
		for c := range k {
			if x, y := float64(a.weights[i*k+c]), float64(b.weights[i*k+c]); math.Abs(x-y) > tol {
				return fmt.Sprintf("weight of %c %q for %s: %v and %v", f.kind, f.text, a.Classes[c+1], x, y)
			}
		}
	}
	return ""
}
