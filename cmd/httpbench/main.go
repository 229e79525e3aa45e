// Command httpbench measures the live edge over HTTP with wrk on loopback
// and checks it against two baselines measured in the same run:
//
//   - /api/ledger/verify and /api/chain/status against a bare fiber JSON
//     handler: at least 0.5x its requests/s, p99 under 10 ms;
//   - a 10 KB static page served by proofsite against nginx serving the same
//     file: at least 0.8x its requests/s;
//   - POST /api/chat (sent by a wrk Lua script) on the live edge with a
//     zero-latency provider behind S2_CASE, against the same bare fiber
//     handler: at least 0.5x its requests/s;
//   - POST /api/v1/evaluate (sent by a wrk Lua script that rotates four
//     ordinary 2 KB texts, cmd/httpbench/evaltexts) on proofsite serve with
//     the offline evaluator and its POST limit lifted for wrk's one client
//     (--post-limit): p99 under 10 ms, no baseline (nothing else does its
//     work);
//   - a hash tile of the ledger's tiled log (/ledger/tile/0/000.p/224), read
//     by serve from the chain's tile folder, against nginx serving the
//     build's copy of the same file: at least 0.8x its requests/s;
//   - the MCP endpoint's tools/list and a tools/call of ledger_verdict (POSTs
//     of 2026-07-28 requests, sent by a wrk Lua script) against the same bare
//     fiber handler: at least 0.3x its requests/s.
//
// Usage (from the repository root; "make bench-http" does this):
//
//	httpbench [--bin bin/proofsite] [--work bench/out/http] [--rounds 3] [--duration 10s] [--connections 64]
//
// One run empties --work (only a folder an earlier run made), initialises a
// ledger there and builds the site, then writes a 10,240-byte HTML page into
// the built folder (after the build, which replaces the folder). It starts
// four servers on loopback ports, each in a process group of its own:
//
//   - proofsite serve on that data dir and site, its per-client limit of
//     POST routes without one of their own (30 a minute) lifted;
//   - the bare fiber handler: this program re-executed as "httpbench
//     bare-fiber", so it does not share a Go scheduler with the harness, as
//     proofsite does not. Same framework and version as proofsite, fiber's
//     defaults (prefork off), no middleware, one route answering c.JSON of a
//     string, a bool and a time. Both Go servers get the same GOMAXPROCS
//     (--gomaxprocs, by default what proofsite serve sets itself: one
//     more than the cores the harness may use);
//   - the chat edge: this program re-executed as "httpbench chat-edge", the
//     live package's server over a second ledger initialised for it (a
//     Badger folder is one process's), with every AI route, the receipts
//     signed with keys of its own, the offline responder behind every node
//     but S2_CASE, and behind S2_CASE a provider that answers at once
//     (aitest.Counting): what the edge adds to a provider's latency. Its
//     /api/chat limit is lifted for the one loopback client wrk is; the
//     limiter still runs;
//   - Debian's nginx in the foreground (daemon off) with a generated config
//     (see nginxConfig): worker_processes auto, access_log off, sendfile
//     on, keep-alive never cut by a request count, root on the same folder;
//     its pid, logs and temp files stay under --work.
//
// A preflight checks that every target answers 200 itself and that both
// servers send the very bytes of the page. Each target is warmed up, then
// wrk -t2 -c64 -d10s --latency runs over all eleven targets in interleaved
// rounds, each round starting one target later. The table reports, per
// target, the median requests/s, the median p99 and the median CPU time
// the answering server's processes spent per request across rounds, the ratio
// of the medians to the baseline, and PASS/FAIL; any non-2xx response or
// socket error fails a target and its dependants. wrk, the servers and
// whatever else runs share the machine's cores and nothing is pinned, so
// each run also records the share of the CPU that other processes took
// meanwhile, and the load average before and after. The report goes to
// stdout and to --work/results.md, every wrk report to --work/logs.
//
// Every process it starts is stopped again at the end, on errors and on
// Ctrl-C; if the harness itself is killed, the kernel sends them SIGTERM.
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
