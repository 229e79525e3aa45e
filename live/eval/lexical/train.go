package lexical

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Example is one labelled training text.
type Example struct {
	Text   string
	Class  int     // index in Options.Classes; 0 is benign
	Weight float64 // how much it counts; 0 means 1
}

// Options configure Train. Zero fields take the documented defaults.
type Options struct {
	// Classes names the classes, the benign one first (required).
	Classes []string
	// L2 is the penalty on the squared weights; default 1e-4.
	L2 float64
	// MinDF is the fewest examples a feature must occur in to get a
	// weight; default 2.
	MinDF int
	// MaxIter bounds the L-BFGS iterations; default 400.
	MaxIter int
	// Threshold is copied into the model (see Model.Threshold); default 0.5.
	Threshold float64
	// ClassThresholds, when set, are copied into the model (see
	// Model.ClassThresholds): one per class, index 0 unused.
	ClassThresholds []float64
	// Note is copied into the model's header.
	Note string
	// Lexicon, when set, adds its class and pair features and is kept in
	// the model.
	Lexicon *Lexicon
}

func (o *Options) fill() error {
	if len(o.Classes) < 2 || len(o.Classes) > MaxClasses {
		return fmt.Errorf("lexical: train: %d classes; a model has 2 to %d", len(o.Classes), MaxClasses)
	}
	if o.L2 == 0 {
		o.L2 = 1e-4
	}
	if o.MinDF == 0 {
		o.MinDF = 2
	}
	if o.MaxIter == 0 {
		o.MaxIter = 400
	}
	if o.Threshold == 0 {
		o.Threshold = 0.5
	}
	if o.ClassThresholds != nil && len(o.ClassThresholds) != len(o.Classes) {
		return fmt.Errorf("lexical: train: %d class thresholds for %d classes", len(o.ClassThresholds), len(o.Classes))
	}
	return nil
}

// ErrNoExamples: Train was given nothing to learn from.
var ErrNoExamples = errors.New("lexical: train: no examples")

// vocab collects the features of the training texts.
type vocab struct {
	lx    *Lexicon
	index map[uint64]int32
	feats []feature
	df    []int
	// per text being read: its features' counts
	seen  map[int32]int
	total int
}

func (v *vocab) add(h uint64, kind byte, b []byte) uint32 {
	v.total++
	i, ok := v.index[h]
	if !ok {
		i = int32(len(v.feats))
		v.index[h] = i
		v.feats = append(v.feats, feature{kind: kind, text: string(b), hash: h})
		v.df = append(v.df, 0)
	}
	v.seen[i]++
	if v.lx == nil || kind != kindWord {
		return 0
	}
	return v.lx.entries[string(b)]
}

// sparse is one example's vector: feature indices and values.
type sparse struct {
	idx []int32
	val []float64
}

// vectors reads every example: the vocabulary, and each example's counts
// over the square root of its feature total (the whole-text window of
// Scan).
func vectors(examples []Example, lx *Lexicon) (*vocab, []sparse) {
	v := &vocab{index: map[uint64]int32{}, lx: lx}
	out := make([]sparse, len(examples))
	var rd reader
	for n, e := range examples {
		v.seen, v.total = map[int32]int{}, 0
		rd.read(e.Text, maxSegments)
		for i := range rd.segs {
			walk(&rd, i, v, lx)
		}
		keys := make([]int32, 0, len(v.seen))
		for i := range v.seen {
			keys = append(keys, i)
			v.df[i]++
		}
		slices.Sort(keys)
		q := 1 / math.Sqrt(float64(max(v.total, 1)))
		for _, i := range keys {
			out[n].idx = append(out[n].idx, i)
			out[n].val = append(out[n].val, float64(v.seen[i])*q)
		}
	}
	return v, out
}

