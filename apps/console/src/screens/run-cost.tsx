import type { Cost, CostBlock, TokenUsage } from "@promptrun/contract";
import { formatCount, formatUsd, isUnpriced } from "../components/figures.ts";
import { UnpricedFlag } from "../components/run-status.tsx";
import { ScrollRegion } from "../components/scroll-region.tsx";

function CostRow({ label, block }: { label: string; block: CostBlock }) {
  return (
    <tr>
      <th scope="row">
        {label}
        {block.priced === false ? <UnpricedFlag /> : null}
      </th>
      <td className="number">{formatUsd(block.input)}</td>
      <td className="number">{formatUsd(block.cachedInput)}</td>
      <td className="number">{formatUsd(block.output)}</td>
      <td className="number">{formatUsd(block.webSearch)}</td>
      <td className="number">{formatUsd(block.total)}</td>
    </tr>
  );
}

/**
 * The cost split of a run or a step: successful attempts, failed attempts (retries) and the total
 * (docs/PRODUCT-RULES.md "Runs": total = success.total + retries.total).
 */
export function CostSplit({ cost, caption }: { cost: Cost; caption: string }) {
  return (
    <ScrollRegion label={`${caption}, table`}>
      <table className="cost-split">
        <caption>
          {caption}
          {isUnpriced(cost) ? (
            <span className="muted"> — the model has no known price, so these figures are unknown</span>
          ) : null}
        </caption>
        <thead>
          <tr>
            <th scope="col">Attempts</th>
            <th scope="col">Input</th>
            <th scope="col">Cached input</th>
            <th scope="col">Output</th>
            <th scope="col">Web search</th>
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          <CostRow label="Success" block={cost.success} />
          <CostRow label="Retries" block={cost.retries} />
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td colSpan={4} />
            <td className="number total">{formatUsd(cost.total)}</td>
          </tr>
        </tfoot>
      </table>
    </ScrollRegion>
  );
}

/** Token usage: input (of which cached), output (of which reasoning), total. */
export function UsageFigures({ usage }: { usage: TokenUsage }) {
  const figures: [string, number][] = [
    ["Input", usage.input],
    ["Cached input", usage.inputCached],
    ["Output", usage.output],
    ["Reasoning", usage.reasoning],
    ["Total", usage.total],
  ];
  return (
    <dl className="figures">
      {figures.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{formatCount(value)}</dd>
        </div>
      ))}
    </dl>
  );
}
