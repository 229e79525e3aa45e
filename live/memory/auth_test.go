package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-memory"
	h, err := TokenHash(secret)
	if err != nil {
		t.Fatal(err)
	}
	other := sha256.Sum256([]byte("another token of sufficient length!!"))
	tokens := NewTokens(other, h)

	tests := []struct {
		desc, header string
		want         error
	}{
		{"right token", "Bearer " + secret, nil},
		{"scheme in lower case", "bearer " + secret, nil},
		{"surrounding space", "  Bearer   " + secret + " ", nil},
		{"no header", "", ErrNoToken},
		{"scheme only", "Bearer", ErrNoToken},
		{"empty token", "Bearer   ", ErrNoToken},
		{"basic scheme", "Basic " + secret, ErrNoToken},
		{"token without scheme", secret, ErrNoToken},
		{"wrong token", "Bearer " + strings.Repeat("x", 40), ErrBadToken},
		{"prefix of the token", "Bearer " + secret[:20], ErrBadToken},
		{"the hash instead of the token", "Bearer " + hex.EncodeToString(h[:]), ErrBadToken},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if err := tokens.Check(tc.header); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Check(%q) = %v, want %v", tc.header, err, tc.want)
			}
		})
	}
	if err := (Tokens{}).Check("Bearer " + secret); !errors.Is(err, ErrBadToken) {
		t.Fatalf("zero Tokens accepted a token: %v", err)
	}
	if Challenge(ErrNoToken) != `Bearer realm="proofsite memory"` || Challenge(ErrBadToken) != `Bearer realm="proofsite memory", error="invalid_token"` {
		t.Fatalf("challenges: %q %q", Challenge(ErrNoToken), Challenge(ErrBadToken))
	}
}

func TestTokenHashRefusesWeakSecrets(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("a", MinTokenLength-1), strings.Repeat("a", 31) + " b", strings.Repeat("é", 20)} {
		if _, err := TokenHash(s); err == nil {
			t.Errorf("TokenHash(%q) accepted", s)
		}
	}
}

func TestParseTokenHashes(t *testing.T) {
	a, b := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	file := "# memory writers\n\n" + hex.EncodeToString(a[:]) + "\n  " + hex.EncodeToString(b[:]) + "  -\n"
	got, err := ParseTokenHashes(strings.NewReader(file))
	if err != nil || len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("ParseTokenHashes = %x, %v", got, err)
	}
	for name, bad := range map[string]string{
		"short":   "abcd\n",
		"not hex": strings.Repeat("zz", 32) + "\n",
		"line 3":  "# ok\n" + hex.EncodeToString(a[:]) + "\nnope\n",
	} {
		_, err := ParseTokenHashes(strings.NewReader(bad))
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "line 3" && !strings.Contains(err.Error(), "line 3") {
			t.Errorf("error does not name the line: %v", err)
		}
	}
}
