import { describe, expect, it } from "vitest";
import {
  CAPABILITY_ROWS,
  capabilitiesFor,
  flagsFor,
  NEWEST_KNOWN_MAJOR,
  OLDEST_SUPPORTED_MAJOR,
  parseDruidVersion,
} from "../../src/druid/capabilities.js";

describe("Druid versions as /status reports them", () => {
  it.each([
    ["33.0.0", 33, 0, 0],
    ["38.0.1", 38, 0, 1],
    ["39.0.0-SNAPSHOT", 39, 0, 0],
    ["35.0", 35, 0, 0],
    ["0.23.0", 0, 23, 0],
    [" 37.1.2 ", 37, 1, 2],
  ])("reads %j as %i.%i.%i", (text, major, minor, patch) => {
    expect(parseDruidVersion(text)).toMatchObject({ major, minor, patch });
  });

  it.each([[""], ["unknown"], ["2025.01.0"], ["v33"], [33], [null], [undefined]])(
    "reads %j as no Druid release",
    (text) => {
      expect(parseDruidVersion(text)).toBeNull();
    },
  );
});

describe("the capabilities table", () => {
  it("has one row per behaviour, each citing the Druid source it follows", () => {
    const keys = CAPABILITY_ROWS.map((r) => r.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const row of CAPABILITY_ROWS) {
      expect(row.source).toMatch(/apache\/druid #\d+/);
      expect(row.since ?? row.until).toBeDefined();
    }
  });

  // Row: taskLimits on worker select strategies (apache/druid #16889), from 33 on.
  it.each([
    [32, false],
    [33, true],
    [37, true],
    [39, true],
  ])("taskLimits on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).taskLimits).toBe(expected);
  });

  // Row: disabled workers flagged instead of announced with version "" (apache/druid #19448), from 38 on.
  it.each([
    [33, false],
    [35, false],
    [37, false],
    [38, true],
    [39, true],
  ])("worker.disabled on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).workerDisabledFlag).toBe(expected);
  });

  // Rows from 34: SET statements over the request context (apache/druid #17894) and task actions of a task
  // whose lock was revoked failing at once (apache/druid #18182).
  it.each([
    [33, false],
    [34, true],
    [39, true],
  ])("SET statements and fail-fast on a revoked lock on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).sqlSetStatements).toBe(expected);
    expect(flagsFor(major).lockRevokedFailsFast).toBe(expected);
  });

  // Row: now() in native expressions (apache/druid #19386), from 38 on.
  it.each([
    [37, false],
    [38, true],
  ])("now() on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).nowExpression).toBe(expected);
  });

  // Row: compaction skipIntervals (apache/druid #19792, DataSourceCompactionConfig), from 39 on.
  it.each([
    [38, false],
    [39, true],
  ])("compaction skipIntervals on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).compactionSkipIntervals).toBe(expected);
  });

  // Row: partial load rules (apache/druid #19374, PartialLoadRule), from 38 on.
  it.each([
    [37, false],
    [38, true],
  ])("partial load rules on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).partialLoadRules).toBe(expected);
  });

  // Row: the Overlord's embedded kill (apache/druid #18028, UnusedSegmentKillerConfig), from 34 on.
  it.each([
    [33, false],
    [34, true],
  ])("embedded kill on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).embeddedKill).toBe(expected);
  });

  // Rows from 37: compaction supervisors the default and auto_compact_ task ids (apache/druid #19252, backported
  // to 37.0.0 by #19292), minor compaction (apache/druid #19059).
  it.each([
    [33, false],
    [36, false],
    [37, true],
    [39, true],
  ])("compaction supervisors and minor compaction on Druid %i: %s", (major, expected) => {
    expect(flagsFor(major).compactionSupervisors).toBe(expected);
    expect(flagsFor(major).minorCompaction).toBe(expected);
  });

  // Row: MSQ compaction (apache/druid #16291, MSQCompactionRunner), on every supported release.
  it.each([[33], [37], [39]])("MSQ compaction on Druid %i", (major) => {
    expect(flagsFor(major).msqCompaction).toBe(true);
  });
});

describe("what segops assumes for what /status said", () => {
  it("follows a known release as reported, without a warning", () => {
    const c = capabilitiesFor("37.0.0");
    expect(c).toMatchObject({ behavesAs: 37, warning: null, taskLimits: true, workerDisabledFlag: false });
    expect(c.version?.text).toBe("37.0.0");
  });

  it("gives a release newer than the newest known row the newest known behaviour, with one line saying so", () => {
    const c = capabilitiesFor("40.0.0");
    expect(c.behavesAs).toBe(NEWEST_KNOWN_MAJOR);
    expect(c).toMatchObject(flagsFor(NEWEST_KNOWN_MAJOR));
    expect(c.version?.major).toBe(40);
    expect(c.warning).toBe(
      `Druid 40.0.0 is newer than segops knows (up to ${NEWEST_KNOWN_MAJOR}): assuming Druid ${NEWEST_KNOWN_MAJOR}'s behaviour`,
    );
    expect(c.warning).not.toContain("\n");
  });

  it("assumes the newest known behaviour when the version could not be read or parsed", () => {
    const failed = capabilitiesFor(null, "connect ECONNREFUSED");
    expect(failed).toMatchObject({ version: null, behavesAs: NEWEST_KNOWN_MAJOR });
    expect(failed.warning).toContain("could not read Druid's version (connect ECONNREFUSED)");
    const odd = capabilitiesFor("2025.01.0");
    expect(odd).toMatchObject({ version: null, behavesAs: NEWEST_KNOWN_MAJOR });
    expect(odd.warning).toContain('"2025.01.0"');
  });

  it("keeps an older release's own rows and warns that it is not supported", () => {
    const c = capabilitiesFor("31.0.2");
    expect(c).toMatchObject({ behavesAs: 31, taskLimits: false, workerDisabledFlag: false });
    expect(c.warning).toContain(`older than segops supports (${OLDEST_SUPPORTED_MAJOR} and newer)`);
  });
});
