// Nested columns (`COMPLEX<json>`) and the SQL JSON functions over Broker SQL: every query below was run on a real
// Druid 33.0.0 and the expectation is what it answered — names, native and SQL types, rows (resultFormat "array"
// with both type headers), or the refusal. Registered in broker-sql-cases.ts, so they run wherever the Broker SQL
// cases run: on a live Druid (broker-sql.conformance.ts) and on the emulator (test/sim/broker-sql-conformance.test.ts).
// One datasource with `json` and `auto` dimensions serves them.
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  eventually,
  freshId,
  ingestServed,
  json,
  writeInput,
} from "./support.js";

/** `obj` holds objects (one row none, one `{}`); `sval` a string, a number, an object and JSON text as a string. */
const ROWS = [
  {
    time: "2026-03-01T00:00:00Z",
    name: "a",
    obj: { x: 1, y: "hello", z: { w: [1, 2, 3], v: null }, d: 1.5, b: true },
    sval: "plain",
    s: "a",
    n: 1,
    d: 1.5,
    mix: "x",
    list: [1, 2],
    au: "q",
    au2: 1,
    flag: true,
  },
  {
    time: "2026-03-01T01:00:00Z",
    name: "b",
    obj: { x: 2, y: "bye", arr: [{ q: 1 }, { q: 2 }] },
    sval: 12,
    s: "b",
    n: 2,
    d: 2,
    mix: 3,
    list: ["z"],
    au: { k: 1 },
    au2: 2,
    flag: false,
  },
  { time: "2026-03-01T02:00:00Z", name: "c", sval: { nested: { deep: "yes" } } },
  {
    time: "2026-03-01T03:00:00Z",
    name: "d",
    obj: {},
    sval: '{"a":1}',
    s: "d",
    n: -5,
    d: 0.25,
    mix: 7.5,
    list: [],
  },
];
const INTERVAL = "2026-03-01T00:00:00.000Z/2026-03-02T00:00:00.000Z";

function spec(id: string, dataSource: string, baseDir: string): Record<string, unknown> {
  return {
    type: "index_parallel",
    id,
    spec: {
      dataSchema: {
        dataSource,
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: {
          dimensions: [
            "name",
            ...["obj", "sval", "s", "n", "d", "mix", "list", "none", "flag"].map((name) => ({
              type: "json",
              name,
            })),
            ...["au", "au2"].map((name) => ({ type: "auto", name })),
          ],
        },
        granularitySpec: { segmentGranularity: "day", queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir, filter: "*.json" },
        inputFormat: { type: "json" },
      },
      tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
    },
  };
}

const JSON_TYPES = ["COMPLEX<json>", "OTHER"];

/** What a real Druid 33 answered for JSON_PATHS of a 14-path object (below). */
const ZZ_PATHS = '["$.m","$.n","$.o","$.zz.k","$.p","$.q","$.r","$.s","$.t","$.u","$.v","$.w","$.x","$.y"]';

