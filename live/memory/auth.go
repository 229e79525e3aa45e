package memory

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Errors of token checks. Both answer 401 with the Challenge header.
var (
	// ErrNoToken reports a request without a bearer token in its
	// Authorization header.
	ErrNoToken = errors.New("memory: no bearer token")
	// ErrBadToken reports a bearer token that matches no configured hash.
	ErrBadToken = errors.New("memory: invalid bearer token")
)

// MinTokenLength is the shortest secret TokenHash accepts.
const MinTokenLength = 32

// Challenge is the WWW-Authenticate value of a 401 from the store route
// (RFC 6750): Challenge(ErrNoToken) for a missing token, with
// error="invalid_token" for a wrong one.
func Challenge(err error) string {
	const realm = `Bearer realm="proofsite memory"`
	if errors.Is(err, ErrBadToken) {
		return realm + `, error="invalid_token"`
	}
	return realm
}

// Tokens authorizes writes to memory: it holds the SHA-256 hashes of the
// accepted bearer tokens, never the tokens. The zero value accepts
// nothing.
type Tokens struct {
	hashes [][sha256.Size]byte
}

// NewTokens returns Tokens accepting the tokens whose SHA-256 is one of
// hashes (see TokenHash and ParseTokenHashes).
func NewTokens(hashes ...[sha256.Size]byte) Tokens {
	return Tokens{hashes: append([][sha256.Size]byte(nil), hashes...)}
}

// Len returns the number of configured hashes; with none, every request
// is refused.
func (t Tokens) Len() int { return len(t.hashes) }

// TokenHash hashes a secret given in full (PROOFSITE_MEMORY_TOKEN), after
// checking it is at least MinTokenLength characters of visible ASCII.
func TokenHash(secret string) ([sha256.Size]byte, error) {
	if len(secret) < MinTokenLength {
		return [sha256.Size]byte{}, fmt.Errorf("memory: token is %d characters, at least %d are needed (for example: openssl rand -hex 32)", len(secret), MinTokenLength)
	}
	for _, c := range []byte(secret) {
		if c <= ' ' || c > '~' {
			return [sha256.Size]byte{}, errors.New("memory: token must be visible ASCII without spaces")
		}
	}
	return sha256.Sum256([]byte(secret)), nil
}

// ParseTokenHashes reads a token file: one SHA-256 per line as 64 hex
// digits (what `printf %s "$TOKEN" | sha256sum` prints first), blank lines
// and lines starting with # ignored. Errors name the line.
func ParseTokenHashes(r io.Reader) ([][sha256.Size]byte, error) {
	var out [][sha256.Size]byte
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		field, _, _ := strings.Cut(line, " ") // sha256sum appends "  -"
		var h [sha256.Size]byte
		if len(field) != 2*sha256.Size {
			return nil, fmt.Errorf("memory: token file line %d: want 64 hex digits, got %d characters", n, len(field))
		}
		if _, err := hex.Decode(h[:], []byte(field)); err != nil {
			return nil, fmt.Errorf("memory: token file line %d: %w", n, err)
		}
		out = append(out, h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("memory: token file: %w", err)
	}
	return out, nil
}

// Check authorizes the Authorization header value of a request: it must be
// "Bearer <token>" (scheme case-insensitive) with a token whose SHA-256 is
// configured. The presented token is hashed and compared with every
// configured hash in constant time, so timing shows neither which hash
// nor how much of one matched. Tokens are taken only from this header; a
// token in the query string is never read.
func (t Tokens) Check(authorization string) error {
	scheme, token, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return ErrNoToken
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := 0
	for _, h := range t.hashes {
		match |= subtle.ConstantTimeCompare(sum[:], h[:])
	}
	if match != 1 {
		return ErrBadToken
	}
	return nil
}
