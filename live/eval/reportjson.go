package eval

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the report as encoding/json encodes it with HTML
// escaping off (huma's JSON format, what the evaluate route answers),
// byte for byte and without the newline an Encoder adds, but without
// reflection or allocation: the route encodes one report a request, and
// encoding/json took about 3% of its CPU under wrk, with 17 allocations.
// TestReportAppendJSON holds it to encoding/json on the whole corpus and
// on a report with every optional field set. It returns an error where
// encoding/json would (a NaN or infinite score, a time outside years
// 0-9999).
func (r *Report) AppendJSON(b []byte) ([]byte, error) {
	if err := r.checkJSON(); err != nil {
		return b, err
	}
	b = append(b, `{"input":{"sha256":`...)
	b = appendString(b, r.Input.SHA256)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(r.Input.Bytes), 10)
	b = append(b, `,"chars":`...)
	b = strconv.AppendInt(b, int64(r.Input.Chars), 10)
	b = append(b, `},"decision":`...)
	b = appendString(b, string(r.Decision))
	b = append(b, `,"score":`...)
	b = strconv.AppendInt(b, int64(r.Score), 10)
	b = append(b, `,"compliant":`...)
	b = strconv.AppendBool(b, r.Compliant)
	b = append(b, `,"categories":`...)
	b = appendStrings(b, r.Categories)
	b = append(b, `,"flags":`...)
	b = appendFlags(b, r.Flags)
	b = append(b, `,"explanation":`...)
	b = appendString(b, r.Explanation)
	b = append(b, `,"stages":`...)
	b = appendStages(b, r.Stages)
	b = append(b, `,"normalise":`...)
	b = appendNormalise(b, &r.Normalise)
	b = append(b, `,"entropy":`...)
	b = appendEntropy(b, &r.Entropy)
	b = append(b, `,"ai_scan":{"engine":`...)
	b = appendString(b, r.AIScan.Engine)
	b = append(b, `,"scores":`...)
	b = appendScores(b, r.AIScan.Scores)
	if j := r.AIScan.Judge; j != nil {
		b = append(b, `,"judge":`...)
		b = appendJudge(b, j)
	}
	b = append(b, `},"patterns":{"version":`...)
	b = appendString(b, r.Patterns.Version)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(r.Patterns.Count), 10)
	b = append(b, `,"sha256":`...)
	b = appendString(b, r.Patterns.Digest)
	b = append(b, `},"evaluated_at":`...)
	b = appendTime(b, r.EvaluatedAt)
	b = append(b, `}`...)
	return b, nil
}

func appendFlags(b []byte, fs []Flag) []byte {
	if fs == nil {
		return append(b, `null`...)
	}
	b = append(b, `[`...)
	for i := range fs {
		f := &fs[i]
		if i > 0 {
			b = append(b, `,`...)
		}
		b = append(b, `{"id":`...)
		b = appendString(b, f.ID)
		b = append(b, `,"title":`...)
		b = appendString(b, f.Title)
		b = append(b, `,"category":`...)
		b = appendString(b, string(f.Category))
		b = append(b, `,"severity":`...)
		b = appendString(b, string(f.Severity))
		b = append(b, `,"source":`...)
		b = appendString(b, f.Source)
		b = append(b, `,"article":`...)
		b = strconv.AppendInt(b, int64(f.Article), 10)
		if f.ArticleTitle != "" {
			b = append(b, `,"article_title":`...)
			b = appendString(b, f.ArticleTitle)
		}
		b = append(b, `,"explanation":`...)
		b = appendString(b, f.Explanation)
		b = append(b, `,"remediation":`...)
		b = appendString(b, f.Remediation)
		if e := f.Evidence; e != nil {
			b = append(b, `,"evidence":{"view":`...)
			b = appendString(b, string(e.View))
			b = append(b, `,"depth":`...)
			b = strconv.AppendInt(b, int64(e.Depth), 10)
			b = append(b, `,"offset":`...)
			b = strconv.AppendInt(b, int64(e.Offset), 10)
			b = append(b, `,"length":`...)
			b = strconv.AppendInt(b, int64(e.Length), 10)
			if e.Probability != 0 {
				b = append(b, `,"probability":`...)
				b = appendFloat(b, e.Probability)
			}
			b = append(b, `}`...)
		}
		b = append(b, `}`...)
	}
	b = append(b, `]`...)
	return b
}

