package render

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/templates"
)

// Ledger is the chain as the build read it, for the explorer: every row in
// table order, the pins it was verified with (the trust document's), and
// what the full walk over those rows with those pins found
// (ledger.VerifyBlocks): the verdict and each row's check. The renderer
// shows it as given; it reads and verifies no chain itself.
type Ledger struct {
	Blocks []ledger.Block
	Checks []ledger.BlockCheck // one per row of Blocks, in order
	Pins   ledger.Options
	Result ledger.Result
}

// The explorer's pages.
const (
	explorerIndexPath = "explorer/index.html"
	explorerPageRows  = 50 // rows of the strict table per page: a longer table blocks a phone's main thread (Lighthouse's total blocking time)
)

func explorerPagePath(page int) string {
	if page == 1 {
		return explorerIndexPath
	}
	return "explorer/rows-" + strconv.Itoa(page) + ".html"
}

func blockPath(index int64) string { return "explorer/block/" + strconv.FormatInt(index, 10) + ".html" }

// explorerLive are the live routes that answer for the chain as it is now.
var explorerLive = []templates.Link{
	{Href: "/api/ledger/verify", Label: "Ledger verdict", Note: "the full verdict at request time; canonical_spine_valid is authoritative"},
	{Href: "/api/ledger/strict-table", Label: "Strict table", Note: "every row, metadata only, as JSON"},
	{Href: "/api/chain/status", Label: "Chain status", Note: "the head, the genesis and the signed checkpoint to keep"},
	{Href: "/api/ledger/export", Label: "Export", Note: "every row as JSONL with the signed checkpoint, for verify-ledger"},
}

// chainView is what the explorer's pages share, computed once per Renderer
// from its Ledger.
type chainView struct {
	l       *Ledger
	digest  [32]byte              // what the explorer shows: pins, checkpoint, verdict
	byHash  map[ledger.Hash]int   // row hash -> table position (the first row with it)
	off     map[int64]bool        // rows off the canonical spine
	breaks  map[int]ledger.Break  // strict-table breaks by table position
	spineTo map[int]int           // table position -> the spine row that links to it
	seams   map[int64]ledger.Seam // documented seams by block
}

func newChainView(l *Ledger) (*chainView, error) {
	d := newDigest().str("explorer")
	if l == nil {
		return &chainView{digest: d.sum()}, nil
	}
	if len(l.Blocks) == 0 {
		return nil, errors.New("render: ledger: no rows (a chain starts with its genesis)")
	}
	if len(l.Checks) != len(l.Blocks) {
		return nil, fmt.Errorf("render: ledger: %d checks for %d rows", len(l.Checks), len(l.Blocks))
	}
	v := &chainView{l: l, byHash: map[ledger.Hash]int{}, off: map[int64]bool{},
		breaks: map[int]ledger.Break{}, spineTo: map[int]int{}, seams: map[int64]ledger.Seam{}}
	seen := make(map[int64]bool, len(l.Blocks)) // a row's page is named by its index
	for i, b := range l.Blocks {
		if seen[b.Index()] {
			return nil, fmt.Errorf("render: ledger: two rows at index %d", b.Index())
		}
		seen[b.Index()] = true
		if _, dup := v.byHash[b.Hash()]; !dup {
			v.byHash[b.Hash()] = i
		}
	}
	res := l.Result
	for _, i := range res.Spine.OffSpine {
		v.off[i] = true
	}
	for _, br := range res.Table.Breaks {
		v.breaks[br.Position] = br
	}
	for i, b := range l.Blocks {
		if p, ok := v.byHash[b.PrevHash()]; ok && !v.off[b.Index()] && !b.PrevHash().IsZero() {
			v.spineTo[p] = i
		}
	}
	for _, s := range l.Pins.Seams {
		v.seams[s.Block] = s
		d.str(strconv.FormatInt(s.Block, 10), s.Hash.String(), s.PrevHash.String(), s.Reason)
	}
	for _, k := range l.Pins.Keys.Published() {
		d.str(string(k.KeyID), k.PublicKey, string(k.Role))
	}
	d.str(l.Pins.Genesis.String(), strconv.Itoa(l.Pins.WitnessQuorum), res.Verdict.Verdict, strings.Join(res.Verdict.Failures, "\n"))
	if cp := res.Verdict.Checkpoint; cp != nil {
		d.str(cp.String()) // commits to every row's public metadata and signatures
	}
	d.str(strconv.Itoa(len(l.Blocks)))
	v.digest = d.sum()
	return v, nil
}