// Train fits a model to the examples: multinomial logistic regression,
// the benign class's logit fixed at 0, by full-batch L-BFGS. Weights are
// rounded to the file's precision, and features whose weights all round
// to 0 are dropped.
func Train(examples []Example, o Options) (*Model, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	if len(examples) == 0 {
		return nil, ErrNoExamples
	}
	k := len(o.Classes) - 1
	for _, e := range examples {
		if e.Class < 0 || e.Class > k || e.Weight < 0 {
			return nil, fmt.Errorf("lexical: train: an example has class %d or weight %g", e.Class, e.Weight)
		}
	}
	v, xs := vectors(examples, o.Lexicon)
	// Keep the features seen in at least MinDF texts, renumbered.
	keep := make([]int32, len(v.feats))
	var feats []feature
	for i, f := range v.feats {
		keep[i] = -1
		if v.df[i] >= o.MinDF {
			keep[i] = int32(len(feats))
			feats = append(feats, f)
		}
	}
	for n := range xs {
		x := &xs[n]
		j := 0
		for i, idx := range x.idx {
			if keep[idx] >= 0 {
				x.idx[j], x.val[j] = keep[idx], x.val[i]
				j++
			}
		}
		x.idx, x.val = x.idx[:j], x.val[:j]
	}
	p := &problem{xs: xs, k: k, nf: len(feats), l2: o.L2}
	for _, e := range examples {
		w := e.Weight
		if w == 0 {
			w = 1
		}
		p.ys = append(p.ys, e.Class)
		p.ws = append(p.ws, w)
		p.wsum += w
	}
	theta := lbfgs(p, make([]float64, p.nf*k+k), o.MaxIter)

	m := &Model{Classes: slices.Clone(o.Classes), Threshold: o.Threshold, ClassThresholds: slices.Clone(o.ClassThresholds), Note: o.Note, Lexicon: o.Lexicon}
	for c := range k {
		m.bias = append(m.bias, round4(theta[p.nf*k+c]))
	}
	for i, f := range feats {
		w := theta[i*k : (i+1)*k]
		zero := true
		for _, x := range w {
			if round4(x) != 0 {
				zero = false
			}
		}
		if zero {
			continue
		}
		m.feats = append(m.feats, f)
		for _, x := range w {
			m.weights = append(m.weights, float32(round4(x)))
		}
	}
	if err := m.index(); err != nil {
		return nil, err
	}
	return m, nil
}

// round4 rounds to the four decimals the file keeps.
func round4(x float64) float64 {
	r := math.Round(x*1e4) / 1e4
	if r == 0 {
		return 0 // no negative zero
	}
	return r
}

// problem is the training objective: the weighted mean cross-entropy plus
// L2/2 times the squared weights (not the biases). theta holds the
// weights, feature-major (feature i's are theta[i*k:(i+1)*k]), then the k
// biases.
type problem struct {
	xs   []sparse
	ys   []int
	ws   []float64
	wsum float64
	k    int
	nf   int
	l2   float64
}

// eval returns the objective at theta and writes its gradient to grad.
func (p *problem) eval(theta, grad []float64) float64 {
	clear(grad)
	k := p.k
	bias := theta[p.nf*k:]
	z := make([]float64, k)
	loss := 0.0
	for n, x := range p.xs {
		copy(z, bias)
		for j, i := range x.idx {
			v := x.val[j]
			for c := range k {
				z[c] += float64(v * theta[int(i)*k+c])
			}
		}
		top := 0.0
		for _, t := range z {
			top = max(top, t)
		}
		sum := math.Exp(-top)
		for _, t := range z {
			sum += math.Exp(t - top)
		}
		lse := top + math.Log(sum)
		y := p.ys[n]
		zy := 0.0
		if y > 0 {
			zy = z[y-1]
		}
		a := p.ws[n] / p.wsum
		loss += a * (lse - zy)
		for c := range k {
			g := math.Exp(z[c] - lse)
			if c == y-1 {
				g--
			}
			g *= a
			grad[p.nf*k+c] += g
			for j, i := range x.idx {
				grad[int(i)*k+c] += float64(g * x.val[j])
			}
		}
	}
	for i := range p.nf * k {
		loss += float64(p.l2 / 2 * theta[i] * theta[i])
		grad[i] += float64(p.l2 * theta[i])
	}
	return loss
}

