/**
 * The named columns of a table, each keeping its own (dialect's) column type, so one select map
 * serves the SQLite and the Postgres table alike.
 */
export const pickColumns = <T, K extends keyof T>(table: T, names: readonly K[]): Pick<T, K> =>
  Object.fromEntries(names.map((name) => [name, table[name]])) as Pick<T, K>;
