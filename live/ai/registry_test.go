package ai_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/proofsite/proofsite/ledger/charter"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
)

func TestRegistryDefaultsOffline(t *testing.T) {
	reg, err := ai.NewRegistry(ai.Config{}, ai.Options{Documents: loadArticles(t)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range reg.Nodes() {
		i := n.Info()
		got = append(got, i.Designation+"/"+string(i.Role)+"/"+i.Name)
		if i.Provider != ai.KindOffline || i.Model != ai.OfflineModel || i.Notice != "" {
			t.Errorf("%s: %+v, want offline without notice", i.Designation, i)
		}
	}
	want := "S1_PLEX/chat/ S2_CASE/chat/ S3_TARS/chat/ S4_KIPP/chat/ S6_FORGE/chat/ S5_LOCUS/airlock/Ember S17_LUMEN/airlock/Lumen"
	if strings.Join(got, " ") != want {
		t.Errorf("nodes = %s, want %s", strings.Join(got, " "), want)
	}
	n, err := reg.Chat(ai.DefaultChatNode)
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Reply(context.Background(), "Who is the Bridge?")
	if err != nil || r.Node != "S2_CASE" || r.Provider != ai.KindOffline || r.Model != ai.OfflineModel || len(r.Citations) == 0 {
		t.Errorf("Reply = %+v, %v", r, err)
	}
}

func TestRegistryLookups(t *testing.T) {
	reg, err := ai.NewRegistry(ai.Config{}, ai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		get  func() (*ai.Node, error)
		want string // designation, or "" for ErrUnknownNode
	}{
		{func() (*ai.Node, error) { return reg.Chat("S6_FORGE") }, "S6_FORGE"},
		{func() (*ai.Node, error) { return reg.Chat("S5_LOCUS") }, ""}, // an airlock node is not a chat node
		{func() (*ai.Node, error) { return reg.Chat("s2_case") }, ""},
		{func() (*ai.Node, error) { return reg.Chat("") }, ""},
		{func() (*ai.Node, error) { return reg.Airlock("Ember") }, "S5_LOCUS"},
		{func() (*ai.Node, error) { return reg.Airlock("Lumen") }, "S17_LUMEN"},
		{func() (*ai.Node, error) { return reg.Airlock("S17_LUMEN") }, "S17_LUMEN"},
		{func() (*ai.Node, error) { return reg.Airlock("S2_CASE") }, ""},
		{func() (*ai.Node, error) { return reg.Airlock("ember") }, ""},
	} {
		n, err := tc.get()
		if tc.want == "" {
			if !errors.Is(err, ai.ErrUnknownNode) {
				t.Errorf("got %v, %v; want ErrUnknownNode", n, err)
			}
			continue
		}
		if err != nil || n.Info().Designation != tc.want {
			t.Errorf("got %v, %v; want %s", n, err, tc.want)
		}
	}
	if len(reg.ChatNodes()) != 5 {
		t.Errorf("%d chat nodes, want 5", len(reg.ChatNodes()))
	}
}

// TestNodeWithoutKeyAnswersOffline: a node configured for a provider whose
// key is not set answers offline, says so, and logs the variable's name
// only.
func TestNodeWithoutKeyAnswersOffline(t *testing.T) {
	srv := aitest.NewAnthropicServer(t, aitest.Script{})
	cfg := ai.Config{Nodes: []ai.NodeConfig{{Designation: "S3_TARS", Provider: ai.KindAnthropic, Model: aitest.AnthropicModel, BaseURL: srv.URL, KeyEnv: "TARS_KEY"}}}
	var logs bytes.Buffer
	for _, keys := range []map[string]string{nil, {"TARS_KEY": ""}, {"OTHER": testKey}} {
		logs.Reset()
		reg, err := ai.NewRegistry(cfg, ai.Options{Keys: keys, Documents: loadArticles(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := reg.Chat("S3_TARS")
		r, err := n.Reply(context.Background(), "Who is the Bridge?")
		if err != nil {
			t.Fatal(err)
		}
		if r.Provider != ai.KindOffline || r.Model != ai.OfflineModel || !strings.Contains(r.Notice, "no key is set") || !strings.Contains(r.Notice, "answers offline") {
			t.Errorf("keys %v: reply %+v, want offline with a notice", keys, r)
		}
		if n.Info().Notice != r.Notice || n.Info().Provider != ai.KindOffline {
			t.Errorf("Info = %+v", n.Info())
		}
		if !strings.Contains(logs.String(), "TARS_KEY") || strings.Contains(logs.String(), testKey) {
			t.Errorf("log = %q", logs.String())
		}
	}
	if srv.Requests() != 0 {
		t.Errorf("the provider was called %d times", srv.Requests())
	}
}

// countingNodes returns a registry whose S2_CASE (a chat node) and Ember
// (an airlock) both answer through one counting fake, and those two nodes.
func countingNodes(t *testing.T) (*aitest.Counting, *ai.Registry, *ai.Node, *ai.Node) {
	t.Helper()
	fake := &aitest.Counting{}
	reg, err := ai.NewRegistry(ai.Config{}, ai.Options{Providers: map[string]ai.Provider{"S2_CASE": fake, "S5_LOCUS": fake}})
	if err != nil {
		t.Fatal(err)
	}
	chat, _ := reg.Chat("S2_CASE")
	ember, _ := reg.Airlock("Ember")
	return fake, reg, chat, ember
}

// TestRejectedTextNeverReachesProvider: a message that fails the checks
// is refused before any provider call.
func TestRejectedTextNeverReachesProvider(t *testing.T) {
	fake, reg, chat, ember := countingNodes(t)
	for _, tc := range []struct {
		text string
		is   error
	}{
		{"", ai.ErrEmptyText},
		{" \n\t ", ai.ErrEmptyText},
		{strings.Repeat("x", ai.MaxTextRunes+1), ai.ErrTextTooLong},
		{strings.Repeat("é", ai.MaxTextRunes+1), ai.ErrTextTooLong},
		{"bad \xff utf-8", ai.ErrInvalidText},
		{"nul \x00 byte", ai.ErrInvalidText},
		{"escape \x1b[31m", ai.ErrInvalidText},
	} {
		for _, n := range []*ai.Node{chat, ember} {
			if _, err := n.Reply(context.Background(), tc.text); !errors.Is(err, tc.is) {
				t.Errorf("%s Reply(%.20q) = %v, want %v", n.Info().Designation, tc.text, err, tc.is)
			}
			if _, err := n.Stream(context.Background(), tc.text, func(string) error { return nil }); !errors.Is(err, tc.is) {
				t.Errorf("%s Stream(%.20q) = %v, want %v", n.Info().Designation, tc.text, err, tc.is)
			}
		}
		if _, err := reg.Pulse(context.Background(), tc.text); !errors.Is(err, tc.is) {
			t.Errorf("Pulse(%.20q) = %v, want %v", tc.text, err, tc.is)
		}
	}
	if fake.Calls() != 0 {
		t.Errorf("%d provider calls for rejected text", fake.Calls())
	}
	// The longest allowed text passes, trimmed.
	if _, err := chat.Reply(context.Background(), " "+strings.Repeat("é", ai.MaxTextRunes)+"\n"); err != nil || fake.Calls() != 1 {
		t.Errorf("longest text: %v, %d calls", err, fake.Calls())
	}
	if got := fake.Last().Message; got != strings.Repeat("é", ai.MaxTextRunes) {
		t.Errorf("provider saw %d bytes, want the trimmed text", len(got))
	}
	if sys := fake.Last().System; !strings.Contains(sys, "S2_CASE") || !strings.Contains(sys, "no private context") {
		t.Errorf("system = %q", sys)
	}
}

// barrier is a provider that answers only once all its expected callers
// have arrived: a pulse that asked the nodes one after another would never
// finish (the test's own deadline would end it).
type barrier struct {
	wg sync.WaitGroup
}

func (b *barrier) Complete(ctx context.Context, req ai.Request) (ai.Completion, error) {
	b.wg.Done()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return ai.Completion{Text: "together", Provider: "fake", Model: "barrier"}, nil
	case <-ctx.Done():
		return ai.Completion{}, ctx.Err()
	}
}

func (b *barrier) Stream(ctx context.Context, req ai.Request, delta func(string) error) (ai.Completion, error) {
	return b.Complete(ctx, req)
}

func TestPulseAsksEveryNodeAtOnce(t *testing.T) {
	b := &barrier{}
	b.wg.Add(3)
	slow := aitest.NewOpenAIServer(t, aitest.Script{Delay: 5 * time.Second})
	broken := aitest.NewAnthropicServer(t, aitest.Script{Status: 500})
	cfg := ai.Config{Timeout: charter.Duration(10 * time.Second), Nodes: []ai.NodeConfig{
		{Designation: "S3_TARS", Provider: ai.KindAnthropic, Model: aitest.AnthropicModel, BaseURL: broken.URL, KeyEnv: "K"},
		{Designation: "S4_KIPP", Provider: ai.KindOpenAI, Model: aitest.OpenAIModel, BaseURL: slow.URL + "/v1", Timeout: charter.Duration(200 * time.Millisecond)},
	}}
	reg, err := ai.NewRegistry(cfg, ai.Options{
		Keys:      map[string]string{"K": testKey},
		Providers: map[string]ai.Provider{"S1_PLEX": b, "S2_CASE": b, "S6_FORGE": b},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := reg.Pulse(ctx, "  the ledger  ")
	if err != nil {
		t.Fatal(err)
	}
	if res.Topic != "the ledger" || res.Answered != 3 || len(res.Nodes) != 5 {
		t.Fatalf("pulse = %+v", res)
	}
	want := []ai.PulseEntry{
		{Reply: ai.Reply{Node: "S1_PLEX", Provider: "fake", Model: "barrier", Text: "together"}},
		{Reply: ai.Reply{Node: "S2_CASE", Provider: "fake", Model: "barrier", Text: "together"}},
		{Reply: ai.Reply{Node: "S3_TARS", Provider: ai.KindAnthropic, Model: aitest.AnthropicModel}, Error: "provider_error", Reason: ai.ReasonStatus, Status: 500},
		{Reply: ai.Reply{Node: "S4_KIPP", Provider: ai.KindOpenAI, Model: aitest.OpenAIModel}, Error: "timeout", Reason: ai.ReasonTimeout},
		{Reply: ai.Reply{Node: "S6_FORGE", Provider: "fake", Model: "barrier", Text: "together"}},
	}
	for i, e := range res.Nodes {
		w := want[i]
		if e.Node != w.Node || e.Provider != w.Provider || e.Model != w.Model || e.Text != w.Text || e.Error != w.Error || e.Reason != w.Reason || e.Status != w.Status || e.Citations == nil {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}
	if broken.Requests() != 1 || slow.Requests() != 1 {
		t.Errorf("requests: broken %d, slow %d; want 1 each", broken.Requests(), slow.Requests())
	}
}

func TestPulseCancelled(t *testing.T) {
	slow := aitest.NewOpenAIServer(t, aitest.Script{Delay: 5 * time.Second})
	cfg := ai.Config{Nodes: []ai.NodeConfig{{Designation: "S4_KIPP", Provider: ai.KindOpenAI, Model: aitest.OpenAIModel, BaseURL: slow.URL + "/v1"}}}
	reg, err := ai.NewRegistry(cfg, ai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := reg.Pulse(ctx, "the ledger"); !errors.Is(err, context.Canceled) {
		t.Errorf("Pulse = %v, want context.Canceled", err)
	}
}

// TestInvalidConfig: a configuration with problems (charter.AI.Problems,
// tested in ledger/charter) builds no registry.
func TestInvalidConfig(t *testing.T) {
	cfg := ai.Config{MaxTokens: -1, Nodes: []ai.NodeConfig{{Designation: "S8_ATLAS", Provider: "openai-compatible"}}}
	_, err := ai.NewRegistry(cfg, ai.Options{})
	if !errors.Is(err, ai.ErrInvalidConfig) {
		t.Fatalf("NewRegistry = %v, want ErrInvalidConfig", err)
	}
	for _, want := range []string{"$.ai.max_tokens", "$.ai.nodes[0].designation", "$.ai.nodes[0].provider"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not name %s", err, want)
		}
	}
}

// TestConfigFromSiteYAML decodes the documented site.yaml section with the
// YAML library the site model uses.
func TestConfigFromSiteYAML(t *testing.T) {
	raw, err := os.ReadFile("testdata/site-ai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		AI ai.Config `yaml:"ai"`
	}
	if err := yaml.UnmarshalWithOptions(raw, &doc, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	if p := doc.AI.Problems(); len(p) > 0 {
		t.Fatal(p)
	}
	c := doc.AI
	if time.Duration(c.Timeout) != 30*time.Second || c.MaxTokens != 1024 || len(c.Nodes) != 5 || time.Duration(c.Nodes[3].Timeout) != time.Minute || c.Nodes[3].BaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("decoded %+v", c)
	}
	if got := strings.Join(c.KeyEnvs(), ","); got != "ANTHROPIC_API_KEY,OPENAI_API_KEY" {
		t.Errorf("KeyEnvs = %s", got)
	}
	// With no keys in the environment, every keyed node answers offline
	// and says so; the Ollama node keeps its provider.
	reg, err := ai.NewRegistry(c, ai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range reg.Nodes() {
		i := n.Info()
		wantProvider := ai.KindOffline
		if i.Designation == "S4_KIPP" {
			wantProvider = ai.KindOpenAI
		}
		if i.Provider != wantProvider {
			t.Errorf("%s answers through %s, want %s", i.Designation, i.Provider, wantProvider)
		}
	}
}

// deadlines is a Provider that records whether each call's context has a
// deadline; instantDeadlines is the same provider, marked instant.
type deadlines struct {
	mu  sync.Mutex
	got []bool
}

func (d *deadlines) record(ctx context.Context) (ai.Completion, error) {
	_, ok := ctx.Deadline()
	d.mu.Lock()
	d.got = append(d.got, ok)
	d.mu.Unlock()
	return ai.Completion{Text: "ok", Provider: aitest.Provider, Model: aitest.Model}, nil
}

func (d *deadlines) Complete(ctx context.Context, _ ai.Request) (ai.Completion, error) {
	return d.record(ctx)
}

func (d *deadlines) Stream(ctx context.Context, _ ai.Request, _ func(string) error) (ai.Completion, error) {
	return d.record(ctx)
}

type instantDeadlines struct{ deadlines }

func (*instantDeadlines) Instant() {}

// TestInstantProviderHasNoTimer: a node times every call of a provider
// that may wait (the SDKs, a slow fake), and every stream; only an
// instant provider's Complete (the offline responder, aitest.Counting)
// runs without a timer.
func TestInstantProviderHasNoTimer(t *testing.T) {
	waits, instant := &deadlines{}, &instantDeadlines{}
	reg, err := ai.NewRegistry(ai.Config{}, ai.Options{Documents: loadArticles(t),
		Providers: map[string]ai.Provider{"S1_PLEX": waits, "S2_CASE": instant}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"S1_PLEX", "S2_CASE"} {
		n, err := reg.Chat(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Reply(context.Background(), "Hello?"); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Stream(context.Background(), "Hello?", func(string) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if want := []bool{true, true}; !slices.Equal(waits.got, want) {
		t.Errorf("a provider that may wait: deadlines %v (reply, stream), want %v", waits.got, want)
	}
	if want := []bool{false, true}; !slices.Equal(instant.got, want) {
		t.Errorf("an instant provider: deadlines %v (reply, stream), want %v", instant.got, want)
	}
}