func appendStages(b []byte, ss []Stage) []byte {
	if ss == nil {
		return append(b, `null`...)
	}
	b = append(b, `[`...)
	for i := range ss {
		s := &ss[i]
		if i > 0 {
			b = append(b, `,`...)
		}
		b = append(b, `{"name":`...)
		b = appendString(b, s.Name)
		b = append(b, `,"status":`...)
		b = appendString(b, s.Status)
		b = append(b, `,"duration_us":`...)
		b = strconv.AppendInt(b, s.DurationUS, 10)
		if s.Error != "" {
			b = append(b, `,"error":`...)
			b = appendString(b, s.Error)
		}
		b = append(b, `}`...)
	}
	b = append(b, `]`...)
	return b
}

func appendNormalise(b []byte, n *NormaliseReport) []byte {
	b = append(b, `{"changed":`...)
	b = strconv.AppendBool(b, n.Changed)
	b = append(b, `,"invisible_removed":`...)
	b = strconv.AppendInt(b, int64(n.Invisible), 10)
	b = append(b, `,"bidi_controls":`...)
	b = strconv.AppendInt(b, int64(n.Bidi), 10)
	b = append(b, `,"tag_chars":`...)
	b = strconv.AppendInt(b, int64(n.TagChars), 10)
	b = append(b, `,"controls":`...)
	b = strconv.AppendInt(b, int64(n.Controls), 10)
	b = append(b, `,"homoglyphs_folded":`...)
	b = strconv.AppendInt(b, int64(n.Homoglyphs), 10)
	b = append(b, `,"homoglyph_words":`...)
	b = strconv.AppendInt(b, int64(n.HomoglyphWords), 10)
	b = append(b, `,"leet_tokens":`...)
	b = strconv.AppendInt(b, int64(n.LeetTokens), 10)
	b = append(b, `,"views":`...)
	if n.Views == nil {
		b = append(b, `null`...)
	} else {
		b = append(b, `[`...)
		for i, v := range n.Views {
			if i > 0 {
				b = append(b, `,`...)
			}
			b = append(b, `{"kind":`...)
			b = appendString(b, string(v.Kind))
			b = append(b, `,"depth":`...)
			b = strconv.AppendInt(b, int64(v.Depth), 10)
			b = append(b, `,"bytes":`...)
			b = strconv.AppendInt(b, int64(v.Bytes), 10)
			b = append(b, `}`...)
		}
		b = append(b, `]`...)
	}
	b = append(b, `,"decode_bounded":`...)
	b = strconv.AppendBool(b, n.DecodeBounded)
	b = append(b, `}`...)
	return b
}

func appendEntropy(b []byte, e *EntropyReport) []byte {
	b = append(b, `{"status":`...)
	b = appendString(b, string(e.Status))
	b = append(b, `,"bytes_analysed":`...)
	b = strconv.AppendInt(b, int64(e.BytesAnalysed), 10)
	b = append(b, `,"entropy":`...)
	b = appendFloat(b, e.Entropy)
	b = append(b, `,"max_window_entropy":`...)
	b = appendFloat(b, e.MaxWindowEntropy)
	b = append(b, `,"high_entropy_windows":`...)
	b = strconv.AppendInt(b, int64(e.HighEntropyWindows), 10)
	b = append(b, `,"compression_ratio":`...)
	b = appendFloat(b, e.CompressionRatio)
	b = append(b, `,"repetition":`...)
	b = appendFloat(b, e.Repetition)
	b = append(b, `,"scripts":`...)
	if e.Scripts == nil {
		b = append(b, `null`...)
	} else {
		b = append(b, `{`...)
		for i, k := range sortedKeys(e.Scripts, make([]string, 0, 16)) {
			if i > 0 {
				b = append(b, `,`...)
			}
			b = appendString(b, k)
			b = append(b, `:`...)
			b = strconv.AppendInt(b, int64(e.Scripts[k]), 10)
		}
		b = append(b, `}`...)
	}
	b = append(b, `,"script_mixing":`...)
	b = appendFloat(b, e.ScriptMixing)
	b = append(b, `,"anomalies":`...)
	b = appendStrings(b, e.Anomalies)
	b = append(b, `}`...)
	return b
}