// verdictView is the verdict the build computed, for the explorer; nil
// without a chain.
func (c *chainView) verdictView() *templates.VerdictView {
	if c.l == nil {
		return nil
	}
	v := c.l.Result.Verdict
	out := &templates.VerdictView{Verdict: v.Verdict, Pass: v.Pass()}
	var s strings.Builder
	fmt.Fprintf(&s, "Computed when this page was built, over %s with the pinned keys and seams: ", count(v.RowsChecked, "row"))
	if v.CanonicalSpineValid {
		fmt.Fprintf(&s, "the canonical spine is valid, %s from genesis to the head", count(v.SpineLength, "block"))
	} else {
		s.WriteString("the canonical spine is not valid")
	}
	switch at := v.StrictTableBreakAtBlock; {
	case v.StrictTableValid:
		s.WriteString("; the strict table has no break.")
	case at != nil && len(v.Failures) == 0:
		fmt.Fprintf(&s, "; the strict table breaks at block %d, at a documented seam.", *at)
	case at != nil:
		fmt.Fprintf(&s, "; the strict table breaks at block %d.", *at)
	default:
		s.WriteString(".")
	}
	if len(v.Failures) > 0 {
		s.WriteString(" " + v.Failures[0])
	}
	out.Summary = s.String()
	if cp := v.Checkpoint; cp != nil {
		out.Checkpoint = fmt.Sprintf("%d rows, root %s", cp.Size, cp.Root)
	}
	return out
}

func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// explorerJobs are the explorer's pages: the strict table in pages of
// explorerPageRows rows (the first with the verdict, the pins and the seam
// diagrams), and one page per block.
func (b *build) explorerJobs() []job {
	c := b.r.chain
	n := 0
	if c.l != nil {
		n = len(c.l.Blocks)
	}
	pages := max(1, (n+explorerPageRows-1)/explorerPageRows)
	jobs := make([]job, 0, pages+n)
	for p := 1; p <= pages; p++ {
		out := explorerPagePath(p)
		jobs = append(jobs, job{key: "explorer:" + out, paths: []string{out, twinPath(out)}, fp: b.explorerFP(out),
			run: func() ([][]byte, error) { return b.explorerPage(p, pages) }})
	}
	for i := range n {
		out := blockPath(c.l.Blocks[i].Index())
		jobs = append(jobs, job{key: "explorer:" + out, paths: []string{out, twinPath(out)}, fp: b.explorerFP(out),
			run: func() ([][]byte, error) { return b.blockPage(i) }})
	}
	return jobs
}

// explorerFP is the fingerprint of the explorer page at out: the frame
// and what the explorer shows.
func (b *build) explorerFP(out string) [32]byte {
	return newDigest().sums(b.layout, b.r.chain.digest).str(out).sum()
}

