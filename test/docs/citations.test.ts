import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every repository path the docs and the code's comments cite must exist, and every section they cite must be a
 * heading of that doc. Sources: docs/*.md, README.md and integrations/<name>/README.md (the whole text, code
 * blocks included), comments in src/, test/ and bench/ TypeScript, and comments in the shell scripts under
 * scripts/. A citation is one of:
 *
 * - a repository path: `src/work/handoff.ts`, `test/ingest/*` (a glob: its directory must exist and something
 *   must match), `scripts/druid/{start,stop}` (each alternative), with an optional `#anchor` or `:line`;
 *   a source file named by its last folders (`work/audit.ts`, `steps/undo.ts`: some file of src/, test/,
 *   bench/ or web/ ends so); a bare doc name such as `architecture.md` (the citing file's folder, docs/ or the root);
 * - a Markdown link that is not a URL, relative to the file that holds it;
 * - a section: `docs/operations.md#the-dashboard` or a link to `#the-dashboard` (GitHub's slug of a heading),
 *   `docs/operations.md, "Configuration"` or `(architecture doc, "Exit codes")` (some heading of that doc
 *   contains the text), or `§2.3` (a numbered heading of docs/druid-api.md, or of the
 *   doc named just before it).
 *
 * Not ours, so not checked: URLs, paths inside another path (`server/src/main/java/…`), Druid's Java sources
 * (`…/main/java/…`, `*.java`, `org/apache/…`) and Druid's documentation (`docs/ingestion/tasks.md`: a folder
 * of docs/ that segops does not have). Paths that only the Python integrations know (`tests/`, `examples/`)
 * are resolved from the integration's folder.
 *
 * Docs and code name behaviours, never tracker numbers: no file of src/, test/, docs/ or README.md may say
 * "issue" followed by a number, nor point outside the repository at a shared folder.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Our top-level folders: a path citation starts with one of them. */
const ROOTS = ["src", "test", "bench", "scripts", "docs", "integrations", "samples", "web"];
/** Folders a Python integration's README cites from its own folder. */
const INTEGRATION_ROOTS = ["tests", "examples"];
/** Sections of Apache Druid's own docs/ tree: `docs/ingestion/tasks.md` is Druid's page, not ours. */
const DRUID_DOC_SECTIONS = new Set([
  "api-reference",
  "comparisons",
  "configuration",
  "data-management",
  "dependencies",
  "design",
  "development",
  "ingestion",
  "misc",
  "multi-stage-query",
  "operations",
  "querying",
  "release-info",
  "tutorials",
]);

interface Citation {
  /** The citing file, relative to the root. */
  file: string;
  line: number;
  /** The citation as written. */
  text: string;
  /** Candidate files, relative to the root (the first that exists is the one cited). */
  candidates: string[];
  anchor?: string;
  lineRef?: number;
  /** The heading text a `, "…"` citation names. */
  heading?: string;
  /** `§n` section number. */
  section?: string;
}

/** A piece of text to scan, with the line of the file it starts on. */
interface Chunk {
  text: string;
  line: number;
}

const norm = (p: string) => posix.normalize(p.split("\\").join("/"));

function walk(dir: string, keep: (rel: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (abs: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name === "dist" || e.name.startsWith(".")) continue;
      const child = join(abs, e.name);
      if (e.isDirectory()) visit(child);
      else {
        const rel = norm(relative(ROOT, child));
        if (keep(rel)) out.push(rel);
      }
    }
  };
  if (existsSync(join(ROOT, dir))) visit(join(ROOT, dir));
  return out.sort();
}

/** The files citations are read from. */
function sources(): string[] {
  const md = [
    "README.md",
    ...walk("docs", (f) => /^docs\/[^/]+\.md$/.test(f)),
    ...walk("integrations", (f) => /^integrations\/[^/]+\/README\.md$/.test(f)),
  ];
  const tsFiles = ["src", "test", "bench"].flatMap((d) => walk(d, (f) => f.endsWith(".ts")));
  const shell = walk("scripts", (f) => {
    if (f.endsWith(".sh")) return true;
    if (/\.[a-z]+$/.test(f)) return false;
    return readFileSync(join(ROOT, f), "utf8").startsWith("#!/usr/bin/env bash");
  });
  return [...md, ...tsFiles, ...shell];
}