func appendScores(b []byte, m map[Category]float64) []byte {
	if m == nil {
		return append(b, `null`...)
	}
	b = append(b, `{`...)
	for i, k := range sortedKeys(m, make([]Category, 0, len(Categories))) {
		if i > 0 {
			b = append(b, `,`...)
		}
		b = appendString(b, string(k))
		b = append(b, `:`...)
		b = appendFloat(b, m[k])
	}
	b = append(b, `}`...)
	return b
}

func appendJudge(b []byte, j *JudgeReport) []byte {
	b = append(b, `{"status":`...)
	b = appendString(b, j.Status)
	if j.Verdict != "" {
		b = append(b, `,"verdict":`...)
		b = appendString(b, j.Verdict)
	}
	if len(j.Categories) > 0 {
		b = append(b, `,"categories":`...)
		b = appendStrings(b, j.Categories)
	}
	if j.Confidence != 0 {
		b = append(b, `,"confidence":`...)
		b = appendFloat(b, j.Confidence)
	}
	if j.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, j.Reason)
	}
	if j.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, j.Error)
	}
	b = append(b, `}`...)
	return b
}

// sortedKeys appends m's keys to keys in the order encoding/json writes
// them.
func sortedKeys[K ~string, V any](m map[K]V, keys []K) []K {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkJSON returns the error encoding/json gives a report it cannot
// encode: a NaN or infinite number, or a time outside years 0 to 9999.
func (r *Report) checkJSON() error {
	finite := func(fs ...float64) bool {
		for _, f := range fs {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return false
			}
		}
		return true
	}
	e := &r.Entropy
	ok := finite(e.Entropy, e.MaxWindowEntropy, e.CompressionRatio, e.Repetition, e.ScriptMixing)
	for _, s := range r.AIScan.Scores {
		ok = ok && finite(s)
	}
	for _, f := range r.Flags {
		ok = ok && (f.Evidence == nil || finite(f.Evidence.Probability))
	}
	if j := r.AIScan.Judge; j != nil {
		ok = ok && finite(j.Confidence)
	}
	if y := r.EvaluatedAt.Year(); !ok || y < 0 || y > 9999 {
		return errJSONValue
	}
	return nil
}

// errJSONValue is a value encoding/json refuses too.
var errJSONValue = errors.New("eval: a number or time JSON cannot encode")

// appendStrings appends a slice of strings.
func appendStrings[S ~string](b []byte, ss []S) []byte { return appendJSONStrings(b, ss, false) }

// appendJSONStrings is appendStrings with appendJSONString's html.
func appendJSONStrings[S ~string](b []byte, ss []S, html bool) []byte {
	if ss == nil {
		return append(b, `null`...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, string(s), html)
	}
	return append(b, ']')
}

// appendFloat appends f as encoding/json's float64 encoder does: the
// shortest decimal that reads back as f, in exponent form below 1e-6 and
// from 1e21, a one-digit negative exponent written as one digit. f is
// finite (checkJSON).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// appendTime appends t as time.Time's MarshalJSON does: RFC 3339 with
// nanoseconds (years 0 to 9999: checkJSON).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping off: the short escapes \b \f \n \r \t \" \\, other controls
// as \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte { return appendJSONString(b, s, false) }

// appendJSONString is appendString that, with html, also escapes <, > and &
// as \u003c, \u003e and \u0026, as encoding/json.Marshal does.
func appendJSONString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other controls, and <, > and & with html
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
