import type { UsageQuery } from "@promptrun/core";
import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { promptVersions, runs } from "../schema/sqlite.ts";

/**
 * A metadata filter on SQLite's JSON text: the key's value is the string, or an array holding it
 * (docs/PRODUCT-RULES.md "Listing runs"). Key and value are bound parameters, never path text.
 */
export const sqliteMetadataMatch = (metadata: AnyColumn, key: string, value: string): SQL => sql`exists (
  select 1 from json_each(${metadata}) as m where m.key = ${key} and (
    (m.type = 'text' and m.value = ${value})
    or (m.type = 'array' and exists (select 1 from json_each(m.value) as e where e.type = 'text' and e.value = ${value}))))`;

const groupKey = (groupBy: UsageQuery["groupBy"]): SQL => {
  switch (groupBy) {
    case "day":
      return sql`strftime('%Y-%m-%d', ${runs.createdAt} / 1000, 'unixepoch')`;
    case "prompt":
      return sql`${runs.promptSlug}`;
    case "model":
      return sql`json_extract(${promptVersions.definition}, '$.model')`;
    case "environment":
      return sql`${runs.environment}`;
  }
};

/** Sum of a number inside the JSON text column (json_extract reads it; NULL rows add nothing). */
const jsonSum = (column: AnyColumn, path: string): SQL =>
  sql`coalesce(sum(json_extract(${column}, ${path})), 0)`;

/** The usage GROUP BY over the tenant's ended runs created in [from, to). */
export const sqliteUsageQuery = (tenantId: string, query: UsageQuery): SQL => {
  const key = groupKey(query.groupBy);
  return sql`select ${key} as key, count(*) as runs,
    sum(${runs.status} = 'completed') as completed, sum(${runs.status} = 'failed') as failed,
    sum(${runs.cost} is null or json_extract(${runs.cost}, '$.success.priced') = 0
      or json_extract(${runs.cost}, '$.retries.priced') = 0) as unpriced,
    ${jsonSum(runs.tokenUsage, "$.input")} as input, ${jsonSum(runs.tokenUsage, "$.inputCached")} as input_cached,
    ${jsonSum(runs.tokenUsage, "$.output")} as output, ${jsonSum(runs.tokenUsage, "$.reasoning")} as reasoning,
    ${jsonSum(runs.tokenUsage, "$.total")} as total_tokens,
    ${jsonSum(runs.cost, "$.success.total")} as cost_success, ${jsonSum(runs.cost, "$.retries.total")} as cost_retries,
    ${jsonSum(runs.cost, "$.total")} as cost_total
  from ${runs} join ${promptVersions} on ${promptVersions.id} = ${runs.promptVersionId}
  where ${runs.tenantId} = ${tenantId} and ${runs.status} in ('completed', 'failed')
    and ${runs.createdAt} >= ${query.from.getTime()} and ${runs.createdAt} < ${query.to.getTime()}
    ${query.environment === undefined ? sql`` : sql`and ${runs.environment} = ${query.environment}`}
    ${query.slug === undefined ? sql`` : sql`and ${runs.promptSlug} = ${query.slug}`}
  group by key order by key`;
};
