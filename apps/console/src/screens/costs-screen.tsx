import type { UsageGroupBy, UsageItem, UsageResponse } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { Link, useSearchParams } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { formatCount, formatUsd } from "../components/figures.ts";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { UsageChart } from "../components/usage-chart.tsx";
import { UsageTable } from "./costs-table.tsx";
import { RANGE_DAYS, type RangeDays, rangeDaysOf, rangeOf } from "./usage-range.ts";
import "./costs.css";

interface Group {
  groupBy: UsageGroupBy;
  title: string;
  /** "per day (UTC)": the end of "Cost and tokens …" and "Usage …". */
  per: string;
  keyLabel: string;
}

const GROUPS: Group[] = [
  { groupBy: "day", title: "Per day", per: "per day (UTC)", keyLabel: "Day (UTC)" },
  { groupBy: "prompt", title: "Per prompt", per: "per prompt", keyLabel: "Prompt" },
  { groupBy: "model", title: "Per model", per: "per model", keyLabel: "Model" },
  { groupBy: "environment", title: "Per environment", per: "per environment", keyLabel: "Environment" },
];

const useUsage = (groupBy: UsageGroupBy, from: string, to: string) =>
  useQuery({
    queryKey: ["usage", groupBy, from, to],
    queryFn: () => rest<UsageResponse>(`/usage?${new URLSearchParams({ groupBy, from, to })}`),
  });

/** The chart's series: every day of the range for `day` (days without runs at 0), else the API's groups. */
function seriesOf(groupBy: UsageGroupBy, items: UsageItem[], days: string[]) {
  const keys = groupBy === "day" ? days : items.map((item) => item.key);
  const byKey = new Map(items.map((item) => [item.key, item]));
  return {
    labels: keys,
    cost: keys.map((key) => byKey.get(key)?.cost.total ?? 0),
    tokens: keys.map((key) => byKey.get(key)?.tokenUsage.total ?? 0),
  };
}

function UsageGroup(props: Group & { from: string; to: string; days: string[] }) {
  const { groupBy, title, per, keyLabel, from, to, days } = props;
  const usage = useUsage(groupBy, from, to);
  const series = useMemo(() => seriesOf(groupBy, usage.data?.items ?? [], days), [groupBy, usage.data, days]);
  const headingId = `usage-${groupBy}`;
  return (
    <section aria-labelledby={headingId} className="panel usage-group">
      <h2 id={headingId}>{title}</h2>
      {usage.isError ? <ErrorNotice error={usage.error} /> : null}
      {usage.isPending ? <p className="loading">Loading…</p> : null}
      {usage.data ? (
        <>
          <UsageChart
            title={`Cost and tokens ${per}`}
            labels={series.labels}
            cost={series.cost}
            tokens={series.tokens}
            tokensAsLine={groupBy === "day"}
          />
          <UsageTable items={usage.data.items} keyLabel={keyLabel} caption={`Usage ${per}`} />
        </>
      ) : null}
    </section>
  );
}

function Totals({ items }: { items: UsageItem[] }) {
  const sum = (pick: (item: UsageItem) => number) => items.reduce((total, item) => total + pick(item), 0);
  const unpriced = sum((item) => item.unpricedRuns);
  return (
    <>
      <dl className="figures totals">
        <div>
          <dt>Runs</dt>
          <dd>{formatCount(sum((item) => item.runs))}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{formatCount(sum((item) => item.tokenUsage.total))}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{formatUsd(sum((item) => item.cost.total))}</dd>
        </div>
        <div>
          <dt>of which retries</dt>
          <dd>{formatUsd(sum((item) => item.cost.retries))}</dd>
        </div>
      </dl>
      {unpriced > 0 ? (
        <p className="notice notice-warning unpriced-runs">
          {formatCount(unpriced)} run{unpriced === 1 ? "" : "s"} without a known price:{" "}
          {unpriced === 1 ? "its" : "their"} cost counts as $0 here but is unknown (a model missing from the
          price list, or a run that failed before it was priced).
        </p>
      ) : null}
    </>
  );
}

/** Costs (`/console/costs`): cost and tokens per day, prompt, model and environment from `GET /api/v1/usage`. */
export function CostsScreen() {
  const [search, setSearch] = useSearchParams();
  const rangeDays = rangeDaysOf(search.get("days"));
  // The range is fixed for the page's life (a new day at midnight is picked up on the next visit).
  const range = useMemo(() => rangeOf(rangeDays), [rangeDays]);
  const totals = useUsage("day", range.from, range.to);
  const empty = totals.isSuccess && totals.data.items.length === 0;
  return (
    <section aria-labelledby="screen-title" className="costs-screen">
      <h1 id="screen-title">Costs</h1>
      <div className="costs-range">
        <label htmlFor="costs-range">Range</label>
        <select
          id="costs-range"
          value={rangeDays}
          onChange={(event) => setSearch({ days: event.target.value })}
        >
          {RANGE_DAYS.map((days: RangeDays) => (
            <option key={days} value={days}>
              Last {days} days
            </option>
          ))}
        </select>
        <span className="muted">
          {range.from} to {range.days.at(-1)} (UTC), runs that ended
        </span>
      </div>
      {totals.isError ? <ErrorNotice error={totals.error} /> : null}
      {totals.data ? <Totals items={totals.data.items} /> : null}
      {empty ? (
        <EmptyState title={`No ended runs in the last ${rangeDays} days`}>
          Costs appear once runs complete or fail. Try a longer range, or start a run from the{" "}
          <Link href="/playground">Playground</Link>.
        </EmptyState>
      ) : (
        GROUPS.map((group) => (
          <UsageGroup key={group.groupBy} {...group} from={range.from} to={range.to} days={range.days} />
        ))
      )}
    </section>
  );
}
