package ai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// SDKConfig configures a provider built on an official SDK. Nothing else
// configures it: the SDK clients are built from this value alone, so no
// environment variable of the machine (ANTHROPIC_API_KEY,
// OPENAI_BASE_URL, HTTPS_PROXY, ...) changes what they do, and they never
// retry.
type SDKConfig struct {
	// Model is the model to ask for. Required.
	Model string
	// BaseURL is the API's address; empty means the provider's public
	// API. For OpenAI-compatible servers it includes the version path,
	// for example http://127.0.0.1:11434/v1 for Ollama.
	BaseURL string
	// APIKey authenticates the calls. It is sent only to BaseURL and is
	// never logged or put into an error. Empty sends no key (local
	// OpenAI-compatible servers).
	APIKey string
	// HTTPClient makes the calls; nil means a client of this package
	// that takes no proxy from the environment.
	HTTPClient *http.Client
}

func (c SDKConfig) check(kind Kind) (SDKConfig, error) {
	if strings.TrimSpace(c.Model) == "" {
		return c, fmt.Errorf("%w: %s provider needs a model", ErrInvalidConfig, kind)
	}
	if c.BaseURL != "" {
		if err := checkBaseURL(c.BaseURL); err != nil {
			return c, err
		}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = newHTTPClient()
	}
	return c, nil
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%w: the base URL is not an absolute http(s) URL without credentials", ErrInvalidConfig) // not quoted: it may carry a key
	}
	return nil
}

// newHTTPClient returns the client the providers use by default: no proxy
// from the environment (http.DefaultTransport would read HTTPS_PROXY),
// bounded dials and handshakes, and no overall timeout (each call's
// context carries the node's timeout).
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}

// statusRecorder remembers the HTTP status of a call's response, so that
// an error status is reported as such even when the SDK could not decode
// the error body.
type statusRecorder struct{ status atomic.Int32 }

func (r *statusRecorder) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if res != nil {
		r.status.Store(int32(res.StatusCode))
	}
	return res, err
}

func (r *statusRecorder) get() int { return int(r.status.Load()) }

// failure turns an SDK error into a *ProviderError, or returns the
// caller's context error when the caller gave up (a cancelled request is
// not a provider failure).
func failure(ctx context.Context, kind Kind, model string, status int, err error) error {
	if cerr := ctx.Err(); errors.Is(cerr, context.Canceled) {
		return fmt.Errorf("ai: %s call: %w", kind, cerr)
	}
	pe := &ProviderError{Provider: kind, Model: model}
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		pe.Reason = ReasonTimeout
	case status >= 400:
		pe.Reason, pe.Status = ReasonStatus, status
	case errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF):
		pe.Reason = ReasonTransport
	default:
		pe.Reason = ReasonMalformed
	}
	return pe
}

// brokenReply is the failure a provider reports when the SDK returned no
// error but the answer is not whole: an error event, a stream that broke
// off, no text.
func brokenReply(kind Kind, model string, reason Reason) error {
	return &ProviderError{Provider: kind, Model: model, Reason: reason}
}
