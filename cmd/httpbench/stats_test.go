package main

import (
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		desc string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{30, 10, 20}, 20},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"outlier ignored", []float64{31000, 30500, 2000}, 30500},
		{"ties", []float64{5, 5, 1, 9}, 5},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := median(in); got != tc.want {
				t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("median reordered its input: %v", in)
			}
		})
	}
}

func TestMedianDurations(t *testing.T) {
	ms := time.Millisecond
	if got := median([]time.Duration{9 * ms, 3 * ms, 4 * ms}); got != 4*ms {
		t.Errorf("odd: got %v", got)
	}
	if got := median([]time.Duration{3 * ms, 4 * ms}); got != 3500*time.Microsecond {
		t.Errorf("even: got %v", got)
	}
}
