// Nested JSON in the emulator (src/sim/json-value.ts, src/sim/sql-json.ts): Jackson's reading and writing, Java's
// HashMap order, the JSON input format's lines, and the nested-columns and unnest fixtures of Druid's docs run as
// MSQ ingestions with the rows a real Druid 33 gave for the same input (test/conformance/broker-sql-json-cases.ts
// holds the SQL functions themselves to a real Druid 33).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readInput } from "../../src/sim/input.js";
import {
  fromPlain,
  JsonValue,
  javaDouble,
  jsonCell,
  nestedColumnType,
  readJson,
  storedJson,
  writeJson,
} from "../../src/sim/json-value.js";
import { javaHashOrder, parseJsonPath } from "../../src/sim/sql-json.js";
import { startTestSim, type TestSim } from "../helpers/sim.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/druid-specs/sql");

describe("JSON values as Jackson reads and writes them", () => {
  it("reads the first value of a text and stops there, integers exact and other numbers doubles", () => {
    const { value, end } = readJson(' {"a":[1,2.50,"x"],"b":12345678901234567890} , {"c":1}');
    expect(end).toBe(44);
    expect(writeJson(value)).toBe('{"a":[1,2.5,"x"],"b":12345678901234567890}');
    expect(readJson("true false").value).toBe(true);
    expect(() => readJson("plain")).toThrow(/unrecognized token/);
    expect(() => readJson('{"a":1')).toThrow(/expected/);
    expect(() => readJson("")).toThrow(/no content/);
  });

  it("writes doubles as Java's Double.toString does", () => {
    expect([955, 0.1, 1000, 1e7, 1.5e300, 1e-7, 0.001, -2.5, 0].map(javaDouble)).toEqual([
      "955.0",
      "0.1",
      "1000.0",
      "1.0E7",
      "1.5E300",
      "1.0E-7",
      "0.001",
      "-2.5",
      "0.0",
    ]);
  });

  it("keeps an object's key order, also for keys JavaScript objects would reorder", () => {
    expect(writeJson(readJson('{"2":"b","1":"a","x":null}').value)).toBe('{"2":"b","1":"a","x":null}');
  });

  it("keeps a nested column's literals as themselves and anything else as tagged JSON text, and reads both back", () => {
    const cells = ["a", 7, 0.5, { x: 1 }, [1, 2], true, 1.0, 12345678901234567890n].map((v) =>
      jsonCell(new JsonValue(typeof v === "number" && v === 1 ? 1 : fromPlain(v))),
    );
    expect(cells.slice(0, 3)).toEqual(["a", 7, 0.5]);
    expect(JSON.parse(JSON.stringify(cells.slice(3)))).toEqual([
      { "$segops.nestedJson": '{"x":1}' },
      { "$segops.nestedJson": "[1,2]" },
      { "$segops.nestedJson": "true" },
      { "$segops.nestedJson": "1.0" },
      { "$segops.nestedJson": "12345678901234567890" },
    ]);
    // Read back after a round trip through persisted (JSON) state.
    const back = JSON.parse(JSON.stringify(cells)).map((c: unknown) => String(storedJson(c)));
    expect(back).toEqual(['"a"', "7", "0.5", '{"x":1}', "[1,2]", "true", "1.0", "12345678901234567890"]);
    expect(storedJson(null)).toBeNull();
    expect(storedJson('{"a":1}')?.stored).toBe(true);
  });

  it("types a json dimension by its cells as Druid 33's nested column indexer does", () => {
    const type = (...values: unknown[]) => nestedColumnType(values.map(jsonCell));
    expect(type("a", null, "b")).toBe("VARCHAR");
    expect(type(1, 2)).toBe("BIGINT");
    expect(type(1, 2.5)).toBe("DOUBLE");
    expect(type("x", 3)).toBe("VARCHAR");
    expect(type([1, 2], ["z"], [])).toBe("ARRAY");
    expect(type([1], 2)).toBe("OTHER");
    expect(type({ k: 1 }, "q")).toBe("OTHER");
    expect(type(true)).toBe("OTHER");
    expect(type(null, null)).toBe("VARCHAR");
  });

  it("orders keys as a Java HashMap of strings iterates them", () => {
    const keys = ["zeta", "alpha", "mid", "b", "aa", "product", "details", "department"];
    // A real Druid 33's JSON_OBJECT of these keys (broker-sql-json-cases.ts).
    expect(javaHashOrder(keys).map((i) => keys[i])).toEqual([
      "zeta",
      "aa",
      "b",
      "product",
      "alpha",
      "mid",
      "details",
      "department",
    ]);
  });

  it("parses JSONPaths as NestedPathFinder does, refusing one without $", () => {
    expect(parseJsonPath("$.a['b c'][2].d[-1]")).toEqual([
      { field: "a" },
      { field: "b c" },
      { index: 2 },
      { field: "d" },
      { index: -1 },
    ]);
    expect(parseJsonPath("$")).toEqual([]);
    expect(() => parseJsonPath("a.b")).toThrow("JSONPath [a.b] is invalid, it must start with '$'");
    expect(() => parseJsonPath("$.a[x]")).toThrow(/array index/);
  });
});

describe("the json input format reads a line as Druid's JsonLineReader does", () => {
  it("takes a line's first JSON value and ignores what follows it (a comma between objects)", () => {
    const input = readInput(
      { type: "inline", data: '{"a":1},\n{"a":2} trailing\nnot json\n{"a":3}' },
      { type: "json" },
    );
    expect(input?.records.map((r) => r.value)).toEqual([{ a: 1 }, { a: 2 }, null, { a: 3 }]);
  });
});