export function brokerSqlJsonSuite(target: ConformanceTarget): void {
  const post = (path: string, body: unknown) => call(target, "POST", path, body);
  const ds = freshId("json_nested");
  const q = (text: string) => text.replaceAll("$ds", `"${ds}"`);

  async function sql(query: string): Promise<{ status: number; body: unknown }> {
    const ex = await post("/druid/v2/sql", {
      query: q(query),
      resultFormat: "array",
      header: true,
      typesHeader: true,
      sqlTypesHeader: true,
    });
    return { status: ex.status, body: json(ex) };
  }

  /** The answer: column names, native types, SQL types, then the rows. */
  async function answer(query: string): Promise<unknown> {
    const r = await sql(query);
    if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** Each column's native and SQL type, as [native, sql] pairs. */
  const typed = (...pairs: string[][]) => [pairs.map((p) => p[0]), pairs.map((p) => p[1])];
  const V = ["STRING", "VARCHAR"];
  const J = JSON_TYPES;
  const A = ["ARRAY<STRING>", "ARRAY"];

  const id = freshId("json_nested_load");

  describe(`Broker SQL over nested JSON columns: ${target.name}`, () => {
    beforeAll(async () => {
      const dir = writeInput(target.dataDir(), { "rows.json": ROWS });
      await ingestServed(target, spec(id, ds, dir), ds, INTERVAL);
      await eventually(target, `SQL to see ${ds}'s rows`, async () => {
        const r = await sql("SELECT COUNT(*) FROM $ds");
        return r.status === 200 && JSON.stringify((r.body as unknown[])[3]) === "[4]" ? true : undefined;
      });
    });

    it("returns a nested column as its JSON text, typed COMPLEX<json> / OTHER", async () => {
      expect(await answer("SELECT name, obj, sval FROM $ds")).toEqual([
        ["name", "obj", "sval"],
        ...typed(V, J, J),
        ["a", '{"x":1,"y":"hello","z":{"w":[1,2,3],"v":null},"d":1.5,"b":true}', '"plain"'],
        ["b", '{"x":2,"y":"bye","arr":[{"q":1},{"q":2}]}', "12"],
        ["c", null, '{"nested":{"deep":"yes"}}'],
        ["d", "{}", '"{\\"a\\":1}"'],
      ]);
      // A nested column groups and counts like any other; groups come in the order of their JSON text.
      expect(await answer("SELECT obj, COUNT(*) FROM $ds GROUP BY 1")).toEqual([
        ["obj", "EXPR$1"],
        ...typed(J, ["LONG", "BIGINT"]),
        [null, 1],
        ['{"x":1,"y":"hello","z":{"w":[1,2,3],"v":null},"d":1.5,"b":true}', 1],
        ['{"x":2,"y":"bye","arr":[{"q":1},{"q":2}]}', 1],
        ["{}", 1],
      ]);
    });

    it("types a json dimension by its values: text VARCHAR, whole numbers BIGINT, numbers DOUBLE, arrays ARRAY", async () => {
      expect(await answer('SELECT name, s, n, d, mix, list, "none", flag FROM $ds')).toEqual([
        ["name", "s", "n", "d", "mix", "list", "none", "flag"],
        ...typed(V, V, ["LONG", "BIGINT"], ["DOUBLE", "DOUBLE"], V, A, V, ["LONG", "BIGINT"]),
        ["a", "a", 1, 1.5, "x", "[1,2]", null, 1],
        ["b", "b", 2, 2, "3", '["z"]', null, 0],
        ["c", null, null, null, null, null, null, null],
        ["d", "d", -5, 0.25, "7.5", "[]", null, null],
      ]);
      // `auto` dimensions are the same nested columns.
      expect(await answer("SELECT name, au, au2 FROM $ds")).toEqual([
        ["name", "au", "au2"],
        ...typed(V, J, ["LONG", "BIGINT"]),
        ["a", '"q"', 1],
        ["b", '{"k":1}', 2],
        ["c", null, null],
        ["d", null, null],
      ]);
    });

    it("JSON_VALUE: literals as VARCHAR (booleans 1/0, arrays of literals as text), typed by RETURNING", async () => {
      expect(
        await answer(
          "SELECT name, JSON_VALUE(obj, '$.x'), JSON_VALUE(obj, '$.y'), JSON_VALUE(obj, '$.d'), JSON_VALUE(obj, '$.b'), JSON_VALUE(obj, '$.z'), JSON_VALUE(obj, '$.z.w'), JSON_VALUE(obj, '$.z.w[1]'), JSON_VALUE(obj, '$.missing') FROM $ds",
        ),
      ).toEqual([
        ["name", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5", "EXPR$6", "EXPR$7", "EXPR$8"],
        ...typed(V, V, V, V, V, V, V, V, V),
        ["a", "1", "hello", "1.5", "1", null, '["1","2","3"]', "2", null],
        ["b", "2", "bye", null, null, null, null, null, null],
        ["c", null, null, null, null, null, null, null, null],
        ["d", null, null, null, null, null, null, null, null],
      ]);
      expect(
        await answer(
          "SELECT name, JSON_VALUE(obj, '$.x' RETURNING BIGINT), JSON_VALUE(obj, '$.y' RETURNING BIGINT), JSON_VALUE(obj, '$.d' RETURNING BIGINT), JSON_VALUE(obj, '$.d' RETURNING DOUBLE), JSON_VALUE(obj, '$.x' RETURNING DOUBLE), JSON_VALUE(obj, '$.b' RETURNING BIGINT), JSON_VALUE(obj, '$.x' RETURNING VARCHAR) FROM $ds",
        ),
      ).toEqual([
        ["name", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5", "EXPR$6", "EXPR$7"],
        ...typed(
          V,
          ["LONG", "BIGINT"],
          ["LONG", "BIGINT"],
          ["LONG", "BIGINT"],
          ["DOUBLE", "DOUBLE"],
          ["DOUBLE", "DOUBLE"],
          ["LONG", "BIGINT"],
          V,
        ),
        ["a", 1, null, 1, 1.5, 1, 1, "1"],
        ["b", 2, null, null, null, 2, null, "2"],
        ["c", null, null, null, null, null, null, null],
        ["d", null, null, null, null, null, null, null],
      ]);
      // Grouping on an extracted value.
      expect(await answer("SELECT JSON_VALUE(obj, '$.x') AS x, COUNT(*) FROM $ds GROUP BY 1")).toEqual([
        ["x", "EXPR$1"],
        ...typed(V, ["LONG", "BIGINT"]),
        [null, 2],
        ["1", 1],
        ["2", 1],
      ]);
      // Over a computed value: a negative index counts from the end, an array of literals cannot be VARCHAR.
      expect(
        await answer(
          `SELECT JSON_VALUE(PARSE_JSON('{"b":true}'), '$.b'), JSON_VALUE(PARSE_JSON('{"d":1.0}'), '$.d'), JSON_VALUE(PARSE_JSON('{"w":[1,2,3]}'), '$.w[-1]'), JSON_VALUE(PARSE_JSON('{"a b":1}'), '$[''a b'']'), JSON_VALUE(PARSE_JSON('[7,8]'), '$[1]')`,
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4"],
        ...typed(V, V, V, V, V),
        ["1", "1.0", "3", "1", "8"],
      ]);
      const arr = await sql(`SELECT JSON_VALUE(PARSE_JSON('{"w":[1,2,3]}'), '$.w')`);
      expect([arr.status, (arr.body as { errorMessage: string }).errorMessage]).toEqual([
        500,
        "Invalid type, cannot cast [ARRAY<LONG>] to [STRING]",
      ]);
    });

    it("JSON_QUERY, JSON_KEYS and JSON_PATHS", async () => {
      expect(
        await answer(
          "SELECT name, JSON_QUERY(obj, '$.z'), JSON_QUERY(obj, '$.x'), JSON_QUERY(obj, '$.y'), JSON_QUERY(obj, '$'), JSON_QUERY(obj, '$.arr[1]'), JSON_QUERY(obj, '$.missing') FROM $ds",
        ),
      ).toEqual([
        ["name", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5", "EXPR$6"],
        ...typed(V, J, J, J, J, J, J),
        [
          "a",
          '{"w":[1,2,3],"v":null}',
          "1",
          '"hello"',
          '{"x":1,"y":"hello","z":{"w":[1,2,3],"v":null},"d":1.5,"b":true}',
          null,
          null,
        ],
        ["b", null, "2", '"bye"', '{"x":2,"y":"bye","arr":[{"q":1},{"q":2}]}', '{"q":2}', null],
        ["c", null, null, null, null, null, null],
        ["d", null, null, null, "{}", null, null],
      ]);
      // Keys in the object's order; JSON_PATHS of a literal (or of null) is `$`.
      expect(
        await answer(
          "SELECT name, JSON_KEYS(obj, '$'), JSON_KEYS(obj, '$.z'), JSON_KEYS(obj, '$.x'), JSON_PATHS(sval), JSON_KEYS(sval, '$') FROM $ds",
        ),
      ).toEqual([
        ["name", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5"],
        ...typed(V, A, A, A, A, A),
        ["a", '["x","y","z","d","b"]', '["w","v"]', null, '["$"]', null],
        ["b", '["x","y","arr"]', null, null, '["$"]', null],
        ["c", null, null, null, '["$.nested.deep"]', '["nested"]'],
        ["d", "[]", null, null, '["$"]', null],
      ]);
      // JSON_PATHS come in the order of Druid's HashSet of path-part lists; an array of literals is one path.
      expect(await answer("SELECT name, JSON_PATHS(obj), JSON_VALUE(name, '$.x') FROM $ds")).toEqual([
        ["name", "EXPR$1", "EXPR$2"],
        ...typed(V, A, V),
        ["a", '["$.b","$.d","$.x","$.y","$.z.v","$.z.w"]', null],
        ["b", '["$.arr[1].q","$.x","$.y","$.arr[0].q"]', null],
        ["c", '["$"]', null],
        ["d", "[]", null],
      ]);
      expect(
        await answer(
          `SELECT JSON_PATHS(PARSE_JSON('{"a":{"b":{"c":1},"d":2},"e":3,"f":[{"g":{"h":1}}]}')), JSON_KEYS(PARSE_JSON('{"x":2,"arr":[{"q":1},{"q":2}]}'), '$.arr'), JSON_PATHS(PARSE_JSON('[1,[2]]')), JSON_PATHS(PARSE_JSON('5')), JSON_PATHS(PARSE_JSON('{"a":[]}')), JSON_PATHS(PARSE_JSON('[{"a":1},{"b":{"c":2}}, 3]')), JSON_PATHS(PARSE_JSON('[1,2]'))`,
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5", "EXPR$6"],
        ...typed(A, A, A, A, A, A, A),
        [
          '["$.a.b.c","$.e","$.a.d","$.f[0].g.h"]',
          '["0","1"]',
          '["$[0]","$[1]"]',
          '["$"]',
          '["$.a"]',
          '["$[2]","$[1].b.c","$[0].a"]',
          '["$"]',
        ],
      ]);
      // Fourteen paths: the set has grown to 32 buckets.
      expect(
        await answer(
          `SELECT JSON_PATHS(PARSE_JSON('{"m":1,"n":2,"o":3,"p":4,"q":5,"r":6,"s":7,"t":8,"u":9,"v":10,"w":11,"x":12,"y":13,"zz":{"k":[1]}}'))`,
        ),
      ).toEqual([["EXPR$0"], ...typed(A), [ZZ_PATHS]]);
    });

    it("PARSE_JSON, TRY_PARSE_JSON and TO_JSON_STRING: Jackson's numbers and refusals", async () => {
      expect(
        await answer(
          `SELECT PARSE_JSON('{"p":955.00,"i":12345678901234567890,"e":1e3,"s":"x","n":null,"t":true,"a":[1,2.5,"q"],"f":0.1,"big":1.5e300,"sm":1e-7,"l":9007199254740993}') AS j, PARSE_JSON('12') AS n, PARSE_JSON('"q"') AS q, PARSE_JSON(' {"a":1} ') AS sp, PARSE_JSON('[1, {"a" : 2}]') AS arr`,
        ),
      ).toEqual([
        ["j", "n", "q", "sp", "arr"],
        ...typed(J, J, J, J, J),
        [
          '{"p":955.0,"i":12345678901234567890,"e":1000.0,"s":"x","n":null,"t":true,"a":[1,2.5,"q"],"f":0.1,"big":1.5E300,"sm":1.0E-7,"l":9007199254740993}',
          "12",
          '"q"',
          '{"a":1}',
          '[1,{"a":2}]',
        ],
      ]);
      const bad = await sql("SELECT PARSE_JSON('{bad')");
      expect([bad.status, bad.body]).toEqual([
        500,
        {
          error: "druidException",
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "Function[parse_json] bad string input [{bad]",
          context: {},
        },
      ]);
      expect(
        await answer("SELECT TRY_PARSE_JSON('{bad'), TRY_PARSE_JSON('plain'), TRY_PARSE_JSON('[1,2]')"),
      ).toEqual([["EXPR$0", "EXPR$1", "EXPR$2"], ...typed(J, J, J), [null, null, "[1,2]"]]);
      expect(
        await answer(
          "SELECT TO_JSON_STRING(obj), TO_JSON_STRING(name), TO_JSON_STRING(sval), TO_JSON_STRING(1), TO_JSON_STRING(1.5), TO_JSON_STRING(__time) FROM $ds LIMIT 2",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5"],
        ...typed(V, V, V, V, V, V),
        [
          '{"x":1,"y":"hello","z":{"w":[1,2,3],"v":null},"d":1.5,"b":true}',
          '"a"',
          '"plain"',
          "1",
          "1.5",
          "1772323200000",
        ],
        ['{"x":2,"y":"bye","arr":[{"q":1},{"q":2}]}', '"b"', "12", "1", "1.5", "1772326800000"],
      ]);
    });

    it("JSON_OBJECT (both syntaxes; keys in Java HashMap order) and JSON_MERGE", async () => {
      expect(
        await answer(
          `SELECT JSON_OBJECT('product':'p','details':PARSE_JSON('{"a":1}'), 'department':'d') AS o, JSON_OBJECT(KEY 'a' VALUE 1, KEY 'c' VALUE 2.5) AS k, JSON_OBJECT('x': JSON_OBJECT('y': 1)) AS n`,
        ),
      ).toEqual([
        ["o", "k", "n"],
        ...typed(J, J, J),
        ['{"product":"p","details":{"a":1},"department":"d"}', '{"a":1,"c":2.5}', '{"x":{"y":1}}'],
      ]);
      expect(
        await answer(
          "SELECT JSON_OBJECT('zeta':1,'alpha':2,'mid':3,'b':4,'aa':5,'product':6,'details':7,'department':8) AS o, JSON_OBJECT('a': 1, 'a': 2)",
        ),
      ).toEqual([
        ["o", "EXPR$1"],
        ...typed(J, J),
        ['{"zeta":1,"aa":5,"b":4,"product":6,"alpha":2,"mid":3,"details":7,"department":8}', '{"a":2}'],
      ]);
      // A time is its epoch millis, a boolean 1.
      expect(
        await answer("SELECT JSON_OBJECT('t': __time, 'n': name, 'b': name = 'a') FROM $ds LIMIT 1"),
      ).toEqual([["EXPR$0"], ...typed(J), ['{"b":1,"t":1772323200000,"n":"a"}']]);
      // An untyped NULL among the values: Calcite casts every value to VARCHAR.
      expect(
        await answer(
          "SELECT JSON_OBJECT('a': 1, 'b': NULL, 'c': __time, 'd': 'x', 'e': 2.5e0) FROM $ds LIMIT 1",
        ),
      ).toEqual([
        ["EXPR$0"],
        ...typed(J),
        ['{"a":"1","b":null,"c":"2026-03-01 00:00:00","d":"x","e":"2.5"}'],
      ]);
      expect(await answer(`SELECT JSON_MERGE(PARSE_JSON('{"a":1,"b":2}'), '{"b":3,"c":4}')`)).toEqual([
        ["EXPR$0"],
        ...typed(J),
        ['{"a":1,"b":3,"c":4}'],
      ]);
    });

    it("reads JSONPaths as Druid 33 does, refusing a malformed one", async () => {
      const refused = async (path: string) => {
        const r = await sql(`SELECT JSON_VALUE(obj, '${path}') FROM $ds`);
        return [r.status, (r.body as { errorMessage: string }).errorMessage];
      };
      expect(await refused("x")).toEqual([400, "JSONPath [x] is invalid, it must start with '$'"]);
      expect(await refused("$..x")).toEqual([
        400,
        "jq path [$..x] is invalid, path parts separated by '.' must not be empty",
      ]);
      expect(await refused("$.a[x]")).toEqual([
        400,
        "JSONPath [$.a[x]] is invalid, array specifier [x] should be a number, it was not.  Use ' if this value was meant to be a field name",
      ]);
      // A trailing `.` ends the path: `$.` is the root.
      expect(
        await answer(
          "SELECT JSON_KEYS(obj, '$.'), JSON_VALUE(obj, '$.x.'), JSON_VALUE(obj, '$[''x'']'), JSON_VALUE(obj, '$.z[''w''][0]') FROM $ds LIMIT 1",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"],
        ...typed(A, V, V, V),
        ['["x","y","z","d","b"]', "1", "1", "1"],
      ]);
    });
  });
}
