package content

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// fixture returns the test site as an in-memory file system that cases edit.
func fixture(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	root := os.DirFS("../testdata/site")
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadFixture(t *testing.T) {
	s, err := Load(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.Pages), 7; got != want {
		t.Errorf("pages: got %d, want %d", got, want)
	}
	if got, want := len(s.Articles), 3; got != want {
		t.Errorf("articles: got %d, want %d", got, want)
	}
	if s.Runtime == nil || len(s.Runtime.Articles) != 2 {
		t.Errorf("runtime artifact not loaded: %+v", s.Runtime)
	}
	byPath := map[string]*Page{}
	for _, p := range s.Pages {
		byPath[p.Path] = p
	}
	for path, kind := range map[string]Kind{
		"pages/hello.html":             KindPage,
		"pages/page-two.html":          KindPage,
		"docs/GUIDE.html":              KindDoc,
		"products/gate/README.html":    KindDoc,
		"constitution/article-02.html": KindArticle,
		"constitution/article-03.html": KindArticle,
		"constitution/article-01.html": KindArticle,
	} {
		if p := byPath[path]; p == nil || p.Kind != kind {
			t.Errorf("%s: got %+v, want kind %s", path, p, kind)
		}
	}
	if got := byPath["pages/hello.html"].BodyLine; got != 7 {
		t.Errorf("body line: got %d, want 7", got)
	}
	if len(s.Static) != 1 || s.Static[0].Path != "humans.txt" {
		t.Errorf("static: %+v", s.Static)
	}
}

func TestLoadErrors(t *testing.T) {
	page := func(front, body string) string { return "---\n" + front + "---\n" + body }
	tests := []struct {
		desc string
		edit map[string]string // path -> new content; "" deletes
		want []string          // every error, in order
	}{
		{
			desc: "bad YAML in site.yaml",
			edit: map[string]string{"site.yaml": "site:\n  title: [unclosed\n"},
			want: []string{"site.yaml:2: sequence end token ']' not found"},
		},
		{
			desc: "unknown key in site.yaml",
			edit: map[string]string{"site.yaml": "site:\n  titel: x\n"},
			want: []string{`site.yaml:2: unknown field "titel"`},
		},
		{
			desc: "front-matter value of the wrong type",
			edit: map[string]string{"pages/hello.md": page("title: T\nsummary: S\ndate: 2026-01-01\nweight: heavy\ndraft: maybe\ntags: {a: b}\n", "")},
			want: []string{
				`pages/hello.md:5: weight: expected a whole number, found "heavy"`,
				`pages/hello.md:6: draft: expected true or false, found "maybe"`,
				`pages/hello.md:7: tags: expected a list, found a mapping`,
			},
		},
		{
			desc: "bad date",
			edit: map[string]string{"pages/hello.md": page("title: T\nsummary: S\ndate: 1 May\n", "")},
			want: []string{`pages/hello.md:4: date: expected a date such as 2026-01-02 or 2026-01-02T15:04:05Z (RFC 3339), found "1 May"`},
		},
		{
			desc: "a key given twice in different case",
			edit: map[string]string{"pages/hello.md": page("title: T\npublishDate: 2026-01-01\npublishdate: 2026-01-02\n", "")},
			want: []string{`pages/hello.md:4: "publishdate" is given twice (also on line 3; front matter keys are not case-sensitive)`},
		},
		{
			desc: "TOML syntax error",
			edit: map[string]string{"pages/hello.md": "+++\ntitle = \"T\"\ndate = 2026-01-01\ntags = [\"a\",\n+++\nbody\n"},
			want: []string{`pages/hello.md:4: unexpected EOF; expected value`},
		},
		{
			desc: "TOML value of the wrong type",
			edit: map[string]string{"pages/hello.md": "+++\ntitle = \"T\"\n\n[params]\nx = 1\n+++\n", "pages/second.md": "+++\ntitle = \"T\"\nweight = \"heavy\"\n+++\n"},
			want: []string{`pages/second.md:3: weight: expected a whole number, found "heavy"`},
		},
		{
			desc: "unclosed TOML front matter",
			edit: map[string]string{"pages/hello.md": "+++\ntitle = \"T\"\n"},
			want: []string{`pages/hello.md:1: front matter is not closed: add a line "+++" after it`},
		},
		{
			desc: "JSON syntax error",
			edit: map[string]string{"pages/hello.md": "{\n  \"title\": \"T\",\n  \"date\": 2026-01-01\n}\nbody\n"},
			want: []string{`pages/hello.md:3: JSON front matter: invalid character '-' after object key:value pair`},
		},
		{
			desc: "JSON value of the wrong type",
			edit: map[string]string{"pages/hello.md": "{\n  \"title\": \"T\",\n  \"aliases\": 7\n}\n"},
			want: []string{`pages/hello.md:3: aliases: expected a list, found 7`},
		},
		{
			desc: "bad aliases, url and terms",
			edit: map[string]string{
				"pages/hello.md":  page("title: T\naliases: [https://elsewhere.example/x, /a b/, /ok/]\ntags: [\"++\"]\n", ""),
				"pages/second.md": page("title: T\nurl: /feed.xml\n", ""),
				"pages/third.md":  page("title: T\nurl: /x//y/\naliases: [/ok/, /pages/hello.html]\n", ""),
			},
			want: []string{
				`pages/hello.md:3: alias "https://elsewhere.example/x": an alias is a path on this site, not a URL`,
				`pages/hello.md:3: alias "/a b/": may hold only letters, digits and . _ ~ / -`,
				`pages/hello.md:4: tags: "++" has no letter or digit to make an address of`,
				`pages/second.md:3: url "/feed.xml": must end with / or .html`,
				`pages/third.md:3: url "/x//y/": must be a clean path (no //, . or .. segments)`,
				`pages/third.md:4: alias /ok/ is taken: pages/hello.md publishes it too`,
				`pages/third.md:4: alias /pages/hello.html is taken: pages/hello.md publishes it too`,
			},
		},
		{
			desc: "changelog outside pages",
			edit: map[string]string{"docs/GUIDE.md": page("title: T\nsummary: S\ntype: changelog\n", ""), "docs/_index.md": page("title: T\nsummary: S\n", "")},
			want: []string{
				`docs/GUIDE.md:4: type changelog is for pages under pages/`,
				`docs/_index.md:1: a section page (_index.md) lists the pages of its folder: it belongs under pages/`,
			},
		},
		{
			desc: "missing required fields",
			edit: map[string]string{"docs/GUIDE.md": page("license: CC0-1.0\n", "## x\n")},
			want: []string{`docs/GUIDE.md:2: front matter needs "title"`, `docs/GUIDE.md:2: front matter needs "summary"`},
		},
		{
			desc: "duplicate slug",
			edit: map[string]string{"pages/zz.md": page("title: T\nsummary: S\ndate: 2026-01-01\nslug: hello\n", "")},
			want: []string{`pages/zz.md:5: duplicate slug: pages/hello.md and pages/zz.md both publish pages/hello.html`},
		},
		{
			desc: "missing front matter",
			edit: map[string]string{"pages/hello.md": "## just a body\n"},
			want: []string{`pages/hello.md:1: missing front matter: the file must start with a line "---" (YAML), "+++" (TOML) or "{" (JSON)`},
		},
		{
			desc: "unclosed front matter",
			edit: map[string]string{"pages/hello.md": "---\ntitle: T\n"},
			want: []string{`pages/hello.md:1: front matter is not closed: add a line "---" after it`},
		},
		{
			desc: "body starting with a level-1 heading",
			edit: map[string]string{"docs/GUIDE.md": page("title: T\nsummary: S\n", "\n# Title again\n")},
			want: []string{`docs/GUIDE.md:6: the body starts with a level-1 heading; the title comes from front matter, start the body at ##`},
		},
		{
			desc: "article number disagrees with its file",
			edit: map[string]string{"constitution/articles/02-article.md": page("title: T\nsummary: S\narticle: 5\n", "")},
			want: []string{
				`constitution/articles/02-article.md:4: article 5 is in a file numbered 02`,
				`constitution/articles/03-article.md: articles must be numbered 1, 2, ... without gaps; expected article 2 here, found 3`,
			},
		},
		{
			desc: "disclosed count does not match the text",
			edit: map[string]string{"constitution/articles/03-article.md": ""},
			want: []string{`site.yaml:55: surface "Published text" discloses 3 articles but the published text has 2`},
		},
		{
			desc: "runtime artifact with a bad count",
			edit: map[string]string{"constitution/runtime-v1.8.json": `{"name":"n","version":"1.8","license":"CC0-1.0","article_count":3,"articles":[]}`},
			want: []string{
				`constitution/runtime-v1.8.json: article_count is 3 but 0 articles are listed`,
				`site.yaml:56: surface "Runtime artifact" discloses 2 articles but the runtime text has 0`,
			},
		},
		{
			desc: "runtime artifact with a JSON type error",
			edit: map[string]string{"constitution/runtime-v1.8.json": "{\n  \"name\": 7\n}"},
			want: []string{`constitution/runtime-v1.8.json:2: "name": expected string, found a JSON number`},
		},
		{
			desc: "missing site.yaml",
			edit: map[string]string{"site.yaml": ""},
			want: []string{`site.yaml: missing: a content directory needs a site.yaml`},
		},
		{
			desc: "capability board incomplete and unknown key",
			edit: map[string]string{"site.yaml": strings.Replace(mustRead(t, "site.yaml"), "key: runtime_enforcement", "key: runtime_enforcment", 1)},
			want: []string{
				`site.yaml:27: capability board is missing "runtime_enforcement"`,
				`site.yaml:31: unknown capability "runtime_enforcment" (known: maturity, bridge_auth, node_approval_quorum, dissent_channel, runtime_enforcement, enforcement_model)`,
			},
		},
		{
			desc: "town naming an unknown node and a bad origin",
			edit: map[string]string{"site.yaml": strings.NewReplacer("node: S1_PLEX", "node: S9_NOBODY", "https://api.fixture.example", "api.fixture.example").Replace(mustRead(t, "site.yaml"))},
			want: []string{
				`site.yaml:5: site.api_url must be an absolute http(s) origin such as https://example.org, found "api.fixture.example"`,
				`site.yaml:24: town "plex" names node "S9_NOBODY", which is not in nodes`,
			},
		},
		{
			desc: "gate policy errors",
			edit: map[string]string{"site.yaml": gateSection(t, `gate:
  actions:
    - {action: PUBLIC_CLAIM_CHANGE, requires: [HUMAN_VIBES]}
    - {action: HARD_DELETE, requires: [BRIDGE_AUTH]}
    - {action: CERT_ANCHOR, requires: []}
    - {action: CERT_ANCHOR, requires: [BRIDGE_AUTH, BRIDGE_AUTH]}
    - {action: key_rotation, requires: [BRIDGE_AUTH]}
  denied: [EXPORT, EXPORT]
  bridge_keys:
    - {key_id: ed25519:3b1bc0683d88dce46fe8e4db791af68c, public_key: 4f4ae28a2fa146bd8bdd635c79c005017b3745727417ff32d001f3a6e1455622}
    - {key_id: ed25519:3b1bc0683d88dce46fe8e4db791af68c, public_key: 4f4ae28a2fa146bd8bdd635c79c005017b3745727417ff32d001f3a6e1455622}
    - {key_id: ed25519:00000000000000000000000000000000, public_key: 4f4ae28a2fa146bd8bdd635c79c005017b3745727417ff32d001f3a6e1455622}
    - {key_id: ed25519:5ef73996a10d1c9337041f43c63bffa4, public_key: 40a2c9394a393574d12d896ca37b7f6c185be27ccb13e82876ea5cf3d5034a8a}
    - {key_id: x, public_key: "0100000000000000000000000000000000000000000000000000000000000000"}
    - {key_id: x, public_key: abcd}
  claim_files: [products/gate/README.md, ../secrets.txt, products/gate/README.md, docs/MISSING.md, "with space.md"]
`)},
			want: []string{
				`site.yaml:35: the publish rule's PUBLIC_CLAIM_CHANGE must be a gate action that requires BRIDGE_AUTH`,
				`site.yaml:60: unknown control "HUMAN_VIBES" (known: BRIDGE_AUTH, NODE_APPROVAL_QUORUM, DISSENT_CHANNEL)`,
				`site.yaml:61: HARD_DELETE is denied unconditionally; it cannot require controls`,
				`site.yaml:62: action CERT_ANCHOR requires no control, which would allow it unconditionally; name a control or deny it`,
				`site.yaml:63: action CERT_ANCHOR is listed twice`,
				`site.yaml:63: control BRIDGE_AUTH is required twice`,
				`site.yaml:64: action "key_rotation" must be upper case letters, digits and _`,
				`site.yaml:65: action EXPORT is denied twice`,
				`site.yaml:65: gate.denied must list HARD_DELETE: it is denied unconditionally`,
				`site.yaml:68: key ed25519:3b1bc0683d88dce46fe8e4db791af68c is pinned twice`,
				`site.yaml:69: key_id "ed25519:00000000000000000000000000000000" is not the id of this public key (ed25519:3b1bc0683d88dce46fe8e4db791af68c)`,
				`site.yaml:70: this is the published demo key, which authorizes nothing; pin the Bridge's own key`,
				`site.yaml:71: public_key: ledger: small-order ed25519 public key`,
				`site.yaml:72: public_key: ledger: invalid key: public key is 2 bytes, want 32`,
				`site.yaml:73: claim file "../secrets.txt" must be a clean path inside the content folder, of A-Z a-z 0-9 . _ / -`,
				`site.yaml:73: claim file products/gate/README.md is listed twice`,
				`site.yaml:73: claim file "with space.md" must be a clean path inside the content folder, of A-Z a-z 0-9 . _ / -`,
				`site.yaml:73: claim file "docs/MISSING.md" does not exist`,
			},
		},
		{
			desc: "runtime defaults",
			edit: map[string]string{"site.yaml": mustRead(t, "site.yaml") + "runtime:\n  walk_every: -5m\n  post_limit: lots\n  witnesses: -1\n"},
			want: []string{
				`site.yaml:68: runtime.walk_every must be a positive duration such as 10m, found -5m0s`,
				`site.yaml:69: runtime.post_limit: rate "lots": want N/DURATION, e.g. 30/1m`,
				`site.yaml:70: runtime.witnesses must be 1 or more, found -1`,
			},
		},
		{
			desc: "ai section",
			edit: map[string]string{"site.yaml": mustRead(t, "site.yaml") + `ai:
  timeout: 10m
  nodes:
    - designation: S1_PLEX
      provider: anthropic
      model: claude-sonnet-4-5
      key_env: sk-ant-not-a-name
    - designation: S8_ATLAS
      provider: openai-compatible
    - designation: S2_CASE
      provider: openai
      model: gpt-4o-mini
      key_env: OPENAI_API_KEY
  voice:
    provider: openai
`},
			want: []string{
				`site.yaml:68: timeout 10m0s is outside 0..5m0s`,
				`site.yaml:73: key_env must be the name of an environment variable (A-Z, 0-9, _), never a key: keys are read from the environment`,
				`site.yaml:74: "S8_ATLAS" is not a node that answers (S1_PLEX, S2_CASE, S3_TARS, S4_KIPP, S6_FORGE, S5_LOCUS, S17_LUMEN)`,
				`site.yaml:75: provider "openai-compatible" is not anthropic, openai or offline`,
				`site.yaml:76: ai node S2_CASE is not in nodes`,
				`site.yaml:81: an openai voice needs model and key_env`,
			},
		},
		{
			desc: "ai judge",
			edit: map[string]string{"site.yaml": mustRead(t, "site.yaml") + `ai:
  judge:
    provider: offline
    timeout: 1h
`},
			want: []string{
				`site.yaml:69: judge provider "offline" is not anthropic or openai (the offline scan needs no judge: leave the judge out)`,
				`site.yaml:70: timeout 1h0m0s is outside 0..5m0s`,
			},
		},
		{
			desc: "runtime duration that is not one",
			edit: map[string]string{"site.yaml": mustRead(t, "site.yaml") + "runtime:\n  walk_every: often\n"},
			want: []string{`site.yaml:68: expected a duration such as 10m, found "often"`},
		},
		{
			desc: "gate section missing",
			edit: map[string]string{"site.yaml": gateSection(t, "")},
			want: []string{
				`site.yaml:1: gate.denied must list HARD_DELETE: it is denied unconditionally`,
				`site.yaml:1: gate.bridge_keys: pin at least one Bridge public key (proofsite gate keygen prints one)`,
				`site.yaml:35: the publish rule's PUBLIC_CLAIM_CHANGE must be a gate action that requires BRIDGE_AUTH`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			fsys := fixture(t)
			for p, data := range tc.edit {
				if data == "" {
					delete(fsys, p)
				} else {
					fsys[p] = &fstest.MapFile{Data: []byte(data)}
				}
			}
			_, err := Load(fsys)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want content errors", err)
			}
			var list Errors
			if !errors.As(err, &list) {
				t.Fatalf("got %T, want Errors", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// gateSection returns the fixture's site.yaml with its gate section (the
// last one) replaced.
func gateSection(t *testing.T, section string) string {
	t.Helper()
	before, _, ok := strings.Cut(mustRead(t, "site.yaml"), "\ngate:\n")
	if !ok {
		t.Fatal("no gate section in the fixture")
	}
	return before + "\n" + section
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/site/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIgnored(t *testing.T) {
	for p, want := range map[string]bool{
		"pages/a.md":             false,
		"pages/.a.md.swp":        true,
		"pages/a.md~":            true,
		"pages/4913":             true,
		".git/config":            true,
		"pages/#a.md#":           true,
		"pages/a.md___jb_tmp___": true,
		"static/.well-known/x":   true,
		"constitution/x.json":    false,
	} {
		if got := Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestReloadMatchesLoad checks that loading changes into a Loader gives the
// same site as a fresh load of the edited files.
func TestReloadMatchesLoad(t *testing.T) {
	fsys := fixture(t)
	l := NewLoader(fsys, Visibility{})
	if _, err := l.Load(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	fsys["pages/hello.md"] = &fstest.MapFile{Data: []byte("---\ntitle: New\nsummary: S\ndate: 2026-01-01\n---\nbody\n")}
	delete(fsys, "pages/second.md")
	fsys["pages/new/third.md"] = &fstest.MapFile{Data: []byte("---\ntitle: Third\nsummary: S\ndate: 2026-01-02\n---\n")}
	got, err := l.Load(context.Background(), []string{"pages/hello.md", "pages/second.md", "pages/new"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) != len(want.Pages) {
		t.Fatalf("pages: got %d, want %d", len(got.Pages), len(want.Pages))
	}
	for i := range got.Pages {
		if got.Pages[i].Path != want.Pages[i].Path || got.Pages[i].Digest != want.Pages[i].Digest {
			t.Errorf("page %d: got %s, want %s", i, got.Pages[i].Path, want.Pages[i].Path)
		}
	}
}