func (b *build) explorerPage(page, pages int) ([][]byte, error) {
	c := b.r.chain
	out := explorerPagePath(page)
	v := templates.ExplorerView{
		Title:   "Chain explorer",
		Summary: "Every row of the public ledger, each block's metadata and signatures, and the documented seam: as this build read and verified them.",
		Verdict: c.verdictView(),
		Live:    explorerLive,
	}
	var md mdWriter
	md.h1(v.Title).para(v.Summary)
	if c.l == nil {
		v.NoChain = "This build read no chain (its data folder holds none), so no rows are published here. The live edge answers for the chain it serves:"
		md.para(v.NoChain).links(v.Live)
		return htmlAndTwin(b.meta(v.Title, v.Summary, out, "explorer"), templates.Explorer(v), md.String())
	}
	vv := v.Verdict
	md.h2("Verdict").para(fmt.Sprintf("`%s`. %s Checkpoint: %s.", vv.Verdict, vv.Summary, vv.Checkpoint))
	md.h2("The chain as it is now").para("These pages show the chain as the build read it. The live edge answers for every row appended since, at request time:").links(v.Live)
	if page == 1 {
		v.Facts = c.pinFacts(slices.ContainsFunc(b.r.opts.Artifacts, func(a Artifact) bool { return a.Path == TrustDocumentPath }))
		md.h2("What the build verified against")
		for _, f := range v.Facts {
			md.line(fmt.Sprintf("- %s: %s", f.Label, mdValue(f)))
		}
		md.line("")
		for _, br := range c.l.Result.Table.Breaks {
			if br.Documented {
				v.Seams = append(v.Seams, c.seamDiagram(br))
			}
		}
		if len(v.Seams) > 0 {
			md.h2("Documented seams")
			for _, d := range v.Seams {
				md.para(d.Desc)
			}
		}
	}
	first := (page - 1) * explorerPageRows
	last := min(first+explorerPageRows, len(c.l.Blocks))
	v.Page = fmt.Sprintf("Rows %d to %d of %d", c.l.Blocks[first].Index(), c.l.Blocks[last-1].Index(), len(c.l.Blocks))
	v.Table = templates.Table{Label: "Strict table, " + strings.ToLower(v.Page[:1]) + v.Page[1:],
		Columns: []string{"Row", "Timestamp", "Kind", "Hash", "Links to", "Spine", "Strict table", "Witnesses"}, Long: true}
	for i := first; i < last; i++ {
		v.Table.Rows = append(v.Table.Rows, c.tableRow(i))
	}
	if page > 1 {
		v.Prev = &templates.Link{Href: urlPath(explorerPagePath(page - 1)), Label: "Earlier rows"}
	}
	if page < pages {
		v.Next = &templates.Link{Href: urlPath(explorerPagePath(page + 1)), Label: "Later rows"}
	}
	md.h2("Strict table").para(v.Page + ".").table(v.Table)
	return htmlAndTwin(b.meta(v.Title, v.Summary, out, "explorer"), templates.Explorer(v), md.String())
}

// pinFacts are the pins the build verified with and what the walk found;
// trust says whether the build publishes the trust document that holds
// them.
func (c *chainView) pinFacts(trust bool) []templates.Fact {
	v, pins := c.l.Result.Verdict, c.l.Pins
	var facts []templates.Fact
	if trust {
		facts = append(facts, templates.Fact{Label: "Trust document", Value: "/" + TrustDocumentPath, Href: "/" + TrustDocumentPath})
	}
	if v.Genesis != nil {
		facts = append(facts, templates.Fact{Label: "Genesis", Value: v.Genesis.Hash.String(), Href: urlPath(blockPath(v.Genesis.Index)), Identifier: true})
	}
	if v.Head != nil {
		facts = append(facts, templates.Fact{Label: "Head", Value: fmt.Sprintf("block %d, %s", v.Head.Index, v.Head.Hash), Href: urlPath(blockPath(v.Head.Index)), Identifier: true})
	}
	facts = append(facts,
		templates.Fact{Label: "Rows", Value: strconv.Itoa(len(c.l.Blocks))},
		templates.Fact{Label: "On the spine", Value: count(v.SpineLength, "block")},
		templates.Fact{Label: "Off the spine", Value: indexList(v.OffSpineRows)},
		templates.Fact{Label: "Witness quorum", Value: fmt.Sprintf("%d distinct pinned witness signatures per block", cmp.Or(pins.WitnessQuorum, ledger.DefaultWitnessQuorum))},
	)
	for _, k := range pins.Keys.Published() {
		if k.Role == ledger.RoleWriter || k.Role == ledger.RoleWitness {
			facts = append(facts, templates.Fact{Label: "Key (" + string(k.Role) + ")", Value: string(k.KeyID), Identifier: true})
		}
	}
	if cp := v.Checkpoint; cp != nil {
		facts = append(facts, templates.Fact{Label: "Checkpoint", Value: fmt.Sprintf("%s, size %d, root %s", cmp.Or(cp.Origin, "(no origin)"), cp.Size, cp.Root), Identifier: true})
	}
	signed := templates.Fact{Label: "Signed checkpoint", Value: "none published with these rows (the log signs one while the verdict passes)"}
	if cp := v.CheckpointPresented; cp != nil {
		signed.Value, signed.Identifier = fmt.Sprintf("size %d, root %s", cp.Size, cp.Root), true
	}
	return append(facts, signed)
}

