import { bindError, CLASSES } from "./errors.js";
import type { Located } from "./located-json.js";

/** Where a part of a native query is being bound, and Jackson's refusals worded with that place. */

/** What binding a part needs: the body's places and the reference chain so far. */
export interface Binding {
  doc: Located;
  /** `org.apache.druid.query.timeseries.TimeseriesQuery["aggregations"]->java.util.ArrayList[0]` */
  chain: string;
}

export function chained(b: Binding, step: string): Binding {
  return { doc: b.doc, chain: `${b.chain}${step}` };
}

export function chainText(b: Binding): string {
  return b.chain === "" ? "" : ` (through reference chain: ${b.chain})`;
}

/** `Could not resolve type id` for a polymorphic field, in Jackson's words. */
export function unknownTypeId(
  b: Binding,
  o: object,
  id: unknown,
  base: string,
  known: readonly string[],
  pojoProperty: string | null,
): Error {
  if (id === undefined || id === null) {
    return bindError(
      CLASSES.typeId,
      `Could not resolve subtype of [simple type, class ${base}]: missing type id property 'type'${pojoProperty ? ` (for POJO property '${pojoProperty}')` : ""}\n ${b.doc.closeOf(o)}${chainText(b)}`,
    );
  }
  return bindError(
    CLASSES.typeId,
    `Please make sure to load all the necessary extensions and jars with type '${String(id)}' on 'druid/router' service. Could not resolve type id '${String(id)}' as a subtype of \`${base}\` known type ids = [${known.join(", ")}]${pojoProperty ? ` (for POJO property '${pojoProperty}')` : ""}\n ${b.doc.memberOf(o, "type")}${chainText(b)}`,
  );
}

/** A `@JsonCreator` refusal of `className` while building object `o`. */
export function cannotConstruct(b: Binding, o: object, className: string, problem: string): Error {
  return bindError(
    CLASSES.instantiation,
    `Cannot construct instance of \`${className}\`, problem: ${problem}\n ${b.doc.closeOf(o)}${chainText(b)}`,
  );
}
