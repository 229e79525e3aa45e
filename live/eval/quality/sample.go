package quality

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Labels.
const (
	Attack = "attack"
	Benign = "benign"
)

// Sample is one labelled text.
type Sample struct {
	ID          string `json:"id"`
	Split       string `json:"split,omitempty"` // dev or heldout (the project's corpus)
	Source      string `json:"source,omitempty"`
	Label       string `json:"label"`    // Attack or Benign
	Category    string `json:"category"` // an attack category, or ordinary / hard_negative
	Obfuscation string `json:"obfuscation,omitempty"`
	Text        string `json:"text"`
}

// ReadFile reads the samples of a JSONL file (ReadJSONL), such as a
// split of the project's corpus (dir/Dev+".jsonl").
func ReadFile(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ReadJSONL reads one Sample per line; it checks the label and that there
// is a text.
func ReadJSONL(r io.Reader) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var s Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("quality: line %d: %w", n, err)
		}
		if (s.Label != Attack && s.Label != Benign) || s.Text == "" || s.Category == "" {
			return nil, fmt.Errorf("quality: line %d: needs label attack or benign, a category and a text", n)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("quality: %w", err)
	}
	return out, nil
}

// WriteJSONL writes one Sample per line, HTML characters unescaped.
func WriteJSONL(w io.Writer, samples []Sample) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, s := range samples {
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("quality: %w", err)
		}
	}
	return nil
}
