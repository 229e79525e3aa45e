// Package voice turns short texts into speech (MP3) for POST /api/voice.
//
// The default backend needs no key and no network: Debian's espeak-ng
// speaks the text and lame encodes it, both as subprocesses. The text goes
// to espeak-ng on its standard input, never on the command line; each run
// has a timeout that kills the processes' whole process groups. When an
// OpenAI key is configured, OpenAI's text-to-speech (through the official
// SDK, see ai.OpenAISpeech) can be used instead.
//
//	v, err := voice.New(voice.Options{})             // espeak-ng + lame
//	speech, err := v.Speak(ctx, "Hello.", "standard") // speech.MP3
//
// Speak checks the mode (one of Modes) and the text (at most MaxTextRunes
// characters) before any work, serves repeated requests from a cache keyed
// by SHA-256 of (mode, text) and bounded in bytes, runs one synthesis for
// concurrent identical requests and at most Options.MaxConcurrent at once.
// Errors a route maps: ErrInvalidMode, ErrEmptyText, ErrTextTooLong and
// ErrInvalidText are 400; ErrTimeout is 504; an *ai.ProviderError from the
// OpenAI backend is 502 or 504 (errors.Is ai.ErrProviderFailed or
// ai.ErrProviderTimeout); ErrSynthesis is 500. A Voice is safe for
// concurrent use.
package voice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/proofsite/proofsite/live/ai"
	"golang.org/x/sync/singleflight"
)

// Mode is how the text is spoken. The allowed values are Modes; the empty
// mode means ModeStandard.
type Mode string

// The documented voice modes.
const (
	ModeStandard Mode = "standard" // a neutral English voice at an ordinary pace
	ModeSlow     Mode = "slow"     // the same voice, slower: for dictation and listeners learning the language
	ModeFast     Mode = "fast"     // the same voice, faster: for skimming
)

// Modes lists every allowed mode, in documentation order.
var Modes = []Mode{ModeStandard, ModeSlow, ModeFast}

// MaxTextRunes bounds a text to speak, in characters.
const MaxTextRunes = 1000

// Errors of this package.
var (
	// ErrInvalidMode: the mode is not one of Modes.
	ErrInvalidMode = errors.New("voice: invalid mode")
	// ErrEmptyText: nothing to say after trimming white space (the same
	// error as ai.ErrEmptyText).
	ErrEmptyText = ai.ErrEmptyText
	// ErrTextTooLong: more than MaxTextRunes characters (ai.ErrTextTooLong).
	ErrTextTooLong = ai.ErrTextTooLong
	// ErrInvalidText: invalid UTF-8 or control characters other than tab
	// and newline (ai.ErrInvalidText).
	ErrInvalidText = ai.ErrInvalidText
	// ErrToolsMissing: espeak-ng or lame is not installed.
	ErrToolsMissing = errors.New("voice: espeak-ng or lame not installed")
	// ErrTimeout: the synthesis did not finish within Options.Timeout; its
	// processes were killed.
	ErrTimeout = errors.New("voice: synthesis timed out")
	// ErrSynthesis: the backend failed or produced no valid MP3.
	ErrSynthesis = errors.New("voice: synthesis failed")
)

// ParseMode returns the mode named by s: "" is ModeStandard; anything not
// in Modes is ErrInvalidMode.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeStandard, nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%w: %q (allowed: standard, slow, fast)", ErrInvalidMode, s)
}

// Backend synthesises speech. Implementations return MP3 bytes.
type Backend interface {
	// Name names the backend in Speech.Backend, e.g. "espeak-ng".
	Name() string
	// Synthesize speaks text (already checked) in mode.
	Synthesize(ctx context.Context, mode Mode, text string) ([]byte, error)
}

// Options configure a Voice. The zero value uses espeak-ng and lame from
// PATH with the defaults below.
type Options struct {
	// Backend replaces the espeak-ng backend, e.g. NewOpenAI(...).
	Backend Backend
	// EspeakPath and LamePath locate the tools; looked up in PATH when
	// empty.
	EspeakPath, LamePath string
	// Timeout bounds one synthesis; 15 s when zero.
	Timeout time.Duration
	// CacheBytes bounds the cache; 32 MiB when zero, no cache when
	// negative.
	CacheBytes int64
	// MaxConcurrent bounds the syntheses running at once; 2 when zero.
	MaxConcurrent int
	// Logger is told about failed syntheses (never the text). Nil
	// discards.
	Logger *slog.Logger
}

