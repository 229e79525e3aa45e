package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/eval"
)

// The constitutional verification API's evaluation routes (spec 4.6):
// evaluate, govern, certify (a signed preview; anchoring is the gate's,
// through "proofsite cert anchor"), compliance and telemetry. Verify is in
// verify.go: it reads only the chain.

// Evaluation is what the evaluation routes serve.
type Evaluation struct {
	// Evaluator runs the pipeline; its Recorder should be Records, so that
	// compliance and telemetry see every evaluation.
	Evaluator *eval.Evaluator
	// Records answers compliance and telemetry from the persisted records
	// (live/eval/journal).
	Records EvalRecords
	// CertKey signs certification previews.
	CertKey ledger.PrivateKey
	// Concurrency bounds the evaluations (evaluate, govern, certify) that
	// run at once; the others wait their turn in arrival order. 0 means
	// one per core (runtime.GOMAXPROCS), the right bound for the offline
	// stages, which only use the CPU; a negative value means no bound,
	// for an evaluator whose AI scan waits on a judge over the network.
	Concurrency int
}

// EvalRecords answers compliance and telemetry from persisted records.
type EvalRecords interface {
	Compliance(hours int) (eval.ComplianceReport, error)
	Telemetry() eval.Telemetry
}

// evalBodyBytes bounds the body of an evaluation route: room for the
// largest text the evaluator takes (eval.DefaultMaxBytes) with escapes,
// so that an oversized text is answered by name (400), not by size.
const evalBodyBytes = MaxBodyBytes

// EvaluateInput is POST /api/v1/evaluate.
type EvaluateInput struct {
	Body struct {
		Text string   `json:"text" doc:"The text to evaluate: a prompt, or a model's response. UTF-8, not empty, at most 32 KiB. It is not stored; records keep its SHA-256."`
		_    struct{} `additionalProperties:"false"`
	}
}

// EvaluateResponse is the evaluation of one text: the seven stages in
// order, each timed, every flag explained.
type EvaluateResponse struct {
	eval.Report
	Fresh
}

// encoded returns the report's encoding (eval.Report.AppendJSON, without
// reflection) for jsonFormat to write with generated_at (preEncoded). A
// report encoding/json would refuse goes to huma's format, which says
// why.
func (r EvaluateResponse) encoded() ([]byte, time.Time) {
	doc, err := r.Report.AppendJSON(make([]byte, 0, evaluateResponseBytes))
	if err != nil {
		return nil, time.Time{}
	}
	return doc, r.GeneratedAt
}

// appendJSON appends the response as huma's JSON format writes it, newline
// included, or fails where that format would.
func (r *EvaluateResponse) appendJSON(b []byte) ([]byte, error) {
	b, err := r.Report.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	return appendGeneratedAt(b[:len(b)-1], r.GeneratedAt, true), nil // a report has members
}

// evaluateResponseBytes is room for the encoding of most reports.
const evaluateResponseBytes = 4096

// GovernInput is POST /api/v1/govern and POST /api/v1/certify.
type GovernInput struct {
	Body struct {
		Prompt   string   `json:"prompt" doc:"The prompt sent to a model. UTF-8, not empty, at most 32 KiB; not stored."`
		Response string   `json:"response" doc:"The model's response. UTF-8, not empty, at most 32 KiB; not stored."`
		_        struct{} `additionalProperties:"false"`
	}
}

// GovernResponse is the analysis of a prompt and its response.
type GovernResponse struct {
	eval.GovernReport
	Fresh
}

// CertifyResponse is an attestation preview: signed, never anchored.
type CertifyResponse struct {
	Preview       bool              `json:"preview" doc:"Always true: this is a preview, not an issued certificate"`
	CertificateID string            `json:"certificate_id" doc:"The SHA-256 of the certificate's RFC 8785 canonical JSON: the payload_hash its chain block will carry if it is ever anchored"`
	Certificate   eval.Certificate  `json:"certificate"`
	Signature     PreviewSignature  `json:"signature"`
	ChainAnchor   *BlockRef         `json:"chain_anchor" doc:"Always null: a preview writes nothing to the chain"`
	Anchoring     string            `json:"anchoring"`
	Verify        string            `json:"verify" doc:"Where the certificate verifies once anchored; until then it answers verified: false"`
	Evaluation    eval.GovernReport `json:"evaluation"`
	Fresh
}

// PreviewSignature is the instance's signature over the certificate's
// canonical JSON.
type PreviewSignature struct {
	Algorithm string           `json:"alg" enum:"ed25519"`
	KeyID     ledger.KeyID     `json:"key_id"`
	PublicKey string           `json:"public_key" doc:"hex"`
	Signature ledger.Signature `json:"signature" doc:"ed25519 over the certificate's RFC 8785 canonical JSON, hex"`
	Signed    string           `json:"signed" doc:"What was signed: the canonical JSON of certificate"`
}

// ComplianceInput is GET /api/v1/compliance.
type ComplianceInput struct {
	Hours int `query:"hours" required:"true" minimum:"1" maximum:"720" doc:"The window, in hours before now: 1 to 720"`
}

// ComplianceResponse is the compliance report of a window.
type ComplianceResponse struct {
	eval.ComplianceReport
	Fresh
}

// TelemetryResponse is the live view of the evaluator.
type TelemetryResponse struct {
	eval.Telemetry
	Fresh
}

// anchorHelp says how a preview becomes an anchored certificate.
const anchorHelp = "Anchored issuance goes through the gate only: the Bridge signs a CERT_ANCHOR authorization whose payload_sha256 is the certificate_id and whose scope lists certificate:<certificate_id>, and the operator runs \"proofsite cert anchor --authorization FILE CERTIFICATE.json\", which appends a certificate block."