/** The comments of a TypeScript file, as the compiler sees them (so a `//` inside a string or regex is not one). */
function tsComments(text: string): Chunk[] {
  const sf = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const seen = new Set<number>();
  const out: Chunk[] = [];
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push({ text: text.slice(r.pos, r.end), line: sf.getLineAndCharacterOfPosition(r.pos).line + 1 });
    }
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.getFullStart()));
    take(ts.getTrailingCommentRanges(text, node.getEnd()));
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return out.sort((a, b) => a.line - b.line);
}

/** The comments of a shell script: `#` at the start of a line or after a blank, outside quotes. */
function shellComments(text: string): Chunk[] {
  const out: Chunk[] = [];
  text.split("\n").forEach((line, i) => {
    if (i === 0 && line.startsWith("#!")) return;
    let quote: string | null = null;
    for (let j = 0; j < line.length; j++) {
      const c = line[j]!;
      if (quote) {
        if (c === "\\" && quote === '"') j++;
        else if (c === quote) quote = null;
      } else if (c === "\\") j++;
      else if (c === "'" || c === '"') quote = c;
      else if (c === "#" && (j === 0 || /\s/.test(line[j - 1]!))) {
        out.push({ text: line.slice(j), line: i + 1 });
        return;
      }
    }
  });
  return out;
}