// Voice speaks texts through one backend, with a cache.
type Voice struct {
	backend Backend
	timeout time.Duration
	cache   *cache
	flight  singleflight.Group
	slots   chan struct{}
	log     *slog.Logger
}

// Speech is spoken text.
type Speech struct {
	MP3     []byte // the audio, audio/mpeg; shared with the cache, so read only
	Mode    Mode
	Backend string // which backend spoke it
	Key     string // hex SHA-256 of (mode, text): the cache key, usable as an ETag
	Cached  bool   // served from the cache
}

// New builds a Voice. Without Options.Backend it needs espeak-ng and lame:
// if either is missing it fails with ErrToolsMissing and says how to
// install them.
func New(opts Options) (*Voice, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 15 * time.Second
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = 32 << 20
	}
	if opts.MaxConcurrent == 0 {
		opts.MaxConcurrent = 2
	}
	if opts.Timeout < 0 || opts.MaxConcurrent < 0 {
		return nil, errors.New("voice: negative timeout or concurrency")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	b := opts.Backend
	if b == nil {
		e, err := newEspeak(opts.EspeakPath, opts.LamePath)
		if err != nil {
			return nil, err
		}
		b = e
	}
	return &Voice{
		backend: b,
		timeout: opts.Timeout,
		cache:   newCache(opts.CacheBytes),
		slots:   make(chan struct{}, opts.MaxConcurrent),
		log:     opts.Logger,
	}, nil
}

// Backend names the backend that speaks.
func (v *Voice) Backend() string { return v.backend.Name() }

// Key returns the cache key of (mode, text): hex SHA-256 of the mode, a
// zero byte and the text.
func Key(mode Mode, text string) string {
	h := sha256.New()
	h.Write([]byte(mode))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// Speak speaks text in the named mode ("" for standard). The mode and the
// text are checked before anything runs.
func (v *Voice) Speak(ctx context.Context, text, mode string) (Speech, error) {
	m, err := ParseMode(mode)
	if err != nil {
		return Speech{}, err
	}
	text, err = ai.CheckTextMax(text, MaxTextRunes)
	if err != nil {
		return Speech{}, err
	}
	key := Key(m, text)
	if mp3, ok := v.cache.get(key); ok {
		return Speech{MP3: mp3, Mode: m, Backend: v.backend.Name(), Key: key, Cached: true}, nil
	}
	// One synthesis per key at a time; it runs to its own timeout even if
	// the first caller leaves, so that the others (and the cache) get it.
	ch := v.flight.DoChan(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.timeout)
		defer cancel()
		select {
		case v.slots <- struct{}{}:
			defer func() { <-v.slots }()
		case <-ctx.Done():
			return nil, ErrTimeout
		}
		mp3, err := v.backend.Synthesize(ctx, m, text)
		if err == nil && !looksLikeMP3(mp3) {
			err = fmt.Errorf("%w: %s returned no MP3", ErrSynthesis, v.backend.Name())
		}
		if err != nil {
			v.log.Warn("voice synthesis failed", "backend", v.backend.Name(), "mode", string(m), "chars", utf8.RuneCountInString(text), "err", err)
			return nil, err
		}
		v.cache.put(key, mp3)
		return mp3, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return Speech{}, res.Err
		}
		return Speech{MP3: res.Val.([]byte), Mode: m, Backend: v.backend.Name(), Key: key}, nil
	case <-ctx.Done():
		return Speech{}, fmt.Errorf("voice: speak: %w", ctx.Err())
	}
}

// looksLikeMP3 reports whether b starts like an MP3 file: an ID3 tag or
// an MPEG audio frame header.
func looksLikeMP3(b []byte) bool {
	return len(b) >= 4 && (string(b[:3]) == "ID3" || (b[0] == 0xFF && b[1]&0xE0 == 0xE0))
}
