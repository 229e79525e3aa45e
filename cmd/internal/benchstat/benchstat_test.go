package benchstat

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		desc string
		in   []int64
		want int64
	}{
		{"empty", nil, 0},
		{"one", []int64{7}, 7},
		{"odd, unsorted", []int64{9, 1, 5}, 5},
		{"even: mean of the middle two", []int64{4, 1, 3, 2}, 2}, // (2+3)/2 in integers
		{"even, exact", []int64{10, 20, 30, 40}, 25},
		{"repeated", []int64{3, 3, 3, 1, 9}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			in := append([]int64(nil), tc.in...)
			if got := Median(tc.in); got != tc.want {
				t.Errorf("Median(%v) = %d, want %d", tc.in, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatalf("median reordered its input: %v", tc.in)
				}
			}
		})
	}
	if got, want := Median([]time.Duration{3 * time.Millisecond, time.Millisecond}), 2*time.Millisecond; got != want {
		t.Errorf("median of durations = %v, want %v", got, want)
	}
	if got, want := Median([]float64{1, 2}), 1.5; got != want {
		t.Errorf("median of floats = %v, want %v", got, want)
	}
	if got, want := Median([]float64{31000, 30500, 2000}), 30500.0; got != want {
		t.Errorf("median with an outlier = %v, want %v", got, want)
	}
}

func TestPercentile(t *testing.T) {
	ten := []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	tests := []struct {
		desc string
		in   []int
		p    float64
		want int
	}{
		{"empty", nil, 90, 0},
		{"p90 of ten: the ninth", ten, 90, 9},
		{"p100 is the max", ten, 100, 10},
		{"p50 nearest rank", ten, 50, 5},
		{"tiny p is the min", ten, 1, 1},
		{"p90 of eleven rounds up", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 90, 10},
		{"p90 of one", []int{4}, 90, 4},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if got := Percentile(tc.in, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %d, want %d", tc.in, tc.p, got, tc.want)
			}
		})
	}
}
