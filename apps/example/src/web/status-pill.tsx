import type { ConnectionStatus } from "@promptrun/react";

const labels: Record<ConnectionStatus, string> = {
  connecting: "Connecting",
  open: "Live",
  reconnecting: "Reconnecting",
  closed: "Offline",
};

/** The stream's connection state, as a small coloured pill. */
export function StatusPill({ status }: { status: ConnectionStatus }) {
  return (
    <span className={`status-pill status-${status}`} data-testid="connection-status" data-status={status}>
      <span className="status-dot" aria-hidden="true" />
      {labels[status]}
    </span>
  );
}
