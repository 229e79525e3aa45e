package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// guideFile is the auditor guide, as the build publishes it.
const guideFile = realContent + "/docs/AUDITOR_VERIFY_SERVICE_YOURSELF.md"

// publishedInstance is a fresh instance as an operator runs it with "make
// run": the chain initialised, the site built with its trust document, and
// the real binary serving the site and the API origin on 127.0.0.1.
func publishedInstance(t *testing.T) (srv *server, public string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	proofsite, _ := buildBinaries(t)
	dir := t.TempDir()
	data, public := filepath.Join(dir, "data"), filepath.Join(dir, "public")
	for _, args := range [][]string{
		{"ledger", "init", "--content", realContent, "--data", data},
		{"build", "--content", realContent, "--out", public, "--data", data},
	} {
		if out, err := exec.Command(proofsite, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args, err, out)
		}
	}
	return startServe(t, proofsite, "--content", realContent, "--public", public, "--data", data, "--api-addr", "127.0.0.1:0"), public
}

// guideBlock is one fenced code block of a markdown file.
type guideBlock struct {
	lang string
	line int // of the opening fence
	code string
}

// fencedBlocks returns every fenced code block of a markdown document.
func fencedBlocks(doc string) ([]guideBlock, error) {
	var blocks []guideBlock
	var cur *guideBlock
	for i, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				cur.code += line + "\n"
			}
			continue
		}
		if cur == nil {
			cur = &guideBlock{lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: i + 1}
			continue
		}
		blocks = append(blocks, *cur)
		cur = nil
	}
	if cur != nil {
		return nil, fmt.Errorf("the block opened at line %d is not closed", cur.line)
	}
	return blocks, nil
}

// TestAuditorGuideRunsAsWritten runs every sh block of the auditor guide,
// as written and in order, in an empty folder, with BASE and API pointing
// at a fresh instance: real curl, sha256sum and go run verify-ledger.go. A
// block marked json or text is illustrative and not run; any other mark,
// or none, is an error, so that no command is skipped unnoticed.
func TestAuditorGuideRunsAsWritten(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "sha256sum", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the auditor guide needs %s: %v (make test installs curl and sha256sum from Debian)", tool, err)
		}
	}
	doc, err := os.ReadFile(guideFile)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := fencedBlocks(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", guideFile, err)
	}
	script := "set -euo pipefail\n"
	runnable := 0
	for _, b := range blocks {
		switch b.lang {
		case "sh":
			runnable++
			script += fmt.Sprintf("echo '### guide line %d' >&2\n%s", b.line, b.code)
		case "json", "text":
		default:
			t.Errorf("%s:%d: a block marked %q: mark it sh (run by this test) or json/text (illustrative)", guideFile, b.line, b.lang)
		}
	}
	if runnable < 10 {
		t.Fatalf("only %d sh blocks in the guide", runnable)
	}
	// The guide's local instructions are the Makefile's addresses.
	makefile, _ := os.ReadFile("../../Makefile")
	if !bytes.Contains(doc, []byte("BASE=http://127.0.0.1:8080 API=http://127.0.0.1:8081")) ||
		!regexp.MustCompile(`(?m)^ADDR\s+\?= 127\.0\.0\.1:8080$`).Match(makefile) || !regexp.MustCompile(`(?m)^API_ADDR\s+\?= 127\.0\.0\.1:8081$`).Match(makefile) {
		t.Error("the guide's make run addresses are not the Makefile's")
	}

	srv, _ := publishedInstance(t)
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "BASE="+srv.base, "API="+srv.apiBase)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide's commands failed (%v); the last '### guide line N' names the block:\n%s", err, out)
	}
	for _, want := range []string{"keys.json: OK", "verify-ledger.go: OK", "auditing " + srv.base, "exit code 0"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the output lacks %q", want)
		}
	}
	// URL mode, offline, and against the kept checkpoint: three passes.
	if n := bytes.Count(out, []byte("VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM")); n < 3 {
		t.Errorf("%d passing verdicts, want 3:\n%s", n, out)
	}
	if kept, err := os.ReadFile(filepath.Join(work, "checkpoint.txt")); err != nil || !bytes.Contains(kept, []byte("proof.endurance-commons.example/ledger\n224\n")) {
		t.Errorf("checkpoint.txt: %v\n%s", err, kept)
	}
}

