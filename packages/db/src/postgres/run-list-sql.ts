import type { UsageQuery } from "@promptrun/core";
import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { promptVersions, runs } from "../schema/postgres.ts";

/**
 * A metadata filter on the `json` column: the key's value is the string, or an array holding it
 * (docs/PRODUCT-RULES.md "Listing runs"). The CASE keeps json_array_elements off non-arrays.
 */
export const postgresMetadataMatch = (metadata: AnyColumn, key: string, value: string): SQL => sql`(case
  json_typeof(${metadata} -> ${key}::text)
  when 'string' then (${metadata} ->> ${key}::text) = ${value}::text
  when 'array' then exists (select 1 from json_array_elements(${metadata} -> ${key}::text) as e
    where json_typeof(e) = 'string' and (e #>> '{}') = ${value}::text)
  else false end)`;

const groupKey = (groupBy: UsageQuery["groupBy"]): SQL => {
  switch (groupBy) {
    case "day":
      return sql`to_char(${runs.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;
    case "prompt":
      return sql`${runs.promptSlug}`;
    case "model":
      return sql`(${promptVersions.definition} ->> 'model')`;
    case "environment":
      return sql`${runs.environment}`;
  }
};

/** Sum of a number inside the json column (NULL rows add nothing). */
const jsonSum = (column: AnyColumn, path: string): SQL =>
  sql`coalesce(sum((${column} #>> ${`{${path}}`}::text[])::double precision), 0)`;

const unpriced = sql`${runs.cost} is null or (${runs.cost} #>> '{success,priced}') = 'false'
  or (${runs.cost} #>> '{retries,priced}') = 'false'`;

/** The usage GROUP BY over the tenant's ended runs created in [from, to). */
export const postgresUsageQuery = (tenantId: string, query: UsageQuery): SQL => {
  const key = groupKey(query.groupBy);
  return sql`select ${key} as key, count(*)::int as runs,
    count(*) filter (where ${runs.status} = 'completed')::int as completed,
    count(*) filter (where ${runs.status} = 'failed')::int as failed,
    count(*) filter (where ${unpriced})::int as unpriced,
    ${jsonSum(runs.tokenUsage, "input")} as input, ${jsonSum(runs.tokenUsage, "inputCached")} as input_cached,
    ${jsonSum(runs.tokenUsage, "output")} as output, ${jsonSum(runs.tokenUsage, "reasoning")} as reasoning,
    ${jsonSum(runs.tokenUsage, "total")} as total_tokens,
    ${jsonSum(runs.cost, "success,total")} as cost_success, ${jsonSum(runs.cost, "retries,total")} as cost_retries,
    ${jsonSum(runs.cost, "total")} as cost_total
  from ${runs} join ${promptVersions} on ${promptVersions.id} = ${runs.promptVersionId}
  where ${runs.tenantId} = ${tenantId} and ${runs.status} in ('completed', 'failed')
    and ${runs.createdAt} >= ${query.from.toISOString()}::timestamptz and ${runs.createdAt} < ${query.to.toISOString()}::timestamptz
    ${query.environment === undefined ? sql`` : sql`and ${runs.environment} = ${query.environment}`}
    ${query.slug === undefined ? sql`` : sql`and ${runs.promptSlug} = ${query.slug}`}
  group by 1 order by 1`;
};
