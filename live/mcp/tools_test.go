package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// toolResult is a tools/call result.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// call calls a tool over HTTP; every call, however hostile its arguments,
// must get a result.
func call(t *testing.T, url, name, args string) toolResult {
	t.Helper()
	r := send(t, "POST", url, "", headers("tools/call", name), rpc("tools/call", `"name":"`+name+`","arguments":`+args))
	var res toolResult
	if r.status != 200 || json.Unmarshal(r.body.Result, &res) != nil || len(res.Content) == 0 {
		t.Fatalf("%s %s: %d %s", name, args, r.status, r.raw)
	}
	return res
}

func TestStrictTableRows(t *testing.T) {
	_, url := serve(t, &fixedSource{})
	tests := []struct {
		args      string
		from, n   int
		next      string
		wantError string
	}{
		{`{}`, 0, DefaultPage, "50", ""},
		{`{"from":100,"limit":100}`, 100, 20, "null", ""},
		{`{"from":10,"limit":1}`, 10, 1, "11", ""},
		{`{"from":120}`, 120, 0, "null", ""},
		{`{"from":9007199254740991}`, 9007199254740991, 0, "null", ""},
		{`{"limit":101}`, 0, 0, "", "limit"},
		{`{"limit":0}`, 0, 0, "", "limit"},
		{`{"from":-1}`, 0, 0, "", "from"},
		{`{"from":"0"}`, 0, 0, "", "from"},
		{`{"from":0,"path":"../../etc/passwd"}`, 0, 0, "", "path"},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			res := call(t, url, "strict_table_rows", tc.args)
			if tc.wantError != "" {
				if !res.IsError || !strings.Contains(res.Content[0].Text, tc.wantError) {
					t.Errorf("want a tool error about %s: %+v", tc.wantError, res)
				}
				return
			}
			var page struct {
				From     int64             `json:"from"`
				NextFrom json.RawMessage   `json:"next_from"`
				RowCount int               `json:"row_count"`
				Rows     []json.RawMessage `json:"rows"`
				Route    string            `json:"route"`
				Metadata bool              `json:"metadata_only"`
			}
			if res.IsError || json.Unmarshal(res.StructuredContent, &page) != nil {
				t.Fatalf("%+v", res)
			}
			if page.From != int64(tc.from) || len(page.Rows) != tc.n || string(page.NextFrom) != tc.next || page.RowCount != 120 ||
				page.Route != StrictTableRoute || !page.Metadata {
				t.Errorf("from %d, %d rows, next %s, count %d, route %q", page.From, len(page.Rows), page.NextFrom, page.RowCount, page.Route)
			}
			if tc.n > 0 && !strings.Contains(string(page.Rows[0]), `"index":`+strings.TrimSpace(string(json.RawMessage(jsonInt(tc.from))))) {
				t.Errorf("first row %s, want index %d", page.Rows[0], tc.from)
			}
		})
	}
}

func jsonInt(n int) []byte { b, _ := json.Marshal(n); return b }

