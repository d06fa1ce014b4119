import type { UsageItem } from "@promptrun/contract";
import { formatCount, formatUsd } from "../components/figures.ts";
import { ScrollRegion } from "../components/scroll-region.tsx";

/** The figures behind a usage chart, one row per group (the chart's text alternative in full). */
export function UsageTable({
  items,
  keyLabel,
  caption,
}: {
  items: UsageItem[];
  keyLabel: string;
  caption: string;
}) {
  return (
    <ScrollRegion label={`${caption}, table`}>
      <table className="usage-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{keyLabel}</th>
            <th scope="col">Runs</th>
            <th scope="col">Completed</th>
            <th scope="col">Failed</th>
            <th scope="col">Input tokens</th>
            <th scope="col">Output tokens</th>
            <th scope="col">Total tokens</th>
            <th scope="col">Cost (success)</th>
            <th scope="col">Cost (retries)</th>
            <th scope="col">Cost (total)</th>
            <th scope="col">Unpriced runs</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.key} data-key={item.key}>
              <th scope="row">{item.key}</th>
              <td className="number">{formatCount(item.runs)}</td>
              <td className="number">{formatCount(item.completed)}</td>
              <td className="number">{formatCount(item.failed)}</td>
              <td className="number">{formatCount(item.tokenUsage.input)}</td>
              <td className="number">{formatCount(item.tokenUsage.output)}</td>
              <td className="number">{formatCount(item.tokenUsage.total)}</td>
              <td className="number">{formatUsd(item.cost.success)}</td>
              <td className="number">{formatUsd(item.cost.retries)}</td>
              <td className="number">{formatUsd(item.cost.total)}</td>
              <td className={`number${item.unpricedRuns > 0 ? " warn" : ""}`}>
                {formatCount(item.unpricedRuns)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
