package corpus

// rng is splitmix64: tiny, fast and fully specified here, so a corpus never
// changes because a library's random stream did.
type rng struct{ s uint64 }

// newRNG returns the generator of page i of a corpus generated from seed.
// Each page has its own stream, so pages do not depend on each other.
func newRNG(seed uint64, i int) *rng {
	r := &rng{s: seed ^ 0x5851f42d4c957f2d}
	r.s += uint64(i) * 0x9e3779b97f4a7c15
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); n must be positive. The modulo bias is
// irrelevant for a text generator.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// pick returns one element of list.
func pick[T any](r *rng, list []T) T { return list[r.intn(len(list))] }

// chance reports true with probability 1/n.
func (r *rng) chance(n int) bool { return r.intn(n) == 0 }