/** Expands `{a,b}` alternatives (one level, as the citations use them). */
function expandBraces(p: string): string[] {
  const m = /\{([^{}]*,[^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1]!
    .split(",")
    .flatMap((alt) => expandBraces(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

let sourceIndex: string[] | undefined;
/** Every file below src/, test/, bench/ and web/, for citations that name one by its last folders. */
function sourceFiles(): string[] {
  sourceIndex ??= ["src", "test", "bench", "web"].flatMap((d) => walk(d, () => true));
  return sourceIndex;
}

/** Whether a path is Apache Druid's (its sources or its docs), not segops'. */
function isDruids(p: string): boolean {
  if (/(^|\/)main\/java(\/|$)|(^|\/)test\/java(\/|$)|org\/apache\/|\.java$|^web-console\//.test(p))
    return true;
  const docs = /^docs\/([^/]+)\//.exec(p);
  return docs !== null && DRUID_DOC_SECTIONS.has(docs[1]!);
}

const PATH_CHARS = String.raw`[\w.*{},/-]`;
/** Characters that, just before a path, make it part of something else (a URL, another path, a variable). */
const NOT_BEFORE = String.raw`(?<![\w.\-/~$@:…\\])`;

function pathRegex(roots: string[]): RegExp {
  return new RegExp(
    `${NOT_BEFORE}((?:${roots.join("|")})/(?:${PATH_CHARS}*[\\w*}/])?)(#[\\w-]+|:\\d+(?![\\w.]))?`,
    "g",
  );
}

const BARE_DOC = new RegExp(`${NOT_BEFORE}([\\w-]+\\.md)(#[\\w-]+)?(?![\\w/])`, "g");
const LINK = /\]\(([^)\s]+)\)/g;
const QUOTED_HEADING = /(?:([\w./-]*[\w-]+\.md)|\b([a-z][\w-]*) doc),\s+"([^"\n]+)("|$)/g;
/** A TypeScript file named by its last folders (`work/audit.ts`, `steps/undo.ts`). */
const SHORT_TS = new RegExp(
  `${NOT_BEFORE}((?!(?:${ROOTS.join("|")})/)[a-z][\\w-]*/[\\w./-]*\\.tsx?)(?![\\w/])`,
  "g",
);
const SECTION = /(?:([\w./-]*[\w-]+\.md)\s+)?§(\d+(?:\.\d+)*[a-z]?)/g;

/** Citations in one chunk of text from `file`. */
function citationsIn(file: string, chunk: Chunk): Citation[] {
  const dir = posix.dirname(file);
  const inIntegration = /^integrations\/[^/]+\//.test(file);
  const out: Citation[] = [];
  chunk.text.split("\n").forEach((raw, i) => {
    const line = chunk.line + i;
    let text = raw;

    // Markdown links, relative to the file; blanked out afterwards so their targets are not read twice.
    text = text.replace(LINK, (whole, target: string) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) return whole;
      const [path = "", anchor] = target.split("#", 2);
      const resolved = path === "" ? file : norm(posix.join(dir, path));
      if (!isDruids(resolved)) {
        out.push({ file, line, text: target, candidates: [resolved], ...(anchor ? { anchor } : {}) });
      }
      return `](${" ".repeat(target.length)})`;
    });

    for (const m of text.matchAll(pathRegex(inIntegration ? [...ROOTS, ...INTEGRATION_ROOTS] : ROOTS))) {
      const path = m[1]!.replace(/[.,]+$/, "");
      if (isDruids(path)) continue;
      const suffix = m[2];
      const c: Citation = {
        file,
        line,
        text: m[0],
        candidates: inIntegration ? [norm(posix.join(dir, path)), path] : [path],
      };
      if (suffix?.startsWith("#")) c.anchor = suffix.slice(1);
      else if (suffix) c.lineRef = Number(suffix.slice(1));
      out.push(c);
    }

    for (const m of text.matchAll(BARE_DOC)) {
      const name = m[1]!;
      out.push({
        file,
        line,
        text: m[0],
        candidates: [norm(posix.join(dir, name)), `docs/${name}`, name],
        ...(m[2] ? { anchor: m[2].slice(1) } : {}),
      });
    }

    for (const m of text.matchAll(SHORT_TS)) {
      const path = m[1]!;
      if (isDruids(path)) continue;
      const found = sourceFiles().filter((f) => f.endsWith(`/${path}`));
      out.push({ file, line, text: m[0], candidates: found.length > 0 ? found : [`src/${path}`] });
    }

    for (const m of text.matchAll(QUOTED_HEADING)) {
      const doc = m[1] ?? `docs/${m[2]}.md`;
      out.push({ file, line, text: m[0], candidates: docCandidates(file, doc), heading: m[3]! });
    }

    for (const m of text.matchAll(SECTION)) {
      if (/RFC \d+\s*$/.test(text.slice(0, m.index))) continue;
      const doc = m[1] ?? "docs/druid-api.md";
      out.push({ file, line, text: m[0], candidates: docCandidates(file, doc), section: m[2]! });
    }
  });
  return out;
}

function docCandidates(file: string, doc: string): string[] {
  if (doc.includes("/")) return [doc, norm(posix.join(posix.dirname(file), doc))];
  return [norm(posix.join(posix.dirname(file), doc)), `docs/${doc}`, doc];
}

/** All citations of one source file. */
function citationsOf(file: string): Citation[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  // Parsing is the slow part: a file with nothing that could be a citation is not parsed.
  const maybe = [pathRegex(ROOTS), BARE_DOC, SHORT_TS, LINK, QUOTED_HEADING, SECTION].some((re) =>
    new RegExp(re.source, re.flags.replace("g", "")).test(text),
  );
  if (!maybe) return [];
  const chunks = file.endsWith(".md")
    ? [{ text, line: 1 }]
    : file.endsWith(".ts")
      ? tsComments(text)
      : shellComments(text);
  return chunks.flatMap((c) => citationsIn(file, c));
}

/** GitHub's anchor for a heading's text: inline Markdown dropped, lowercase, punctuation but `-` and `_` removed. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The headings of a Markdown file (fenced code skipped), with their anchors as GitHub numbers repeats. */
function headings(markdown: string): { text: string; anchor: string }[] {
  const out: { text: string; anchor: string }[] = [];
  const used = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]![0]!;
      else if (f[1]![0] === fence) fence = null;
      continue;
    }
    if (fence) continue;
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    const html = /<a\s+(?:id|name)="([^"]+)"/.exec(line);
    if (html) out.push({ text: html[1]!, anchor: html[1]! });
    if (!h) continue;
    const base = slug(h[1]!);
    const n = used.get(base) ?? 0;
    used.set(base, n + 1);
    out.push({ text: h[1]!, anchor: n === 0 ? base : `${base}-${n}` });
  }
  return out;
}

