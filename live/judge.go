package live

import (
	"context"

	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/eval"
)

// EvalJudge adapts the judge of live/ai (site.yaml's ai.judge) to the
// evaluation pipeline's eval.Judge: the pipeline's instructions are the
// system prompt, the text the user message, and the model's reply is
// handed back verbatim for the pipeline to check (strict JSON, within
// its timeout). cmd passes it in eval.Options.
func EvalJudge(j *ai.Judge) eval.Judge { return aiJudge{j} }

type aiJudge struct{ j *ai.Judge }

func (a aiJudge) Judge(ctx context.Context, req eval.JudgeRequest) ([]byte, error) {
	text, err := a.j.Ask(ctx, req.Instructions, req.Text)
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}
