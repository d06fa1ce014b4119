/** Coordination columns (leases, cancel requests): stored beside a record but not part of it. */
const COORDINATION_COLUMNS = new Set(["leaseOwner", "leaseUntil", "cancelRequestedAt"]);

type CoordinationColumn = "leaseOwner" | "leaseUntil" | "cancelRequestedAt";

/**
 * A table's columns without the coordination ones, for selects that return port records
 * (RunRecord, WebhookDeliveryRecord): the engine's records keep exactly their documented shape.
 */
export const recordColumns = <T extends object>(columns: T): Omit<T, CoordinationColumn> =>
  Object.fromEntries(Object.entries(columns).filter(([name]) => !COORDINATION_COLUMNS.has(name))) as Omit<
    T,
    CoordinationColumn
  >;
