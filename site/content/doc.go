// Package content loads a proofsite content directory into typed values and
// validates it. It renders nothing.
//
// A content directory holds:
//
//	site.yaml                        the site's configuration and published data
//	pages/**/*.md                    general pages (front matter: title, date, tags, summary)
//	constitution/articles/NN-*.md    the published constitution, one article per file
//	constitution/runtime-*.json      the runtime artifact served to agents
//	static/**                        files copied to the output unchanged
//	**/*.md (anywhere else)          downloadable documents such as products/gate/README.md
//
// Other folders (ledger/, precheck/, ...) belong to other packages and are
// ignored here. Hidden files and editor temporaries are ignored everywhere.
//
// Load reads everything from an fs.FS and returns a *Site or every problem it
// found at once, each an *Error naming the file and line:
//
//	site, err := content.Load(os.DirFS("content"))
//
// Loader keeps the parsed files of a previous load so that Reload only parses
// what changed; the result is the same as a fresh Load of the same files.
package content
