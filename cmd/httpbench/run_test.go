package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	cfg, err := parseConfig([]string{"--rounds", "5", "--duration", "3s", "--connections", "8"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.rounds != 5 || cfg.duration != 3*time.Second || cfg.connections != 8 || cfg.threads != 2 || cfg.bin != "bin/proofsite" {
		t.Errorf("got %+v", cfg)
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--rounds", "0"}, {"--duration", "500ms"}, {"--warmup", "10ms"}, {"--connections", "1"},
		{"--threads", "0"}, {"--gomaxprocs", "0"}, {"extra"}, {"--nope"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage {
			t.Errorf("run %q = %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 33664.92: "33,665", 1234567: "1,234,567"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%v) = %q, want %q", in, got, want)
		}
	}
}
