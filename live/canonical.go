package live

import (
	"time"
	"unicode/utf8"

	"github.com/proofsite/proofsite/live/ai"
)

// A signed answer's receipt covers the RFC 8785 canonical JSON of the
// answer (aiEdge.signed). Encoding the answer with encoding/json and then
// canonicalizing it cost a third of /api/chat's own work besides the
// signature, so the answers write their canonical JSON directly: every
// member is a string, a bool, or an array or object of them, so canonical
// is sorted member names, strings escaped as RFC 8785 says, and no
// white space. TestAnswerCanonical holds the result to
// ledger.MarshalCanonical of the same value, byte for byte.

// answerExtras are the members a route's answer adds to NodeAnswer's.
type answerExtras struct {
	recorded      *[]string // QueryAnswer.Recorded; nil: no member
	requestedNode *string   // ChatAnswer.RequestedNode; nil: no member
}

func (a *NodeAnswer) appendCanonical(out []byte) []byte { return a.appendWith(out, answerExtras{}) }

func (a *ChatAnswer) appendCanonical(out []byte) []byte {
	return a.appendWith(out, answerExtras{requestedNode: &a.RequestedNode})
}

func (a *QueryAnswer) appendCanonical(out []byte) []byte {
	return a.appendWith(out, answerExtras{recorded: &a.Recorded})
}

// appendWith appends the canonical JSON of the answer without its receipt,
// with the extra members x, to out.
func (a *NodeAnswer) appendWith(out []byte, x answerExtras) []byte {
	// Members in RFC 8785 order (their names are ASCII: byte order).
	out = append(out, `{"citations":`...)
	out = appendArray(out, a.Citations, func(out []byte, c ai.Citation) []byte {
		out = append(out, `{"quote":`...)
		out = appendCanonicalString(out, c.Quote)
		out = append(out, `,"ref":`...)
		out = appendCanonicalString(out, c.Ref)
		out = append(out, `,"title":`...)
		out = appendCanonicalString(out, c.Title)
		out = append(out, `,"url":`...)
		out = appendCanonicalString(out, c.URL)
		return append(out, '}')
	})
	out = append(out, `,"generated_at":"`...)
	out = a.GeneratedAt.AppendFormat(out, time.RFC3339Nano) // as time.Time's MarshalJSON writes it
	out = append(out, `","isolation":{"memory":`...)
	out = appendBool(out, a.Isolation.Memory)
	out = append(out, `,"private_context":`...)
	out = appendBool(out, a.Isolation.PrivateContext)
	out = append(out, `,"session_context_is_authority":`...)
	out = appendBool(out, a.Isolation.SessionContextIsAuthority)
	out = append(out, `},"model":`...)
	out = appendCanonicalString(out, a.Model)
	out = append(out, `,"node":`...)
	out = appendCanonicalString(out, a.Node)
	if a.Notice != "" {
		out = append(out, `,"notice":`...)
		out = appendCanonicalString(out, a.Notice)
	}
	out = append(out, `,"provider":`...)
	out = appendCanonicalString(out, string(a.Provider))
	if x.recorded != nil {
		out = append(out, `,"recorded":`...)
		out = appendArray(out, *x.recorded, appendCanonicalString)
	}
	out = append(out, `,"reply":`...)
	out = appendCanonicalString(out, a.Text)
	if x.requestedNode != nil {
		out = append(out, `,"requested_node":`...)
		out = appendCanonicalString(out, *x.requestedNode)
	}
	return append(out, '}')
}

// appendArray appends the JSON array of items, null for a nil slice (as
// encoding/json writes it), each item written by item.
func appendArray[T any](out []byte, items []T, item func([]byte, T) []byte) []byte {
	if items == nil {
		return append(out, "null"...)
	}
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = item(out, it)
	}
	return append(out, ']')
}

func appendBool(out []byte, b bool) []byte {
	if b {
		return append(out, "true"...)
	}
	return append(out, "false"...)
}

// appendCanonicalString appends s as a canonical JSON string: quotation
// mark and backslash escaped, control characters as \b \t \n \f \r or
// \u00xx, everything else as it is. Each byte of s that is not valid
// UTF-8 becomes U+FFFD, as encoding/json writes it.
func appendCanonicalString(out []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	out = append(out, '"')
	plain := 0 // s[plain:i] goes as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			out = append(out, s[plain:i]...)
			out = append(out, "\uFFFD"...)
			i++
			plain = i
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		out = append(out, s[plain:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\t':
			out = append(out, '\\', 't')
		case '\n':
			out = append(out, '\\', 'n')
		case '\f':
			out = append(out, '\\', 'f')
		case '\r':
			out = append(out, '\\', 'r')
		default: // another control character
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		plain = i
	}
	out = append(out, s[plain:]...)
	return append(out, '"')
}
