package ai

import "encoding/json"

// The request bodies of the AI routes. Each refuses unknown members
// (additionalProperties false), so a session-context, memory or
// credential field is an error (400), never something a node sees. The
// tags are read by the route layer (huma) for validation and the OpenAPI
// description; the limits match CheckText, which the nodes apply again.

// ChatRequest is the body of POST /api/chat.
type ChatRequest struct {
	Message string   `json:"message" minLength:"1" maxLength:"2000" doc:"What to ask"`
	Node    string   `json:"node,omitempty" enum:"S1_PLEX,S2_CASE,S3_TARS,S4_KIPP,S6_FORGE" doc:"A chat node of the roster (S2_CASE when omitted). Checked, then recorded in the answer as requested_node: the public route answers as S2_CASE whichever node is named (POST /api/pulse asks them all)"`
	_       struct{} `additionalProperties:"false"`
}

// PulseRequest is the body of POST /api/pulse.
type PulseRequest struct {
	Topic string   `json:"topic" minLength:"1" maxLength:"2000" doc:"What every chat node weighs in on"`
	_     struct{} `additionalProperties:"false"`
}

// AirlockRequest is the body of POST /api/ember and POST /api/lumen: one
// message and nothing else. No memory, context or session field exists.
type AirlockRequest struct {
	Message string   `json:"message" minLength:"1" maxLength:"2000" doc:"What to ask"`
	_       struct{} `additionalProperties:"false"`
}

// QueryRequest is the body of POST /api/v1/query (and the query
// parameters of GET): a question and, optionally, the airlock node.
type QueryRequest struct {
	Question string   `json:"question" minLength:"1" maxLength:"2000" doc:"What to ask"`
	Node     string   `json:"node,omitempty" enum:"Ember,Lumen" doc:"Ember (S5_LOCUS, the default) or Lumen (S17_LUMEN)"`
	_        struct{} `additionalProperties:"false"`
}

// ReceiptRequest is the body of POST /api/agent/receipt: a receipt as
// issued and, optionally, the request and response it should cover.
type ReceiptRequest struct {
	Receipt  json.RawMessage `json:"receipt" doc:"The receipt object exactly as it was received"`
	Request  json.RawMessage `json:"request,omitempty" doc:"The JSON request body the receipt should cover"`
	Response json.RawMessage `json:"response,omitempty" doc:"The JSON response body the receipt should cover (its receipt member is ignored)"`
	_        struct{}        `additionalProperties:"false"`
}

// DefaultChatNode answers /api/chat when the request names no node.
const DefaultChatNode = "S2_CASE"

// DefaultAirlock answers /api/v1/query when the request names no node.
const DefaultAirlock = "Ember"
