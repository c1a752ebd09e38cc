/**
 * What segops says about an `index_hadoop` spec, wherever it meets one (validate, render, doctor): Druid 37
 * removed Hadoop ingestion (apache/druid #19109) and segops never ran it, and `segops convert` writes the
 * `index_parallel` template that replaces it (docs/convert.md).
 */

/** The Druid release without Hadoop ingestion and the parser/ParseSpec (apache/druid #19109, #19173). */
export const HADOOP_REMOVED_IN = 37;

export function hadoopExitMessage(file = "<spec>"): string {
  return `index_hadoop is not a task type segops runs (index_parallel, index, compact and SQL are), and Druid ${HADOOP_REMOVED_IN} removed Hadoop ingestion (apache/druid #19109): convert it with \`segops convert ${file} -o <template>.json\`, which writes an index_parallel template`;
}
