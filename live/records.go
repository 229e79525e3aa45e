package live

import (
	"context"
	"encoding/json"
	"net/http"
)

// records are the governance reads and the record each one serves.
var records = []struct{ path, name, summary string }{
	{"/api/incorporation", "incorporation", "Corporate legal foundation"},
	{"/api/shares", "shares", "Share structure: 100 million authorized, single-class common stock"},
	{"/api/bylaws", "bylaws", "Bylaws"},
	{"/api/picofsky", "picofsky", "Safety specification"},
	{"/api/threat-model", "threat-model", "Threat assessment"},
	{"/api/s5/threat-intel", "threat-intel", "Firewall threat intelligence of S5_LOCUS (Ember)"},
}

// RecordResponse is a governance record as published, at request time.
type RecordResponse struct {
	Record json.RawMessage `json:"record" doc:"The record exactly as published (CC0)"`
	SHA256 string          `json:"sha256" doc:"SHA-256 of record"`
	Fresh
}

func (d *definition) registerRecords() {
	for _, r := range records {
		get(d.proof, r.path, "record-"+r.name, r.summary, []string{"Governance"}, func(context.Context) (RecordResponse, error) {
			raw, ok := d.s.site.Records[r.name]
			if !ok {
				return RecordResponse{}, problem(http.StatusNotFound, "not-found", "the "+r.name+" record is not published")
			}
			return RecordResponse{Record: raw, SHA256: sha256Hex(raw), Fresh: fresh()}, nil
		})
	}
}
