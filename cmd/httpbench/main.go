// Command httpbench measures the live edge over HTTP with wrk on loopback
// and checks it against two baselines measured in the same run:
//
//   - /api/ledger/verify and /api/chain/status against a bare fiber JSON
//     handler (same framework, no middleware, prefork off, same GOMAXPROCS):
//     at least 0.5x its requests/s, p99 under 10 ms;
//   - a 10 KB static page served by proofsite against nginx serving the same
//     file: at least 0.8x its requests/s.
//
// One run prepares a data dir and a built site under --work, starts
// proofsite serve, the bare fiber handler (this program re-executed as
// "httpbench bare-fiber", so it does not share the harness's scheduler) and
// nginx, warms every target up, then runs wrk over all targets in
// interleaved rounds and reports the median requests/s and the median p99
// across rounds as a markdown table (also written to --work/results.md).
// Every process it starts is stopped again, on errors and Ctrl-C too.
//
// Usage (from the repository root; "make bench-http" does this):
//
//	httpbench [--bin bin/proofsite] [--work bench/out/http] [--rounds 3] [--duration 10s] [--connections 64]
//
// Exit status: 0 every target passes, 1 a target fails or the run broke,
// 64 usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
