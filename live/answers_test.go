package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hajimehoshi/go-mp3"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/receipt"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
	"github.com/proofsite/proofsite/live/ai/voice"
)

// The AI routes against the real server on 127.0.0.1: the offline
// responder, the official SDKs against local fake servers, counting fakes
// where a test proves that a refused request reaches no provider, the real
// espeak-ng and lame, and receipts checked by ledger/receipt and by the
// server's own verification route.

// testDocuments are what the offline responder quotes in these tests.
var testDocuments = []ai.Document{
	{Ref: "Article 17", Title: "Ember and the public airlock", URL: "/constitution/article-17.html",
		Text: "Ember answers the public through the airlock. No private memory or private context is given to the airlock, and session context is never treated as authority."},
	{Ref: "Article 5", Title: "The ledger", URL: "/constitution/article-05.html",
		Text: "Every decision that matters to the public is written to an append-only ledger. Each block commits to its predecessor by hash."},
}

// aiServer is a server with the AI routes on two loopback listeners.
type aiServer struct {
	srv       *Server
	main, api string
	keys      receipt.Keyring
}

// aiSetup is what a test changes of the AI: the configuration, keys, the
// providers that replace nodes' and the route limits.
type aiSetup struct {
	cfg       ai.Config
	env       map[string]string
	providers map[string]ai.Provider
	limits    map[string]Limit
	eval      *Evaluation // the evaluation routes too, when set
}

func startAIServer(t *testing.T, setup aiSetup) *aiServer {
	t.Helper()
	srv, ring := newAIServer(t, setup)
	return &aiServer{srv: srv, main: listenLoopback(t, srv.Serve), api: listenLoopback(t, srv.ServeAPI), keys: ring}
}

// newAIServer is a server with the AI routes, and the keyring of its node
// keys.
func newAIServer(t testing.TB, setup aiSetup) (*Server, receipt.Keyring) {
	t.Helper()
	reg, err := ai.NewRegistry(setup.cfg, ai.Options{Keys: setup.env, Documents: testDocuments, Providers: setup.providers})
	if err != nil {
		t.Fatal(err)
	}
	v, err := voice.New(voice.Options{})
	if err != nil {
		t.Fatalf("the voice needs espeak-ng and lame (make tools installs them): %v", err)
	}
	keys := map[string]ledger.PrivateKey{}
	var pins []receipt.NodeKey
	for _, n := range ai.Roster {
		k, err := ledger.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		keys[n.Designation] = k
		pins = append(pins, receipt.NodeKey{Node: n.Designation, Key: k.Public()})
	}
	ring, err := receipt.NewKeyring(pins...)
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, Options{Chain: testChain(t), AI: &AI{Nodes: reg, Voice: v, Keys: keys}, Eval: setup.eval, Limits: setup.limits}), ring
}