async function ingest(file: string): Promise<TestSim> {
  const s = await startTestSim({ handoffDelayMs: 0 });
  const query = readFileSync(join(FIXTURES, file), "utf8");
  const res = await s.post("/druid/v2/sql/task", { query, context: { simDurationMs: 1_000 } });
  expect(res.status).toBe(202);
  await s.advance(2_000);
  const st = (await s.get(`/druid/indexer/v1/task/${res.json.taskId}/status`)).json.status;
  expect([st.statusCode, st.errorMsg]).toEqual(["SUCCESS", null]);
  return s;
}

async function sql(s: TestSim, query: string): Promise<unknown> {
  const res = await s.post("/druid/v2/sql", {
    query,
    resultFormat: "array",
    header: true,
    sqlTypesHeader: true,
  });
  expect(res.status).toBe(200);
  return res.json;
}

describe("Druid's nested-column and unnest examples as MSQ ingestions", () => {
  it("docs--querying--nested-columns--L353.sql: PARSE_JSON of text columns makes nested columns", async () => {
    const s = await ingest("docs--querying--nested-columns--L353.sql");
    // What a real Druid 33 answered for PARSE_JSON of the same two strings: Jackson's text, 955.00 a double.
    expect(
      await sql(
        s,
        `SELECT "product", "details_parsed", "shipTo_parsed", JSON_VALUE("shipTo_parsed", '$.address.city'), JSON_VALUE("details_parsed", '$.price' RETURNING DOUBLE) FROM deserialized_example`,
      ),
    ).toEqual([
      ["product", "details_parsed", "shipTo_parsed", "EXPR$3", "EXPR$4"],
      ["VARCHAR", "OTHER", "OTHER", "VARCHAR", "DOUBLE"],
      [
        "Bike",
        '{"color":"ivory","price":955.0}',
        '{"firstName":"Henry","lastName":"Wuckert","address":{"street":"5643 Jan Walk","city":"Lake Bridget","state":"HI","country":"ME","postalCode":"70204-2939"},"phoneNumbers":[{"type":"primary","number":"593.475.0449 x86733"},{"type":"secondary","number":"638-372-1210"}]}',
        "Lake Bridget",
        955,
      ],
    ]);
  });

  it("docs--querying--nested-columns--L312.sql over inline rows: JSON functions of COMPLEX<json> input columns", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const row = {
      time: "2022-06-13T10:10:35Z",
      product: "Bike",
      department: "Sports",
      shipTo: {
        firstName: "Henry",
        lastName: "Wuckert",
        address: { street: "5643 Jan Walk", city: "Lake Bridget" },
      },
      details: { color: "ivory", price: 955.5 },
    };
    // The fixture reads an http source the emulator does not fetch; the same query over the row inline.
    const query = readFileSync(join(FIXTURES, "docs--querying--nested-columns--L312.sql"), "utf8").replace(
      /'\{"type":"http"[^']*'/,
      `'${JSON.stringify({ type: "inline", data: JSON.stringify(row) })}'`,
    );
    expect(query).toContain('"type":"inline"');
    const res = await s.post("/druid/v2/sql/task", { query, context: { simDurationMs: 1_000 } });
    expect(res.status).toBe(202);
    await s.advance(2_000);
    const st = (await s.get(`/druid/indexer/v1/task/${res.json.taskId}/status`)).json.status;
    expect(st.statusCode).toBe("SUCCESS");
    // JSON_OBJECT's keys come in the HashMap order a real Druid 33 gave for these three (broker-sql-json-cases.ts).
    expect(await sql(s, "SELECT * FROM msq_nested_data_transform_example")).toEqual([
      ["__time", "firstName", "lastName", "address", "productDetails"],
      ["TIMESTAMP", "VARCHAR", "VARCHAR", "OTHER", "OTHER"],
      [
        "2022-06-13T10:10:35.000Z",
        "Henry",
        "Wuckert",
        '{"street":"5643 Jan Walk","city":"Lake Bridget"}',
        '{"product":"Bike","details":{"color":"ivory","price":955.5},"department":"Sports"}',
      ],
    ]);
  });

  it("docs--tutorials--tutorial-unnest-arrays--L61.sql: comma-separated objects are seven rows", async () => {
    const s = await ingest("docs--tutorials--tutorial-unnest-arrays--L61.sql");
    // The rows a real Druid 33 ingested from the same inline data with the json input format (a native batch
    // task, maxParseExceptions 0: processed 7, unparseable 0).
    expect(await sql(s, "SELECT __time, dim1, m1, m2 FROM nested_data ORDER BY __time")).toEqual([
      ["__time", "dim1", "m1", "m2"],
      ["TIMESTAMP", "VARCHAR", "FLOAT", "DOUBLE"],
      ["2000-01-01T00:00:00.000Z", "", 1, 1],
      ["2000-01-02T00:00:00.000Z", "10.1", 2, 2],
      ["2001-01-01T00:00:00.000Z", "1", 4, 4],
      ["2001-01-02T00:00:00.000Z", "def", 5, 5],
      ["2001-01-02T00:00:00.000Z", "def", 5, 5],
      ["2001-01-03T00:00:00.000Z", "abc", 6, 6],
      ["2001-01-03T00:00:00.000Z", "abc", 6, 6],
    ]);
  });
});
