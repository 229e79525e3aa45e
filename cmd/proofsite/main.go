// Command proofsite builds the static proof site, serves it with its live
// edge, and operates the signed ledger.
//
// Usage:
//
//	proofsite build   [--content DIR] [--out DIR] [--publish [--authorization FILE] [--data DIR]]
//	proofsite gate    keygen|sign|check|demo
//	proofsite version
//
// Run "proofsite help" for every subcommand.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
