package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
)

// bareFiberCmd is the hidden subcommand that runs the bare fiber baseline.
// The harness re-executes itself with it, so the baseline is a process of
// its own, like proofsite: neither shares a Go scheduler with the harness.
const bareFiberCmd = "bare-fiber"

// barePath is the bare handler's route.
const barePath = "/json"

// bareReply is the bare handler's body: a string, a bool and a time, the
// smallest shape of a live JSON response.
type bareReply struct {
	Status      string    `json:"status"`
	OK          bool      `json:"ok"`
	GeneratedAt time.Time `json:"generated_at"`
}

// newBareApp returns the baseline: fiber's defaults (prefork off), no
// middleware, one route that encodes a bareReply with c.JSON.
func newBareApp() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get(barePath, func(c *fiber.Ctx) error {
		return c.JSON(bareReply{Status: "ok", OK: true, GeneratedAt: time.Now().UTC()})
	})
	return app
}

// runBareFiber serves newBareApp on --addr until ctx is done (SIGTERM).
func runBareFiber(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(bareFiberCmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen `address`")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "httpbench %s: %v\n", bareFiberCmd, err)
		return exitFailure
	}
	app := newBareApp()
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	fmt.Fprintf(stdout, "httpbench %s: serving http://%s%s\n", bareFiberCmd, ln.Addr(), barePath)
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "httpbench %s: %v\n", bareFiberCmd, err)
		return exitFailure
	case <-ctx.Done():
	}
	if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
		fmt.Fprintf(stderr, "httpbench %s: shutdown: %v\n", bareFiberCmd, err)
		return exitFailure
	}
	return exitOK
}
