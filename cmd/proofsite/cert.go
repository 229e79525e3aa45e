package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/eval"
	"github.com/proofsite/proofsite/live/eval/journal"
	"github.com/proofsite/proofsite/site/content"
)

const (
	certSynopsis  = "anchor [flags]"
	certSummaries = `Subcommands:
  anchor    anchor a certificate in the chain through the gate:
            --authorization FILE CERTIFICATE.json [--data DIR] [--content DIR]

CERTIFICATE.json is the "certificate" object of a POST /api/v1/certify
preview. Its id (certificate_id) is the SHA-256 of its RFC 8785 canonical
JSON. The Bridge signs a CERT_ANCHOR authorization whose payload_sha256 is
that id and whose scope lists certificate:<id> ("proofsite gate sign");
on ALLOW one certificate block is appended, and GET /api/v1/verify?cert=<id>
then answers verified: true with its chain evidence. Stop "serve" first:
the chain's store admits one process.
`
)

func runCert(ctx context.Context, env *environment, args []string) error {
	return dispatch(ctx, env, "cert", certSynopsis+"\n\n"+certSummaries, []subcommand{{"anchor", runCertAnchor}}, args)
}

func runCertAnchor(ctx context.Context, env *environment, args []string) error {
	var authFile string
	fs := newFlagSet(env, "cert anchor", "--authorization FILE CERTIFICATE.json [--data DIR] [--content DIR]")
	cf := registerConfig(fs, "cert anchor")
	fs.StringVar(&authFile, "authorization", "", "the Bridge's signed CERT_ANCHOR authorization `FILE` (required)")
	if err := parseFlags(fs, args, 1); err != nil {
		return err
	}
	if authFile == "" || fs.NArg() != 1 {
		return usagef("--authorization and one certificate file (- for stdin) are required")
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	auth, err := readInput(env, authFile, gate.MaxAuthorizationSize)
	if err != nil {
		return err
	}
	body, err := readInput(env, fs.Arg(0), 16<<10)
	if err != nil {
		return err
	}
	if _, err := eval.ParseCertificate(body); err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	ch, err := cfg.loadCharter()
	if err != nil {
		return configError(env, cfg.Content, err)
	}
	c, err := openChain(env, cfg, false)
	if err != nil {
		return err
	}
	defer c.Close()
	b, id, err := c.AnchorCertificate(ctx, chain.AnchorRequest{Charter: ch, Certificate: body, Authorization: auth})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "certificate %s anchored at block %d %s\n", id, b.Index(), b.Hash())
	return nil
}

// certificateKey names the instance's key that signs certification
// previews (data/keys/certificates.pem).
const certificateKey = "certificates"

// openEvaluation wires the evaluation routes: the pipeline over
// content/eval with the AI nodes' judge when site.yaml names one (nil:
// the offline scan alone), its records journal under the data folder,
// and the preview-signing key.
func openEvaluation(env *environment, cfg *config, site *content.Site, c *chain.Chain, judge *ai.Judge) (*live.Evaluation, *journal.Journal, error) {
	data, err := eval.LoadFS(os.DirFS(cfg.Content))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cfg.Content, err)
	}
	articles := map[int]string{}
	for _, a := range site.Articles {
		articles[a.Article] = a.Title
	}
	key, err := c.Key(certificateKey)
	if err != nil {
		return nil, nil, err
	}
	j, err := journal.Open(filepath.Join(cfg.Data, evalRecordsFile), journal.Options{Logger: env.logger})
	if err != nil {
		return nil, nil, err
	}
	opts := eval.Options{Data: data, Articles: articles, Recorder: j, Logger: env.logger}
	if judge != nil {
		opts.Judge, opts.JudgeTimeout = live.EvalJudge(judge), judge.Timeout()
		env.logger.Info("the evaluator's AI scan asks a judge", "provider", string(judge.Provider()), "model", judge.Model())
	}
	ev, err := eval.New(opts)
	if err != nil {
		j.Close()
		return nil, nil, err
	}
	e := &live.Evaluation{Evaluator: ev, Records: j, CertKey: key}
	if judge != nil {
		e.Concurrency = -1 // an AI scan that waits on the network takes no turn of a core
	}
	return e, j, nil
}

// evalRecordsFile is where the evaluator's records are kept, under the
// data folder: hashes and identifiers, never text.
const evalRecordsFile = "eval/records.jsonl"