/** A heading's words for a `"…"` citation: no Markdown, no leading section number, lowercase. */
const words = (s: string) =>
  s
    .replace(/[`*"“”]/g, "")
    .replace(/^\d+(\.\d+)*[a-z]?\.?\s+/, "")
    .replace(/\s+/g, " ")
    .replace(/[.,;:]+$/, "")
    .trim()
    .toLowerCase();

function exists(rel: string): boolean {
  if (!/[*?]/.test(rel)) return existsSync(join(ROOT, rel));
  // A glob: its fixed folder must exist and some file under it must match.
  const fixed = rel.slice(0, rel.search(/[*?]/));
  const base = fixed.endsWith("/") ? fixed.slice(0, -1) : dirname(fixed);
  if (!existsSync(join(ROOT, base)) || !statSync(join(ROOT, base)).isDirectory()) return false;
  const re = new RegExp(
    `^${rel
      .split(/(\*\*\/|\*\*|\*|\?)/)
      .map((part) =>
        part === "**/"
          ? "(?:.*/)?"
          : part === "**"
            ? ".*"
            : part === "*"
              ? "[^/]*"
              : part === "?"
                ? "[^/]"
                : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"),
      )
      .join("")}/?$`,
  );
  const entries: string[] = [];
  const visit = (abs: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.name === "node_modules") continue;
      const child = join(abs, e.name);
      entries.push(norm(relative(ROOT, child)));
      if (e.isDirectory()) visit(child);
    }
  };
  visit(join(ROOT, base));
  return entries.some((e) => re.test(e));
}

const headingCache = new Map<string, { text: string; anchor: string }[]>();
function headingsOf(rel: string) {
  let h = headingCache.get(rel);
  if (!h) {
    h = headings(readFileSync(join(ROOT, rel), "utf8"));
    headingCache.set(rel, h);
  }
  return h;
}

/** What is wrong with a citation, or null. */
function problem(c: Citation): string | null {
  const expanded = c.candidates.map(expandBraces);
  const alternatives = expanded[0]!.length;
  // Each `{a,b}` alternative must exist (under one of the candidate folders).
  let target: string | undefined;
  for (let k = 0; k < alternatives; k++) {
    const found = expanded.map((alts) => alts[k]!).find(exists);
    if (!found) return `${expanded[0]![k]} does not exist`;
    target ??= found;
  }
  if (!target) return null;
  const isFile = !/[*?]/.test(target) && statSync(join(ROOT, target)).isFile();
  if (c.lineRef !== undefined && isFile) {
    const lines = readFileSync(join(ROOT, target), "utf8").split("\n").length;
    if (c.lineRef < 1 || c.lineRef > lines) return `${target} has no line ${c.lineRef}`;
  }
  if (!isFile || !target.endsWith(".md")) return null;
  const hs = headingsOf(target);
  if (c.anchor !== undefined && !hs.some((h) => h.anchor === c.anchor)) {
    return `${target} has no heading whose anchor is #${c.anchor}`;
  }
  if (c.heading !== undefined) {
    const want = words(c.heading);
    if (!hs.some((h) => words(h.text).includes(want))) return `${target} has no heading "${c.heading}"`;
  }
  if (c.section !== undefined) {
    const n = c.section;
    if (!hs.some((h) => new RegExp(`^${n.replace(/\./g, "\\.")}(\\.|\\s|$)`).test(h.text.trim()))) {
      return `${target} has no section ${n}`;
    }
  }
  return null;
}

function broken(): string[] {
  return sources().flatMap((f) =>
    citationsOf(f).flatMap((c) => {
      const p = problem(c);
      return p ? [`${c.file}:${c.line}: ${c.text.trim()} — ${p}`] : [];
    }),
  );
}

