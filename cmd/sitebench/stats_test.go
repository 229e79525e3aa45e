package main

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	got := summarize([]time.Duration{5, 1, 4, 2, 3})
	want := summary[time.Duration]{N: 5, Min: 1, Median: 3, P90: 5, Max: 5}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := summarize[int](nil); got != (summary[int]{}) {
		t.Errorf("empty: got %+v", got)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{ms(1234567 * time.Microsecond), "1235 ms"},
		{ms(12345 * time.Microsecond), "12.3 ms"},
		{ms(1234 * time.Microsecond), "1.23 ms"},
		{mib(2048), "2.0 MiB"},
		{thousands(5000), "5,000"},
		{thousands(999), "999"},
		{thousands(1234567), "1,234,567"},
		{times(0.4321), "0.43×"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
