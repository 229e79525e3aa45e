package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
	"github.com/proofsite/proofsite/live/ai/voice"
	"github.com/proofsite/proofsite/site/content"
)

// chatEdgeCmd is the hidden subcommand that serves the live edge with a
// zero-latency provider behind S2_CASE, for the /api/chat target. A
// provider's own latency (hundreds of milliseconds) would measure the
// provider; this measures what the edge adds: the request pipeline, strict
// JSON, validation, the node call, the answer's receipt (two RFC 8785
// hashes and an ed25519 signature) and the encoding.
const chatEdgeCmd = "chat-edge"

// chatRequest is the chat target's request.
func chatRequest() *postRequest {
	return &postRequest{headers: [][2]string{{"Content-Type", "application/json"}},
		bodies: []string{`{"message":"How does anyone verify the ledger without trusting this server?","node":"S2_CASE"}`}}
}

// chatLimit lifts /api/chat's per-client limit (20 a minute) for the one
// loopback client wrk is; the limiter still runs on every request.
var chatLimit = live.Limit{Max: 1 << 30, Window: time.Second}

// runChatEdge serves the live edge on --addr, over the chain in --data
// (read without its private keys) and the site in --public, until ctx is done: every
// node answers offline except S2_CASE, whose provider answers at once.
func runChatEdge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(chatEdgeCmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen `address`")
	data := fs.String("data", "", "data `folder` of an initialised ledger")
	public := fs.String("public", "", "built site `folder`")
	contentDir := fs.String("content", "content", "content `folder`")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` on shutdown (go tool pprof)")
	if err := fs.Parse(args); err != nil || *data == "" || *public == "" {
		fmt.Fprintf(stderr, "usage: httpbench %s --data DIR --public DIR [--content DIR] [--addr HOST:PORT] [--cpuprofile FILE]\n", chatEdgeCmd)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "httpbench %s: %v\n", chatEdgeCmd, err)
		return exitFailure
	}
	site, err := content.Load(os.DirFS(*contentDir))
	if err != nil {
		return fail(err)
	}
	c, err := chain.Open(chain.Options{DataDir: *data, Seams: site.Charter.Ledger.Seams(), ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	if _, err := c.Walk(ctx); err != nil {
		return fail(err)
	}
	nodes, err := ai.NewRegistry(ai.Config{}, ai.Options{Providers: map[string]ai.Provider{
		ai.DefaultChatNode: &aitest.Counting{Text: "Fetch the public rows, recompute every hash and signature, and compare the verdict."}}})
	if err != nil {
		return fail(err)
	}
	speaker, err := voice.New(voice.Options{})
	if err != nil {
		return fail(err)
	}
	keys := map[string]ledger.PrivateKey{}
	for _, n := range ai.Roster {
		if keys[n.Designation], err = ledger.GenerateKey(nil); err != nil {
			return fail(err)
		}
	}
	srv, err := live.New(live.Options{PublicDir: *public, Site: &live.Site{Charter: *site.Charter}, Chain: c.Store(),
		AI: &live.AI{Nodes: nodes, Voice: speaker, Keys: keys}, Limits: map[string]live.Limit{"/api/chat": chatLimit}})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(err)
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fail(err)
		}
		defer stop()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "httpbench %s: serving http://%s/api/chat\n", chatEdgeCmd, ln.Addr())
	select {
	case err := <-errc:
		return fail(err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fail(err)
	}
	return exitOK
}

// startCPUProfile writes a CPU profile to path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
