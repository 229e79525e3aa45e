package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/proofsite/proofsite/cmd"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/memory"
	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

// browserVerifierPath is where the build publishes the browser's verifier.
const browserVerifierPath = "downloads/verify-tiles.js"

// demoArtifactPath is where the build publishes the gate demo transcript.
const demoArtifactPath = "products/gate/demo_output.txt"

// Where serve keeps the nodes' memories and the towns in the data folder.
const (
	memoryDir = "memory"
	townsDir  = "towns"
)

// chainAccess is the instance's chain as the memory and the towns use it:
// the store's reads (blocks, payloads), and the chain's Append, which
// signs with the instance's keys (it hides the store's own Append of a
// sealed block).
type chainAccess struct {
	*store.Store
	chain *chain.Chain
}

func newChainAccess(c *chain.Chain) chainAccess { return chainAccess{Store: c.Store(), chain: c} }

// Append records e on the chain and returns its block once it is durable.
func (c chainAccess) Append(ctx context.Context, e ledger.Entry) (ledger.Block, error) {
	return c.chain.Append(ctx, e)
}

// memoryNodes are the ids memories may be stored under: every AI node's.
func memoryNodes(ch *charter.Charter) []string {
	var ids []string
	for _, n := range ch.Nodes {
		if id := n.MemoryID(); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// memoryTokens are the hashes of the bearer tokens POST /api/memory/store
// accepts: PROOFSITE_MEMORY_TOKEN's and those of the token file.
func (c *config) memoryTokens() (memory.Tokens, error) {
	var hashes [][sha256.Size]byte
	if c.MemoryTokenHash != nil {
		hashes = append(hashes, *c.MemoryTokenHash)
	}
	if c.MemoryTokenFile != "" {
		f, err := os.Open(c.MemoryTokenFile)
		if err != nil {
			return memory.Tokens{}, fmt.Errorf("memory token file: %w", err)
		}
		defer f.Close()
		more, err := memory.ParseTokenHashes(f)
		if err != nil {
			return memory.Tokens{}, fmt.Errorf("%s: %w", c.MemoryTokenFile, err)
		}
		hashes = append(hashes, more...)
	}
	return memory.NewTokens(hashes...), nil
}

// liveSite hands the loaded content to the live edge: live never reads
// content itself.
func liveSite(s *content.Site) *live.Site {
	ls := &live.Site{Charter: *s.Charter, Articles: len(s.Articles), Records: s.Records}
	if rt := s.Runtime; rt != nil {
		ls.RuntimeArtifact = live.RuntimeArtifact{Raw: rt.Raw, Version: rt.Version, Articles: len(rt.Articles)}
	}
	return ls
}

// renderOptions are what the build publishes beside the content: the
// OpenAPI description and endpoint map of the live edge, the gate demo
// transcript (run by the real checkpoint), the standalone verifier, and,
// when dataDir holds a chain, its trust document as /keys.json and the
// chain itself, verified, for the explorer. Without a chain the build
// publishes no trust document and an explorer without rows (and says so on
// stdout): ai.json then lists only the Bridge keys pinned in site.yaml.
func renderOptions(ctx context.Context, env *environment, ch *charter.Charter, dataDir string) (render.Options, error) {
	site := live.Site{Charter: *ch}
	proof, _, err := live.Documents(site)
	if err != nil {
		return render.Options{}, err
	}
	demo, err := chain.Demo(ch, content.ConfigFile)
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
	opts.Answers = live.Answers(site)
	for _, e := range live.Endpoints(site) {
		if e.Kind == "live" {
			opts.Endpoints = append(opts.Endpoints, render.Endpoint{Method: e.Method, Path: e.Path, Summary: e.Summary, OnAPI: e.OnAPI})
		}
	}
	trust, raw, err := chain.PublishedTrust(dataDir)
	keys := trust.Keys
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(env.stdout, "proofsite: %s holds no chain: /%s (the trust document) is not published; run \"proofsite ledger init\" first\n", dataDir, chain.KeysFile)
		if keys, err = ch.Gate.Published(); err != nil {
			return render.Options{}, err
		}
	case err != nil:
		return render.Options{}, fmt.Errorf("trust document: %w", err)
	default:
		if err := trustNote(env, ch, trust); err != nil {
			return render.Options{}, err
		}
		if opts.Ledger, err = readLedger(ctx, dataDir); err != nil {
			return render.Options{}, err
		}
		opts.Artifacts = append(opts.Artifacts, render.Artifact{Path: render.TrustDocumentPath, Data: raw, Title: "Trust document",
			Description:  "what a verifier pins: the public keys (writer, witnesses, Bridge), the genesis, the documented seams with their hashes, the witness quorum and the log's checkpoint key (verify-ledger --keys keys.json)",
			Downloadable: true})
		// The browser's verifier, while the build publishes the log it reads.
		if _, err := os.Stat(filepath.Join(dataDir, chain.TilesDir, "checkpoint")); err == nil {
			opts.Artifacts = append(opts.Artifacts, render.Artifact{Path: browserVerifierPath, Data: cmd.BrowserVerifierSource, Title: "The browser verifier",
				Description:  "the script the home page runs: the ledger's verdict computed in your browser from the public tiles and the trust document (WebCrypto SHA-256 and Ed25519)",
				Downloadable: true})
			opts.BrowserVerifier = "/" + browserVerifierPath
		}
	}
	for _, k := range keys {
		opts.Keys = append(opts.Keys, render.Key{KeyID: string(k.KeyID), PublicKey: k.PublicKey, Role: string(k.Role)})
	}
	return opts, nil
}

// trustNote says on stdout when the trust document the build publishes no
// longer says what site.yaml does: serve, "ledger init" and "build
// --publish" publish it again.
func trustNote(env *environment, ch *charter.Charter, trust ledger.TrustDocument) error {
	opts, err := policyOptions(ch)
	if err != nil {
		return err
	}
	want, err := trust.Revise(opts.Policy())
	if err == nil && reflect.DeepEqual(want, trust) {
		return nil
	}
	fmt.Fprintf(env.stdout, "proofsite: note: the published /%s does not say what site.yaml does (Bridge keys, seams, witness quorum or log); serve, \"ledger init\" or \"build --publish\" publish it again\n", chain.KeysFile)
	return nil
}

// readLedger reads the chain in dataDir for the explorer: every row, read
// only, and the full walk over them with the pins of the chain's trust
// document.
func readLedger(ctx context.Context, dataDir string) (*render.Ledger, error) {
	c, err := chain.Open(chain.Options{DataDir: dataDir, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("explorer: the build reads the chain in %s (if proofsite serve holds it, stop it or build from a copy of the folder): %w", dataDir, err)
	}
	defer c.Close()
	pins, err := c.Trust().Options()
	if err != nil {
		return nil, fmt.Errorf("explorer: trust document: %w", err)
	}
	l := &render.Ledger{Pins: pins, Blocks: make([]ledger.Block, 0, c.Store().Count())}
	for b, err := range c.Store().Blocks(ctx) {
		if err != nil {
			return nil, fmt.Errorf("explorer: reading the chain: %w", err)
		}
		l.Blocks = append(l.Blocks, b)
	}
	if l.Result, err = ledger.Verify(ledger.Values(l.Blocks), pins); err != nil {
		return nil, fmt.Errorf("explorer: verifying the chain: %w", err)
	}
	return l, nil
}

// ledgerTiles is the chain's C2SP tlog-tiles log (DATA/tiles), which full
// builds publish under /ledger/ beside the site, for static hosts: its
// checkpoint and tiles, not the writer's own files.
func ledgerTiles(dataDir string) []site.Tree {
	return []site.Tree{{Dir: filepath.Join(dataDir, chain.TilesDir), Prefix: strings.Trim(live.TilesPrefix, "/"), Skip: func(rel string) bool {
		_, tile := live.TileName(live.TilesPrefix + rel)
		return !tile
	}}}
}
