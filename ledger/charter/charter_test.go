package charter

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"30/1m", Rate{30, time.Minute}, true},
		{"5/90s", Rate{5, 90 * time.Second}, true},
		{"0/1m", Rate{}, false},
		{"-1/1m", Rate{}, false},
		{"30/0s", Rate{}, false},
		{"30", Rate{}, false},
		{"many/1m", Rate{}, false},
		{"30/soon", Rate{}, false},
	}
	for _, tc := range tests {
		got, err := ParseRate(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestDate(t *testing.T) {
	d, err := ParseDate("2026-02-28")
	if err != nil || d.String() != "2026-02-28" {
		t.Fatalf("%v %v", d, err)
	}
	if _, err := ParseDate("28 Feb"); err == nil {
		t.Error("accepted 28 Feb")
	}
	var seam Seam
	if err := json.Unmarshal([]byte(`{"block":153,"reason":"r","documented":"2026-01-02"}`), &seam); err != nil || seam.Documented.String() != "2026-01-02" {
		t.Fatalf("%+v %v", seam, err)
	}
	out, _ := json.Marshal(Seam{Block: 1})
	if string(out) != `{"block":1,"reason":"","documented":""}` {
		t.Errorf("zero date encodes as %s", out)
	}
}

func TestLookups(t *testing.T) {
	c := &Charter{
		Nodes:        []Node{{Designation: "ROSTER_ONLY"}, {ID: "s1", Designation: "S1"}},
		Capabilities: []Capability{{Key: "maturity", Value: "gate_public_launch"}, {Key: "dissent_channel", Value: "roadmap"}},
		Ledger:       Ledger{DocumentedSeams: []Seam{{Block: 153, Reason: "import seam"}}},
	}
	if n, ok := c.Node("s1"); !ok || n.Designation != "S1" {
		t.Errorf("Node(s1) = %v %v", n, ok)
	}
	if _, ok := c.Node(""); ok {
		t.Error("a roster-only node answered the empty id")
	}
	if b := c.Board(); len(b) != 2 || b["maturity"] != "gate_public_launch" {
		t.Errorf("Board() = %v", b)
	}
	if cp, ok := c.Capability("dissent_channel"); !ok || !cp.Roadmap() {
		t.Errorf("Capability(dissent_channel) = %v %v", cp, ok)
	}
	if s := c.Ledger.Seams(); len(s) != 1 || s[0].Block != 153 || s[0].Reason != "import seam" {
		t.Errorf("Seams() = %v", s)
	}
	if _, ok := c.Ledger.Documented(152); ok {
		t.Error("block 152 is not documented")
	}
}