func (d *definition) registerEval() {
	s := d.s
	if s.opts.Eval == nil && !s.describing {
		return
	}
	errs := []int{http.StatusInternalServerError}
	fastReady := func() {}
	if s.opts.Eval != nil {
		fastReady = d.registerEvaluateFast() // before the operation: it answers first (evalfast.go)
	}
	Post(d.v1, huma.Operation{OperationID: "evaluate", Path: "/api/v1/evaluate", Tags: v1Tags, Errors: errs,
		Summary: "Evaluate a text: intake, normalise, 52-pattern precheck, entropy, AI scan, policy, explanation for every flag"},
		PostRoute{MaxBodyBytes: evalBodyBytes},
		func(ctx context.Context, in *EvaluateInput) (*reply[EvaluateResponse], error) {
			return s.evaluate(ctx, in.Body.Text)
		})
	fastReady()
	Post(d.v1, huma.Operation{OperationID: "govern", Path: "/api/v1/govern", Tags: v1Tags, Errors: errs,
		Summary: "Analyse a prompt and a model's response (input and output profiles), with a suggested_rewrite_prompt"},
		PostRoute{MaxBodyBytes: evalBodyBytes},
		func(ctx context.Context, in *GovernInput) (*reply[GovernResponse], error) {
			var g eval.GovernReport
			var err error
			if terr := s.evalTurns.run(ctx, func() { g, err = s.opts.Eval.Evaluator.Govern(ctx, in.Body.Prompt, in.Body.Response) }); terr != nil {
				return nil, terr
			}
			if err != nil {
				return nil, evalProblem(err)
			}
			return &reply[GovernResponse]{Body: GovernResponse{GovernReport: g, Fresh: fresh()}}, nil
		})
	Post(d.v1, huma.Operation{OperationID: "certify", Path: "/api/v1/certify", Tags: v1Tags, Errors: errs,
		Summary: "Attestation preview: a signed certificate body, chain_anchor null, no chain_proof; nothing is written to the chain"},
		PostRoute{MaxBodyBytes: evalBodyBytes},
		func(ctx context.Context, in *GovernInput) (*reply[CertifyResponse], error) {
			return s.certify(ctx, in.Body.Prompt, in.Body.Response)
		})
	huma.Register(d.v1, huma.Operation{OperationID: "compliance", Method: http.MethodGet, Path: "/api/v1/compliance", Tags: v1Tags,
		Summary: "Compliance report of the last hours: total checks, compliance rate, flags, certifications, breakdown by category"},
		func(ctx context.Context, in *ComplianceInput) (*reply[ComplianceResponse], error) {
			r, err := s.opts.Eval.Records.Compliance(in.Hours)
			if err != nil {
				return nil, evalProblem(err)
			}
			return &reply[ComplianceResponse]{Body: ComplianceResponse{ComplianceReport: r, Fresh: fresh()}}, nil
		})
	get(d.v1, "/api/v1/telemetry", "telemetry", "Live metrics: hourly categories, 7-day flags and certifications, entropy engine status, recent flags (no text)", v1Tags,
		func(context.Context) (TelemetryResponse, error) {
			return TelemetryResponse{Telemetry: s.opts.Eval.Records.Telemetry(), Fresh: fresh()}, nil
		})
}

// evaluate evaluates a text in its turn (Evaluation.Concurrency).
func (s *Server) evaluate(ctx context.Context, text string) (*reply[EvaluateResponse], error) {
	var r eval.Report
	var err error
	if terr := s.evalTurns.run(ctx, func() { r, err = s.opts.Eval.Evaluator.Evaluate(ctx, text) }); terr != nil {
		return nil, terr
	}
	if err != nil {
		return nil, evalProblem(err)
	}
	return &reply[EvaluateResponse]{Body: EvaluateResponse{Report: r, Fresh: fresh()}}, nil
}

// certify evaluates the pair and signs the certificate body as a preview.
func (s *Server) certify(ctx context.Context, prompt, response string) (*reply[CertifyResponse], error) {
	ev := s.opts.Eval
	var c eval.Certificate
	var g eval.GovernReport
	var err error
	if terr := s.evalTurns.run(ctx, func() { c, g, err = ev.Evaluator.Certify(ctx, prompt, response) }); terr != nil {
		return nil, terr
	}
	if err != nil {
		return nil, evalProblem(err)
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("live: certify: %w", err)
	}
	id, canon, err := ledger.PayloadHash(body)
	if err != nil {
		return nil, fmt.Errorf("live: certify: %w", err)
	}
	key := ev.CertKey.Public()
	return &reply[CertifyResponse]{Body: CertifyResponse{
		Preview: true, CertificateID: id.String(), Certificate: c,
		Signature: PreviewSignature{Algorithm: "ed25519", KeyID: key.ID(), PublicKey: key.String(), Signature: ev.CertKey.Sign(canon), Signed: string(canon)},
		Anchoring: anchorHelp, Verify: s.site.APIURL + "/api/v1/verify?cert=" + id.String(),
		Evaluation: g, Fresh: fresh(),
	}}, nil
}

// evalProblem answers an evaluator error: bad input is 400 naming the
// field, an out-of-range window 400; anything else is logged as 500.
func evalProblem(err error) error {
	var in *eval.InputError
	switch {
	case errors.As(err, &in):
		p := problem(http.StatusBadRequest, "invalid-request", fmt.Sprintf("%s %s", in.Field, in.Detail))
		p.Errors = []*huma.ErrorDetail{{Location: "body." + in.Field, Message: in.Detail}}
		return p
	case errors.Is(err, eval.ErrHoursOutOfRange):
		_, detail, _ := strings.Cut(err.Error(), ": ")
		return problem(http.StatusBadRequest, "invalid-request", detail)
	}
	return fmt.Errorf("live: evaluation: %w", err)
}
