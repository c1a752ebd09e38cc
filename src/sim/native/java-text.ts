import { AGGREGATOR_FACTORIES, type Aggregator, type Filter, type PostAggregator } from "./model.js";

/**
 * Aggregators and post-aggregators as their Java `toString` prints them, for the messages that list them (a topN
 * whose metric names neither: "Must have an AggregatorFactory or PostAggregator for metric[…], gave[[…]] and
 * [[…]]", observed on a real Druid 33). A filter inside a filtered aggregator is printed for the simple kinds only.
 */

const OPS: Record<string, string> = {
  "+": "PLUS",
  "-": "MINUS",
  "*": "MULT",
  "/": "DIV",
  quotient: "QUOTIENT",
  pow: "POW",
};

function filterText(f: Filter): string {
  if (f.type === "true" || f.type === "false") return f.type.toUpperCase();
  if (f.type === "selector") return `${f.dimension} = ${f.value}`;
  return JSON.stringify(f);
}

export function aggregatorText(a: Aggregator): string {
  if (a.kind === "count") return `CountAggregatorFactory{name='${a.name}'}`;
  if (a.kind === "filtered")
    return `FilteredAggregatorFactory{delegate=${aggregatorText(a.aggregator)}, dimFilter=${filterText(a.filter)}, name='${a.ownName}'}`;
  return `${AGGREGATOR_FACTORIES[a.kind]}{fieldName='${a.fieldName}', expression='null', name='${a.name}'}`;
}

export function postAggregatorText(p: PostAggregator): string {
  switch (p.type) {
    case "arithmetic":
      return `ArithmeticPostAggregator{name='${p.name}', fnName='${p.fn}', fields=[${p.fields.map(postAggregatorText).join(", ")}], op=${OPS[p.fn]}}`;
    case "constant":
      return `ConstantPostAggregator{name='${p.name}', constantValue=${p.value}}`;
    default:
      return `${p.type === "fieldAccess" ? "FieldAccessPostAggregator" : "FinalizingFieldAccessPostAggregator"}{name='${p.name}', fieldName='${p.fieldName}'}`;
  }
}
