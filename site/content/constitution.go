package content

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// RuntimeArtifact is the machine-readable constitution served to agents
// (a different, condensed version from the published text; see Config.Constitution).
type RuntimeArtifact struct {
	Name                 string           `json:"name"`
	Version              string           `json:"version"`
	PublishedTextVersion string           `json:"published_text_version"`
	License              string           `json:"license"`
	ArticleCount         int              `json:"article_count"`
	Note                 string           `json:"note"`
	Articles             []RuntimeArticle `json:"articles"`

	Source string   `json:"-"` // content path
	Raw    []byte   `json:"-"` // the file exactly as written
	Digest [32]byte `json:"-"` // SHA-256 of Raw
}

// RuntimeArticle is one article of the runtime artifact.
type RuntimeArticle struct {
	Number int      `json:"number"`
	Title  string   `json:"title"`
	Text   string   `json:"text"`
	Tags   []string `json:"tags"`
}

// parseRuntime decodes and validates a runtime artifact strictly.
func parseRuntime(file string, src []byte) (*RuntimeArtifact, []*Error) {
	var rt RuntimeArtifact
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rt); err != nil {
		return nil, []*Error{jsonError(file, src, err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, []*Error{errorf(file, lineAt(src, dec.InputOffset()), "unexpected data after the JSON object")}
	}
	rt.Source, rt.Raw, rt.Digest = file, src, sha256.Sum256(src)

	var errs []*Error
	need := func(name, v string) {
		if v == "" {
			errs = append(errs, errorf(file, 0, "%q is required", name))
		}
	}
	need("name", rt.Name)
	need("version", rt.Version)
	need("license", rt.License)
	if rt.ArticleCount != len(rt.Articles) {
		errs = append(errs, errorf(file, 0, "article_count is %d but %d articles are listed", rt.ArticleCount, len(rt.Articles)))
	}
	for i, a := range rt.Articles {
		if a.Number != i+1 {
			errs = append(errs, errorf(file, 0, "article %d is numbered %d; articles must be numbered 1, 2, ... in order", i+1, a.Number))
		}
		if a.Title == "" || a.Text == "" {
			errs = append(errs, errorf(file, 0, "article %d needs a title and a text", i+1))
		}
	}
	return &rt, errs
}

// jsonError locates a decoding error by line.
func jsonError(file string, src []byte, err error) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errorf(file, lineAt(src, syn.Offset), "invalid JSON: %v", syn)
	case errors.As(err, &typ):
		return errorf(file, lineAt(src, typ.Offset), "%q: expected %s, found a JSON %s", typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(file, lineAt(src, int64(len(src))), "the JSON ends too early")
	default:
		return errorf(file, 0, "invalid JSON: %v", err)
	}
}

func lineAt(src []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(src)))
	return bytes.Count(src[:offset], []byte("\n")) + 1
}

// checkConstitution compares the disclosed article counts with the texts.
func checkConstitution(s *Site, doc *yamlDoc) []*Error {
	var errs []*Error
	for i, a := range s.Articles {
		if a.Article != i+1 {
			errs = append(errs, errorf(a.Source, 0, "articles must be numbered 1, 2, ... without gaps; expected article %d here, found %d", i+1, a.Article))
			break
		}
	}
	for i, surface := range s.Charter.Constitution.Surfaces {
		var actual int
		switch surface.Source {
		case "published":
			actual = len(s.Articles)
		case "runtime":
			if s.Runtime == nil {
				continue
			}
			actual = len(s.Runtime.Articles)
		default:
			continue
		}
		if surface.Articles != actual {
			errs = append(errs, doc.errorf(fmt.Sprintf("$.constitution.surfaces[%d].articles", i),
				"surface %q discloses %d articles but the %s text has %d", surface.Name, surface.Articles, surface.Source, actual))
		}
	}
	return errs
}

// parseRecord checks that a governance record is one JSON object.
func parseRecord(file string, src []byte) (json.RawMessage, []*Error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&obj); err != nil {
		return nil, []*Error{jsonError(file, src, err)}
	}
	if obj == nil {
		return nil, []*Error{errorf(file, 1, "a record must be a JSON object")}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, []*Error{errorf(file, lineAt(src, dec.InputOffset()), "unexpected data after the JSON object")}
	}
	return json.RawMessage(bytes.TrimSpace(src)), nil
}
