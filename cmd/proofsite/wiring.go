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
	"sync"

	"github.com/proofsite/proofsite/cmd"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/ledger/tiles"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/voice"
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
func renderOptions(env *environment, ch *charter.Charter, dataDir string) (render.Options, error) {
	// The live edge is described and the gate demo run while the chain is
	// read and verified: a build waits for both before it renders.
	var (
		desc    live.Description
		demo    []byte
		liveErr error
		wg      sync.WaitGroup
	)
	wg.Go(func() {
		if desc, liveErr = live.Describe(live.Site{Charter: *ch}); liveErr != nil {
			return
		}
		if demo, liveErr = chain.Demo(ch, content.ConfigFile); liveErr != nil {
			liveErr = fmt.Errorf("gate demo: %w", liveErr)
		}
	})
	published, err := publishedChain(env, ch, dataDir)
	wg.Wait()
	if liveErr != nil {
		return render.Options{}, liveErr
	}
	if err != nil {
		return render.Options{}, err
	}
	opts := render.Options{Artifacts: []render.Artifact{
		{Path: "openapi.json", Data: desc.OpenAPI, Title: "OpenAPI description", Description: "the proof surface and gate discovery (OpenAPI 3.1)"},
		{Path: demoArtifactPath, Data: demo, Title: "Gate demo transcript",
			Description: "produced at build time by the real checkpoint with a labelled demo key: deny by default, allow with Bridge authorization, tamper rejection, capability board"},
		{Path: "downloads/verify-ledger.go", Data: cmd.VerifyLedgerSource, Title: "The downloadable verifier",
			Description: "one Go file, standard library only: read it, check its SHA-256, run it against this site", Downloadable: true},
	}}
	opts.Answers = desc.Answers
	for _, e := range desc.Endpoints {
		if e.Kind == "live" {
			opts.Endpoints = append(opts.Endpoints, render.Endpoint{Method: e.Method, Path: e.Path, Summary: e.Summary, OnAPI: e.OnAPI})
		}
	}
	opts.Artifacts = append(opts.Artifacts, published.Artifacts...)
	opts.Ledger, opts.BrowserVerifier, opts.Keys = published.Ledger, published.BrowserVerifier, published.Keys
	return opts, nil
}

// publishedChain is the part of the render options that comes from the
// chain in dataDir: its trust document and the browser's verifier as
// artifacts, the verified chain for the explorer, and the published keys
// (only the Bridge keys pinned in site.yaml when dataDir holds no chain).
func publishedChain(env *environment, ch *charter.Charter, dataDir string) (render.Options, error) {
	var opts render.Options
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
		if opts.Ledger, err = readLedger(env, dataDir, trust); err != nil {
			return render.Options{}, err
		}
		opts.Artifacts = append(opts.Artifacts, render.Artifact{Path: render.TrustDocumentPath, Data: raw, Title: "Trust document",
			Description:  "what a verifier pins: the public keys (writer, witnesses, Bridge, and the AI nodes' receipt keys), the genesis, the documented seams with their hashes, the witness quorum and the log's checkpoint key (verify-ledger --keys keys.json)",
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
		opts.Keys = append(opts.Keys, render.Key{Node: k.Node, KeyID: string(k.KeyID), PublicKey: k.PublicKey, Role: string(k.Role)})
	}
	return opts, nil
}

// liveAI builds what the live edge's AI routes answer with: the nodes
// (site.yaml's ai section, with the providers' keys from the environment),
// the documents the offline responder quotes, the voice, and the nodes'
// receipt keys (published in the trust document).
func liveAI(env *environment, site *content.Site, c *chain.Chain) (*live.AI, error) {
	cfg := site.Charter.AI
	keys := providerKeys(env, cfg)
	nodes, err := ai.NewRegistry(cfg, ai.Options{Keys: keys, Documents: aiDocuments(site), Logger: env.logger})
	if err != nil {
		return nil, err
	}
	vopts := voice.Options{Logger: env.logger}
	if v := cfg.Voice; v.Provider == "openai" {
		if key := keys[v.KeyEnv]; key != "" {
			if vopts.Backend, err = voice.NewOpenAI(ai.SDKConfig{Model: v.Model, BaseURL: v.BaseURL, APIKey: key}); err != nil {
				return nil, err
			}
		} else {
			env.logger.Info("the voice speaks with espeak-ng: its openai key is not set", "key_env", v.KeyEnv)
		}
	}
	speaker, err := voice.New(vopts)
	if err != nil {
		return nil, err
	}
	nodeKeys, err := c.NodeKeys()
	if err != nil {
		return nil, err
	}
	return &live.AI{Nodes: nodes, Voice: speaker, Keys: nodeKeys}, nil
}

// aiDesignations are the nodes that answer on the public API, whose
// receipt keys the data folder keeps.
func aiDesignations() []string {
	var out []string
	for _, n := range charter.AIRoster {
		out = append(out, n.Designation)
	}
	return out
}

// aiDocuments are what the offline responder quotes: the constitution's
// articles and the site's pages and documents, as published.
func aiDocuments(site *content.Site) []ai.Document {
	var docs []ai.Document
	for _, p := range site.Pages {
		ref := "Page"
		switch p.Kind {
		case content.KindArticle:
			ref = fmt.Sprintf("Article %d", p.Article)
		case content.KindDoc:
			ref = "Document"
		}
		docs = append(docs, ai.Document{Ref: ref, Title: p.Title, URL: p.URL(), Text: string(p.Body)})
	}
	return docs
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

// readLedger reads the chain for the explorer from its tiles (DATA/tiles,
// the C2SP tlog-tiles log the chain keeps: entry bundles and the signed
// checkpoint), never from the store, so a build may read a data folder
// that serve holds. Every row is verified with the trust document's pins,
// and the checkpoint's signature and root with its log key
// (ledger.VerifyBlocks). Tiles that cannot be read are an error that says
// how to publish them again; rows that do not verify, or that do not match
// their signed checkpoint, give a failing verdict, which the explorer shows
// and the build prints.
func readLedger(env *environment, dataDir string, trust ledger.TrustDocument) (*render.Ledger, error) {
	dir := filepath.Join(dataDir, chain.TilesDir)
	rows, note, err := tiles.Read(dir)
	if err == nil && len(rows) == 0 {
		err = errors.New("no rows")
	}
	if err != nil {
		return nil, fmt.Errorf("explorer: the chain's tiles in %s: %w (\"proofsite ledger init\" with this --data writes them again from the chain and leaves the chain as it is; so does serve)", dir, err)
	}
	pins, err := trust.Options()
	if err != nil {
		return nil, fmt.Errorf("explorer: trust document: %w", err)
	}
	pins.PresentedCheckpoint = note
	l := &render.Ledger{Blocks: rows, Pins: pins}
	if l.Result, l.Checks, err = ledger.VerifyBlocks(rows, pins); err != nil {
		return nil, fmt.Errorf("explorer: verifying the chain's tiles: %w", err)
	}
	if v := l.Result.Verdict; !v.Pass() {
		fmt.Fprintf(env.stdout, "proofsite: note: the explorer shows the verdict %s for the %d rows of %s: %s\n", v.Verdict, len(rows), dir, strings.Join(v.Failures, "; "))
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
