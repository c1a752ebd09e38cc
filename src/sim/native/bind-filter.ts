import { FILTER_TYPES } from "../../core/druid-filter-types.js";
import { parseInterval } from "../../core/interval.js";
import { type Binding, cannotConstruct, chained, unknownTypeId } from "./binding.js";
import type { Filter } from "./model.js";

/**
 * Binds a `DimFilter` (docs/querying/filters.md): the types the emulator evaluates, and Jackson's refusal of an
 * unknown type id with the list a real Druid 33 printed.
 */

const MISSING_COLUMN: Record<string, string> = {
  SelectorDimFilter: "dimension must not be null",
  EqualityFilter: "Invalid equality filter, column cannot be null",
  NullFilter: "Invalid null filter, column cannot be null",
  RangeFilter: "Invalid range filter, column cannot be null",
  BoundDimFilter: "dimension can not be null",
  InDimFilter: "dimension cannot be null",
  LikeDimFilter: "dimension",
  RegexDimFilter: "dimension must not be null",
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** `%` and `_` of SQL LIKE, with the pattern's escape character (`LikeDimFilter`). */
function likeRegex(pattern: string, escapeChar: string | null): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (escapeChar !== null && ch === escapeChar && i + 1 < pattern.length) {
      out += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    } else if (ch === "%") out += "[\\s\\S]*";
    else if (ch === "_") out += "[\\s\\S]";
    else out += ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`, "s");
}

export function bindFilter(f: unknown, b: Binding, pojo: string | null): Filter {
  if (!isObject(f))
    throw cannotConstruct(b, {}, "org.apache.druid.query.filter.DimFilter", "a filter must be an object");
  const cls = (name: string) => `org.apache.druid.query.filter.${name}`;
  /** The column a filter names; each filter class words its absence its own way (observed on Druid 33). */
  const column = (key: string, className: string): string => {
    const v = f[key];
    if (typeof v !== "string") throw cannotConstruct(b, f, cls(className), MISSING_COLUMN[className] ?? key);
    return v;
  };
  switch (f.type) {
    case "selector":
      return { type: "selector", dimension: column("dimension", "SelectorDimFilter"), value: text(f.value) };
    case "equals": {
      const c = column("column", "EqualityFilter");
      if (f.matchValue === undefined || f.matchValue === null)
        throw cannotConstruct(
          b,
          f,
          cls("EqualityFilter"),
          `Invalid equality filter on column [${c}], matchValue cannot be null`,
        );
      return {
        type: "equals",
        column: c,
        matchValueType: String(f.matchValueType ?? "STRING").toUpperCase(),
        matchValue: f.matchValue,
      };
    }
    case "null":
      return { type: "null", column: column("column", "NullFilter") };
    case "range":
      return {
        type: "range",
        column: column("column", "RangeFilter"),
        matchValueType: String(f.matchValueType ?? "STRING").toUpperCase(),
        lower: f.lower ?? null,
        upper: f.upper ?? null,
        lowerOpen: f.lowerOpen === true,
        upperOpen: f.upperOpen === true,
      };
    case "bound":
      return {
        type: "bound",
        dimension: column("dimension", "BoundDimFilter"),
        lower: text(f.lower),
        upper: text(f.upper),
        lowerStrict: f.lowerStrict === true,
        upperStrict: f.upperStrict === true,
        ordering:
          typeof f.ordering === "string"
            ? f.ordering
            : isObject(f.ordering)
              ? String(f.ordering.type)
              : "lexicographic",
      };
    case "in":
      return {
        type: "in",
        dimension: column("dimension", "InDimFilter"),
        values: (Array.isArray(f.values) ? f.values : []).map(text),
      };
    case "like":
      return {
        type: "like",
        dimension: column("dimension", "LikeDimFilter"),
        regex: likeRegex(String(f.pattern ?? ""), typeof f.escape === "string" ? f.escape : null),
      };
    case "regex": {
      const dimension = column("dimension", "RegexDimFilter");
      try {
        return { type: "regex", dimension, regex: new RegExp(String(f.pattern ?? "")) };
      } catch (error) {
        // Java's Pattern.compile refuses it in the constructor; the reason is worded by JavaScript's parser.
        throw cannotConstruct(b, f, cls("RegexDimFilter"), (error as Error).message);
      }
    }
    case "interval": {
      const dimension = column("dimension", "IntervalDimFilter");
      const texts = Array.isArray(f.intervals) ? f.intervals : [];
      try {
        return { type: "interval", dimension, intervals: texts.map((i) => parseInterval(String(i))) };
      } catch (error) {
        throw cannotConstruct(b, f, cls("IntervalDimFilter"), (error as Error).message);
      }
    }
    case "and":
    case "or": {
      const fields = Array.isArray(f.fields) ? f.fields : [];
      return {
        type: f.type,
        fields: fields.map((x, i) =>
          bindFilter(
            x,
            chained(
              b,
              `->${cls(f.type === "and" ? "AndDimFilter" : "OrDimFilter")}["fields"]->java.util.ArrayList[${i}]`,
            ),
            "fields",
          ),
        ),
      };
    }
    case "not":
      return {
        type: "not",
        field: bindFilter(f.field, chained(b, `->${cls("NotDimFilter")}["field"]`), "field"),
      };
    case "true":
    case "false":
      return { type: f.type };
    default:
      if (typeof f.type === "string" && FILTER_TYPES.includes(f.type)) {
        throw cannotConstruct(
          b,
          f,
          cls("DimFilter"),
          `filter type [${f.type}] is not evaluated by the segops emulator`,
        );
      }
      throw unknownTypeId(b, f, f.type, cls("DimFilter"), FILTER_TYPES, pojo);
  }
}
