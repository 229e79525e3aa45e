package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/proofsite/proofsite/cmd"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

// liveSite hands the content over to the live edge in its own types: live
// never reads content itself.
func liveSite(cfg *content.Config, s *content.Site) live.Site {
	ls := live.Site{
		Title: cfg.Site.Title, Summary: cfg.Site.Summary, BaseURL: cfg.Site.BaseURL, APIURL: cfg.Site.APIURL, License: cfg.Site.License,
		Organisation: live.Organisation{Name: cfg.Organisation.Name, LegalName: cfg.Organisation.LegalName,
			Jurisdiction: cfg.Organisation.Jurisdiction, Contact: cfg.Organisation.Contact, HumanAuthority: cfg.Organisation.HumanAuthority},
		PublishRule:  live.PublishRule(cfg.PublishRule),
		Constitution: live.Constitution{Title: cfg.Constitution.Title, Version: cfg.Constitution.Version, Status: cfg.Constitution.Status},
	}
	for _, n := range cfg.Nodes {
		ls.Nodes = append(ls.Nodes, live.Node(n))
	}
	for _, t := range cfg.Towns {
		ls.Towns = append(ls.Towns, live.Town(t))
	}
	for _, c := range cfg.Capabilities {
		ls.Capabilities = append(ls.Capabilities, live.Capability(c))
	}
	for _, l := range cfg.Stewardship.Layers {
		ls.Stewardship = append(ls.Stewardship, live.Layer(l))
	}
	for _, c := range cfg.Constitution.Surfaces {
		ls.Constitution.Counts = append(ls.Constitution.Counts, live.ArticleCount{Surface: c.Name, Articles: c.Articles, Source: c.Source})
	}
	if s != nil {
		ls.Constitution.Articles = len(s.Articles)
		if rt := s.Runtime; rt != nil {
			ls.Constitution.Runtime, ls.Constitution.RuntimeVersion, ls.Constitution.RuntimeArticles = rt.Raw, rt.Version, len(rt.Articles)
		}
		ls.Records = s.Records
	}
	return ls
}

// renderOptions are what the build publishes beside the content: the
// OpenAPI description and endpoint map of the live edge, the gate demo
// transcript (run by the real checkpoint), the standalone verifier, and the
// published ledger keys when dataDir holds a chain.
func renderOptions(cfg *content.Config, dataDir string) (render.Options, error) {
	site := liveSite(cfg, nil)
	proof, _, err := live.Documents(site)
	if err != nil {
		return render.Options{}, err
	}
	demo, err := gateDemo(cfg)
	if err != nil {
		return render.Options{}, fmt.Errorf("gate demo: %w", err)
	}
	opts := render.Options{Artifacts: []render.Artifact{
		{Path: "openapi.json", Data: proof, Title: "OpenAPI description", Description: "the proof surface and gate discovery (OpenAPI 3.1)"},
		{Path: demoArtifactPath, Data: demo, Title: "Gate demo transcript",
			Description: "produced at build time by the real checkpoint with a labelled demo key: deny by default, allow with Bridge authorization, tamper rejection, capability board"},
		{Path: "downloads/verify-ledger.go", Data: cmd.VerifyLedgerSource, Title: "The downloadable verifier",
			Description: "one Go file, standard library only: read it, check its SHA-256, run it against this site", Downloadable: true},
	}}
	for _, e := range live.Endpoints(site) {
		if e.Kind == "live" {
			opts.Endpoints = append(opts.Endpoints, render.Endpoint{Method: e.Method, Path: e.Path, Summary: e.Summary, OnAPI: e.OnAPI})
		}
	}
	keys, err := readKeysFile(filepath.Join(dataDir, keysJSONName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return render.Options{}, fmt.Errorf("published keys: %w", err)
	default:
		for _, k := range keys.Published() {
			opts.Keys = append(opts.Keys, render.Key{KeyID: string(k.KeyID), PublicKey: k.PublicKey, Role: string(k.Role)})
		}
	}
	return opts, nil
}
