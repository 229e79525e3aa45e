package towns

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/proofsite/proofsite/ledger"
)

// ExchangeRequest is what one town's node sends another: To is the
// receiving town's id, Payload the message, text of at most MaxChatRunes
// characters.
type ExchangeRequest struct {
	To      string
	Payload string
}

// exchangePayload is the payload of an inter_node_exchange block (RFC 8785
// canonical form), as in the published history: the nodes by federation
// id, the request and the reply by their SHA-256.
type exchangePayload struct {
	From         string      `json:"from"`
	PayloadHash  ledger.Hash `json:"payload_hash"`
	RequestID    string      `json:"request_id"`
	ResponseHash ledger.Hash `json:"response_hash"`
	To           string      `json:"to"`
}

// Exchange is a witnessed inter-node exchange.
type Exchange struct {
	RequestID    string          `json:"request_id"`
	From         string          `json:"from" doc:"The sending town"`
	To           string          `json:"to" doc:"The receiving town"`
	PayloadHash  ledger.Hash     `json:"payload_hash" doc:"SHA-256 of the payload exactly as sent (its UTF-8 bytes)"`
	ResponseHash ledger.Hash     `json:"response_hash" doc:"SHA-256 of response.reply (its UTF-8 bytes)"`
	Response     Reply           `json:"response" doc:"The receiving node's answer"`
	Record       json.RawMessage `json:"record" doc:"What the block commits to, RFC 8785 canonical JSON of from, payload_hash, request_id, response_hash and to (federation ids): its SHA-256 is witness.payload_hash"`
	Witness      Witness         `json:"witness" doc:"The chain block that recorded the exchange"`
}

// Exchange sends req.Payload from town from's node to the node of town
// req.To, which answers through its provider with its own town's memory,
// and records the exchange on the chain: a block of kind
// inter_node_exchange committing to the payload's and the reply's SHA-256.
// It returns once the block is durable. A refused request (ErrInvalid)
// reaches no provider and writes nothing.
func (t *Towns) Exchange(ctx context.Context, from string, req ExchangeRequest) (Exchange, error) {
	src, err := t.town(from)
	if err != nil {
		return Exchange{}, err
	}
	dst, err := t.town(req.To)
	switch {
	case err != nil:
		return Exchange{}, &FieldError{"to", "names no live town (" + fmt.Sprint(t.IDs()) + ")"}
	case dst == src:
		return Exchange{}, &FieldError{"to", "names the sending town; an exchange goes to another town"}
	}
	if _, err := checkText("payload", req.Payload, MaxChatRunes, true); err != nil {
		return Exchange{}, err
	}
	reply, _, err := t.ask(ctx, dst, req.Payload, src.node.Designation)
	if err != nil {
		return Exchange{}, err
	}
	var id [8]byte
	rand.Read(id[:])
	ex := Exchange{RequestID: "req-" + hex.EncodeToString(id[:]), From: src.ID, To: dst.ID,
		PayloadHash: sha256.Sum256([]byte(req.Payload)), ResponseHash: sha256.Sum256([]byte(reply.Text)), Response: reply}
	ex.Record, err = ledger.MarshalCanonical(exchangePayload{From: src.node.ID, PayloadHash: ex.PayloadHash, RequestID: ex.RequestID,
		ResponseHash: ex.ResponseHash, To: dst.node.ID})
	if err != nil {
		return Exchange{}, fmt.Errorf("towns: exchange: %w", err)
	}
	b, err := t.opts.Chain.Append(ctx, ledger.Entry{Kind: KindExchange, Payload: ex.Record,
		Description: "Inter-node exchange " + ex.RequestID + ": " + src.node.Designation + " asked " + dst.node.Designation + "."})
	if err != nil {
		return Exchange{}, fmt.Errorf("%w: chain append of an inter-node exchange: %w", ErrWrite, err)
	}
	ex.Witness = witnessOf(b)
	return ex, nil
}
