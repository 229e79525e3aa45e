package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// evaluationJSON is the JSON form of an Evaluation, for orchestrators: they
// branch on decision and on the errors' codes, never on messages.
type evaluationJSON struct {
	Action        Action         `json:"action"`
	Decision      Decision       `json:"decision"`
	Required      []Control      `json:"required"`
	Satisfied     []Control      `json:"satisfied"`
	Missing       []Control      `json:"missing"`
	Board         []ControlState `json:"board"`
	Errors        []errorJSON    `json:"errors"`
	Authorization *Authorization `json:"authorization"`
	EvaluatedAt   string         `json:"evaluated_at"`
}

type errorJSON struct {
	Code    string  `json:"code"`
	Control Control `json:"control,omitempty"`
	Message string  `json:"message"`
}

// MarshalJSON encodes the evaluation:
//
//	{"action":"…","decision":"ALLOW|DENY","required":[…],"satisfied":[…],"missing":[…],
//	 "board":[{"control":"BRIDGE_AUTH","state":"SATISFIED","live":true,"detail":"…"},…],
//	 "errors":[{"code":"tampered","control":"BRIDGE_AUTH","message":"…"}],
//	 "authorization":{…}|null,"evaluated_at":"…"}
func (e Evaluation) MarshalJSON() ([]byte, error) {
	w := evaluationJSON{
		Action: e.Action, Decision: e.Decision,
		Required: nonNil(e.Required), Satisfied: nonNil(e.Satisfied), Missing: nonNil(e.Missing),
		Board: e.Board, Errors: []errorJSON{}, Authorization: e.Authorization,
	}
	if !e.At.IsZero() {
		w.EvaluatedAt = e.At.UTC().Format(time.RFC3339Nano)
	}
	for _, err := range e.Errors {
		w.Errors = append(w.Errors, errorJSON{Code: Code(err), Control: err.Control, Message: err.Error()})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteText writes the evaluation for people, the form gate check prints:
//
//	decision   DENY
//	action     PUBLIC_CLAIM_CHANGE
//	required   BRIDGE_AUTH
//	satisfied  -
//	missing    BRIDGE_AUTH
//	board      BRIDGE_AUTH           FAILED        …
//	           NODE_APPROVAL_QUORUM  UNVERIFIABLE  …
//	reasons    [no_authorization] BRIDGE_AUTH: gate: no authorization presented
func (e Evaluation) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-10s %s\n", k, v) }
	line("decision", string(e.Decision))
	line("action", string(e.Action))
	line("required", controlList(e.Required))
	line("satisfied", controlList(e.Satisfied))
	line("missing", controlList(e.Missing))
	for i, cs := range e.Board {
		k := ""
		if i == 0 {
			k = "board"
		}
		line(k, fmt.Sprintf("%-21s %-13s %s", cs.Control, cs.State, cs.Detail))
	}
	if a := e.Authorization; a != nil {
		line("presented", fmt.Sprintf("%s: %s on %s, valid %s to %s, payload %s, signed by %s", a.ID, a.Action, listOrNone(a.Scope),
			a.IssuedAt.Format(TimeFormat), a.ExpiresAt.Format(TimeFormat), a.PayloadSHA256, a.KeyID))
	}
	e.writeReasons(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSummary writes the decision and its reasons only.
func (e Evaluation) WriteSummary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %s\n", "decision", e.Decision)
	e.writeReasons(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (e Evaluation) writeReasons(b *strings.Builder) {
	for i, err := range e.Errors {
		k := ""
		if i == 0 {
			k = "reasons"
		}
		fmt.Fprintf(b, "%-10s [%s] %s\n", k, Code(err), err)
	}
}

func controlList(cs []Control) string {
	if len(cs) == 0 {
		return "-"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
