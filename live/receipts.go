package live

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/receipt"
	"github.com/proofsite/proofsite/live/ai"
)

// NodeKeys returns the published records of the nodes' receipt keys, in
// the roster's order.
func NodeKeys(keys map[string]ledger.PrivateKey) []ledger.PublishedKey {
	out := []ledger.PublishedKey{}
	for _, n := range ai.Roster {
		if k, ok := keys[n.Designation]; ok {
			out = append(out, ledger.PublishNode(k.Public(), n.Designation))
		}
	}
	return out
}

// nodeKeys are the receipt keys of this server, none without AI routes.
func (s *Server) nodeKeys() []ledger.PublishedKey {
	if s.ai == nil {
		return []ledger.PublishedKey{}
	}
	return NodeKeys(s.ai.keys)
}

type receiptInput struct{ Body ai.ReceiptRequest }

// ReceiptCheck is the answer of POST /api/agent/receipt to a receipt that
// passed every check.
type ReceiptCheck struct {
	Verified bool                `json:"verified" doc:"true: every check passed (a receipt that fails one is a 422 problem, never verified false)"`
	Key      ledger.PublishedKey `json:"key" doc:"The node key that signed it"`
	Receipt  receipt.Receipt     `json:"receipt" doc:"The receipt's members, as signed"`
	Checked  []string            `json:"checked" doc:"What was checked: form, key, signature, and request_sha256 and response_sha256 when request and response were given"`
	Fresh
}

func (e *aiEdge) verifyReceipt(_ context.Context, in *receiptInput) (*reply[ReceiptCheck], error) {
	ev := receipt.Evidence{Request: in.Body.Request, Response: in.Body.Response}
	v, err := receipt.Verify(in.Body.Receipt, e.keyring, ev)
	if err != nil {
		return nil, receiptProblem(err)
	}
	check := ReceiptCheck{Verified: true, Receipt: v.Receipt, Checked: []string{"form", "key", "signature"}, Fresh: fresh()}
	for _, k := range NodeKeys(e.keys) {
		if k.KeyID == v.Key.ID() {
			check.Key = k
		}
	}
	if ev.Request != nil {
		check.Checked = append(check.Checked, "request_sha256")
	}
	if ev.Response != nil {
		check.Checked = append(check.Checked, "response_sha256")
	}
	return &reply[ReceiptCheck]{Body: check}, nil
}

// receiptFailures say, for each failed check of receipt.Verify, what
// failed, in words that quote nothing of the request.
var receiptFailures = []struct {
	err error
	msg string
}{
	{receipt.ErrMalformed, "is not in the documented form"},
	{receipt.ErrUnknownKey, "is not the key of a node of this server"},
	{receipt.ErrWrongNode, "names another node than the one whose key signed"},
	{receipt.ErrSignature, "does not verify: a member was changed after signing, or another key signed"},
	{receipt.ErrRequestMismatch, "does not match: the request given hashes otherwise"},
	{receipt.ErrResponseMismatch, "does not match: the response given hashes otherwise"},
}

// receiptProblem is the 422 problem of a receipt that fails a check,
// naming the member that failed (when it is one the receipt or the
// request declares).
func receiptProblem(err error) error {
	var re *receipt.Error
	if !errors.As(err, &re) {
		return err
	}
	loc, name := "body.receipt", "the receipt"
	switch {
	case re.Field == "request" || re.Field == "response":
		loc, name = "body."+re.Field, re.Field
	case slices.Contains(receipt.Members, re.Field):
		loc, name = "body.receipt."+re.Field, re.Field
	}
	msg := "does not verify"
	for _, f := range receiptFailures {
		if errors.Is(err, f.err) {
			msg = f.msg
			break
		}
	}
	p := problem(http.StatusUnprocessableEntity, "receipt-not-verified", "the receipt is not verified: "+name+" "+msg)
	p.Errors = []*huma.ErrorDetail{{Location: loc, Message: name + " " + msg}}
	return p
}
