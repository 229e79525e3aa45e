package ai_test

import (
	"context"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
)

// BenchmarkNodeReplyFake is the package's own cost per chat reply with a
// zero-latency provider: text checks, the timeout context, the call and
// the reply. The /api/chat benchmark of the route layer builds on it.
func BenchmarkNodeReplyFake(b *testing.B) {
	fake := &aitest.Counting{}
	reg, err := ai.NewRegistry(ai.Config{}, ai.Options{Providers: map[string]ai.Provider{"S2_CASE": fake}})
	if err != nil {
		b.Fatal(err)
	}
	n, _ := reg.Chat(ai.DefaultChatNode)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := n.Reply(ctx, "Who may verify the ledger?"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNodeReplySDK is one reply through each official SDK against a
// local fake server on 127.0.0.1 (HTTP, JSON encoding and decoding
// included): what the SDK layer adds before any real provider latency.
func BenchmarkNodeReplySDK(b *testing.B) {
	for _, w := range wires {
		b.Run(string(w.kind), func(b *testing.B) {
			srv := w.server(b, aitest.Script{})
			cfg := ai.Config{Nodes: []ai.NodeConfig{{Designation: "S2_CASE", Provider: w.kind, Model: w.model, BaseURL: w.baseURL(srv), KeyEnv: "K"}}}
			reg, err := ai.NewRegistry(cfg, ai.Options{Keys: map[string]string{"K": testKey}})
			if err != nil {
				b.Fatal(err)
			}
			n, _ := reg.Chat("S2_CASE")
			lat := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if _, err := n.Reply(context.Background(), "Who may verify the ledger?"); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}