// lbfgs minimises p from theta with limited-memory BFGS (ten pairs) and
// a backtracking line search, for at most maxIter iterations or until the
// gradient is flat.
func lbfgs(p *problem, theta []float64, maxIter int) []float64 {
	const (
		memory = 10
		tol    = 1e-7
	)
	n := len(theta)
	grad := make([]float64, n)
	f := p.eval(theta, grad)
	var ss, ys [][]float64
	var rhos []float64
	dir := make([]float64, n)
	next := make([]float64, n)
	nextGrad := make([]float64, n)
	alpha := make([]float64, memory)
	for iter := 0; iter < maxIter; iter++ {
		if normInf(grad) < tol {
			break
		}
		// Two-loop recursion: dir = -H grad.
		copy(dir, grad)
		for i := len(ss) - 1; i >= 0; i-- {
			alpha[i] = rhos[i] * dot(ss[i], dir)
			axpy(-alpha[i], ys[i], dir)
		}
		gamma := 1.0
		if len(ss) > 0 {
			last := len(ss) - 1
			gamma = dot(ss[last], ys[last]) / dot(ys[last], ys[last])
		} else {
			gamma = 1 / math.Max(normInf(grad), 1e-12)
		}
		for i := range dir {
			dir[i] *= gamma
		}
		for i := range ss {
			beta := rhos[i] * dot(ys[i], dir)
			axpy(alpha[i]-beta, ss[i], dir)
		}
		for i := range dir {
			dir[i] = -dir[i]
		}
		slope := dot(grad, dir)
		if slope >= 0 { // not a descent direction: restart from the gradient
			ss, ys, rhos = nil, nil, nil
			for i := range dir {
				dir[i] = -grad[i]
			}
			slope = dot(grad, dir)
		}
		step := 1.0
		var nf float64
		for tries := 0; ; tries++ {
			for i := range theta {
				next[i] = theta[i] + step*dir[i]
			}
			nf = p.eval(next, nextGrad)
			if nf <= f+1e-4*step*slope || tries == 30 {
				break
			}
			step /= 2
		}
		if nf > f { // no progress is possible
			break
		}
		s := make([]float64, n)
		y := make([]float64, n)
		for i := range s {
			s[i] = next[i] - theta[i]
			y[i] = nextGrad[i] - grad[i]
		}
		if sy := dot(s, y); sy > 1e-12 {
			if len(ss) == memory {
				ss, ys, rhos = ss[1:], ys[1:], rhos[1:]
			}
			ss, ys, rhos = append(ss, s), append(ys, y), append(rhos, 1/sy)
		}
		copy(theta, next)
		copy(grad, nextGrad)
		converged := f-nf < 1e-10*math.Max(1, math.Abs(f))
		f = nf
		if converged {
			break
		}
	}
	return theta
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}

// axpy sets y += a*x.
func axpy(a float64, x, y []float64) {
	for i := range x {
		y[i] += float64(a * x[i])
	}
}

func normInf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// CrossValidate trains on all but one of folds parts of the examples and
// scans the part left out, for each part in turn, and returns every
// example's out-of-fold result. owner says which examples are scored and
// how the parts are cut: an example whose owner is itself is scored; one
// whose owner is another example goes to that example's part (a window of
// a text goes where the text goes); one whose owner is -1 is always
// trained on. Unscored examples' results are zero. Parts are dealt by a
// shuffle seeded with seed.
func CrossValidate(examples []Example, owner []int, o Options, folds int, seed uint64) ([]Result, error) {
	if folds < 2 {
		return nil, fmt.Errorf("lexical: cross-validate: %d folds; need at least 2", folds)
	}
	var order []int
	for i := range examples {
		if owner[i] == i {
			order = append(order, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6376))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	part := make([]int, len(examples))
	for n, i := range order {
		part[i] = n % folds
	}
	fold := func(i int) int {
		if owner[i] < 0 {
			return -1
		}
		return part[owner[i]]
	}
	out := make([]Result, len(examples))
	for f := range folds {
		var train []Example
		for i, e := range examples {
			if fold(i) != f {
				train = append(train, e)
			}
		}
		m, err := Train(train, o)
		if err != nil {
			return nil, err
		}
		for i, e := range examples {
			if owner[i] == i && fold(i) == f {
				out[i] = m.Scan(e.Text)
			}
		}
	}
	return out, nil
}
