package voice_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hajimehoshi/go-mp3"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
	"github.com/proofsite/proofsite/live/ai/voice"
)

// newVoice builds the real espeak-ng + lame voice. The tools are a
// requirement of this package's tests (make tools installs them): their
// absence fails the test, it is never skipped.
func newVoice(t testing.TB, opts voice.Options) *voice.Voice {
	t.Helper()
	v, err := voice.New(opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return v
}

// duration decodes an MP3 and returns its length.
func duration(t testing.TB, b []byte) time.Duration {
	t.Helper()
	d, err := mp3.NewDecoder(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a decodable MP3: %v", err)
	}
	// Length is in bytes of 16-bit stereo PCM: 4 bytes per sample.
	return time.Duration(float64(d.Length()) / 4 / float64(d.SampleRate()) * float64(time.Second))
}

const sentence = "Anyone may verify the ledger, without an account, a key or permission."

func TestSpeakDecodesToPlausibleDuration(t *testing.T) {
	v := newVoice(t, voice.Options{})
	words := len(strings.Fields(sentence))
	got := map[voice.Mode]time.Duration{}
	for _, tc := range []struct {
		mode string
		wpm  float64
	}{{"", 165}, {"standard", 165}, {"slow", 120}, {"fast", 220}} {
		s, err := v.Speak(context.Background(), sentence, tc.mode)
		if err != nil {
			t.Fatalf("mode %q: %v", tc.mode, err)
		}
		d := duration(t, s.MP3)
		want := time.Duration(float64(words) / tc.wpm * float64(time.Minute))
		if d < want/2 || d > 2*want+time.Second {
			t.Errorf("mode %q: %v of audio for %d words, want about %v", tc.mode, d, words, want)
		}
		if s.Backend != "espeak-ng" || s.Key != voice.Key(s.Mode, sentence) {
			t.Errorf("mode %q: backend %q key %q", tc.mode, s.Backend, s.Key)
		}
		got[s.Mode] = d
	}
	if !(got[voice.ModeSlow] > got[voice.ModeStandard] && got[voice.ModeStandard] > got[voice.ModeFast]) {
		t.Errorf("durations slow %v, standard %v, fast %v: want slow > standard > fast", got[voice.ModeSlow], got[voice.ModeStandard], got[voice.ModeFast])
	}
	// A longer text gives longer audio, and non-ASCII text is spoken.
	long, err := v.Speak(context.Background(), strings.Repeat(sentence+" ", 6)+"Café, naïve, déjà vu.", "fast")
	if err != nil {
		t.Fatal(err)
	}
	if d := duration(t, long.MP3); d < 4*got[voice.ModeFast] {
		t.Errorf("six sentences gave %v, one gave %v", d, got[voice.ModeFast])
	}
}

// counting is a backend that returns a fixed MP3 and counts its calls; it
// can be held until released.
type counting struct {
	calls atomic.Int64
	hold  chan struct{}
	out   []byte
}

func (c *counting) Name() string { return "counting" }

func (c *counting) Synthesize(ctx context.Context, mode voice.Mode, text string) ([]byte, error) {
	c.calls.Add(1)
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.out != nil {
		return c.out, nil
	}
	return append([]byte("ID3\x04"), []byte(string(mode)+text)...), nil
}

func TestSpeakRefusesBeforeAnyWork(t *testing.T) {
	b := &counting{}
	v := newVoice(t, voice.Options{Backend: b})
	for _, tc := range []struct {
		text, mode string
		is         error
	}{
		{"hello", "loud", voice.ErrInvalidMode},
		{"hello", "Standard", voice.ErrInvalidMode},
		{"hello", " slow", voice.ErrInvalidMode},
		{"hello", "en-us", voice.ErrInvalidMode},
		{"", "", voice.ErrEmptyText},
		{" \n ", "slow", voice.ErrEmptyText},
		{strings.Repeat("a", voice.MaxTextRunes+1), "", voice.ErrTextTooLong},
		{"bad \xfe", "", voice.ErrInvalidText},
		{"bell \a", "", voice.ErrInvalidText},
	} {
		if _, err := v.Speak(context.Background(), tc.text, tc.mode); !errors.Is(err, tc.is) {
			t.Errorf("Speak(%.20q, %q) = %v, want %v", tc.text, tc.mode, err, tc.is)
		}
	}
	if b.calls.Load() != 0 {
		t.Errorf("%d syntheses for refused requests", b.calls.Load())
	}
	for _, m := range voice.Modes {
		if got, err := voice.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
}

func TestSpeakCaches(t *testing.T) {
	b := &counting{}
	v := newVoice(t, voice.Options{Backend: b})
	first, err := v.Speak(context.Background(), " hello ", "slow")
	if err != nil || first.Cached {
		t.Fatalf("first = %+v, %v", first, err)
	}
	again, err := v.Speak(context.Background(), "hello", "slow")
	if err != nil || !again.Cached || !bytes.Equal(again.MP3, first.MP3) || again.Key != first.Key {
		t.Errorf("again = %+v, %v", again, err)
	}
	other, _ := v.Speak(context.Background(), "hello", "fast")
	if other.Cached || other.Key == first.Key {
		t.Errorf("another mode shared the cache entry: %+v", other)
	}
	if b.calls.Load() != 2 {
		t.Errorf("%d syntheses, want 2", b.calls.Load())
	}

	// Without a cache every call synthesises.
	b2 := &counting{}
	nc := newVoice(t, voice.Options{Backend: b2, CacheBytes: -1})
	for range 3 {
		if s, err := nc.Speak(context.Background(), "hello", ""); err != nil || s.Cached {
			t.Fatalf("%+v, %v", s, err)
		}
	}
	if b2.calls.Load() != 3 {
		t.Errorf("%d syntheses without cache, want 3", b2.calls.Load())
	}
}

func TestSpeakOnceForConcurrentRequests(t *testing.T) {
	b := &counting{hold: make(chan struct{})}
	v := newVoice(t, voice.Options{Backend: b})
	var wg sync.WaitGroup
	results := make([]voice.Speech, 8)
	for i := range results {
		wg.Go(func() {
			s, err := v.Speak(context.Background(), "the same words", "")
			if err != nil {
				t.Error(err)
			}
			results[i] = s
		})
	}
	for b.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(b.hold)
	wg.Wait()
	if b.calls.Load() != 1 {
		t.Errorf("%d syntheses for one text, want 1", b.calls.Load())
	}
	for _, r := range results {
		if !bytes.Equal(r.MP3, results[0].MP3) {
			t.Error("callers got different audio")
		}
	}
}

func TestSpeakRefusesNonMP3(t *testing.T) {
	v := newVoice(t, voice.Options{Backend: &counting{out: []byte("<html>not audio</html>")}})
	if _, err := v.Speak(context.Background(), "hello", ""); !errors.Is(err, voice.ErrSynthesis) {
		t.Errorf("Speak = %v, want ErrSynthesis", err)
	}
}

func TestNewWithoutTools(t *testing.T) {
	for _, opts := range []voice.Options{
		{EspeakPath: "/nonexistent/espeak-ng"},
		{LamePath: "/nonexistent/lame"},
	} {
		_, err := voice.New(opts)
		if !errors.Is(err, voice.ErrToolsMissing) || !strings.Contains(err.Error(), "apt-get install espeak-ng lame") {
			t.Errorf("New(%+v) = %v, want ErrToolsMissing saying how to install", opts, err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := voice.New(voice.Options{}); !errors.Is(err, voice.ErrToolsMissing) {
		t.Errorf("New with an empty PATH = %v, want ErrToolsMissing", err)
	}
}

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTextGoesOnStdin runs a wrapper around the real espeak-ng that
// records its arguments, standard input and environment.
func TestTextGoesOnStdin(t *testing.T) {
	t.Setenv("PROOFSITE_TEST_SECRET", "do-not-pass-me")
	dir := t.TempDir()
	wrapper := script(t, dir, "espeak-ng", fmt.Sprintf(
		`printf '%%s\n' "$@" > %[1]s/args; env > %[1]s/env; cat > %[1]s/stdin; exec espeak-ng "$@" < %[1]s/stdin`, dir))
	v := newVoice(t, voice.Options{EspeakPath: wrapper})
	text := "--help; $(rm -rf /) `id` 'quoted' \"double\" -v de"
	s, err := v.Speak(context.Background(), text, "slow")
	if err != nil {
		t.Fatal(err)
	}
	duration(t, s.MP3)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("stdin"); got != text {
		t.Errorf("stdin = %q, want the text %q", got, text)
	}
	args := read("args")
	for _, part := range []string{"rm -rf", "quoted", "double", "--help", "-v\nde"} {
		if strings.Contains(args, part) {
			t.Errorf("arguments %q carry the text", args)
		}
	}
	if !strings.Contains(args, "--stdin") {
		t.Errorf("arguments %q lack --stdin", args)
	}
	if env := read("env"); strings.Contains(env, "do-not-pass-me") {
		t.Errorf("the tool saw the server's environment: %s", env)
	}
}

// TestTimeoutKillsProcessGroup: a tool that hangs, with a child of its own,
// is killed with its whole group when the timeout runs out.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	hang := script(t, dir, "espeak-ng", fmt.Sprintf(`sleep 60 & echo $! > %s/child; sleep 60`, dir))
	v := newVoice(t, voice.Options{EspeakPath: hang, Timeout: 300 * time.Millisecond})
	_, err := v.Speak(context.Background(), "hello", "")
	if !errors.Is(err, voice.ErrTimeout) {
		t.Fatalf("Speak = %v, want ErrTimeout", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "child"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the tool's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestFailingToolIsAnError(t *testing.T) {
	dir := t.TempDir()
	fail := script(t, dir, "lame", `cat > /dev/null; echo "lame: broken" >&2; exit 3`)
	v := newVoice(t, voice.Options{LamePath: fail})
	if _, err := v.Speak(context.Background(), "hello", ""); !errors.Is(err, voice.ErrSynthesis) || !strings.Contains(err.Error(), "lame") {
		t.Errorf("Speak = %v, want ErrSynthesis naming lame", err)
	}
}

func TestOpenAIBackend(t *testing.T) {
	real := newVoice(t, voice.Options{})
	sample, err := real.Speak(context.Background(), sentence, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "env-key")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
	srv := aitest.NewSpeechServer(t, sample.MP3, aitest.Script{})
	b, err := voice.NewOpenAI(ai.SDKConfig{Model: "gpt-4o-mini-tts", BaseURL: srv.URL + "/v1", APIKey: "sk-test-key"})
	if err != nil {
		t.Fatal(err)
	}
	v := newVoice(t, voice.Options{Backend: b})
	s, err := v.Speak(context.Background(), sentence, "fast")
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend != "openai:gpt-4o-mini-tts" || !bytes.Equal(s.MP3, sample.MP3) {
		t.Errorf("speech from %s, %d bytes", s.Backend, len(s.MP3))
	}
	duration(t, s.MP3)
	r := srv.Last()
	if r.Path != "/v1/audio/speech" || r.Header.Get("Authorization") != "Bearer sk-test-key" ||
		r.Body["input"] != sentence || r.Body["model"] != "gpt-4o-mini-tts" || r.Body["voice"] != "alloy" ||
		r.Body["speed"] != 1.35 || r.Body["response_format"] != "mp3" {
		t.Errorf("request %s %v %v", r.Path, r.Header, r.Body)
	}

	failing := aitest.NewSpeechServer(t, nil, aitest.Script{Status: 500, ErrorBody: `{"error":{"message":"sk-test-key leaked"}}`})
	b, _ = voice.NewOpenAI(ai.SDKConfig{Model: "gpt-4o-mini-tts", BaseURL: failing.URL + "/v1", APIKey: "sk-test-key"})
	_, err = newVoice(t, voice.Options{Backend: b}).Speak(context.Background(), sentence, "")
	var pe *ai.ProviderError
	if !errors.Is(err, ai.ErrProviderFailed) || !errors.As(err, &pe) || pe.Status != 500 || strings.Contains(err.Error(), "sk-test-key") {
		t.Errorf("Speak = %v, want a ProviderError with status 500 and no provider text", err)
	}
	if failing.Requests() != 1 {
		t.Errorf("%d requests, want 1 (no retry)", failing.Requests())
	}
	if _, err := voice.NewOpenAI(ai.SDKConfig{Model: "tts-1"}); err == nil {
		t.Error("NewOpenAI without a key or base URL succeeded")
	}
}

// BenchmarkSpeakCached is the cost of a repeated request.
func BenchmarkSpeakCached(b *testing.B) {
	v := newVoice(b, voice.Options{})
	if _, err := v.Speak(context.Background(), sentence, ""); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Speak(context.Background(), sentence, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpeakEspeak is one synthesis of a 12-word sentence through
// espeak-ng and lame (cache off).
func BenchmarkSpeakEspeak(b *testing.B) {
	v := newVoice(b, voice.Options{CacheBytes: -1})
	for b.Loop() {
		if _, err := v.Speak(context.Background(), sentence, ""); err != nil {
			b.Fatal(err)
		}
	}
}