// TestPublishedURLsAnswer crawls a fresh instance: every internal link of
// the built pages and their markdown twins, every URL in llms.txt,
// ai.json, /api/discover and the other discovery documents, every route
// _redirects sends to the API origin, both addresses of every page rule of
// _redirects (a page without .html, an alias), every node's public route and every
// town URL must answer: 2xx or 3xx, or for a POST-only route an OPTIONS
// that lists POST.
func TestPublishedURLsAnswer(t *testing.T) {
	t.Parallel()
	srv, public := publishedInstance(t)
	site, _ := url.Parse(srv.base)
	api, _ := url.Parse(srv.apiBase)
	origins := map[string]string{"https://proof.endurance-commons.example": srv.base, "https://api.endurance-commons.example": srv.apiBase}

	found := map[string][]string{} // local URL -> where it was found
	add := func(ref, where string) {
		ref = strings.TrimSpace(ref)
		for from, to := range origins {
			if ref == from || strings.HasPrefix(ref, from+"/") {
				ref = to + strings.TrimPrefix(ref, from)
			}
		}
		switch {
		case strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "//"):
			ref = srv.base + ref
		case !strings.HasPrefix(ref, srv.base) && !strings.HasPrefix(ref, srv.apiBase):
			return // another site, a fragment, mailto:
		}
		ref, _, _ = strings.Cut(ref, "#")
		found[ref] = append(found[ref], where)
	}

	// The built pages and their twins.
	mdLink := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	err := filepath.WalkDir(public, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(public, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".html":
			for _, ref := range htmlLinks(t, data) {
				add(ref, rel)
			}
		case ".md", ".txt":
			for _, m := range mdLink.FindAllSubmatch(data, -1) {
				add(string(m[1]), rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every URL and route in the discovery documents.
	for _, doc := range []struct{ base, path string }{
		{srv.base, "/.well-known/ai.json"}, {srv.base, "/api/discover"}, {srv.base, "/api/audit"}, {srv.base, "/api/status"},
		{srv.base, "/api/nodes"}, {srv.base, "/api/collective-status"}, {srv.base, "/api/health"}, {srv.base, "/api/openapi"},
		{srv.base, "/stewardship-horizon.json"}, {srv.apiBase, "/api/v1"}, {srv.apiBase, "/api/v1/handshake"},
	} {
		resp, body := (&server{base: doc.base}).get(t, doc.path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", doc.path, resp.StatusCode)
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: %v", doc.path, err)
		}
		walkStrings(v, func(key, s string) {
			if strings.HasPrefix(s, "http") || key == "public_route" || key == "route" || strings.HasPrefix(s, "/api/") || s == "/mcp" {
				add(s, doc.path+" "+key)
			}
		})
	}
	// The routes _redirects sends to the API origin, asked there.
	redirects, _ := os.ReadFile(filepath.Join(public, "_redirects"))
	sc := bufio.NewScanner(bytes.NewReader(redirects))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case len(f) == 3 && f[2] == "200" && strings.HasPrefix(f[1], "https://api.endurance-commons.example/"):
			add(f[1], "_redirects")
		case len(f) == 3 && (f[2] == "200" || f[2] == "301") && strings.HasPrefix(f[0], "/") && strings.HasPrefix(f[1], "/"):
			// A page without .html, or an alias: both addresses answer.
			add(f[0], "_redirects")
			add(f[1], "_redirects")
		default:
			t.Errorf("_redirects: %q", sc.Text())
		}
	}
	if len(found) < 100 {
		t.Fatalf("only %d URLs found", len(found))
	}

	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, ref := range slices.Sorted(maps.Keys(found)) {
		u, err := url.Parse(exampleURL(ref))
		if err != nil || (u.Host != site.Host && u.Host != api.Host) {
			t.Errorf("%s (from %v): not a URL of this instance", ref, found[ref])
			continue
		}
		if strings.Contains(u.Path, "{") {
			t.Errorf("%s (from %v): no example for this route template; add one to exampleURL", ref, found[ref])
			continue
		}
		status, allow := answer(t, client, u.String())
		if status == http.StatusMethodNotAllowed && strings.Contains(allow, "POST") {
			continue // a POST-only route: OPTIONS lists POST
		}
		if status < 200 || status > 399 {
			t.Errorf("%s (from %s): %d", ref, strings.Join(found[ref][:min(3, len(found[ref]))], ", "), status)
		}
	}
}

// answer GETs u; for a 405 it asks OPTIONS for the methods the route has.
func answer(t *testing.T, client *http.Client, u string) (status int, allow string) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		return resp.StatusCode, ""
	}
	req, _ := http.NewRequest(http.MethodOptions, u, nil)
	opt, err := client.Do(req)
	if err != nil {
		t.Fatalf("OPTIONS %s: %v", u, err)
	}
	opt.Body.Close()
	return resp.StatusCode, opt.Header.Get("Allow")
}

// exampleURL fills a route template with a value the instance knows.
func exampleURL(ref string) string {
	ref = strings.NewReplacer("/api/node/{id}", "/api/node/s1", "/api/v1/towns/{id}", "/api/v1/towns/case", "/api/v1/towns/:id", "/api/v1/towns/case",
		"/api/memory/retrieve/{node_id}", "/api/memory/retrieve/case").Replace(ref)
	// Routes whose query parameter is required.
	for path, query := range map[string]string{"/api/v1/compliance": "hours=24", "/api/v1/query": "question=How+is+the+ledger+verified", "/api/v1/verify": "cert=" + strings.Repeat("0", 64)} {
		if strings.HasSuffix(ref, path) {
			return ref + "?" + query
		}
	}
	return ref
}

// htmlLinks returns the href and src attributes of a page.
func htmlLinks(t *testing.T, page []byte) []string {
	t.Helper()
	var out []string
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatal(z.Err())
			}
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			for {
				key, val, more := z.TagAttr()
				if k := string(key); k == "href" || k == "src" {
					out = append(out, string(val))
				}
				if !more {
					break
				}
			}
		}
	}
}

// walkStrings calls f with every string of a decoded JSON value that is
// presented as live, and the name of the member that holds it. What an
// object announces without claiming it is skipped: an object that says
// "status": "roadmap" or "available": false, and a roadmap_route.
func walkStrings(v any, f func(key, s string)) {
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case string:
			if key != "roadmap_route" {
				f(key, v)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case map[string]any:
			if v["status"] == "roadmap" || v["available"] == false {
				return
			}
			for k, e := range v {
				walk(k, e)
			}
		}
	}
	walk("", v)
}