describe("citations", () => {
  it("reads the citations it should and leaves Druid's paths and URLs alone", () => {
    const cite = (file: string, text: string) =>
      citationsIn(file, { text, line: 1 }).map((c) => ({ path: c.candidates[0], anchor: c.anchor }));
    expect(cite("src/a.ts", "see `src/work/handoff.ts` and test/ops/kill.test.ts:12.")).toEqual([
      { path: "src/work/handoff.ts", anchor: undefined },
      { path: "test/ops/kill.test.ts", anchor: undefined },
    ]);
    expect(cite("README.md", "[x](docs/operations.md#the-dashboard), docs/x.md#a-b")).toEqual([
      { path: "docs/operations.md", anchor: "the-dashboard" },
      { path: "docs/x.md", anchor: "a-b" },
    ]);
    expect(cite("docs/a.md", "[b](b.md) [c](#c) [d](../src/d.ts)")).toEqual([
      { path: "docs/b.md", anchor: undefined },
      { path: "docs/a.md", anchor: "c" },
      { path: "src/d.ts", anchor: undefined },
    ]);
    expect(
      cite(
        "docs/a.md",
        "`server/src/main/java/org/x.java`, `processing/…/DataSegment.java`, `src/main/java/org/apache/druid`, " +
          "`docs/ingestion/tasks.md`, https://github.com/apache/druid/blob/master/docs/x.md, $HOME/src/x, " +
          "[y](https://example.com/src/y.ts)",
      ),
    ).toEqual([]);
    expect(cite("integrations/dagster/README.md", "`tests/test_x.py`")).toEqual([
      { path: "integrations/dagster/tests/test_x.py", anchor: undefined },
    ]);
    expect(cite("docs/a.md", "(steps/undo.ts, work/audit.ts, jobs/gone.ts)")).toMatchObject([
      { path: "src/ingest/steps/undo.ts" },
      { path: "src/work/audit.ts" },
      { path: "src/jobs/gone.ts" },
    ]);
    expect(citationsIn("src/a.ts", { text: '(architecture doc, "Exit codes")', line: 1 })).toMatchObject([
      { candidates: ["docs/architecture.md", "src/docs/architecture.md"], heading: "Exit codes" },
    ]);
    expect(expandBraces("scripts/druid/{start,stop}")).toEqual(["scripts/druid/start", "scripts/druid/stop"]);
    const sections = citationsIn("src/a.ts", { text: "RFC 9110 §15.5.6, druid-api.md §2.2; §3.2a", line: 1 });
    expect(sections.filter((c) => c.section)).toMatchObject([
      { candidates: ["src/druid-api.md", "docs/druid-api.md", "druid-api.md"], section: "2.2" },
      { candidates: ["docs/druid-api.md", "src/docs/druid-api.md"], section: "3.2a" },
    ]);
  });

  it("reads comments only, as the compiler does", () => {
    const chunks = tsComments(
      'const u = "see src/nope.ts"; const r = /a\\/\\//; // src/yes.ts\n/** docs/x.md */\n',
    );
    expect(chunks.map((c) => c.text)).toEqual(["// src/yes.ts", "/** docs/x.md */"]);
    expect(
      shellComments('echo "# src/no.sh" # src/yes.sh\n  # scripts/x.sh\nx=$' + "{#y}").map((c) => c.text),
    ).toEqual(["# src/yes.sh", "# scripts/x.sh"]);
  });

  it("makes GitHub's anchors", () => {
    expect(slug("Scale (`bench/scale.ts`)")).toBe("scale-benchscalets");
    expect(slug('How "ours" is proven')).toBe("how-ours-is-proven");
    expect(slug("3.2a The served view of one interval")).toBe("32a-the-served-view-of-one-interval");
    expect(slug("Jobs, clusters and `--new`")).toBe("jobs-clusters-and---new");
    const hs = headings("# A\n```\n# not a heading\n```\n## A\n### snake_case\n");
    expect(hs.map((h) => h.anchor)).toEqual(["a", "a-1", "snake_case"]);
  });

  it("finds every cited path, anchor and section", () => {
    expect(broken()).toEqual([]);
  });

  it("names no issue numbers and no path outside the repository", () => {
    const files = ["README.md", ...["src", "test", "docs"].flatMap((d) => walk(d, () => true))].filter(
      (f) => {
        const buf = readFileSync(join(ROOT, f));
        return !buf.subarray(0, 8000).includes(0);
      },
    );
    const hits = files.flatMap((f) =>
      readFileSync(join(ROOT, f), "utf8")
        .split("\n")
        .flatMap((l, i) =>
          /\bissue ?[0-9]+/i.test(l) || /\.\.\/shared\b|\/work\/shared\b/.test(l)
            ? [`${f}:${i + 1}: ${l.trim()}`]
            : [],
        ),
    );
    expect(hits).toEqual([]);
  });
});
