package receipt

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestForms holds the byte-class checks of the members to the documented
// patterns, on edge cases and on random strings over a wide alphabet.
func TestForms(t *testing.T) {
	forms := []struct {
		pattern string
		check   func(string) bool
	}{
		{`^[0-9a-f]{32}$`, func(s string) bool { return isHex(s, 32) }},
		{`^[0-9a-f]{64}$`, func(s string) bool { return isHex(s, 64) }},
		{`^[0-9a-f]{128}$`, func(s string) bool { return isHex(s, 128) }},
		{`^ed25519:[0-9a-f]{32}$`, validKeyID},
		{`^[A-Z0-9_]{1,32}$`, validNode},
		{`^[a-z0-9_-]{1,32}$`, func(s string) bool { return form(s, 1, 32, provByte) }},
		{`^/[A-Za-z0-9/_.-]{0,199}$`, validRoute},
	}
	const alphabet = "0123456789abcdefgxyzAFGXYZ_-./:ed25519: \n\x00é"
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range forms {
		re := regexp.MustCompile(f.pattern)
		cases := []string{"", "/", "ed25519:", "S2_CASE", "/api/chat", "/api/chat\n", "openai", "a-b_c", "ED25519:" + strings.Repeat("a", 32)}
		for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 199, 200, 201} {
			for _, c := range []string{"a", "0", "A", "/", "_", "-", "g"} {
				cases = append(cases, strings.Repeat(c, n), "/"+strings.Repeat(c, n), "ed25519:"+strings.Repeat(c, n))
			}
		}
		for range 20000 {
			b := make([]byte, r.IntN(40))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			cases = append(cases, string(b), "ed25519:"+string(b), "/"+string(b))
		}
		for _, s := range cases {
			if got, want := f.check(s), re.MatchString(s); got != want {
				t.Errorf("%s: %q: check says %v, the pattern %v", f.pattern, s, got, want)
			}
		}
	}
}

// TestValidTime holds validTime to what it replaced: the time parses in
// TimeLayout and writes back as the same text.
func TestValidTime(t *testing.T) {
	cases := []string{"2026-11-21T10:04:05.123Z", "2026-02-29T10:04:05.123Z", "2024-02-29T23:59:59.999Z", "0000-01-01T00:00:00.000Z",
		"2026-13-01T00:00:00.000Z", "2026-11-31T00:00:00.000Z", "2026-11-21T24:00:00.000Z", "2026-11-21T10:60:05.123Z",
		"2026-11-21T10:04:60.123Z", "2026-11-21T10:04:05.12Z", "2026-11-21T10:04:05.1234Z", "2026-11-21 10:04:05.123Z",
		"+026-11-21T10:04:05.123Z", "2026-1-21T10:04:05.123Z0", "2026-11-21T10:04:05.123+", "2026-11-21T10:04:05,123Z", ""}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := []byte("2026-11-21T10:04:05.123Z")
		b[r.IntN(len(b))] = "0123456789-T:.Z +"[r.IntN(17)]
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		parsed, err := time.Parse(TimeLayout, s)
		want := err == nil && parsed.UTC().Format(TimeLayout) == s
		if got := validTime(s); got != want {
			t.Errorf("validTime(%q) = %v, want %v", s, got, want)
		}
	}
}