func TestConstitutionArticle(t *testing.T) {
	_, url := serve(t, &fixedSource{})
	tests := []struct {
		args      string
		numbers   []int
		wantError string
	}{
		{`{"number":2}`, []int{2}, ""},
		{`{"query":"bridge"}`, []int{2, 3}, ""},
		{`{"query":"BRIDGE   authorizes"}`, []int{3}, ""},
		{`{"query":"foundations"}`, []int{1, 2}, ""},
		{`{"query":"../../../etc/passwd"}`, []int{}, ""},
		{`{"query":"file:///etc/passwd"}`, []int{}, ""},
		{`{"number":99}`, nil, "no article 99"},
		{`{"number":0}`, nil, "number"},
		{`{"number":1000000000}`, nil, "number"},
		{`{"number":1,"query":"scope"}`, nil, "not both"},
		{`{}`, nil, "either"},
		{`{"query":"   "}`, nil, "either"},
		{`{"query":"` + strings.Repeat("a", MaxQuery+1) + `"}`, nil, "query"},
		{`{"number":1,"file":"/etc/passwd"}`, nil, "file"},
	}
	for _, tc := range tests {
		t.Run(tc.args[:min(len(tc.args), 40)], func(t *testing.T) {
			res := call(t, url, "constitution_article", tc.args)
			if tc.wantError != "" {
				if !res.IsError || !strings.Contains(res.Content[0].Text, tc.wantError) {
					t.Errorf("want a tool error about %q: %+v", tc.wantError, res)
				}
				return
			}
			var got Articles
			if res.IsError || json.Unmarshal(res.StructuredContent, &got) != nil {
				t.Fatalf("%+v", res)
			}
			var numbers []int
			for _, a := range got.Articles {
				numbers = append(numbers, a.Number)
			}
			if !slices.Equal(nonNil(numbers), tc.numbers) || got.Matches != len(tc.numbers) || got.RuntimeVersion != "1.8" ||
				got.ArticleCount != 3 || got.ArtifactSHA256 != "abc" || got.Route != ConstitutionRoute {
				t.Errorf("articles %v (%d matches) from %+v", numbers, got.Matches, got)
			}
		})
	}
}

// TestNoAuthority is rule 5 of the specification (section 4.9): the surface
// can read the published documents and nothing else. Its one capability is
// a Source, whose methods all read; every tool is annotated read-only and
// closed-world; and hostile arguments (paths, URLs, huge numbers, extra
// members) reach nothing but the Source and get a result, never a failure.
func TestNoAuthority(t *testing.T) {
	src := reflect.TypeFor[Source]()
	var methods []string
	for m := range src.Methods() {
		methods = append(methods, m.Name)
		ft := m.Type
		if ft.NumIn() != 1 || ft.In(0) != reflect.TypeFor[context.Context]() || ft.NumOut() != 2 ||
			ft.Out(0) != reflect.TypeFor[json.RawMessage]() || ft.Out(1) != reflect.TypeFor[error]() {
			t.Errorf("Source.%s is %v: a Source method takes a context and returns a document", m.Name, ft)
		}
	}
	if want := []string{"ChainStatus", "Constitution", "Discovery", "Nodes", "StrictTable", "Verdict"}; !slices.Equal(methods, want) {
		t.Errorf("Source methods %v, want the six reads %v", methods, want)
	}

	fixed := &fixedSource{}
	srv, url := serve(t, fixed)
	if len(srv.Tools()) != 6 {
		t.Fatalf("%d tools", len(srv.Tools()))
	}
	hostile := []string{`{}`, `{"path":"/etc/passwd"}`, `{"file":"../../../../etc/shadow"}`, `{"url":"http://127.0.0.1:1/"}`,
		`{"from":9007199254740991,"limit":100}`, `{"from":-9007199254740991}`, `{"limit":1000000000}`, `{"number":-1}`,
		`{"query":"../../etc/passwd"}`, `{"query":"%00\u0000"}`, `{"to":"bridge@example.org","message":"send"}`, `{"append":{"kind":"x"}}`,
		`[]`, `"x"`, `null`}
	for _, tool := range srv.Tools() {
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tool.Name, a)
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: no schema or description", tool.Name)
		}
		for _, args := range hostile {
			before := fixed.reads.Load()
			r := send(t, "POST", url, "", headers("tools/call", tool.Name), rpc("tools/call", `"name":"`+tool.Name+`","arguments":`+args))
			if r.status != 200 && !(r.status == 400 && r.body.Error != nil && r.body.Error.Code == CodeInvalidParams) {
				t.Errorf("%s %s: %d %s", tool.Name, args, r.status, r.raw)
			}
			if strings.Contains(string(r.raw), "root:x:0:0") {
				t.Errorf("%s %s: %s", tool.Name, args, r.raw)
			}
			if reads := fixed.reads.Load() - before; reads > 1 {
				t.Errorf("%s %s: %d reads", tool.Name, args, reads)
			}
		}
	}
}
