// verify-tiles.js: the ledger's verdict, computed in your browser from the
// public C2SP tiles (/ledger/checkpoint, /ledger/tile/entries/...) and the
// trust document (/keys.json). It never reads the server's own verdict.
// With WebCrypto (SHA-256, Ed25519) it checks the checkpoint's signature
// with the pinned checkpoint key, hashes every row into the Merkle root the
// checkpoint signs, recomputes every row's hash from its canonical header,
// verifies the writer's and the witnesses' signatures, walks the spine from
// the head to the pinned genesis and checks the strict table against the
// pinned seams. It remembers the checkpoint in this browser (localStorage)
// and requires the next one to extend it. It is as independent as the
// trust document it reads: pin keys.json yourself and run verify-ledger.
(() => {
  "use strict";
  const out = document.getElementById("tiles-verdict");
  if (!out) return;
  const prefix = out.dataset.log || "/ledger/";
  const trustURL = out.dataset.keys || "/keys.json";
  const maxRows = 200000; // beyond this, a browser tab is the wrong tool
  const enc = new TextEncoder();
  const zero = "0".repeat(64);

  const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const unhex = (s) => Uint8Array.from(s.match(/../g) || [], (h) => parseInt(h, 16));
  const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const b64 = (b) => btoa(String.fromCharCode(...b));
  const cat = (...parts) => {
    const o = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let i = 0;
    for (const p of parts) { o.set(p, i); i += p.length; }
    return o;
  };
  const sha256 = async (data) => new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  const leafHash = (e) => sha256(cat(Uint8Array.of(0), e));
  const nodeHash = (l, r) => sha256(cat(Uint8Array.of(1), l, r));
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  // pause lets the page breathe every 16 steps of a long loop: awaited
  // WebCrypto calls resolve as microtasks, which never yield to the page,
  // so without it the whole check is one task that blocks input.
  const pause = (i) => (i % 16 === 15 ? new Promise((r) => setTimeout(r, 0)) : undefined);

  // RFC 6962 Merkle tree hash over leaf hashes: a stack of perfect
  // subtrees, folded right to left at the end.
  async function merkleRoot(leaves) {
    if (leaves.length === 0) return sha256(new Uint8Array(0));
    const stack = [];
    for (const [i, h] of leaves.entries()) {
      await pause(i);
      let node = { level: 0, hash: h };
      while (stack.length && stack[stack.length - 1].level === node.level) {
        const left = stack.pop();
        node = { level: node.level + 1, hash: await nodeHash(left.hash, node.hash) };
      }
      stack.push(node);
    }
    let h = stack.pop().hash;
    while (stack.length) h = await nodeHash(stack.pop().hash, h);
    return h;
  }

  // tlog-tiles paths: N in groups of three digits, all but the last
  // prefixed with "x"; ".p/W" for a partial tile.
  function bundlePath(n, w) {
    let s = String(n % 1000).padStart(3, "0");
    for (n = Math.floor(n / 1000); n > 0; n = Math.floor(n / 1000)) s = "x" + String(n % 1000).padStart(3, "0") + "/" + s;
    return "tile/entries/" + s + (w ? ".p/" + w : "");
  }

  let files = 0;
  async function get(url) {
    const r = await fetch(url, { credentials: "omit" });
    if (!r.ok) { const e = new Error(url + ": HTTP " + r.status); e.status = r.status; throw e; }
    files++;
    return new Uint8Array(await r.arrayBuffer());
  }

  // Bundle n of a log of size rows: the partial one of that width, or the
  // full one once it exists.
  async function bundle(n, size) {
    const w = Math.min(size - n * 256, 256);
    let data;
    try { data = await get(prefix + bundlePath(n, w % 256)); } catch (e) {
      if (e.status !== 404 || w === 256) throw e;
      data = await get(prefix + bundlePath(n, 0));
    }
    const entries = [];
    for (let i = 0; i + 2 <= data.length && entries.length < w;) {
      const len = (data[i] << 8) | data[i + 1];
      if (i + 2 + len > data.length) break;
      entries.push(data.subarray(i + 2, i + 2 + len));
      i += 2 + len;
    }
    if (entries.length !== w) throw Object.assign(new Error(bundlePath(n, w % 256) + " is not a bundle of " + w + " entries: the log is corrupt"), { corrupt: true });
    return entries;
  }

  const importKey = (raw) => crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
  const verify = (key, sig, msg) => crypto.subtle.verify({ name: "Ed25519" }, key, sig, msg);

  // The checkpoint note: its text, verified with the note key
  // "<name>+<key hash>+<base64(0x01 || key)>".
  async function openNote(note, vkey) {
    // The key's base64 may hold "+": split off the name and the hash only.
    const name = vkey.slice(0, vkey.indexOf("+"));
    const hash16 = vkey.slice(name.length + 1, name.length + 9);
    const key64 = vkey.slice(name.length + 10);
    const raw = unb64(key64);
    if (raw.length !== 33 || raw[0] !== 1) throw new Error("the checkpoint key is not an Ed25519 note key");
    const id = (await sha256(cat(enc.encode(name + "\n"), raw))).subarray(0, 4);
    if (hex(id) !== hash16) throw new Error("the checkpoint key's hash does not match it");
    const cut = note.indexOf("\n\n");
    if (cut < 0) throw new Error("the checkpoint is not a signed note");
    const text = note.slice(0, cut + 1);
    const key = await importKey(raw.subarray(1));
    for (const line of note.slice(cut + 2).split("\n")) {
      if (!line.startsWith("\u2014 " + name + " ")) continue;
      const sig = unb64(line.slice(name.length + 3));
      if (sig.length === 68 && same(sig.subarray(0, 4), id)) {
        if (await verify(key, sig.subarray(4), enc.encode(text))) return text;
        throw new Error("the checkpoint's signature by the pinned key does not verify");
      }
    }
    throw new Error("the checkpoint carries no signature by the pinned key");
  }

  // A row's hash: SHA-256 of the RFC 8785 canonical JSON of its header
  // (members sorted; strings as JSON.stringify writes them, as RFC 8785 says).
  const header = (r) => "{\"index\":" + r.index + ",\"kind\":" + JSON.stringify(r.kind) + ",\"payload_hash\":" + JSON.stringify(r.payload_hash) +
    ",\"prev_hash\":" + JSON.stringify(r.prev_hash) + ",\"timestamp\":" + JSON.stringify(r.timestamp) + ",\"writer\":" + JSON.stringify(r.writer) + "}";

  async function checkRow(r, keys, quorum) {
    if (!Number.isSafeInteger(r.index) || !/^[0-9a-f]{64}$/.test(r.hash) || !/^[0-9a-f]{128}$/.test(r.signature)) return "malformed row";
    const h = await sha256(enc.encode(header(r)));
    if (hex(h) !== r.hash) return "its hash does not recompute";
    const w = keys.get(r.writer);
    if (!w || w.role !== "writer" || !(await verify(w.key, unhex(r.signature), h))) return "the writer's signature does not verify with a pinned writer key";
    const seen = new Set();
    for (const s of r.witnesses || []) {
      const k = keys.get(s.key_id);
      if (seen.has(s.key_id) || !k || k.role !== "witness" || !/^[0-9a-f]{128}$/.test(s.signature) || !(await verify(k.key, unhex(s.signature), h)))
        return "witness " + s.key_id + " does not verify with a pinned witness key, or is listed twice";
      seen.add(s.key_id);
    }
    if (seen.size < quorum) return seen.size + " witness signature(s), the quorum is " + quorum;
    if ((r.index === 0) !== (r.prev_hash === zero)) return "only block 0 links to nothing";
    return "";
  }

  function show(verdict, lines, ok) {
    out.replaceChildren();
    const v = document.createElement("p");
    const strong = document.createElement("strong");
    strong.textContent = verdict;
    v.append("Verdict computed in this browser: ", strong);
    out.append(v);
    const ul = document.createElement("ul");
    for (const l of lines) { const li = document.createElement("li"); li.textContent = l; ul.append(li); }
    out.append(ul);
    out.dataset.verdict = verdict;
    out.classList.toggle("fail", !ok);
  }

  async function run() {
    const started = performance.now();
    try { await importKey(new Uint8Array(32)); } catch (e) {
      show("NOT CHECKED", ["This browser's WebCrypto has no Ed25519: nothing was verified here. Run verify-ledger (below) instead."], false);
      return;
    }
    const trust = await (await fetch(trustURL, { credentials: "omit" })).json();
    const log = trust.log || {};
    if (!log.origin || !log.checkpoint_key) throw new Error("the trust document names no log and checkpoint key");
    const note = new TextDecoder().decode(await get(prefix + "checkpoint"));
    const fail = (name, why) => show(name, [why, "Read from " + files + " public files; nothing here came from the server's own verdict."], false);
    let text;
    try { text = await openNote(note, log.checkpoint_key); } catch (e) { return fail("FAIL_CHECKPOINT_INVALID", e.message); }
    const [origin, sizeLine, root64] = text.split("\n");
    const size = Number(sizeLine);
    if (origin !== log.origin) return fail("FAIL_CHECKPOINT_INVALID", "the checkpoint is of log " + origin + ", the trust document's is " + log.origin);
    if (!(size > 0)) return fail("FAIL_EMPTY_CHAIN", "the checkpoint has no rows");
    if (size > maxRows) {
      show("NOT CHECKED", [size + " rows is more than this page checks in a browser tab; the checkpoint's signature is valid. Run verify-ledger --tiles (below): it keeps state and then reads only new rows."], false);
      return;
    }
    const entries = [];
    try {
      for (let n = 0; n * 256 < size; n++) entries.push(...await bundle(n, size));
    } catch (e) {
      if (e.corrupt) return fail("FAIL_CHECKPOINT_INVALID", e.message);
      throw e;
    }
    const leaves = [];
    for (const [i, e] of entries.entries()) { await pause(i); leaves.push(await leafHash(e)); }
    if (b64(await merkleRoot(leaves)) !== root64) return fail("FAIL_CHECKPOINT_INVALID", "the entry bundles do not hash to the signed checkpoint's root");

    const remembered = "proofsite-checkpoint:" + origin;
    let kept = null;
    try { kept = JSON.parse(localStorage.getItem(remembered) || "null"); } catch (e) { kept = null; }
    if (kept && (kept.size > size || b64(await merkleRoot(leaves.slice(0, kept.size))) !== kept.root))
      return fail("FAIL_CHECKPOINT_NOT_EXTENDED", "this browser remembered a checkpoint of " + kept.size + " rows; the log no longer extends it (rows replaced, removed or rewritten)");

    const keys = new Map();
    for (const k of trust.keys || []) keys.set(k.key_id, { role: k.role, key: await importKey(unhex(k.public_key)) });
    const quorum = trust.witness_quorum || 2;
    const rows = entries.map((e) => JSON.parse(new TextDecoder().decode(e)));
    const problems = [];
    for (const [i, r] of rows.entries()) { await pause(i); problems.push(await checkRow(r, keys, quorum)); }

    // The canonical spine, from the head (highest index) back to genesis.
    const byHash = new Map();
    let head = 0;
    rows.forEach((r, i) => { if (!byHash.has(r.hash)) byHash.set(r.hash, i); if (r.index > rows[head].index) head = i; });
    for (let i = head; ;) {
      const r = rows[i];
      if (problems[i]) return fail("FAIL_CANONICAL_SPINE_BROKEN", "spine block " + r.index + ": " + problems[i]);
      if (r.index === 0) {
        if (r.hash !== trust.genesis_hash) return fail("FAIL_GENESIS_MISMATCH", "the spine reaches genesis " + r.hash + ", not the pinned " + trust.genesis_hash);
        break;
      }
      const p = byHash.get(r.prev_hash);
      if (p === undefined || rows[p].index >= r.index) return fail("FAIL_CANONICAL_SPINE_BROKEN", "spine block " + r.index + ": prev_hash names no earlier block");
      i = p;
    }
    // The strict table, in order; a break passes only at a pinned seam.
    let breakAt = null;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (problems[i]) return fail("FAIL_STRICT_TABLE_INVALID_ROW", "row " + r.index + ": " + problems[i]);
      if (i === 0) continue;
      const prev = rows[i - 1];
      if (r.index === prev.index + 1 && r.prev_hash === prev.hash) continue;
      const seam = (trust.documented_seams || []).find((s) => s.block === r.index && s.hash === r.hash && s.prev_hash === r.prev_hash);
      if (!seam || r.index !== prev.index + 1) return fail("FAIL_UNDOCUMENTED_STRICT_BREAK", "row " + r.index + " does not link to row " + prev.index + " and no pinned seam names it");
      if (breakAt === null) breakAt = r.index;
    }
    localStorage.setItem(remembered, JSON.stringify({ size: size, root: root64 }));
    const verdict = breakAt === null ? "PASS" : "PASS_WITH_DOCUMENTED_STRICT_SEAM";
    show(verdict, [
      size + " rows: every hash recomputed, every writer and witness signature verified (quorum " + quorum + "), the spine walked from block " + rows[head].index + " to the pinned genesis" +
        (breakAt === null ? "." : "; the strict table breaks at block " + breakAt + ", a seam the trust document pins."),
      "The rows hash to the Merkle root " + root64 + " that the checkpoint signs with the log's key" +
        (kept ? ", and extend the checkpoint of " + kept.size + " rows this browser remembered." : "; this browser now remembers it and will require the next one to extend it."),
      "Computed here in " + Math.round(performance.now() - started) + " ms from " + files + " public files and " + trustURL + ", never from the server's own verdict.",
    ], true);
  }

  run().catch((e) => show("NOT CHECKED", ["The check could not run: " + e.message + ". Nothing was verified; run verify-ledger (below)."], false));
})();
