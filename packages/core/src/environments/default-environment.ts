/** Every tenant has this environment; a run that names none uses it (DESIGN.md). */
export const DEFAULT_ENVIRONMENT = "production";
