package ai

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTextRunes bounds a message, topic or question, in characters.
const MaxTextRunes = 2000

// Request is what a node asks its provider: the node's instructions and
// one message. There is no history and no session context: every call
// stands alone.
type Request struct {
	System    string // the node's instructions
	Message   string // the user's text
	MaxTokens int    // upper bound of the reply length
}

// Completion is a provider's answer.
type Completion struct {
	Text      string     // the whole reply
	Provider  Kind       // who answered
	Model     string     // the model that answered, as the provider reported it
	Citations []Citation // verbatim quotations the reply rests on (offline responder only)
}

// Provider answers requests. Implementations are safe for concurrent use.
//
// Complete returns the whole reply. Stream calls delta with each piece of
// text as it arrives (for server-sent events) and returns the whole reply
// at the end; if delta returns an error the stream stops and Stream
// returns that error. Provider failures are *ProviderError values; a
// cancelled ctx returns ctx's error.
type Provider interface {
	Complete(ctx context.Context, req Request) (Completion, error)
	Stream(ctx context.Context, req Request, delta func(string) error) (Completion, error)
}

// CheckText validates a message, topic or question: at most
// MaxTextRunes characters (see CheckTextMax).
func CheckText(s string) (string, error) { return CheckTextMax(s, MaxTextRunes) }

// CheckTextMax validates a text for a node or the voice: not empty after
// trimming (ErrEmptyText), valid UTF-8 without control characters other
// than tab, newline and carriage return (ErrInvalidText), and at most
// maxRunes characters (ErrTextTooLong). It returns the text trimmed of
// surrounding white space.
func CheckTextMax(s string, maxRunes int) (string, error) {
	if !utf8.ValidString(s) {
		return "", ErrInvalidText
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ErrEmptyText
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return "", fmt.Errorf("%w: %d characters, at most %d", ErrTextTooLong, n, maxRunes)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return "", fmt.Errorf("%w: control character %U", ErrInvalidText, r)
		}
	}
	return s, nil
}
