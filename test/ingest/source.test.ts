import { describe, expect, it } from "vitest";
import {
  describeSourceChange,
  fingerprintSource,
  MAX_FINGERPRINTED_URIS,
  type SourceEntry,
  type SourceProbe,
  wildcardMatches,
} from "../../src/ingest/source.js";

/** A probe over an in-memory directory tree and URI table; counts what it was asked. */
function fakeProbe(files: Record<string, SourceEntry[]>, uris: Record<string, SourceEntry> = {}) {
  const asked = { list: 0, head: 0 };
  const probe: SourceProbe = {
    listFiles: async (dir) => {
      asked.list++;
      return files[dir] ?? null;
    },
    statFile: async (path) =>
      Object.values(files)
        .flat()
        .find((e) => e.name === path) ?? null,
    head: async (uri) => {
      asked.head++;
      return uris[uri] ?? null;
    },
  };
  return { probe, asked };
}

const day = (name: string, bytes: number, stamp = "1") => ({ name, bytes, stamp });

describe("source fingerprints", () => {
  it("matches file names as Druid's WildcardFileFilter does (*, ?, case-sensitive, whole name)", () => {
    expect(wildcardMatches("events-2026-01-0?.json", "events-2026-01-08.json")).toBe(true);
    expect(wildcardMatches("events-*.json", "events-2026-01-08.json")).toBe(true);
    expect(wildcardMatches("events-*.json", "Events-2026.json")).toBe(false);
    expect(wildcardMatches("e.json", "exjson")).toBe(false);
    expect(wildcardMatches("a+b(1).json", "a+b(1).json")).toBe(true);
  });

  it("a local source's version follows the matching files' sizes and times, and only theirs", async () => {
    const source = { type: "local", baseDir: "/d", filter: "events-2026-01-08.json" };
    const before = await fingerprintSource(
      source,
      fakeProbe({ "/d": [day("events-2026-01-08.json", 1204), day("other.json", 5)] }).probe,
    );
    const otherChanged = await fingerprintSource(
      source,
      fakeProbe({ "/d": [day("events-2026-01-08.json", 1204), day("other.json", 9)] }).probe,
    );
    const corrected = await fingerprintSource(
      source,
      fakeProbe({ "/d": [day("events-2026-01-08.json", 612, "2")] }).probe,
    );
    expect(before?.origin).toBe("local");
    expect(before?.count).toBe(1);
    expect(before?.bytes).toBe(1204);
    expect(otherChanged?.version).toBe(before?.version);
    expect(corrected?.version).not.toBe(before?.version);
    expect(describeSourceChange(before ?? undefined, corrected!)).toBe(
      "events-2026-01-08.json 1,204 bytes → 612 bytes",
    );
  });

  it("a file that has not landed yet is a version of its own (the empty input), not 'cannot see'", async () => {
    const source = { type: "local", baseDir: "/d", filter: "events-2026-01-09.json" };
    const empty = await fingerprintSource(
      source,
      fakeProbe({ "/d": [day("events-2026-01-08.json", 1)] }).probe,
    );
    expect(empty).toMatchObject({ origin: "local", count: 0 });
    const landed = await fingerprintSource(
      source,
      fakeProbe({ "/d": [day("events-2026-01-09.json", 7)] }).probe,
    );
    expect(landed?.version).not.toBe(empty?.version);
    expect(describeSourceChange(empty!, landed!)).toBe("events-2026-01-09.json added");
  });

  it("skips empty files as Druid's LocalInputSource does", async () => {
    const source = { type: "local", baseDir: "/d", filter: "*.json" };
    const a = await fingerprintSource(source, fakeProbe({ "/d": [day("a.json", 3)] }).probe);
    const b = await fingerprintSource(
      source,
      fakeProbe({ "/d": [day("a.json", 3), day("b.json", 0)] }).probe,
    );
    expect(b?.version).toBe(a?.version);
  });

  it("is null where segops cannot see the input: a directory not here, a cloud source, an unanswered URI", async () => {
    expect(
      await fingerprintSource({ type: "local", baseDir: "/elsewhere", filter: "*" }, fakeProbe({}).probe),
    ).toBeNull();
    expect(await fingerprintSource({ type: "s3", uris: ["s3://b/k"] }, fakeProbe({}).probe)).toBeNull();
    expect(await fingerprintSource({ type: "http", uris: ["http://h/a"] }, fakeProbe({}).probe)).toBeNull();
    const many = Array.from({ length: MAX_FINGERPRINTED_URIS + 1 }, (_, i) => `http://h/${i}`);
    const { probe, asked } = fakeProbe({});
    expect(await fingerprintSource({ type: "http", uris: many }, probe)).toBeNull();
    expect(asked.head).toBe(0);
  });

  it("an http source's version follows its validators", async () => {
    const v1 = await fingerprintSource(
      { type: "http", uris: ["http://h/a"] },
      fakeProbe({}, { "http://h/a": { name: "http://h/a", bytes: 10, stamp: '"e1"' } }).probe,
    );
    const v2 = await fingerprintSource(
      { type: "http", uris: ["http://h/a"] },
      fakeProbe({}, { "http://h/a": { name: "http://h/a", bytes: 10, stamp: '"e2"' } }).probe,
    );
    expect(v1?.origin).toBe("http");
    expect(v2?.version).not.toBe(v1?.version);
    expect(describeSourceChange(v1!, v2!)).toBe("http://h/a rewritten");
  });
});