func indexList(ix []int64) string {
	if len(ix) == 0 {
		return "none"
	}
	s := make([]string, len(ix))
	for i, x := range ix {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

func mdValue(f templates.Fact) string {
	v := f.Value
	if f.Identifier {
		v = "`" + v + "`"
	}
	if f.Href != "" {
		v = "[" + v + "](" + f.Href + ")"
	}
	return v
}

// tableRow is the strict-table row of the block at table position i.
func (c *chainView) tableRow(i int) []templates.Cell {
	bl := c.l.Blocks[i]
	h := bl.Header()
	row := []templates.Cell{
		{Text: strconv.FormatInt(h.Index, 10), Href: urlPath(blockPath(h.Index))},
		{Text: h.Timestamp, Identifier: true},
		{Text: h.Kind, Identifier: true},
		{Text: bl.Hash().String()[:16] + "…", Identifier: true},
		c.linkCell(bl),
		{Text: "on"},
		{Text: "ok"},
		{Text: strconv.Itoa(len(bl.Witnesses()))},
	}
	if c.off[h.Index] {
		row[5].Text = "off"
	}
	if br, ok := c.breaks[i]; ok {
		row[6].Text = "break: " + string(br.Kind)
		if br.Documented {
			row[6].Text = "documented seam"
		}
	}
	return row
}

// linkCell names the row a block's prev_hash points to.
func (c *chainView) linkCell(bl ledger.Block) templates.Cell {
	switch p, ok := c.byHash[bl.PrevHash()]; {
	case bl.PrevHash().IsZero():
		return templates.Cell{Text: "none (genesis)"}
	case ok:
		to := c.l.Blocks[p].Index()
		return templates.Cell{Text: strconv.FormatInt(to, 10), Href: urlPath(blockPath(to))}
	default:
		return templates.Cell{Text: "no row"}
	}
}

func (b *build) blockPage(i int) ([][]byte, error) {
	c := b.r.chain
	bl := c.l.Blocks[i]
	h := bl.Header()
	out := blockPath(h.Index)
	quorum := cmp.Or(c.l.Pins.WitnessQuorum, ledger.DefaultWitnessQuorum)
	check := c.l.Checks[i]
	v := templates.BlockView{
		Title:   fmt.Sprintf("Block %d", h.Index),
		Summary: fmt.Sprintf("A %s block of %s, row %d of %d in the strict table.", h.Kind, h.Timestamp, i+1, len(c.l.Blocks)),
		Up:      templates.Link{Href: "/explorer/", Label: "Chain explorer"},
		Live:    explorerLive,
	}
	v.Header = []templates.Fact{
		{Label: "index", Value: strconv.FormatInt(h.Index, 10), Identifier: true},
		{Label: "timestamp", Value: h.Timestamp, Identifier: true},
		{Label: "kind", Value: h.Kind, Identifier: true},
		{Label: "payload_hash", Value: h.PayloadHash.String(), Identifier: true},
		{Label: "prev_hash", Value: h.PrevHash.String(), Identifier: true},
		{Label: "writer", Value: string(h.Writer), Identifier: true},
		{Label: "hash", Value: bl.Hash().String(), Identifier: true},
	}
	if link := c.linkCell(bl); link.Href != "" {
		v.Header[4].Href = link.Href
	}
	v.Checks = []templates.Fact{
		{Label: "Hash recomputes", Value: yesNo(check.HashValid)},
		{Label: "Signatures verify", Value: yesNo(check.SignatureValid) + " (the writer's and every listed witness's, with the pinned keys)"},
		{Label: "Witness quorum", Value: fmt.Sprintf("%s: %d of the %d needed", yesNo(check.QuorumMet), check.WitnessCount, quorum)},
		{Label: "Payload", Value: "not published: payload_hash commits to it"},
	}
	if check.Err != nil {
		v.Checks = append(v.Checks, templates.Fact{Label: "Problems", Value: check.Err.Error()})
	}
	v.Signatures = templates.Table{Label: fmt.Sprintf("Signatures of block %d", h.Index), Columns: []string{"Role", "Key id", "Verifies", "Signature over the hash"}}
	v.Signatures.Rows = append(v.Signatures.Rows, c.signatureRow(check, ledger.RoleWriter, h.Writer, bl.Signature()))
	for _, w := range bl.Witnesses() {
		v.Signatures.Rows = append(v.Signatures.Rows, c.signatureRow(check, ledger.RoleWitness, w.KeyID, w.Signature))
	}
	onSpine := "yes"
	if c.off[h.Index] {
		onSpine = "no: no block on the canonical spine links to it; it stays published in the strict table"
	}
	v.Place = []templates.Fact{{Label: "On the canonical spine", Value: onSpine}, {Label: "Links back to", Value: c.linkCell(bl).Text, Href: c.linkCell(bl).Href}}
	if j, ok := c.spineTo[i]; ok {
		to := c.l.Blocks[j].Index()
		v.Place = append(v.Place, templates.Fact{Label: "Linked from (spine)", Value: strconv.FormatInt(to, 10), Href: urlPath(blockPath(to))})
	}
	v.Place = append(v.Place, templates.Fact{Label: "Merkle leaf", Value: fmt.Sprintf("leaf %d of the checkpoint's tree", i)})
	if br, ok := c.breaks[i]; ok {
		v.Break = &templates.SeamNote{Documented: br.Documented}
		if br.Documented {
			v.Break.Text = fmt.Sprintf("Documented seam: this block's prev_hash names block %s, not the row before it, so the strict table breaks here, and a seam pinned to this row's hashes documents it. %s",
				c.linkCell(bl).Text, strings.TrimSpace(br.Reason))
		} else {
			v.Break.Text = fmt.Sprintf("Undocumented strict-table break (%s): expected %s, found %s.", br.Kind, br.Expected, br.Found)
		}
	}
	if i > 0 {
		p := c.l.Blocks[i-1].Index()
		v.Prev = &templates.Link{Href: urlPath(blockPath(p)), Label: fmt.Sprintf("Block %d", p)}
	}
	if i+1 < len(c.l.Blocks) {
		n := c.l.Blocks[i+1].Index()
		v.Next = &templates.Link{Href: urlPath(blockPath(n)), Label: fmt.Sprintf("Block %d", n)}
	}

	var md mdWriter
	md.h1(v.Title).para(v.Summary)
	if v.Break != nil {
		md.para(v.Break.Text)
	}
	for _, sec := range []struct {
		title string
		facts []templates.Fact
	}{{"Public metadata", v.Header}, {"Checks", v.Checks}, {"Its place on the spine", v.Place}} {
		md.h2(sec.title)
		for _, f := range sec.facts {
			md.line(fmt.Sprintf("- %s: %s", f.Label, mdValue(f)))
		}
		md.line("")
	}
	md.h2("Signatures and witnesses").table(v.Signatures)
	md.h2("Live").links(v.Live)
	return htmlAndTwin(b.meta(v.Title, v.Summary, out, "explorer"), templates.Block(v), md.String())
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// signatureRow shows one signature of the row check is of: every one
// verified with its pinned key when the walk found the row's signatures
// valid; otherwise this one is checked over the row's hash with the pinned
// key of id in role, to show which failed.
func (c *chainView) signatureRow(check ledger.BlockCheck, role ledger.Role, id ledger.KeyID, sig ledger.Signature) []templates.Cell {
	ok := "yes"
	if !check.SignatureValid {
		ok = "no: the key is not pinned in this role"
		if k, err := c.l.Pins.Keys.Lookup(id, role); err == nil {
			ok = yesNo(k.Verify(check.Hash[:], sig))
		}
	}
	return []templates.Cell{{Text: string(role)}, {Text: string(id), Identifier: true}, {Text: ok}, {Text: sig.String(), Identifier: true}}
}

// Seam diagram geometry, in SVG user units.
const (
	boxW, boxH, boxGap, diagramPad, arcRise = 100, 56, 36, 12, 46
	boxTop                                  = diagramPad + arcRise + 8
)

// seamDiagram draws the rows around a documented break: the three before
// it, the row itself and the one after, each with an arrow to the row its
// prev_hash names.
func (c *chainView) seamDiagram(br ledger.Break) templates.SeamDiagram {
	from, to := max(0, br.Position-3), min(len(c.l.Blocks), br.Position+2)
	d := templates.SeamDiagram{
		ID:     fmt.Sprintf("seam-%d", br.Block),
		Title:  fmt.Sprintf("The documented seam at block %d", br.Block),
		Height: boxTop + boxH + diagramPad,
	}
	x := func(pos int) int { return diagramPad + (pos-from)*(boxW+boxGap) }
	var off []string
	for i := from; i < to; i++ {
		bl := c.l.Blocks[i]
		box := templates.DiagramBox{X: x(i), Y: boxTop, W: boxW, H: boxH, Label: strconv.FormatInt(bl.Index(), 10),
			Note: "on spine", Class: "spine"}
		switch {
		case i == br.Position:
			box.Note, box.Class = "the seam", "seam"
		case c.off[bl.Index()]:
			box.Note, box.Class = "off spine", "off"
			off = append(off, box.Label)
		}
		d.Boxes = append(d.Boxes, box)
		p, ok := c.byHash[bl.PrevHash()]
		if !ok || p < from || p >= i || bl.PrevHash().IsZero() {
			continue
		}
		a := templates.DiagramArrow{Class: "link"}
		if c.off[bl.Index()] {
			a.Class = "link off"
		}
		if p == i-1 {
			a.D = fmt.Sprintf("M%d %dH%d", x(i), boxTop+boxH/2, x(p)+boxW+2)
		} else {
			a.Class = "jump"
			sx, ex := x(i)+boxW/2, x(p)+boxW/2
			a.D = fmt.Sprintf("M%d %dC%d %d %d %d %d %d", sx, boxTop, sx, boxTop-arcRise, ex, boxTop-arcRise, ex, boxTop-2)
		}
		d.Arrows = append(d.Arrows, a)
	}
	d.Width = 2*diagramPad + (to-from)*boxW + (to-from-1)*boxGap
	seamRow := c.l.Blocks[br.Position]
	desc := fmt.Sprintf("Rows %d to %d of the strict table, each with an arrow to the row its prev_hash names. Row %d links to row %s, not to the row before it: the strict table breaks there, and a pinned seam documents the break.",
		c.l.Blocks[from].Index(), c.l.Blocks[to-1].Index(), br.Block, c.linkCell(seamRow).Text)
	switch len(off) {
	case 0:
	case 1:
		desc += fmt.Sprintf(" Row %s stays published off the canonical spine, which runs on unbroken.", off[0])
	default:
		desc += fmt.Sprintf(" Rows %s stay published off the canonical spine, which runs on unbroken.", strings.Join(off, ", "))
	}
	if s, ok := c.seams[br.Block]; ok && s.Reason != "" {
		desc += " Reason: " + strings.TrimSpace(s.Reason)
	}
	d.Desc = desc
	return d
}
