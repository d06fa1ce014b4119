import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
import { useEffect, useRef } from "react";
import { formatCount, formatUsd } from "./figures.ts";

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Legend,
  Tooltip,
);

export interface UsageChartProps {
  /** What the chart shows, for its text alternative (`Cost and tokens per prompt`). */
  title: string;
  labels: string[];
  cost: number[];
  tokens: number[];
  /** Tokens as a line (a series over time) rather than bars (categories). */
  tokensAsLine?: boolean;
}

/** Entries the text alternative names one by one; the data table below the chart has them all. */
const SUMMARY_ENTRIES = 12;

/** The chart in words, for screen readers (the full figures are in the table that follows it). */
export function chartSummary({ title, labels, cost, tokens }: UsageChartProps): string {
  if (labels.length === 0) return `${title}: no data.`;
  const entries = labels
    .slice(0, SUMMARY_ENTRIES)
    .map(
      (label, index) => `${label}: ${formatUsd(cost[index] ?? 0)}, ${formatCount(tokens[index] ?? 0)} tokens`,
    );
  const more =
    labels.length > SUMMARY_ENTRIES ? `; ${labels.length - SUMMARY_ENTRIES} more in the table below` : "";
  return `${title}. ${entries.join("; ")}${more}.`;
}

/** Cost (bars, left axis, dollars) and tokens (right axis) of some groups, drawn with Chart.js on a canvas. */
export function UsageChart(props: UsageChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { labels, cost, tokens, tokensAsLine } = props;
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      data: {
        labels,
        datasets: [
          {
            type: "bar",
            label: "Cost (USD)",
            data: cost,
            yAxisID: "cost",
            backgroundColor: "#4b4bd6",
            maxBarThickness: 56,
          },
          {
            type: tokensAsLine ? "line" : "bar",
            label: "Tokens",
            data: tokens,
            yAxisID: "tokens",
            backgroundColor: "#d97706",
            borderColor: "#b45309",
            maxBarThickness: 56,
          },
        ],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          cost: {
            type: "linear",
            position: "left",
            beginAtZero: true,
            title: { display: true, text: "USD" },
            ticks: { callback: (value) => formatUsd(Number(value)) },
          },
          tokens: {
            type: "linear",
            position: "right",
            beginAtZero: true,
            grid: { drawOnChartArea: false },
            title: { display: true, text: "tokens" },
          },
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: (item) =>
                item.dataset.yAxisID === "cost"
                  ? `Cost: ${formatUsd(Number(item.raw))}`
                  : `Tokens: ${formatCount(Number(item.raw))}`,
            },
          },
        },
      },
    });
    return () => chart.destroy();
  }, [labels, cost, tokens, tokensAsLine]);
  return (
    <div className="usage-chart">
      <canvas ref={canvas} role="img" aria-label={chartSummary(props)}>
        {chartSummary(props)}
      </canvas>
    </div>
  );
}
