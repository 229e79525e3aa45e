package main

import "slices"

// number is what median accepts: float64 rates and time.Duration latencies.
type number interface{ ~int64 | ~float64 }

// median returns the middle value of xs, the mean of the two middle values
// when there is an even count, and zero for none. xs is not modified.
func median[T number](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return s[mid-1] + (s[mid]-s[mid-1])/2
}