// post sends a JSON body (a string, or a value to encode) to addr.
func post(t *testing.T, addr, path string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

func getURL(t *testing.T, addr, target string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

// answerOf decodes an answer and checks its receipt with ledger/receipt
// against the request and the answer as received.
func (s *aiServer) answerOf(t *testing.T, resp *http.Response, body []byte, request string) map[string]any {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var a map[string]any
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	rc, err := json.Marshal(a["receipt"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(rc, s.keys, receipt.Evidence{Request: []byte(request), Response: body}); err != nil {
		t.Errorf("the receipt does not verify: %v\n%s", err, body)
	}
	// The answer is sent as it was signed: its canonical JSON, the receipt
	// last (aiEdge.signed).
	if i := bytes.LastIndex(body, []byte(`,"receipt":`)); i < 0 || !bytes.HasSuffix(bytes.TrimSuffix(body, []byte("\n")), append(append(rc[:0:0], rc...), '}')) {
		t.Errorf("the receipt is not the answer's last member:\n%s", body)
	} else if canon, err := ledger.Canonicalize(append(body[:i:i], '}')); err != nil || !bytes.Equal(canon, append(body[:i:i], '}')) {
		t.Errorf("the answer before its receipt is not canonical JSON (%v):\n%s", err, body)
	}
	return a
}

// isolated checks the isolation every public answer states.
func isolated(t *testing.T, a map[string]any) {
	t.Helper()
	iso, _ := a["isolation"].(map[string]any)
	if iso == nil || iso["memory"] != false || iso["private_context"] != false || iso["session_context_is_authority"] != false {
		t.Errorf("isolation %v", a["isolation"])
	}
}

func TestChatOffline(t *testing.T) {
	s := startAIServer(t, aiSetup{})
	const req = `{"message":"Is session context treated as authority on the airlock?"}`
	resp, body := post(t, s.main, "/api/chat", req)
	a := s.answerOf(t, resp, body, req)
	if a["node"] != "S2_CASE" || a["requested_node"] != "S2_CASE" || a["provider"] != "offline" || a["model"] != ai.OfflineModel {
		t.Errorf("answer %v", a)
	}
	cites, _ := a["citations"].([]any)
	if len(cites) == 0 || cites[0].(map[string]any)["ref"] != "Article 17" {
		t.Errorf("citations %v", a["citations"])
	}
	if rc := a["receipt"].(map[string]any); rc["route"] != "/api/chat" || rc["node"] != "S2_CASE" || rc["provider"] != "offline" {
		t.Errorf("receipt %v", rc)
	}
	isolated(t, a)
	if _, ok := a["generated_at"]; !ok {
		t.Error("no generated_at")
	}
}

// TestChatNodeTreatment: node names a chat node of the roster, is kept as
// requested_node, and S2_CASE answers.
func TestChatNodeTreatment(t *testing.T) {
	s2, s1 := &aitest.Counting{Text: "S2 here."}, &aitest.Counting{Text: "S1 here."}
	s := startAIServer(t, aiSetup{providers: map[string]ai.Provider{"S2_CASE": s2, "S1_PLEX": s1}})
	for _, node := range []string{"S1_PLEX", "S6_FORGE", "S2_CASE"} {
		req := fmt.Sprintf(`{"message":"hello","node":%q}`, node)
		resp, body := post(t, s.main, "/api/chat", req)
		a := s.answerOf(t, resp, body, req)
		if a["node"] != "S2_CASE" || a["requested_node"] != node || a["reply"] != "S2 here." || a["provider"] != string(aitest.Provider) {
			t.Errorf("node %s: %v", node, a)
		}
	}
	for _, node := range []string{"S5_LOCUS", "Ember", "s2_case", ""} {
		resp, body := post(t, s.main, "/api/chat", fmt.Sprintf(`{"message":"hello","node":%q}`, node))
		checkProblem(t, resp, body, http.StatusBadRequest, "invalid-request")
	}
	if s2.Calls() != 3 || s1.Calls() != 0 {
		t.Errorf("S2_CASE called %d times, S1_PLEX %d", s2.Calls(), s1.Calls())
	}
	if got := s2.Last(); got.Message != "hello" || !strings.Contains(got.System, "S2_CASE") {
		t.Errorf("the provider was asked %+v", got)
	}
}

// sdkWire is one official SDK with its fake server.
type sdkWire struct {
	name  string
	kind  ai.Kind
	model string
	start func(testing.TB, aitest.Script) *aitest.Server
	path  string // appended to the fake server's URL for the base URL
}

var sdkWires = []sdkWire{
	{"anthropic", ai.KindAnthropic, aitest.AnthropicModel, aitest.NewAnthropicServer, ""},
	{"openai", ai.KindOpenAI, aitest.OpenAIModel, aitest.NewOpenAIServer, "/v1"},
}

// sdkSetup answers S2_CASE through the wire's SDK at srv.
func (w sdkWire) setup(srv *aitest.Server, timeout time.Duration) aiSetup {
	return aiSetup{
		cfg: ai.Config{Timeout: charter.Duration(timeout), Nodes: []ai.NodeConfig{{Designation: "S2_CASE", Provider: w.kind, Model: w.model,
			BaseURL: srv.URL + w.path, KeyEnv: "PROVIDER_KEY"}}},
		env: map[string]string{"PROVIDER_KEY": "sk-test-secret-key"},
	}
}

func TestChatThroughSDKs(t *testing.T) {
	for _, w := range sdkWires {
		t.Run(w.name, func(t *testing.T) {
			fake := w.start(t, aitest.Script{Text: "Ledger blocks are hash-chained.", Chunks: 4})
			s := startAIServer(t, w.setup(fake, 10*time.Second))
			const req = `{"message":"How is the ledger chained?"}`
			resp, body := post(t, s.main, "/api/chat", req)
			a := s.answerOf(t, resp, body, req)
			if a["reply"] != "Ledger blocks are hash-chained." || a["provider"] != string(w.kind) || a["model"] != w.model {
				t.Errorf("answer %v", a)
			}
			rc := a["receipt"].(map[string]any)
			if rc["provider"] != string(w.kind) || rc["model"] != w.model {
				t.Errorf("receipt %v", rc)
			}
			// The stream: deltas as the provider writes, then the signed answer.
			resp, body = post(t, s.main, "/api/chat", req, "Accept", "text/event-stream")
			events := sseEvents(t, resp, body)
			var text strings.Builder
			for _, ev := range events[:len(events)-1] {
				if ev.name != "delta" {
					t.Fatalf("event %s before the reply", ev.name)
				}
				var d struct{ Text string }
				json.Unmarshal([]byte(ev.data), &d)
				text.WriteString(d.Text)
			}
			last := events[len(events)-1]
			if len(events) < 3 || last.name != "reply" || text.String() != "Ledger blocks are hash-chained." {
				t.Fatalf("events %+v", events)
			}
			a = s.answerOf(t, &http.Response{StatusCode: 200}, []byte(last.data), req)
			if a["reply"] != text.String() || a["provider"] != string(w.kind) {
				t.Errorf("streamed answer %v", a)
			}
			if got := fake.Last().Header.Get(map[ai.Kind]string{ai.KindAnthropic: "X-Api-Key", ai.KindOpenAI: "Authorization"}[w.kind]); !strings.Contains(got, "sk-test-secret-key") {
				t.Errorf("the SDK sent key header %q", got)
			}
		})
	}
}

type sseEvent2 struct{ name, data string }

// sseEvents reads a text/event-stream body.
func sseEvents(t *testing.T, resp *http.Response, body []byte) []sseEvent2 {
	t.Helper()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var out []sseEvent2
	var ev sseEvent2
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, ev)
			ev = sseEvent2{}
		case strings.HasPrefix(line, "event: "):
			ev.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		}
	}
	if len(out) == 0 {
		t.Fatal("no events")
	}
	return out
}

// TestProviderFailures: a provider that fails is a 502 (504 for its
// timeout) that carries none of its text, in JSON and before a stream's
// first byte; after the first byte, an error event.
func TestProviderFailures(t *testing.T) {
	const leak = "upstream-secret-diagnostic"
	for _, w := range sdkWires {
		t.Run(w.name, func(t *testing.T) {
			errorBody := fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":%q},"message":%q}`, leak, leak)
			for _, tc := range []struct {
				desc    string
				script  aitest.Script
				timeout time.Duration
				status  int
				slug    string
			}{
				{"error status", aitest.Script{Status: 500, ErrorBody: errorBody}, 5 * time.Second, 502, "provider-failed"},
				{"bad request upstream", aitest.Script{Status: 400, ErrorBody: errorBody}, 5 * time.Second, 502, "provider-failed"},
				{"malformed", aitest.Script{Malformed: true}, 5 * time.Second, 502, "provider-failed"},
				{"timeout", aitest.Script{Delay: 3 * time.Second}, 300 * time.Millisecond, 504, "provider-timeout"},
			} {
				fake := w.start(t, tc.script)
				s := startAIServer(t, w.setup(fake, tc.timeout))
				for _, accept := range []string{"application/json", "text/event-stream"} {
					resp, body := post(t, s.main, "/api/chat", `{"message":"hi"}`, "Accept", accept)
					checkProblem(t, resp, body, tc.status, tc.slug)
					if bytes.Contains(body, []byte(leak)) || bytes.Contains(body, []byte("sk-test")) {
						t.Errorf("%s: the problem carries provider text: %s", tc.desc, body)
					}
					if !bytes.Contains(body, []byte("S2_CASE")) {
						t.Errorf("%s: the problem does not name the node: %s", tc.desc, body)
					}
				}
			}
			// A stream that breaks after its first delta ends with an error event.
			fake := w.start(t, aitest.Script{StreamError: true})
			s := startAIServer(t, w.setup(fake, 5*time.Second))
			resp, body := post(t, s.main, "/api/chat", `{"message":"hi"}`, "Accept", "text/event-stream")
			events := sseEvents(t, resp, body)
			last := events[len(events)-1]
			var p struct{ Status int }
			json.Unmarshal([]byte(last.data), &p)
			if events[0].name != "delta" || last.name != "error" || p.Status != 502 || strings.Contains(string(body), "Overloaded") {
				t.Errorf("events %+v", events)
			}
		})
	}
}

// TestRefusedRequestsReachNoProvider: what the pipeline or the schema
// refuses never calls a provider.
func TestRefusedRequestsReachNoProvider(t *testing.T) {
	fake := &aitest.Counting{}
	all := map[string]ai.Provider{}
	for _, n := range ai.Roster {
		all[n.Designation] = fake
	}
	s := startAIServer(t, aiSetup{providers: all, limits: map[string]Limit{"/api/chat": {Max: 2, Window: time.Hour}}})
	long := strings.Repeat("a", ai.MaxTextRunes+1)
	for _, tc := range []struct {
		desc, path, body string
		status           int
		slug             string
	}{
		{"bad JSON", "/api/ember", `{"message": "hi"`, 400, "malformed-json"},
		{"unknown member", "/api/ember", `{"message":"hi","session_id":"abc"}`, 400, "unknown-member"},
		{"session context", "/api/lumen", `{"message":"hi","context":{"memory":"all"}}`, 400, "unknown-member"},
		{"duplicate member", "/api/pulse", `{"topic":"a","topic":"b"}`, 400, "duplicate-member"},
		{"member case", "/api/v1/query", `{"Question":"hi"}`, 400, "member-case"},
		{"query extra field", "/api/v1/query", `{"question":"hi","session":"s"}`, 400, "unknown-member"},
		{"query node", "/api/v1/query", `{"question":"hi","node":"Case"}`, 400, "invalid-request"},
		{"too long", "/api/ember", `{"message":"` + long + `"}`, 400, "invalid-request"},
		{"empty", "/api/ember", `{"message":""}`, 400, "invalid-request"},
		{"white space", "/api/ember", `{"message":"   "}`, 400, "invalid-request"},
		{"control character", "/api/lumen", `{"message":"hi\u0007"}`, 400, "invalid-request"},
		{"over the body limit", "/api/ember", `{"message":"` + strings.Repeat("a", DefaultBodyBytes) + `"}`, 413, "body-too-large"},
		{"not JSON", "/api/pulse", `topic=x`, 400, "malformed-json"},
	} {
		resp, body := post(t, s.main, tc.path, tc.body)
		checkProblem(t, resp, body, tc.status, tc.slug)
		if tc.slug == "unknown-member" && !strings.Contains(string(body), "session context is never accepted as authority") {
			t.Errorf("%s: %s", tc.desc, body)
		}
	}
	resp, body := getURL(t, s.api, "/api/v1/query?question=hi&session_context=admin")
	checkProblem(t, resp, body, 400, "unknown-parameter")
	// Over the rate: the third chat request of the hour.
	for range 2 {
		if resp, body := post(t, s.main, "/api/chat", `{"message":"hi"}`); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	calls := fake.Calls()
	resp, body = post(t, s.main, "/api/chat", `{"message":"hi"}`)
	checkProblem(t, resp, body, 429, "rate-limited")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if calls != 2 || fake.Calls() != 2 {
		t.Errorf("the provider was called %d times, want 2 (the accepted chats)", fake.Calls())
	}
}

func TestPulse(t *testing.T) {
	ok := &aitest.Counting{Text: "Agreed."}
	broken := &aitest.Counting{Err: &ai.ProviderError{Provider: ai.KindOpenAI, Model: "m", Reason: ai.ReasonStatus, Status: 503}}
	s := startAIServer(t, aiSetup{providers: map[string]ai.Provider{"S1_PLEX": ok, "S2_CASE": ok, "S3_TARS": broken, "S4_KIPP": ok}})
	const req = `{"topic":"Should the ledger be hash-chained?"}`
	resp, body := post(t, s.main, "/api/pulse", req)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var p struct {
		Answered int
		Nodes    []json.RawMessage
	}
	json.Unmarshal(body, &p)
	if p.Answered != 4 || len(p.Nodes) != 5 {
		t.Fatalf("pulse %s", body)
	}
	for i, raw := range p.Nodes {
		var e map[string]any
		json.Unmarshal(raw, &e)
		want := ai.Roster[i].Designation
		if e["node"] != want {
			t.Errorf("entry %d is %v, want %s", i, e["node"], want)
		}
		if want == "S3_TARS" {
			if e["error"] != "provider_error" || e["reason"] != "error_status" || e["receipt"] != nil {
				t.Errorf("failed entry %v", e)
			}
			continue
		}
		isolated(t, e)
		rc, _ := json.Marshal(e["receipt"])
		v, err := receipt.Verify(rc, s.keys, receipt.Evidence{Request: []byte(req), Response: raw})
		if err != nil || v.Receipt.Node != want || v.Receipt.Route != "/api/pulse" {
			t.Errorf("%s: receipt %v: %v", want, v.Receipt, err)
		}
	}
	if ok.Calls() != 3 || broken.Calls() != 1 {
		t.Errorf("calls %d, %d", ok.Calls(), broken.Calls())
	}
}

func TestAirlock(t *testing.T) {
	s := startAIServer(t, aiSetup{})
	for _, tc := range []struct{ path, node string }{{"/api/ember", "S5_LOCUS"}, {"/api/lumen", "S17_LUMEN"}} {
		const req = `{"message":"What does the ledger commit to?"}`
		resp, body := post(t, s.main, tc.path, req)
		a := s.answerOf(t, resp, body, req)
		if a["node"] != tc.node || a["provider"] != "offline" || a["receipt"].(map[string]any)["route"] != tc.path {
			t.Errorf("%s: %v", tc.path, a)
		}
		isolated(t, a)
		// The airlock is not on the API origin.
		resp, body = post(t, s.api, tc.path, req)
		checkProblem(t, resp, body, 404, "not-found")
	}
}

func TestQuery(t *testing.T) {
	s := startAIServer(t, aiSetup{})
	for _, addr := range []string{s.main, s.api} {
		for _, tc := range []struct{ body, node, name string }{
			{`{"question":"What does the ledger commit to?"}`, "S5_LOCUS", "Ember"},
			{`{"question":"What does the ledger commit to?","node":"Lumen"}`, "S17_LUMEN", "Lumen"},
			{`{"question":"What does the ledger commit to?","node":"Ember"}`, "S5_LOCUS", "Ember"},
		} {
			resp, body := post(t, addr, "/api/v1/query", tc.body)
			a := s.answerOf(t, resp, body, tc.body)
			if a["node"] != tc.node || a["receipt"].(map[string]any)["route"] != "/api/v1/query" {
				t.Errorf("%s: %v", tc.body, a)
			}
		}
		// GET: the request is the canonical JSON of the parameters given.
		resp, body := getURL(t, addr, "/api/v1/query?node=Lumen&question="+url.QueryEscape("What does the ledger commit to?"))
		a := s.answerOf(t, resp, body, `{"question":"What does the ledger commit to?","node":"Lumen"}`)
		if a["node"] != "S17_LUMEN" {
			t.Errorf("GET: %v", a)
		}
		resp, body = getURL(t, addr, "/api/v1/query?node=Case&question=hi")
		checkProblem(t, resp, body, 400, "invalid-request")
		resp, body = getURL(t, addr, "/api/v1/query")
		checkProblem(t, resp, body, 400, "invalid-request")
	}
	// What the server kept: counts and hashes, nothing else.
	counts, hashes := s.srv.ai.queries.snapshot()
	if counts["S5_LOCUS"] != 4 || counts["S17_LUMEN"] != 4 || len(counts) != 2 || len(hashes) != 8 {
		t.Errorf("kept %v and %d hashes", counts, len(hashes))
	}
	for _, h := range hashes {
		if len(h.Request) != 64 || len(h.Response) != 64 {
			t.Errorf("kept %+v", h)
		}
	}
}

func TestReceiptRoute(t *testing.T) {
	s := startAIServer(t, aiSetup{limits: map[string]Limit{"/api/agent/receipt": {Max: 100000, Window: time.Minute}}})
	const req = `{"message":"What does the ledger commit to?"}`
	_, answer := post(t, s.main, "/api/ember", req)
	var a struct{ Receipt json.RawMessage }
	json.Unmarshal(answer, &a)
	check := func(body string) (*http.Response, []byte) { return post(t, s.api, "/api/agent/receipt", body) }
	for _, body := range []string{
		`{"receipt":` + string(a.Receipt) + `}`,
		`{"receipt":` + string(a.Receipt) + `,"request":` + req + `,"response":` + string(answer) + `}`,
	} {
		resp, got := check(body)
		var v struct {
			Verified bool
			Key      ledger.PublishedKey
			Receipt  receipt.Receipt
			Checked  []string
		}
		if err := json.Unmarshal(got, &v); err != nil || resp.StatusCode != 200 || !v.Verified || v.Key.Node != "S5_LOCUS" || v.Key.Role != "node" ||
			string(v.Key.KeyID) != v.Receipt.KeyID {
			t.Errorf("%d %s", resp.StatusCode, got)
		}
	}
	// Every byte of the receipt changed in turn: never verified.
	for i := range len(a.Receipt) {
		rc := bytes.Clone(a.Receipt)
		rc[i] ^= 0x01
		resp, got := check(`{"receipt":` + string(rc) + `}`)
		if resp.StatusCode == 200 || bytes.Contains(got, []byte(`"verified":true`)) {
			t.Fatalf("byte %d changed: %d %s", i, resp.StatusCode, got)
		}
		if resp.StatusCode != 422 && resp.StatusCode != 400 {
			t.Fatalf("byte %d changed: %d %s", i, resp.StatusCode, got)
		}
	}
	for _, tc := range []struct{ desc, body, loc string }{
		{"a changed answer", `{"receipt":` + string(a.Receipt) + `,"response":` + strings.Replace(string(answer), "ledger", "Ledger", 1) + `}`, "body.receipt.response_sha256"},
		{"another request", `{"receipt":` + string(a.Receipt) + `,"request":{"message":"something else"}}`, "body.receipt.request_sha256"},
		{"a changed signature", `{"receipt":` + flipInValue(a.Receipt, "signature") + `}`, "body.receipt.signature"},
		{"a changed node", `{"receipt":` + strings.Replace(string(a.Receipt), "S5_LOCUS", "S17_LUMEN", 1) + `}`, "body.receipt.node"},
		{"a changed model", `{"receipt":` + strings.Replace(string(a.Receipt), ai.OfflineModel, "gpt-5", 1) + `}`, "body.receipt.signature"},
		{"a missing member", `{"receipt":` + strings.Replace(string(a.Receipt), `"route"`, `"rout"`, 1) + `}`, "body.receipt.route"},
	} {
		resp, got := check(tc.body)
		checkProblem(t, resp, got, 422, "receipt-not-verified")
		var p struct{ Errors []struct{ Location string } }
		json.Unmarshal(got, &p)
		if len(p.Errors) != 1 || p.Errors[0].Location != tc.loc {
			t.Errorf("%s: %s", tc.desc, got)
		}
	}
	resp, got := check(`{"receipt": "not a receipt"`)
	checkProblem(t, resp, got, 400, "malformed-json")
}

// flipInValue changes the first character of a receipt member's value.
func flipInValue(rc []byte, member string) string {
	s := string(rc)
	i := strings.Index(s, `"`+member+`":"`) + len(member) + 4
	c := byte('0')
	if s[i] == '0' {
		c = '1'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestVoice(t *testing.T) {
	s := startAIServer(t, aiSetup{limits: map[string]Limit{"/api/voice": {Max: 3, Window: time.Hour}}})
	const text = "The ledger is verified from public endpoints."
	resp, body := post(t, s.main, "/api/voice", fmt.Sprintf(`{"text":%q,"mode":"slow"}`, text))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" || resp.Header.Get("ETag") == "" ||
		resp.Header.Get("X-Voice-Backend") != "espeak-ng" {
		t.Fatalf("%d %v %.200s", resp.StatusCode, resp.Header, body)
	}
	dec, err := mp3.NewDecoder(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	seconds := float64(dec.Length()) / 4 / float64(dec.SampleRate())
	if seconds < 1.5 || seconds > 15 {
		t.Errorf("%.1f s of speech for %d characters", seconds, len(text))
	}
	resp, body = post(t, s.main, "/api/voice", `{"text":"hello","mode":"whisper"}`)
	checkProblem(t, resp, body, 400, "invalid-request")
	if !strings.Contains(string(body), "standard") || !strings.Contains(string(body), "slow") || !strings.Contains(string(body), "fast") {
		t.Errorf("the problem does not list the modes: %s", body)
	}
	resp, body = post(t, s.main, "/api/voice", fmt.Sprintf(`{"text":%q}`, strings.Repeat("a", voice.MaxTextRunes+1)))
	checkProblem(t, resp, body, 400, "invalid-request")
	resp, body = post(t, s.main, "/api/voice", `{"text":"hello"}`)
	checkProblem(t, resp, body, 429, "rate-limited")
}

// TestAIKeysPublished: the node keys are listed in /api/nodes and the
// collective status says how each node answers.
func TestAIKeysPublished(t *testing.T) {
	s := startAIServer(t, aiSetup{
		cfg: ai.Config{Nodes: []ai.NodeConfig{{Designation: "S17_LUMEN", Provider: ai.KindAnthropic, Model: "claude-x", KeyEnv: "ANTHROPIC_API_KEY"},
			{Designation: "S1_PLEX", Provider: ai.KindOpenAI, Model: "llama3.2", BaseURL: "http://127.0.0.1:1/v1"}}},
	})
	_, body := getURL(t, s.main, "/api/nodes")
	var nodes struct {
		ReceiptKeys []ledger.PublishedKey `json:"receipt_keys"`
	}
	json.Unmarshal(body, &nodes)
	if len(nodes.ReceiptKeys) != len(ai.Roster) {
		t.Fatalf("receipt keys %s", body)
	}
	var pins []receipt.NodeKey
	for _, k := range nodes.ReceiptKeys {
		pk, err := ledger.ParsePublicKeyHex(k.PublicKey)
		if err != nil || pk.ID() != k.KeyID || k.Role != "node" {
			t.Errorf("key %+v: %v", k, err)
		}
		pins = append(pins, receipt.NodeKey{Node: k.Node, Key: pk})
	}
	// The published keys verify a receipt the server issued.
	const req = `{"message":"hi"}`
	_, answer := post(t, s.main, "/api/lumen", req)
	var a struct{ Receipt json.RawMessage }
	json.Unmarshal(answer, &a)
	ring, _ := receipt.NewKeyring(pins...)
	if _, err := receipt.Verify(a.Receipt, ring, receipt.Evidence{Request: []byte(req), Response: answer}); err != nil {
		t.Error(err)
	}
	_, body = getURL(t, s.main, "/api/collective-status")
	var cs struct{ Nodes []CollectiveNode }
	json.Unmarshal(body, &cs)
	got := map[string]CollectiveNode{}
	for _, n := range cs.Nodes {
		got[n.Designation] = n
	}
	if n := got["S17_LUMEN"]; n.Status != "offline" || n.Answering == nil || !strings.Contains(n.Answering.Notice, "no key is set") {
		t.Errorf("S17_LUMEN: %+v", n)
	}
	if n := got["S1_PLEX"]; n.Status != "provider" || n.Answering == nil || n.Answering.Provider != ai.KindOpenAI || n.Answering.Model != "llama3.2" ||
		!slices.Equal(n.Answering.Routes, []string{"/api/pulse"}) {
		t.Errorf("S1_PLEX: %+v", n)
	}
	if n := got["S5_LOCUS"]; n.Status != "offline" || n.Answering == nil || !slices.Contains(n.Answering.Routes, "/api/ember") || n.Answering.ReceiptKey == "" {
		t.Errorf("S5_LOCUS: %+v", n)
	}
	if n := got["BRIDGE"]; n.Status != "human" || n.Answering != nil {
		t.Errorf("BRIDGE: %+v", n)
	}
}
