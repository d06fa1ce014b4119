/** Every tenant has this environment; a run that names none uses it (docs/PRODUCT-RULES.md). */
export const DEFAULT_ENVIRONMENT = "production";
