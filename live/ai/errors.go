package ai

import (
	"errors"
	"fmt"
)

// Errors of this package. Routes map them to problems:
//
//	ErrUnknownNode, ErrEmptyText, ErrTextTooLong, ErrInvalidText  400
//	ErrProviderFailed                                             502
//	ErrProviderTimeout                                            504
//
// A *ProviderError wraps ErrProviderFailed or ErrProviderTimeout; its text
// names the node, provider, model and a fixed reason, never what the
// provider said.
var (
	// ErrUnknownNode: the designation or name is not a node of this kind.
	ErrUnknownNode = errors.New("ai: unknown node")
	// ErrEmptyText: the message or topic is empty or only white space.
	ErrEmptyText = errors.New("ai: empty text")
	// ErrTextTooLong: the message or topic is longer than MaxTextRunes.
	ErrTextTooLong = errors.New("ai: text too long")
	// ErrInvalidText: the text is not valid UTF-8 or holds control
	// characters other than tab and newline.
	ErrInvalidText = errors.New("ai: invalid text")
	// ErrProviderFailed: the provider answered with an error status, an
	// unreadable or empty reply, or a stream that broke off.
	ErrProviderFailed = errors.New("ai: provider failed")
	// ErrProviderTimeout: the provider did not answer within the node's
	// timeout.
	ErrProviderTimeout = errors.New("ai: provider timed out")
	// ErrInvalidBriefing: a town's briefing is over MaxMemoryBytes, holds
	// text that is not UTF-8, or was given to an airlock node (which takes
	// the message and nothing else). It is the caller's fault, not the
	// visitor's: routes answer it as an internal error.
	ErrInvalidBriefing = errors.New("ai: invalid briefing")
	// ErrInvalidConfig: the node configuration is unusable.
	ErrInvalidConfig = errors.New("ai: invalid configuration")
)

// Reason is why a provider call failed, from a fixed vocabulary, so that
// an error can be logged and shown without any provider text.
type Reason string

// The reasons a provider call fails.
const (
	ReasonStatus      Reason = "error_status"       // the provider answered 4xx or 5xx
	ReasonTimeout     Reason = "timeout"            // the node's timeout ran out
	ReasonTransport   Reason = "transport"          // no connection, reset, TLS failure
	ReasonMalformed   Reason = "malformed_response" // the body was not the expected JSON
	ReasonStreamError Reason = "stream_error"       // the stream carried an error event
	ReasonTruncated   Reason = "stream_truncated"   // the stream ended before its final event
	ReasonEmpty       Reason = "empty_reply"        // the reply held no text
)

// ProviderError is a failed provider call. Error() carries only the node,
// provider, model, reason and upstream status: never the provider's error
// text, which may echo the request or a key.
type ProviderError struct {
	Node     string // designation of the node, set by the Node that called
	Provider Kind
	Model    string // the configured model
	Reason   Reason
	Status   int // the provider's HTTP status, 0 when there was none
}

// Error describes the failure without provider text.
func (e *ProviderError) Error() string {
	node := e.Node
	if node == "" {
		node = "-"
	}
	msg := fmt.Sprintf("ai: node %s: %s model %q: %s", node, e.Provider, e.Model, e.Reason)
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	return msg
}

// Unwrap returns ErrProviderTimeout for a timeout and ErrProviderFailed
// otherwise.
func (e *ProviderError) Unwrap() error {
	if e.Reason == ReasonTimeout {
		return ErrProviderTimeout
	}
	return ErrProviderFailed
}
