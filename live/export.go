package live

import (
	"bufio"
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
)

// ExportPath is the metadata-only export, streamed from the open store.
const ExportPath = "/api/ledger/export"

// ExportMediaType is the export's media type: JSON Lines.
const ExportMediaType = "application/x-ndjson"

// registerExport serves the metadata-only JSONL export, the file the
// downloadable verifier checks offline: a header (the genesis, the keys,
// the seams, and the signed checkpoint over exactly the rows that follow),
// then every row. It is streamed from the store the server holds open, so
// it needs no second process and no private key on the auditor's side.
func (d *definition) registerExport() {
	s := d.s
	d.proof.OpenAPI().AddOperation(&huma.Operation{OperationID: "ledger-export", Method: http.MethodGet, Path: ExportPath,
		Summary: "Metadata-only export (JSON Lines) with its signed checkpoint",
		Description: "The chain as `proofsite ledger export` writes it, read from one snapshot and streamed: a header line " +
			"(format proofsite-ledger-export/1, genesis_hash, keys, documented_seams, private: false, and checkpoint: the C2SP signed note " +
			"over exactly the rows that follow), then one line per row with its public metadata. No description or payload is ever included. " +
			"Verify it offline: go run verify-ledger.go --keys keys.json export.jsonl",
		Tags: proofTags,
		Responses: map[string]*huma.Response{
			"200": {Description: "The export, one JSON document per line", Content: map[string]*huma.MediaType{ExportMediaType: {}}},
			"503": {Description: "This server does not sign checkpoints, so it serves no export", Content: map[string]*huma.MediaType{"application/problem+json": {}}},
		}})
	d.app.Get(ExportPath, func(c *fiber.Ctx) error {
		pub := s.opts.Publisher
		if pub == nil {
			sendProblem(c.Context(), problem(http.StatusServiceUnavailable, "unavailable", "this server signs no checkpoints, so it serves no export"))
			return nil
		}
		c.Set(fiber.HeaderContentType, ExportMediaType)
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="ledger-export.jsonl"`)
		if c.Method() == fiber.MethodHead {
			return nil
		}
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			// A failure half-way cannot change the status any more; the
			// cut file fails every verifier (its checkpoint covers rows it
			// lacks).
			if err := pub.Export(context.Background(), w, false); err != nil {
				s.log.Error("export", "err", err)
			}
		})
		return nil
	})
}
