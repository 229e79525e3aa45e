package live

import (
	"testing"

	"github.com/danielgtaylor/huma/v2"
)

// huma's messages and locations are kept only where they cannot carry the
// request's own text.
func TestProblemsQuoteNothing(t *testing.T) {
	op := &huma.Operation{Metadata: map[string]any{declaredNamesKey: map[string]bool{"inner": true, "label": true, "list": true, "name": true, "id": true}}}
	for _, tc := range []struct{ loc, want string }{
		{"body", "body"},
		{"body.inner.label", "body.inner.label"},
		{"body.list[3].name", "body.list[3].name"},
		{"body.list[3].secret", "body.list[3]"},
		{"body.labels.secret.name", "body"},
		{"body.inner.secret[2]", "body.inner"},
		{"path.id", "path.id"},
		{"query.secret", "query"},
		{"secret.name", ""},
		{"body.list[x].name", "body.list"},
	} {
		if got := safeLocation(tc.loc, op); got != tc.want {
			t.Errorf("location %q: %q, want %q", tc.loc, got, tc.want)
		}
	}
	for _, tc := range []struct{ msg, want string }{
		{"expected length <= 20", "expected length <= 20"},
		{`expected value to be one of "a, b"`, `expected value to be one of "a, b"`},
		{"expected string to be RFC 3986 uri: parse \"secret\": invalid", "expected string to be RFC 3986 uri"},
		{"expected duration: time: invalid duration \"secret\"", "expected duration"},
		{"invalid integer", "invalid integer"},
		{`parsing time "secret" as "2006-01-02": cannot parse`, "invalid value"},
		{`json: cannot unmarshal string "secret"`, "invalid value"},
	} {
		if got := safeDetail(tc.msg); got != tc.want {
			t.Errorf("message %q: %q, want %q", tc.msg, got, tc.want)
		}
	}
	for _, tc := range []struct{ msg, want string }{
		{"validation failed", "validation failed"},
		{"request body is too large limit=4097 bytes", "request body is too large limit=4097 bytes"},
		{"unknown content type: secret/type", "the request is malformed"},
	} {
		if got := requestMessage(tc.msg); got != tc.want {
			t.Errorf("detail %q: %q, want %q", tc.msg, got, tc.want)
		}
	}
}
